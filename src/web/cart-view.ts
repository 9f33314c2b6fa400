// What the holder's cart pages show of a cart (templates/cart-lines.mustache): each line with its
// note, price, fee, total, stale mark and the countdown to its session's close. The countdown is
// written here, complete, so a page without JavaScript is right when served; public/countdown.js
// only keeps the same words current (one format for both).
import type { CartDetail, CheckedOut, CurrentSession } from '../../actors/cart/messages.js';
import { MARKET_IDS, type MarketId, type ServedDeal } from '../engine/index.js';
import type { MenuSnapshots } from '../market-data/snapshots.js';
import { usd } from './answers.js';

/** A close time to the second: "14:05:30 UTC". */
export const closeTime = (unix: number) =>
  `${new Date(unix * 1000).toISOString().slice(11, 19)} UTC`;

/** "closes in 754 s (14:05:30 UTC)", "closed (14:05:30 UTC)" (public/countdown.js says the same). */
export function countdown(closesAt: number, now: number): string {
  const left = Math.ceil(closesAt - now);
  const at = `(${closeTime(closesAt)})`;
  return left > 0 ? `closes in ${left} s ${at}` : `closed ${at}`;
}

const STATUS_WORDS = {
  pending_pairing: 'waiting for you',
  in_cart: 'in the cart',
  ordered: 'ordered',
} as const;

/**
 * The lines as the templates show them; `editable`: the holder may change them (their cart), with
 * the forms sending them back to `next`.
 */
export function linesView(cart: CartDetail, now: number, editable: boolean, next: string) {
  return cart.items.map((l) => {
    const open = l.status !== 'ordered';
    return {
      id: l.id,
      cart_id: cart.id,
      next,
      market: l.market,
      tick: l.tick,
      offer_key: l.offer_key,
      deal_title: l.deal_title,
      qty: l.qty,
      max_qty: l.max_qty,
      unit_cost: usd(l.unit_cost),
      list_price: usd(l.list_price),
      fee: usd(l.fee),
      total: usd(l.total),
      note: l.note,
      proposed_by: l.proposed_by.kind === 'holder' ? 'you' : l.proposed_by.name,
      status: STATUS_WORDS[l.status],
      order_id: l.order_id,
      stale: open && l.stale,
      closes_at: l.closes_at,
      closes: countdown(l.closes_at, now),
      counting: open && !l.stale,
      editable: editable && open,
    };
  });
}

/** The cart's heading facts for a page. */
export function cartSummary(cart: CartDetail) {
  return {
    cart_id: cart.id,
    cart_name: cart.name,
    kind: cart.kind,
    own: cart.kind === 'own',
    total: usd(cart.total),
    // What a card payment now charges (holder_pays): the lines and, when it is still due, the month's fee.
    pay_now: usd(cart.holder_pays?.total ?? cart.total),
    fee_note: !cart.holder_pays
      ? ''
      : cart.holder_pays.participation_fee > 0
        ? `${usd(cart.holder_pays.goods)} USD of lines and the monthly participation fee of ${usd(cart.holder_pays.participation_fee)} USD, charged with the first payment of the month`
        : "this month's participation fee is already paid",
    open_items: cart.open_items,
    stale_items: cart.stale_items,
    has_open: cart.open_items > 0,
    has_stale: cart.stale_items > 0,
    has_items: cart.items.length > 0,
    paid: cart.paid,
    checkout_path: new URL(cart.checkout_url).pathname,
  };
}

/** Every market's open session, as a refresh re-maps stale lines onto them. */
export const currentSessions = (snapshots: MenuSnapshots): CurrentSession[] =>
  MARKET_IDS.map((m) => {
    const snap = snapshots.get(m);
    return { market: m, tick: snap.tick, closesAt: snap.closesAt };
  });

/** A deal for the CSV template's sample row: the first of the market's current menu. */
export const sampleDeal = (snapshots: MenuSnapshots, market: MarketId): ServedDeal | undefined =>
  snapshots.get(market).deals[0];

/** A paid cart as a form post answers it (CartPaidForm, without `ok`). */
export const paidPayload = (paid: CheckedOut) => ({
  cart_id: paid.cart_id,
  order_ids: paid.orders.map((o) => o.id),
  inventory_item_ids: paid.inventory_item_ids,
  bought_outright: paid.bought_outright,
  charged: paid.charged,
  fee: paid.fee,
  skipped_stale: paid.skipped_stale,
  receipt: paid.receipt,
});
