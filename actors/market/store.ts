// Set-based SQL of the market record. Bulk writes pass all rows as one JSON parameter expanded by
// jsonb_to_recordset (the close's largest, the trades' inserts and update, as column arrays): one
// statement per table per session (or per backfill chunk), no per-row round trips. Every insert
// is idempotent (primary or unique keys), so a replayed step is a no-op.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { MenuRecord, TapeRow, TradeRecord, TradeState } from './rows.js';
import { arrayParam, instantSql, intArrayParam, jsonParam as json } from '../runtime/sql.js';

export async function insertMenu(em: EntityManager, rows: MenuRecord[]): Promise<void> {
  if (!rows.length) return;
  await em.execute(
    `insert into menu_row (market, tick, idx, offer_key, cluster, unit_cost_cents, list_price_cents, listed_at, max_qty, house_accepted, house_qty, deal)
     select * from jsonb_to_recordset(?::jsonb) as x(market text, tick bigint, idx int, offer_key text, cluster int,
       unit_cost_cents int, list_price_cents int, listed_at float8, max_qty int, house_accepted boolean, house_qty int, deal jsonb)
     on conflict do nothing`,
    [json(rows)],
  );
}

/** A trade row's columns and their types, in insert order; `int[]` ones travel as the text of each array. */
const TRADE_FIELDS = [
  ['market', 'text'],
  ['tick', 'bigint'],
  ['idx', 'int'],
  ['offer_key', 'text'],
  ['cluster', 'int'],
  ['actor', 'text'],
  ['qty', 'int'],
  ['unit_cost_cents', 'int'],
  ['list_price_cents', 'int'],
  ['fee_cents', 'int'],
  ['holding_cents', 'int'],
  ['cost_basis_cents', 'bigint'],
  ['horizon', 'int'],
  ['revealed_ticks', 'int'],
  ['sales_by_tick', 'int[]'],
  ['units_sold', 'int'],
  ['qty_left', 'int'],
  ['revenue_cents', 'bigint'],
  ['holding_cost_cents', 'bigint'],
  ['settled', 'boolean'],
  ['sold_out', 'boolean'],
  ['regime', 'boolean'],
  ['surcharge_cents', 'bigint'],
  ['writeoff_cents', 'bigint'],
  ['realized_pnl_cents', 'bigint'],
  ['price_by_tick_cents', 'int[]'],
  ['nsellers_by_tick', 'int[]'],
] as const satisfies readonly (readonly [keyof TradeRecord, string])[];
type Holder = { account_id: number; position_id: number };
const HOLDER_FIELDS = [
  ['account_id', 'bigint'],
  ['position_id', 'bigint'],
] as const satisfies readonly (readonly [keyof Holder, string])[];

/**
 * `insert into trade` of `rows` as column arrays (one `unnest`, as the open trades' update): a
 * close inserts up to one trade per paid order, and as one JSON document each of 10k trades would
 * be written, inlined, parsed and collected several times over. Inserted at `at` (the turn's instant),
 * which is also `settled_at` for a trade inserted settled (the house's rows of a backfilled
 * session), as in `updateTrades`.
 */
async function insertTrades<R extends TradeRecord>(
  em: EntityManager,
  rows: R[],
  fields: readonly (readonly [keyof R & string, string])[],
  conflict: string,
  at: number,
): Promise<void> {
  if (!rows.length) return;
  const names = fields.map(([c]) => c);
  const values = fields.map(([c, type]) =>
    arrayParam(
      rows.map((r) => {
        const v = r[c] as unknown;
        if (type !== 'int[]') return v as string | number | boolean | null;
        return v === null ? null : intArrayParam(v as number[]);
      }),
    ),
  );
  const unnest = fields.map(([, type]) => `?::${type === 'int[]' ? 'text' : type}[]`).join(', ');
  const select = fields
    .map(([c, type]) => (type === 'int[]' ? `x.${c}::int[]` : `x.${c}`))
    .join(', ');
  await em.execute(
    `insert into trade (${names.join(', ')}, settled_at, created_at)
     select ${select}, case when x.settled then ${instantSql()} end, ${instantSql()} from unnest(${unnest}) as x(${names.join(', ')})
     ${conflict}`,
    [at, at, ...values],
  );
}

/** The house's trades; a row the house already executed is skipped (trade_house_once). */
export async function insertHouseTrades(
  em: EntityManager,
  rows: TradeRecord[],
  at: number,
): Promise<void> {
  await insertTrades(
    em,
    rows,
    TRADE_FIELDS,
    `on conflict (market, tick, idx) where actor = 'house' do nothing`,
    at,
  );
}

/** Holders' fills: the position they belong to makes each insert happen once (trade_position). */
export async function insertHolderTrades(
  em: EntityManager,
  rows: (TradeRecord & Holder)[],
  at: number,
): Promise<void> {
  await insertTrades(
    em,
    rows,
    [...TRADE_FIELDS, ...HOLDER_FIELDS],
    'on conflict (position_id) where position_id is not null do nothing',
    at,
  );
}

export type OpenTrade = TradeState &
  Pick<
    TradeRecord,
    | 'tick'
    | 'idx'
    | 'cluster'
    | 'actor'
    | 'qty'
    | 'unit_cost_cents'
    | 'list_price_cents'
    | 'fee_cents'
    | 'holding_cents'
    | 'horizon'
  > & {
    id: number;
    /** Holders' trades only. */
    account_id: number | null;
    position_id: number | null;
  };

/**
 * Unsettled trades filled before session `tick` closes: the ones this close advances. No row locks:
 * only the close writes trade rows of a market after they are inserted, under the market's record
 * lock (and the update checks the revealed count it advances from).
 */
export async function openTrades(
  em: EntityManager,
  market: string,
  tick: number,
): Promise<OpenTrade[]> {
  const rows = await em.execute(
    `select id::float8 as id, tick::float8 as tick, idx, cluster, actor, qty, unit_cost_cents, list_price_cents, fee_cents,
            holding_cents, horizon, revealed_ticks, sales_by_tick, units_sold, qty_left, revenue_cents::float8 as revenue_cents,
            holding_cost_cents::float8 as holding_cost_cents, settled,
            account_id::float8 as account_id, position_id::float8 as position_id
       from trade where market = ? and tick < ? and not settled order by id`,
    [market, tick],
  );
  return rows as OpenTrade[];
}

/** Every open trade advanced one session at `at`, as column arrays (one statement, no JSON to build or parse). */
export async function updateTrades(
  em: EntityManager,
  rows: (TradeState & { id: number })[],
  at: number,
): Promise<void> {
  if (!rows.length) return;
  const col = (k: Exclude<keyof TradeState, 'sales_by_tick'>) => arrayParam(rows.map((r) => r[k]));
  await em.execute(
    `update trade t set revealed_ticks = x.revealed_ticks, sales_by_tick = x.sales_by_tick::int[], units_sold = x.units_sold,
            qty_left = x.qty_left, revenue_cents = x.revenue_cents, holding_cost_cents = x.holding_cost_cents,
            settled = x.settled, sold_out = x.sold_out, regime = x.regime, surcharge_cents = x.surcharge_cents,
            writeoff_cents = x.writeoff_cents, realized_pnl_cents = x.realized_pnl_cents,
            settled_at = case when x.settled then ${instantSql()} end
       from unnest(?::bigint[], ?::int[], ?::text[], ?::int[], ?::int[], ?::bigint[], ?::bigint[], ?::boolean[], ?::boolean[], ?::boolean[],
                   ?::bigint[], ?::bigint[], ?::bigint[])
            as x(id, revealed_ticks, sales_by_tick, units_sold, qty_left, revenue_cents, holding_cost_cents, settled, sold_out, regime,
                 surcharge_cents, writeoff_cents, realized_pnl_cents)
      where t.id = x.id and t.revealed_ticks = x.revealed_ticks - 1`,
    [
      at,
      intArrayParam(rows.map((r) => r.id)),
      col('revealed_ticks'),
      arrayParam(rows.map((r) => intArrayParam(r.sales_by_tick))),
      col('units_sold'),
      col('qty_left'),
      col('revenue_cents'),
      col('holding_cost_cents'),
      col('settled'),
      col('sold_out'),
      col('regime'),
      col('surcharge_cents'),
      col('writeoff_cents'),
      col('realized_pnl_cents'),
    ],
  );
}

export async function insertTape(
  em: EntityManager,
  market: string,
  rows: { tick: number; cluster: number; row: TapeRow }[],
): Promise<void> {
  if (!rows.length) return;
  await em.execute(
    `insert into tape (market, tick, cluster, row)
     select ?, tick, cluster, row from jsonb_to_recordset(?::jsonb) as x(tick bigint, cluster int, row jsonb)
     on conflict do nothing`,
    [market, json(rows)],
  );
}
