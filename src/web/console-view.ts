// What the console's pages show beyond the served rows (the console as a dashboard):
// plain words for ledger kinds, timeline events and the refs they name (no codes on the pages), the
// balance and trading result over time as a chart, the value of the open positions (both from the
// holder.figures read: exact totals over every entry and position), and what is waiting for the
// holder (orders to pay and cart lines, with their deadlines).
import type { CartDetail } from '../../actors/cart/messages.js';
import {
  MOVED_KINDS,
  type HolderFigures,
  type TimelineEventView,
} from '../../actors/holder/messages.js';
import { centsToNumber, numberToCents } from '../engine/index.js';
import { figure, lineChart } from './charts.js';
import { countdown } from './cart-view.js';
import { isoOf, utcMinute } from './checkout-view.js';
import { usd } from './answers.js';

/** Every ledger kind in words (SPEC.md "Account", CONTRACT.md "Money"). */
export const LEDGER_WORDS: Record<string, string> = {
  card_charge: 'Card payment in',
  crypto_payment: 'Crypto payment in',
  order_debit: 'Paid for an order',
  monthly_fee: 'Monthly participation fee',
  sale_credit: 'Sales',
  holding_fee: 'Holding fee',
  surcharge: 'Settlement surcharge',
  payout: 'Payout',
  topup: 'Top-up',
  refund: 'Refund',
  exchange_purchase: 'Exchange purchase',
  exchange_sale: 'Exchange sale',
  prize: 'Competition prize',
};

/** Every timeline event kind in words. */
export const EVENT_WORDS: Record<string, string> = {
  ...LEDGER_WORDS,
  order_placed: 'Order placed',
  order_paid: 'Order paid',
  order_filled: 'Order filled',
  order_refunded: 'Order refunded',
  position_settled: 'Position settled',
  top_up: 'Top-up',
  card_charge: 'Card charged',
  payout_scheduled: 'Payout requested',
  payout_paid: 'Payout paid',
  gc_grant: 'Gold Coins granted',
  gc_purchase: 'Gold Coins bought',
  gc_spend: 'Gold Coins spent',
  gc_sale: 'Gold Coins from a sale',
  grant_made: 'Grant made',
  grant_revoked: 'Grant revoked',
};

/** A kind in words; an unknown kind (a newer one) with its underscores as spaces. */
export const wordsOf = (words: Record<string, string>, kind: string) =>
  words[kind] ?? kind.replace(/_/g, ' ');

/** "order:17" → "order 17", "topup:visa-4242" → "top-up visa-4242": what a ref names, in words. */
export function refWords(ref: string | null): string {
  if (!ref) return '';
  return ref.replace(
    /\b(order|position|round|payout|listing|grant|cart|pack|item|competition|topup|prize)[:_](\S+?)(?=[,;)\s]|$)/g,
    (_m, what: string, id: string) => `${what === 'topup' ? 'top-up' : what} ${id}`,
  );
}

/**
 * The overview's figures, one name and one definition each, shown beside the figure (so that no two
 * figures on a page disagree without saying what each counts). Each is an exact total
 * over every ledger entry or position of the holder's accounts, summed by the holder.figures read
 * (actors/holder/figures.ts) or holder.money (Realized P&L).
 */
export const FIGURES = {
  realized: {
    name: 'Realized P&L',
    says: 'What your settled positions made or lost: their sales minus their cost, holding fees and surcharges. Final.',
  },
  so_far: {
    name: 'P&L so far',
    says: 'The same sum for all your open positions, from their sales until now: it moves each session until they settle.',
  },
  result: {
    name: 'trading result',
    says: `Every ledger entry of your accounts since the first, except money you moved in or out (${MOVED_KINDS.map((k) => LEDGER_WORDS[k].toLowerCase()).join(', ')}): Realized P&L and P&L so far of all your positions, plus participation fees, refunds, exchange purchases and sales, prizes, and orders paid but not yet filled, which count their cost at once.`,
  },
} as const;

/** The open positions' figures (holder.figures: every open position, in cents) as the overview shows them: how many, at cost, unsold units at the resale price, P&L so far. */
export function openView(open: HolderFigures['open']) {
  const pnl = open.pnl_so_far_cents;
  return {
    count: open.count,
    cost: usd(centsToNumber(open.cost_cents)),
    resale: usd(centsToNumber(open.resale_cents)),
    pnl: usd(centsToNumber(pnl)),
    pnl_neg: pnl < 0,
  };
}

/**
 * The chart of the holder's total balance and trading result after each ledger entry of the
 * figures' window (oldest left), each running on from every entry before the window (so its last
 * point is the balance and result of every entry); null with fewer than two points.
 */
export function balanceChart(f: Pick<HolderFigures, 'history' | 'ledger'>): string | null {
  const h = f.history;
  if (h.length < 2) return null;
  const x = h.map((_, i) => i + 1);
  const when = (i: number) => {
    const p = h[Math.min(h.length, Math.max(1, Math.round(i))) - 1];
    return p ? new Date(p.at * 1000).toISOString().slice(11, 16) : '';
  };
  const chart = lineChart({
    title: `Your balance and ${FIGURES.result.name} over time`,
    x,
    xLabel: 'ledger entries (UTC time)',
    yLabel: 'USD',
    xFormat: when,
    yFormat: (v) => v.toFixed(2),
    series: [
      { name: 'total balance', values: h.map((p) => centsToNumber(p.balance_cents)) },
      { name: FIGURES.result.name, values: h.map((p) => centsToNumber(p.result_cents)) },
    ],
    width: 720,
    height: 240,
  });
  const n = f.ledger.entries;
  const caption =
    h.length < n
      ? `The last ${h.length} of your ${n} ledger entries, oldest left: the lines go on from the ${n - h.length} entries before them.`
      : `Your ${n} ledger entries, oldest left.`;
  return figure(chart, caption);
}

type AwaitingOrder = {
  id: number;
  deal_title: string;
  market: string;
  qty: number;
  total_amount: number;
  closes_at: number;
  purchase_url: string | null;
};

/** What waits for the holder, soonest deadline first: orders to pay on open sessions, and carts with lines to pay. */
export function waitingView(orders: AwaitingOrder[], carts: CartDetail[], now: number) {
  const items = [
    ...orders
      .filter((o) => o.closes_at > now && o.purchase_url)
      .map((o) => ({
        what: `Order ${o.id}: ${o.qty} × ${o.deal_title} on ${o.market}`,
        amount: usd(o.total_amount),
        closes_at: o.closes_at,
        href: new URL(o.purchase_url!).pathname,
        action: `Review and pay order ${o.id}`,
      })),
    ...carts.flatMap((c) => {
      const open = c.items.filter((l) => l.status !== 'ordered' && !l.stale && l.closes_at > now);
      if (!open.length) return [];
      const first = Math.min(...open.map((l) => l.closes_at));
      const total = open.reduce((t, l) => t + numberToCents(l.total), 0);
      return [
        {
          what: `${c.name}: ${open.length} line${open.length === 1 ? '' : 's'} to pay`,
          amount: usd(centsToNumber(total)),
          closes_at: first,
          href: new URL(c.checkout_url).pathname,
          action: `Review and pay ${c.name}`,
        },
      ];
    }),
  ].sort((a, b) => a.closes_at - b.closes_at);
  return items.map((i) => ({
    ...i,
    closes: utcMinute(i.closes_at),
    closes_iso: isoOf(i.closes_at),
    countdown: countdown(i.closes_at, now),
  }));
}

/** Recent events in words (the dashboard's activity list): what happened, its sentence, the money it moved, when. */
export const activityView = (events: TimelineEventView[]) =>
  events.map((e) => ({
    what: wordsOf(EVENT_WORDS, e.kind),
    text: refWords(e.text),
    amount: e.amount === null ? null : usd(e.amount),
    neg: (e.amount ?? 0) < 0,
    has_amount: e.amount !== null,
    when: utcMinute(e.at),
    iso: isoOf(e.at),
  }));
