// What the console's pages show beyond the served rows (issue 29, "the console as a dashboard"):
// plain words for ledger kinds, timeline events and the refs they name (no codes on the pages), the
// balance and trading result over time as a chart, the value of the open positions, and what is
// waiting for the holder (orders to pay and cart lines, with their deadlines).
import type { CartDetail } from '../../actors/cart/messages.js';
import type { TimelineEventView } from '../../actors/holder/messages.js';
import { centsToNumber, numberToCents } from '../engine/index.js';
import { figure, lineChart } from './charts.js';
import { countdown } from './cart-view.js';
import { isoOf, utcMinute } from './checkout-view.js';
import { usd } from './answers.js';

/** Every ledger kind in words (SPEC.md "Account", CONTRACT.md "Money"). */
export const LEDGER_WORDS: Record<string, string> = {
  card_charge: 'Card payment in', crypto_payment: 'Crypto payment in', order_debit: 'Paid for an order', monthly_fee: 'Monthly participation fee',
  sale_credit: 'Sales', holding_fee: 'Holding fee', surcharge: 'Settlement surcharge', payout: 'Payout', topup: 'Top-up', refund: 'Refund',
  exchange_purchase: 'Exchange purchase', exchange_sale: 'Exchange sale', prize: 'Competition prize',
};

/** Every timeline event kind in words. */
export const EVENT_WORDS: Record<string, string> = {
  ...LEDGER_WORDS,
  order_placed: 'Order placed', order_paid: 'Order paid', order_filled: 'Order filled', order_refunded: 'Order refunded', position_settled: 'Position settled',
  top_up: 'Top-up', card_charge: 'Card charged', payout_scheduled: 'Payout requested', payout_paid: 'Payout paid',
  gc_grant: 'Gold Coins granted', gc_purchase: 'Gold Coins bought', gc_spend: 'Gold Coins spent', gc_sale: 'Gold Coins from a sale',
  grant_made: 'Grant made', grant_revoked: 'Grant revoked',
};

/** A kind in words; an unknown kind (a newer one) with its underscores as spaces. */
export const wordsOf = (words: Record<string, string>, kind: string) => words[kind] ?? kind.replace(/_/g, ' ');

/** "order:17" → "order 17", "topup:visa-4242" → "top-up visa-4242": what a ref names, in words. */
export function refWords(ref: string | null): string {
  if (!ref) return '';
  return ref.replace(/\b(order|position|round|payout|listing|grant|cart|pack|item|competition|topup|prize)[:_](\S+?)(?=[,;)\s]|$)/g, (_m, what: string, id: string) =>
    `${what === 'topup' ? 'top-up' : what} ${id}`);
}

type Dated = { id: number; created_at: number; account_id: number; amount: number; balance_after: number; kind: string };

/**
 * The overview's figures, one name and one definition each, shown beside the figure (issue 44: three
 * P&L figures disagreed on one page with nothing saying what each counts).
 */
export const FIGURES = {
  realized: { name: 'Realized P&L', says: 'What your settled positions made or lost: their sales minus their cost, holding fees and surcharges. Final.' },
  so_far: { name: 'P&L so far', says: 'The same sum for your open positions, from their sales until now: it moves each session until they settle.' },
  result: {
    name: 'trading result',
    says: 'Every ledger entry charted except money you moved in or out (card payments, top-ups, payouts): Realized P&L and P&L so far of the positions charted, plus participation fees, refunds and orders paid but not yet filled, which count their cost at once.',
  },
} as const;

/** Money moved in or out by the holder (not trading): card payments in, top-ups, payouts. */
const MOVED = new Set(['card_charge', 'crypto_payment', 'topup', 'payout']);

/**
 * The holder's total balance and trading result after each ledger entry, oldest first: the balance
 * sums each account's latest `balance_after`; the result adds every entry but the money moved in or
 * out (what the holder's accounts made or lost: orders, fees, sales, prizes, exchange).
 */
export function balanceHistory(entries: Dated[]) {
  // Oldest first; entries of one instant in the order they were booked (their ids).
  const rows = [...entries].sort((a, b) => a.created_at - b.created_at || a.id - b.id);
  const latest = new Map<number, number>();
  let result = 0;
  return rows.map((e) => {
    latest.set(e.account_id, numberToCents(e.balance_after));
    if (!MOVED.has(e.kind)) result += numberToCents(e.amount);
    let total = 0;
    for (const v of latest.values()) total += v;
    return { at: e.created_at, balance: centsToNumber(total), result: centsToNumber(result) };
  });
}

/** The chart of balanceHistory, or null with fewer than two entries. */
export function balanceChart(entries: Dated[]): string | null {
  const h = balanceHistory(entries);
  if (h.length < 2) return null;
  const x = h.map((_, i) => i + 1);
  const when = (i: number) => {
    const p = h[Math.min(h.length, Math.max(1, Math.round(i))) - 1];
    return p ? new Date(p.at * 1000).toISOString().slice(11, 16) : '';
  };
  const chart = lineChart({
    title: `Your balance and ${FIGURES.result.name} over time`, x, xLabel: 'ledger entries (UTC time)', yLabel: 'USD', xFormat: when,
    yFormat: (v) => v.toFixed(2),
    series: [{ name: 'total balance', values: h.map((p) => p.balance) }, { name: FIGURES.result.name, values: h.map((p) => p.result) }],
    width: 720, height: 240,
  });
  return figure(chart, `The last ${h.length} ledger entries of your accounts, oldest left.`);
}

/** The open positions (served rows: qty_left, list_price, cost_basis, pnl_so_far): what they cost and what their unsold units would bring at the resale price. */
export function openValue(rows: Record<string, unknown>[]) {
  let cost = 0;
  let resale = 0;
  let pnl = 0;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  for (const r of rows) {
    cost += numberToCents(n(r.cost_basis));
    resale += n(r.qty_left) * numberToCents(n(r.list_price));
    pnl += numberToCents(n(r.pnl_so_far));
  }
  return { count: rows.length, cost: usd(centsToNumber(cost)), resale: usd(centsToNumber(resale)), pnl: usd(centsToNumber(pnl)), pnl_neg: pnl < 0 };
}

type AwaitingOrder = { id: number; deal_title: string; market: string; qty: number; total_amount: number; closes_at: number; purchase_url: string | null };

/** What waits for the holder, soonest deadline first: orders to pay on open sessions, and carts with lines to pay. */
export function waitingView(orders: AwaitingOrder[], carts: CartDetail[], now: number) {
  const items = [
    ...orders.filter((o) => o.closes_at > now && o.purchase_url).map((o) => ({
      what: `Order ${o.id}: ${o.qty} × ${o.deal_title} on ${o.market}`, amount: usd(o.total_amount), closes_at: o.closes_at,
      href: new URL(o.purchase_url!).pathname, action: `Review and pay order ${o.id}`,
    })),
    ...carts.flatMap((c) => {
      const open = c.items.filter((l) => l.status !== 'ordered' && !l.stale && l.closes_at > now);
      if (!open.length) return [];
      const first = Math.min(...open.map((l) => l.closes_at));
      const total = open.reduce((t, l) => t + numberToCents(l.total), 0);
      return [{
        what: `${c.name}: ${open.length} line${open.length === 1 ? '' : 's'} to pay`, amount: usd(centsToNumber(total)), closes_at: first,
        href: new URL(c.checkout_url).pathname, action: `Review and pay ${c.name}`,
      }];
    }),
  ].sort((a, b) => a.closes_at - b.closes_at);
  return items.map((i) => ({ ...i, closes: utcMinute(i.closes_at), closes_iso: isoOf(i.closes_at), countdown: countdown(i.closes_at, now) }));
}

/** Recent events in words (the dashboard's activity list): what happened, its sentence, the money it moved, when. */
export const activityView = (events: TimelineEventView[]) =>
  events.map((e) => ({
    what: wordsOf(EVENT_WORDS, e.kind), text: refWords(e.text),
    amount: e.amount === null ? null : usd(e.amount), neg: (e.amount ?? 0) < 0, has_amount: e.amount !== null,
    when: utcMinute(e.at), iso: isoOf(e.at),
  }));
