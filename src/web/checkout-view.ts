// What the purchase link's pages show beyond the order itself (templates/checkout.mustache and
// checkout-done.mustache): the one total the holder pays (the order and, when due, the month's
// participation fee), instants as <time> elements (UTC as served, the reader's own zone once
// public/site.js runs), and the confirmation after paying: what was charged, on which card, what
// happens next and when. A receipt is shown once the order carries one (not yet: nothing is made up).
import { MARKETS, centsToNumber, isMarketId, numberToCents } from '../engine/index.js';
import { SETTLEMENT_HORIZON_SESSIONS } from '../rules.js';
import type { Clock } from '../supervisor/clock.js';
import { sessionLength } from '../market-data/live-session.js';
import { usd } from './answers.js';
import Type from 'typebox';
import type { CardRow } from '../../actors/holder/messages.js';
import { saveCard } from './pay-form.js';

/** An order's status in words (SPEC.md "Order" statuses). */
export const ORDER_STATUS_WORDS: Record<string, string> = {
  awaiting_payment: 'waiting for your payment',
  paid: "paid: fills at the session's close",
  filled: 'filled: selling through',
  expired: 'expired: not paid in time, nothing charged',
  refunded: 'refunded',
  cancelled: 'withdrawn: takes no payment, nothing charged',
};
export const orderStatusWords = (status: string) =>
  ORDER_STATUS_WORDS[status] ?? status.replace(/_/g, ' ');

/** An instant as a <time datetime> value (UTC, to the second). */
export const isoOf = (unix: number) =>
  new Date(Math.round(unix) * 1000).toISOString().replace('.000Z', 'Z');

/** "2026-11-26 14:05 UTC": what the page says without scripts. */
export const utcMinute = (unix: number) =>
  `${new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** The card a payment used, as its confirmation's address names it: a typed card's last 4 digits (and whether the holder asked to store it), or a stored card's id. */
type PaidCard = { last4?: string; cardId?: number; save?: boolean };

/** The confirmation's query fields that name the card (both confirmations take them). */
export const DoneCardFields = {
  card: Type.Optional(
    Type.String({
      pattern: '^[0-9]{4}$',
      description: 'the last 4 digits of the card just paid with',
    }),
  ),
  card_id: Type.Optional(
    Type.Integer({ minimum: 1, description: 'the stored card just paid with' }),
  ),
  saved: Type.Optional(
    Type.Literal('1', {
      description:
        'the holder asked to store the card (the page says so only when it is among their stored cards)',
    }),
  ),
};
type DoneCard = { card?: string; card_id?: number; saved?: '1' };

const cardQuery = (card: PaidCard | null) =>
  card?.last4
    ? [`card=${card.last4}`, ...(card.save ? ['saved=1'] : [])]
    : card?.cardId
      ? [`card_id=${card.cardId}`]
      : [];

/** The redirect after paying: the confirmation, with the card it names. */
export function donePath(token: string, card: PaidCard | null): string {
  const q = cardQuery(card).join('&');
  return `/checkout/${encodeURIComponent(token)}/done${q ? `?${q}` : ''}`;
}

/** The card a confirmation names, from the pay form: the typed card's last 4 digits and whether it was to be stored, or the stored card's id. */
export function cardOf(
  body:
    | { method: string; card_id: number | null; number: string; save_card?: 'on' | 'off' }
    | undefined,
): PaidCard | null {
  if (!body || body.method === 'balance') return null;
  if (body.method === 'card' && body.card_id !== null) return { cardId: body.card_id };
  const digits = body.number.replace(/\D/g, '');
  return digits.length >= 12 ? { last4: digits.slice(-4), save: saveCard(body) } : null;
}

/** The redirect after paying a cart: its confirmation, naming the orders placed and the card. */
export function cartDonePath(
  token: string,
  orderIds: number[],
  card: PaidCard | null,
  withFee: boolean,
): string {
  const q = [
    `orders=${orderIds.slice(0, 100).join(',')}`,
    ...cardQuery(card),
    ...(withFee ? ['fee=1'] : []),
  ];
  return `/carts/${encodeURIComponent(token)}/done?${q.join('&')}`;
}

/**
 * The card a confirmation names and whether it is stored now. The address only says what
 * the holder asked; the holder's stored cards, read again, say what is so: a typed card is called
 * stored only when one of them has its last 4 digits.
 */
export function paidCardView(q: DoneCard, cards: CardRow[]) {
  const label = (c: CardRow) => `${c.brand} •••• ${c.last4}`;
  const chosen = q.card_id === undefined ? undefined : cards.find((c) => c.id === q.card_id);
  const kept = q.card && q.saved ? cards.find((c) => c.last4 === q.card) : undefined;
  const card = q.card ? (kept ? label(kept) : `•••• ${q.card}`) : chosen ? label(chosen) : null;
  return {
    card,
    card_kept: kept
      ? `${label(kept)}, ${String(kept.exp_month).padStart(2, '0')}/${String(kept.exp_year).slice(-2)}`
      : null,
    card_not_kept: !!q.card && !kept,
    card_was_stored: !!chosen,
  };
}

type PaidOrder = {
  id: number;
  market: string;
  tick: number;
  qty: number;
  deal_title: string;
  total_amount: number;
  closes_at: number;
  status: string;
  payment_source: string | null;
  paid_at: number | null;
  filled_at: number | null;
  position_id: number | null;
  /** The signed approval receipt (CONTRACT.md "Signed approval receipts") once the served order carries it. */
  receipt?: string | null;
};

/**
 * The confirmation's view: the amount charged (the order and the fee this payment carried, from the
 * ledger entries booked under the order's ref), how, and the timeline ahead (the fill at the
 * session's close, the sales over the horizon, the settlement).
 */
export function confirmationView(
  o: PaidOrder,
  feeCents: number,
  card: string | null,
  clock: Clock,
) {
  const charged = centsToNumber(numberToCents(o.total_amount) + feeCents);
  const interval = isMarketId(o.market) ? MARKETS[o.market].interval_seconds : null;
  const settles =
    interval === null ? null : clock.closesAt(o.tick + SETTLEMENT_HORIZON_SESSIONS, interval);
  const length = interval === null ? null : sessionLength(interval / clock.scale);
  const filled = o.status === 'filled' || o.position_id !== null;
  return {
    order_id: o.id,
    charged: usd(charged),
    order_total: usd(o.total_amount),
    fee: usd(centsToNumber(feeCents)),
    has_fee: feeCents > 0,
    by_balance: o.payment_source === 'balance',
    card,
    has_card: !!card,
    paid_when: o.paid_at === null ? null : utcMinute(o.paid_at),
    paid_iso: o.paid_at === null ? null : isoOf(o.paid_at),
    fill_when: utcMinute(o.closes_at),
    fill_iso: isoOf(o.closes_at),
    filled,
    settle_when: settles === null ? null : utcMinute(settles),
    settle_iso: settles === null ? null : isoOf(settles),
    session_length: length,
    horizon: SETTLEMENT_HORIZON_SESSIONS,
    position_id: o.position_id,
    has_position: o.position_id !== null,
    receipt: typeof o.receipt === 'string' && o.receipt ? o.receipt : null,
  };
}

/** Orders all paid from an account balance: no card paid them, whatever a confirmation's address says. */
export const paidByBalance = (orders: { payment_source: string | null }[]) =>
  orders.length > 0 && orders.every((o) => o.payment_source === 'balance');

type CartOrder = PaidOrder & { offer_key: string };

/**
 * The confirmation of a cart's checkout: its orders (those of the cart's lines the redirect names),
 * what was charged (their totals, and the month's fee when this checkout carried it), how,
 * and when each fills and settles.
 */
export function cartConfirmationView(
  orders: CartOrder[],
  feeCents: number,
  card: string | null,
  clock: Clock,
) {
  const totalCents = orders.reduce((t, o) => t + numberToCents(o.total_amount), 0);
  const signed = orders.find((o) => typeof o.receipt === 'string' && o.receipt.length > 0);
  return {
    charged: usd(centsToNumber(totalCents + feeCents)),
    orders_total: usd(centsToNumber(totalCents)),
    fee: usd(centsToNumber(feeCents)),
    has_fee: feeCents > 0,
    by_balance: paidByBalance(orders),
    card,
    has_card: !!card,
    count: orders.length,
    one: orders.length === 1,
    horizon: SETTLEMENT_HORIZON_SESSIONS,
    // One receipt covers the checkout's orders: its page is that of the first order carrying it.
    receipt: signed?.receipt ?? null,
    receipt_order: signed?.id ?? null,
    orders: orders.map((o) => ({
      ...confirmationView(o, 0, null, clock),
      deal_title: o.deal_title,
      qty: o.qty,
      market: o.market,
      tick: o.tick,
    })),
  };
}
