// Orders and their payment, written in one place. Every path that places or pays orders
// (the order batch, the purchase link's pay turn, a cart checkout) writes them through this module:
// - placeOrdersCtes: the one set-based insert of placed orders (order-row.ts's rows, as
//   placedValues) and of the trade rounds that hold them, one round per `round_id` (the batch: a
//   round per order; a cart: a round per account);
// - PAID_ORDER and FUNDED_ROUND: the one definition of what a payment writes on an order and its
//   round. The batch writes it in that insert for an order funded at once (pay_from_balance, a
//   competition account); payOrders writes it after the money kernel charged the holder (the pay
//   turn, a cart checkout), when the charge's receipt and fee are known.
// The money itself moves only through the kernel (actors/money/charge.ts: chargeHolder, chargeBatch),
// whose postings name each order by its ref.
import type { EntityManager } from '@mikro-orm/postgresql';
import { arrayParam, instantSql, intArrayParam } from '../runtime/sql.js';
import type { PlacedOrder } from './order-row.js';

/** The columns of placed orders as the builder reads them (the source `x`), with their types: one array parameter each. */
export const PLACED_COLUMNS = [
  ['order_id', 'bigint'],
  ['round_id', 'bigint'],
  ['account_id', 'bigint'],
  ['agent_id', 'bigint'],
  ['market', 'text'],
  ['tick', 'bigint'],
  ['idx', 'int'],
  ['offer_key', 'text'],
  ['qty', 'int'],
  ['unit_cost_cents', 'int'],
  ['list_price_cents', 'int'],
  ['fee_cents', 'int'],
  ['holding_cents', 'int'],
  ['token', 'text'],
  ['closes_at', 'float8'],
  ['paid', 'boolean'],
  ['source', 'text'],
  ['holder', 'bigint'],
  ['standing', 'bigint'],
  ['gross', 'bigint'],
  ['fee_amount', 'bigint'],
  ['total', 'bigint'],
  // The month's fee this order's round carries (0 unless the order is paid at once and carries it), and when it was placed.
  ['fee', 'bigint'],
  ['at', 'float8'],
] as const;
export type PlacedColumn = (typeof PLACED_COLUMNS)[number][0];
export type PlacedValues = Record<PlacedColumn, string | number | boolean | null>;

/** A placed order's row (order-row.ts placedOrder) as the builder's values; `feeCents`: the month's fee its round carries. */
export function placedValues(r: PlacedOrder, at: number, feeCents: number): PlacedValues {
  return {
    order_id: r.id,
    round_id: r.round_id,
    account_id: r.account_id,
    agent_id: r.agent_id,
    market: r.market,
    tick: r.tick,
    idx: r.idx,
    offer_key: r.offer_key,
    qty: r.qty,
    unit_cost_cents: r.unit_cost_cents,
    list_price_cents: r.list_price_cents,
    fee_cents: r.fee_cents,
    holding_cents: r.holding_cents,
    token: r.token,
    closes_at: r.closes_at,
    paid: r.status === 'paid',
    source: r.payment_source,
    holder: r.paid_by_holder,
    standing: r.standing_agent_id,
    gross: r.gross_cents,
    fee_amount: r.fee_amount_cents,
    total: r.total_cents,
    fee: feeCents,
    at,
  };
}

/** What paying an order writes on it: SQL of the payment's source, instant (unix seconds) and the holder who paid. */
const PAID_ORDER = (p: { source: string; at: string; holder: string }) => ({
  status: `'paid'`,
  payment_source: p.source,
  paid_at: instantSql(p.at),
  paid_by_holder: p.holder,
});
/** What funding a round writes on it: SQL of the payment's source and instant, the round's fee and what was charged for it. */
const FUNDED_ROUND = (p: { source: string; at: string; fee: string; charged: string }) => ({
  status: `'funded'`,
  source: p.source,
  fee_amount_cents: p.fee,
  charged_cents: p.charged,
  funded_at: instantSql(p.at),
});

/**
 * The CTEs `rounds` and `placed` (the orders inserted, `returning *`) of a statement whose CTE
 * `x` has PLACED_COLUMNS: an order is placed awaiting payment, or paid at once (`paid`: the
 * payment's columns by PAID_ORDER, its round's by FUNDED_ROUND, charged its orders' totals and
 * its fee). Set-based: one insert of each table whatever the number of orders.
 */
export function placeOrdersCtes(x: string): string {
  const order = PAID_ORDER({ source: 'source', at: 'at', holder: 'holder' });
  const round = FUNDED_ROUND({ source: 'source', at: 'at', fee: 'fee', charged: 'amount + fee' });
  return `rounds as (
       insert into trade_round (id, account_id, amount_cents, status, source, fee_amount_cents, charged_cents, funded_at, created_at)
       select round_id, account_id, amount, case when paid then ${round.status} else 'awaiting_payment' end, case when paid then ${round.source} end,
              ${round.fee_amount_cents}, case when paid then ${round.charged_cents} else 0 end, case when paid then ${round.funded_at} end, ${instantSql('at')}
         from (select round_id, account_id, paid, source, at, sum(total) as amount, sum(fee) as fee from ${x} group by round_id, account_id, paid, source, at) r),
     placed as (
       insert into orders (id, account_id, agent_id, round_id, market, tick, idx, offer_key, qty, unit_cost_cents, list_price_cents, fee_cents,
                           holding_cents, gross_cents, fee_amount_cents, total_cents, token, closes_at, status, payment_source, created_at, paid_at, paid_by_holder,
                           standing_agent_id)
       select order_id, account_id, agent_id, round_id, market, tick, idx, offer_key, qty, unit_cost_cents, list_price_cents, fee_cents, holding_cents,
              gross, fee_amount, total, token, closes_at, case when paid then ${order.status} else 'awaiting_payment' end,
              case when paid then ${order.payment_source} end, ${instantSql('at')}, case when paid then ${order.paid_at} end,
              case when paid then ${order.paid_by_holder} end, standing from ${x}
       returning *)`;
}

/** The source `x` of placeOrdersCtes from one array parameter per column, `param(i, type)` naming the i-th. */
const placedSourceSql = (param: (i: number, type: string) => string) =>
  `select * from unnest(${PLACED_COLUMNS.map(([, type], i) => param(i, type)).join(', ')}) as x(${PLACED_COLUMNS.map(([c]) => c).join(', ')})`;

/** Places orders (placedValues) in the caller's transaction: the rounds they name and the orders, in one statement. */
export async function placeOrders(em: EntityManager, rows: PlacedValues[]): Promise<void> {
  if (!rows.length) return;
  await em.execute(
    `with x as (${placedSourceSql((_, type) => `?::${type}[]`)}), ${placeOrdersCtes('x')} select count(*)::int as n from placed`,
    PLACED_COLUMNS.map(([c]) => arrayParam(rows.map((r) => r[c]))),
  );
}

/**
 * Writes a payment the money kernel charged (the pay turn's, a cart's) on the orders it paid and
 * their round, in the caller's transaction: the orders paid by `holderId` with the charge's receipt,
 * the round funded, its fee and charged amount increased by what this charge carried for it.
 */
export async function payOrders(
  em: EntityManager,
  p: {
    roundId: number;
    orderIds: number[];
    source: 'card' | 'balance';
    holderId: number;
    at: number;
    receipt: string | null;
    feeCents: number;
    chargedCents: number;
  },
): Promise<void> {
  const order = PAID_ORDER({ source: '?', at: '?', holder: '?' });
  await em.execute(
    `update orders set status = ${order.status}, payment_source = ${order.payment_source}, paid_at = ${order.paid_at}, paid_by_holder = ${order.paid_by_holder}, receipt = ?
      where id = any(?::bigint[])`,
    [p.source, p.at, p.holderId, p.receipt, intArrayParam(p.orderIds)],
  );
  const round = FUNDED_ROUND({
    source: '?',
    at: '?',
    fee: 'fee_amount_cents + ?',
    charged: 'charged_cents + ?',
  });
  await em.execute(
    `update trade_round set status = ${round.status}, source = ${round.source}, fee_amount_cents = ${round.fee_amount_cents}, charged_cents = ${round.charged_cents},
            funded_at = ${round.funded_at} where id = ?`,
    [p.source, p.feeCents, p.chargedCents, p.at, p.roundId],
  );
}
