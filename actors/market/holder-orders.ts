// Holders' side of a session close, in the close's transaction (ARCHITECTURE rule 3): paid orders
// fill into positions (each a `user` trade of the record) or, when they cannot, are refunded with a
// reason (quarantined: a bad row never stops the close), unpaid ones expire, and the sessions the
// open positions just lived through are booked on their accounts: sale credits, holding fees, and
// at settlement the surcharge and the owned goods of what is left. Set-based SQL; the close's
// exactly-once gate (market_session.closed_at) makes each step happen once.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MARKETS,
  type Deal,
  type MarketId,
  type OutcomeInputs,
  type ServedDeal,
} from '../../src/engine/index.js';
import { postEntries, refundEntries, sessionEntries, type Entry } from '../money/ledger.js';
import { mintItem } from './goods.js';
import { executedTrade, type TradeRecord, type TradeState } from './rows.js';
import { insertHolderTrades, type OpenTrade } from './store.js';
import { arrayParam, instantSql, intArrayParam, jsonParam as json } from '../runtime/sql.js';
import type { Laps } from '../runtime/laps.js';
import { eventIds, insertCtes } from '../events/log.js';
import { FIGURE_COLUMNS, figureArrays, type PositionFigures } from '../events/position-events.js';
import type { EventType } from '../events/messages.js';
import { ORDER_FROM, orderJsonSql } from '../account/views.js';

/** The statuses of orders that never become (or stay) a position: nothing of theirs is left to settle. */
const NEVER_TRADED = `('expired', 'refunded', 'cancelled')`;

type PaidOrder = {
  id: number;
  account_id: number;
  idx: number;
  offer_key: string;
  qty: number;
  unit_cost_cents: number;
  list_price_cents: number;
  fee_cents: number;
  holding_cents: number;
};

/** A paid order the close could not fill: refunded instead, so one bad row never stops a market. */
export type Quarantined = {
  order_id: number;
  account_id: number;
  reason: string;
  total_cents: number;
  refunded_cents: number;
};

/** An order the close moved, on its account. */
export type MovedOrder = { order_id: number; account_id: number };
export type Filled = { trades: TradeRecord[]; quarantined: Quarantined[]; filled: MovedOrder[] };
/** What the close booked on one holder's position: the session's sales and holding fees, and whether it settled. */
export type BookedSession = PositionFigures & { account_id: number; settled: boolean };

const TERMS = [
  ['unit_cost_cents', 'unit_cost'],
  ['list_price_cents', 'list_price'],
  ['fee_cents', 'fee'],
  ['holding_cents', 'holding fee'],
] as const;

/**
 * The trade a paid order fills as, or why it cannot: the order copied its menu row's terms when it
 * was placed, and the fill must be on exactly those. `trade` is the menu row's trade of a quantity.
 */
function fillOf(
  market: MarketId,
  tick: number,
  deals: Deal[],
  o: PaidOrder,
  trade: (idx: number, qty: number) => TradeRecord | Error,
): TradeRecord | string {
  const row = `menu row ${market}/${tick}/${o.idx}`;
  const deal = deals[o.idx];
  if (!deal || deal.key !== o.offer_key) return `its deal ${o.offer_key} is not ${row}`;
  if (o.qty < 1 || o.qty > deal.max_qty)
    return `its qty ${o.qty} is outside 1..${deal.max_qty} of ${row}`;
  const t = trade(o.idx, o.qty);
  if (t instanceof Error) return `${row} could not be executed (${t.message})`;
  const differs = TERMS.filter(([k]) => t[k] !== o[k]).map(([, name]) => name);
  if (!differs.length) return t;
  return `its ${differs.join(', ')} ${differs.length > 1 ? 'differ' : 'differs'} from ${row}`;
}

/**
 * The session's user trades by menu row and quantity, each computed once: a trade is a pure function
 * of them (terms, the deal's ranking path, nothing revealed yet), and its ranking path is the costly
 * part, so 10k paid orders of a few dozen rows cost a few dozen computations, not 10k.
 */
function tradesMemo(
  seed: number,
  market: MarketId,
  tick: number,
  deals: Deal[],
  inputs: OutcomeInputsOf,
) {
  const memo = new Map<string, TradeRecord | Error>();
  return (idx: number, qty: number): TradeRecord | Error => {
    const key = `${idx}/${qty}`;
    let t = memo.get(key);
    if (t === undefined) {
      try {
        t = executedTrade(seed, market, deals[idx], idx, inputs(tick, idx), 0, 'user', qty);
      } catch (err) {
        t = err as Error;
      }
      memo.set(key, t);
    }
    return t;
  };
}

/** A menu row's outcome inputs (the close's memo of dealOutcomeInputs). */
type OutcomeInputsOf = (tick: number, idx: number) => OutcomeInputs;

/**
 * Fills the paid orders of session `tick` into positions and user trades on the same terms and
 * demand path as the house's; an order that cannot fill is refunded (quarantined) instead. Returns
 * the trades (for the session's tape) and the refunded orders. Marks its five steps in `laps`.
 */
export async function fillPaidOrders(
  em: EntityManager,
  seed: number,
  market: MarketId,
  tick: number,
  deals: Deal[],
  inputs: OutcomeInputsOf,
  laps: Laps,
  at: number,
): Promise<Filled> {
  const paid = await lockPaidOrders(em, market, tick);
  laps.mark('fills_read');
  const trade = tradesMemo(seed, market, tick, deals, inputs);
  const { good, bad } = sortPaidOrders(market, tick, deals, paid, trade);
  const quarantined = await refundOrders(em, tick, bad, at);
  laps.mark('fills_terms');
  // Every step is marked, also with nothing to fill, so that the close names the same steps each time.
  const positions = await insertPositions(em, market, tick, good, at);
  laps.mark('fills_positions');
  const positionOf = new Map(positions.map((p) => [p.order_id, p.id]));
  const trades = good.map(({ o, trade }) => ({
    ...trade,
    account_id: o.account_id,
    position_id: positionOf.get(o.id)!,
  }));
  await insertHolderTrades(em, trades, at);
  laps.mark('fills_trades');
  await markFilled(em, good, positionOf, at);
  laps.mark('fills_orders');
  return {
    trades,
    quarantined,
    filled: good.map(({ o }) => ({ order_id: o.id, account_id: o.account_id })),
  };
}

/** A paid order that fills, with the trade it fills as. */
type Fillable = { o: PaidOrder; trade: TradeRecord };
/** A paid order that cannot fill, with why: it is refunded. */
type Unfillable = { id: number; reason: string };

/** The paid orders of session `tick`, locked in id order for the close. */
function lockPaidOrders(em: EntityManager, market: MarketId, tick: number): Promise<PaidOrder[]> {
  return em.execute<PaidOrder[]>(
    `select id::float8 as id, account_id::float8 as account_id, idx, offer_key, qty, unit_cost_cents, list_price_cents, fee_cents, holding_cents
       from orders where market = ? and tick = ? and status = 'paid' order by id for update`,
    [market, tick],
  );
}

/** Each paid order, in order, to fill as its trade or to refund with its reason. */
function sortPaidOrders(
  market: MarketId,
  tick: number,
  deals: Deal[],
  paid: PaidOrder[],
  trade: (idx: number, qty: number) => TradeRecord | Error,
): { good: Fillable[]; bad: Unfillable[] } {
  const good: Fillable[] = [];
  const bad: Unfillable[] = [];
  for (const o of paid) {
    const fill = fillOf(market, tick, deals, o, trade);
    if (typeof fill === 'string')
      bad.push({
        id: o.id,
        reason: `not filled at the close of session ${tick}: ${fill}; the amount paid was refunded to the account`,
      });
    else good.push({ o, trade: fill });
  }
  return { good, bad };
}

/** A position per order that fills (none written when none does). */
async function insertPositions(
  em: EntityManager,
  market: MarketId,
  tick: number,
  good: Fillable[],
  at: number,
): Promise<{ id: number; order_id: number }[]> {
  if (!good.length) return [];
  return em.execute<{ id: number; order_id: number }[]>(
    `insert into position (order_id, account_id, market, tick, created_at)
       select id, account_id, ?, ?, ${instantSql()} from unnest(?::bigint[], ?::bigint[]) as x(id, account_id)
       returning id::float8 as id, order_id::float8 as order_id`,
    [
      market,
      tick,
      at,
      intArrayParam(good.map(({ o }) => o.id)),
      intArrayParam(good.map(({ o }) => o.account_id)),
    ],
  );
}

/** The orders that filled go `filled` on their positions. */
async function markFilled(
  em: EntityManager,
  good: Fillable[],
  positionOf: Map<number, number>,
  at: number,
): Promise<void> {
  if (!good.length) return;
  await em.execute(
    `update orders o set status = 'filled', filled_at = ${instantSql()}, position_id = x.position_id
         from unnest(?::bigint[], ?::bigint[]) as x(id, position_id) where o.id = x.id and o.status = 'paid'`,
    [
      at,
      intArrayParam(good.map(({ o }) => o.id)),
      intArrayParam(good.map(({ o }) => positionOf.get(o.id)!)),
    ],
  );
}

/**
 * Refunds paid orders the close cannot fill: each goes `refunded` with its reason, what its funding
 * debited is credited back (ledger `refund`, ref `order:<id>`, the close's tick: booked once), and
 * its round counts the refund; a round none of whose orders remain to fill is `refunded`.
 */
async function refundOrders(
  em: EntityManager,
  tick: number,
  bad: Unfillable[],
  at: number,
): Promise<Quarantined[]> {
  if (!bad.length) return [];
  // What goes back is what the order's funding debited, at most its total (normally exactly it).
  const rows = await em.execute<
    {
      id: number;
      account_id: number;
      round_id: number;
      total_cents: number;
      debited_cents: number;
    }[]
  >(
    `update orders o set status = 'refunded', refund_reason = x.reason, refunded_at = ${instantSql()}
       from jsonb_to_recordset(?::jsonb) as x(id bigint, reason text) where o.id = x.id and o.status = 'paid'
     returning o.id::float8 as id, o.account_id::float8 as account_id, o.round_id::float8 as round_id, o.total_cents::float8 as total_cents,
       least(o.total_cents, (select coalesce(-sum(l.amount_cents), 0) from ledger l
         where l.account_id = o.account_id and l.ref = 'order:' || o.id and l.kind = 'order_debit'))::float8 as debited_cents`,
    [at, json(bad)],
  );
  if (rows.length !== bad.length)
    throw new Error(`refund: ${bad.length} paid orders locked, ${rows.length} refunded`);
  const entries = rows.flatMap((r) => refundEntries(r.account_id, r.id, tick, r.debited_cents));
  await postEntries(em, entries, at);
  await em.execute(
    `update trade_round r
        set refunded_cents = r.refunded_cents + x.cents,
            status = case when exists (select 1 from orders o where o.round_id = r.id and o.status not in ${NEVER_TRADED}) then r.status else 'refunded' end
       from (select round_id, sum(cents) as cents from jsonb_to_recordset(?::jsonb) as y(round_id bigint, cents bigint) group by round_id) x
      where r.id = x.round_id`,
    [json(rows.map((r) => ({ round_id: r.round_id, cents: r.debited_cents })))],
  );
  const reasonOf = new Map(bad.map((b) => [b.id, b.reason]));
  return rows.map((r) => ({
    order_id: r.id,
    account_id: r.account_id,
    reason: reasonOf.get(r.id)!,
    total_cents: r.total_cents,
    refunded_cents: r.debited_cents,
  }));
}

/** Orders of session `tick` nobody paid expire with their rounds; nothing was charged. Returns them. */
export async function expireUnpaidOrders(
  em: EntityManager,
  market: string,
  tick: number,
): Promise<MovedOrder[]> {
  return em.execute<MovedOrder[]>(
    `with x as (update orders set status = 'expired' where market = ? and tick = ? and status = 'awaiting_payment'
                returning id, account_id, round_id),
          r as (update trade_round r set status = 'expired' from x where r.id = x.round_id and r.status = 'awaiting_payment')
     select id::float8 as order_id, account_id::float8 as account_id from x`,
    [market, tick],
  );
}

/**
 * Books the session the holders' open positions just lived through (before → after): what sold is
 * credited, holding is charged, a settlement's surcharge is debited; settled positions hand their
 * unsold units to the holder as owned goods and complete their rounds.
 */
export async function bookHolderSessions(
  em: EntityManager,
  market: MarketId,
  tick: number,
  before: OpenTrade[],
  after: TradeState[],
  laps: Laps,
  at: number,
): Promise<BookedSession[]> {
  const entries: Entry[] = [];
  const settled: number[] = [];
  const booked: BookedSession[] = [];
  before.forEach((t, i) => {
    if (t.actor !== 'user' || t.account_id === null || t.position_id === null) return;
    const a = after[i];
    const moved = {
      soldCents: a.revenue_cents - t.revenue_cents,
      holdingCents: a.holding_cost_cents - t.holding_cost_cents,
      surchargeCents: a.settled ? (a.surcharge_cents ?? 0) : 0,
    };
    entries.push(...sessionEntries(t.account_id, t.position_id, tick, moved));
    booked.push({
      position_id: t.position_id,
      account_id: t.account_id,
      settled: a.settled,
      session_tick: tick,
      session_sold: a.units_sold - t.units_sold,
      session_revenue_cents: moved.soldCents,
      session_holding_cents: moved.holdingCents,
      revealed_ticks: a.revealed_ticks,
      qty_left: a.qty_left,
      units_sold: a.units_sold,
      revenue_cents: a.revenue_cents,
      holding_cost_cents: a.holding_cost_cents,
    });
    if (a.settled) settled.push(t.position_id);
  });
  // The session's sales, holding fees and surcharges travel inside the position events (CONTRACT.md "Events").
  await postEntries(em, entries, at, { events: false });
  laps.mark('ledger');
  if (settled.length) await settlePositions(em, market, tick, settled, at);
  laps.mark('settle_positions');
  return booked;
}

/**
 * The close's events (CONTRACT.md "Events"): their ids taken first (the heads moved, events/log.ts
 * eventIds), then one set-based insert: each booked position advanced or settled, stored as the
 * figures the close just moved (events/position-events.ts: its object is built when read), then
 * the orders filled, refunded and expired, whose `data` PostgreSQL builds from the rows the close
 * just wrote (views.ts's one definition of the served order). The refunds' postings appended their
 * own `ledger.posted`; the sessions' postings travel inside the position events.
 */
export async function appendCloseEvents(
  em: EntityManager,
  baseUrl: string,
  c: {
    booked: BookedSession[];
    filled: MovedOrder[];
    refunded: MovedOrder[];
    expired: MovedOrder[];
  },
  at: number,
): Promise<void> {
  const moved: (MovedOrder & { type: EventType })[] = [
    ...c.filled.map((o) => ({ ...o, type: 'order.filled' as const })),
    ...c.refunded.map((o) => ({ ...o, type: 'order.refunded' as const })),
    ...c.expired.map((o) => ({ ...o, type: 'order.expired' as const })),
  ];
  if (!c.booked.length && !moved.length) return;
  const b = c.booked;
  // In order (positions, then orders): each account's events take its next ids.
  const ids = await eventIds(em, [
    ...b.map((x) => x.account_id),
    ...moved.map((o) => o.account_id),
  ]);
  const figures = FIGURE_COLUMNS.map(([name]) => name);
  const [r] = await em.execute<{ n: number }[]>(
    `with ev as (
       select x.account_id, x.id, case when x.settled then 'position.settled' else 'position.advanced' end as type, null::json as data, ${figures.map((f) => `x.${f}`).join(', ')}
         from unnest(?::bigint[], ?::bigint[], ?::boolean[], ${FIGURE_COLUMNS.map(([, type]) => `?::${type}[]`).join(', ')})
                 as x(account_id, id, settled, ${figures.join(', ')})
       union all
       select x.account_id, x.id, x.type, ${orderJsonSql('k.base')}, ${FIGURE_COLUMNS.map(([, type]) => `null::${type}`).join(', ')}
         from (select ?::text as base) k, unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::text[]) as x(order_id, account_id, id, type)
         join ${ORDER_FROM} on o.id = x.order_id and o.account_id = x.account_id),
     ${insertCtes(instantSql(), 'ev', figures)}
     select (select count(*)::int from appended) as n, (select count(*) from notified) as notified`,
    [
      intArrayParam(b.map((x) => x.account_id)),
      intArrayParam(ids.slice(0, b.length)),
      arrayParam(b.map((x) => x.settled)),
      ...figureArrays(b),
      baseUrl,
      intArrayParam(moved.map((o) => o.order_id)),
      intArrayParam(moved.map((o) => o.account_id)),
      intArrayParam(ids.slice(b.length)),
      arrayParam(moved.map((o) => o.type)),
      at,
    ],
  );
  // Postcondition: every position booked and every order moved has its event.
  const expected = b.length + moved.length;
  if (r.n !== expected) throw new Error(`close events: ${expected} to append, ${r.n} appended`);
}

type SettledRow = {
  position_id: number;
  order_id: number;
  round_id: number;
  account_id: number;
  holder_id: number | null;
  tick: number;
  cluster: number;
  qty_left: number;
  unit_cost_cents: number;
  list_price_cents: number;
  regime: boolean;
  competition: boolean;
  deal: ServedDeal;
};

export type FamilyTape = { tick: number; row: Record<string, number | null> }[];

/** The tape rows of these families (clusters) over sessions `from..to`, oldest first: what goods carry as their history. */
export async function familyTapes(
  em: EntityManager,
  market: string,
  clusters: number[],
  from: number,
  to: number,
): Promise<Map<number, FamilyTape>> {
  const tape = new Map<number, FamilyTape>();
  if (!clusters.length) return tape;
  const history = await em.execute<
    { cluster: number; tick: number; row: Record<string, number | null> }[]
  >(
    `select cluster, tick::float8 as tick, row from tape where market = ? and cluster = any(?::int[]) and tick between ? and ? order by tick`,
    [market, intArrayParam([...new Set(clusters)]), from, to],
  );
  for (const h of history)
    tape.set(h.cluster, [...(tape.get(h.cluster) ?? []), { tick: h.tick, row: h.row }]);
  return tape;
}

/**
 * Settles the positions that just settled: the unsold units of each become the holder's owned goods
 * (minted with their family's tape of the settlement window), every position records what it
 * transferred, and their rounds count it and complete when all their orders have settled.
 */
async function settlePositions(
  em: EntityManager,
  market: MarketId,
  tick: number,
  positionIds: number[],
  at: number,
): Promise<void> {
  const rows = await settledRows(em, positionIds);
  const window = MARKETS[market].settlement_horizon_ticks;
  const left = rows.filter((r) => r.qty_left > 0);
  const tape = await familyTapes(
    em,
    market,
    left.map((r) => r.cluster),
    tick - window,
    tick - 1,
  );
  const items = left.map((r) => settledItem(market, tick, r, tape.get(r.cluster) ?? [], window));
  if (items.length) await insertSettledItems(em, items, at);
  await markTransferred(em, rows, at);
  await completeRounds(em, rows, at);
}

/** The settled positions with their orders, accounts, trades and menu rows. */
function settledRows(em: EntityManager, positionIds: number[]): Promise<SettledRow[]> {
  return em.execute<SettledRow[]>(
    `select p.id::float8 as position_id, p.order_id::float8 as order_id, o.round_id::float8 as round_id, p.account_id::float8 as account_id,
            a.holder_id::float8 as holder_id, t.tick::float8 as tick, t.cluster, t.qty_left, t.unit_cost_cents, t.list_price_cents, t.regime,
            a.kind = 'competition' as competition, m.deal
       from position p join orders o on o.id = p.order_id join account a on a.id = p.account_id
       join trade t on t.position_id = p.id join menu_row m on m.market = t.market and m.tick = t.tick and m.idx = t.idx
      where p.id = any(?::bigint[])`,
    [intArrayParam(positionIds)],
  );
}

/** A settled position's unsold units as the inventory item they become. */
function settledItem(
  market: MarketId,
  tick: number,
  r: SettledRow,
  tape: FamilyTape,
  window: number,
) {
  return {
    account_id: r.account_id,
    holder_id: r.holder_id,
    position_id: r.position_id,
    market,
    cluster: r.cluster,
    ...mintItem(
      {
        market,
        tick: r.tick,
        settledTick: tick,
        cluster: r.cluster,
        deal: r.deal,
        qty: r.qty_left,
        unitCostCents: r.unit_cost_cents,
        listPriceCents: r.list_price_cents,
        regime: r.regime,
        positionId: r.position_id,
        orderId: r.order_id,
        roundId: r.round_id,
        competition: r.competition,
      },
      tape,
      window,
    ),
  };
}

/** The items written, each on the position it came from. */
async function insertSettledItems(
  em: EntityManager,
  items: ReturnType<typeof settledItem>[],
  at: number,
): Promise<void> {
  await em.execute(
    `with i as (
         insert into inventory_item (account_id, holder_id, position_id, market, cluster, title, qty, story, rarity, rarity_score, history, economy, source, simulated, provenance,
                                     created_at)
         select x.*, ${instantSql()} from jsonb_to_recordset(?::jsonb) as x(account_id bigint, holder_id bigint, position_id bigint, market text, cluster int, title text,
           qty int, story text, rarity text, rarity_score float8, history jsonb, economy jsonb, source text, simulated boolean, provenance jsonb)
         returning id, position_id)
       update position p set item_id = i.id from i where p.id = i.position_id`,
    [at, json(items)],
  );
}

/** Each settled position records the units it handed over (none when all sold). */
async function markTransferred(em: EntityManager, rows: SettledRow[], at: number): Promise<void> {
  await em.execute(
    `update position p set transferred_units = x.qty_left, transferred_at = ${instantSql()}
       from jsonb_to_recordset(?::jsonb) as x(position_id bigint, qty_left int) where p.id = x.position_id`,
    [at, json(rows.map((r) => ({ position_id: r.position_id, qty_left: r.qty_left })))],
  );
}

/** A round completes when every order it funded has settled. */
async function completeRounds(em: EntityManager, rows: SettledRow[], at: number): Promise<void> {
  await em.execute(
    `update trade_round r
        set transferred_units = x.units,
            status = case when x.done then 'completed' else r.status end,
            completed_at = case when x.done then coalesce(r.completed_at, ${instantSql()}) else r.completed_at end
       from (select r2.id,
                    (select coalesce(sum(p.transferred_units), 0) from orders o join position p on p.order_id = o.id where o.round_id = r2.id) as units,
                    not exists (select 1 from orders o left join trade t on t.position_id = o.position_id
                                 where o.round_id = r2.id and o.status not in ${NEVER_TRADED} and (t.id is null or not t.settled)) as done
               from trade_round r2 where r2.id = any(?::bigint[])) x
      where r.id = x.id`,
    [at, intArrayParam([...new Set(rows.map((r) => r.round_id))])],
  );
}
