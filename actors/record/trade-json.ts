// The served Trade object (SPEC "Trade object") of a trade row, shared by the market record
// (history rows, market trades, dataset) and the agent's own GET /trades. The trade row holds the
// revealed state (it advances one session at each close), so serving it never leaks the future;
// only the ranking paths are stored whole and are cut to `revealed_ticks` here.
import type { TradeRecord } from '../market/rows.js';
import { MARKETS, centsToNumber, type MarketId } from '../../src/engine/index.js';

const RANKING_FIELDS = [
  'sales_rank',
  'sales_rank_avg',
  'rank_drops',
  'rank_drops_long',
  'nsellers',
] as const;

/**
 * Select list for `trade t join menu_row m on (m.market, m.tick, m.idx) = (t.market, t.tick, t.idx)`:
 * bigints cast to float8 (they come back as strings otherwise), the quote fields read from the
 * served deal of the menu row.
 */
export const TRADE_SELECT = `t.id::float8 as id, t.market, t.tick::float8 as tick, t.idx, t.offer_key, t.cluster, t.actor,
  t.account_id::float8 as account_id, t.position_id::float8 as position_id, t.qty, t.unit_cost_cents, t.list_price_cents,
  t.cost_basis_cents::float8 as cost_basis_cents, t.revealed_ticks, t.horizon, t.settled, t.sales_by_tick, t.units_sold, t.qty_left,
  t.revenue_cents::float8 as revenue_cents, t.holding_cost_cents::float8 as holding_cost_cents, t.sold_out, t.regime,
  t.surcharge_cents::float8 as surcharge_cents, t.writeoff_cents::float8 as writeoff_cents,
  t.realized_pnl_cents::float8 as realized_pnl_cents, t.price_by_tick_cents, t.nsellers_by_tick,
  (m.deal->>'sales_velocity')::float8 as sales_velocity, (m.deal->>'sales_rank')::float8 as sales_rank,
  (m.deal->>'sales_rank_avg')::float8 as sales_rank_avg, (m.deal->>'rank_drops')::float8 as rank_drops,
  (m.deal->>'rank_drops_long')::float8 as rank_drops_long, (m.deal->>'nsellers')::float8 as nsellers`;

export const TRADE_FROM = `trade t join menu_row m on m.market = t.market and m.tick = t.tick and m.idx = t.idx`;

/** A trade row as read with its menu row's quoted signals: the recorded trade plus its id and owner. */
export type TradeRow = Omit<TradeRecord, 'fee_cents' | 'holding_cents'> & {
  id: number;
  account_id: number | null;
  position_id: number | null;
  sales_velocity: number | null;
  sales_rank: number | null;
  sales_rank_avg: number | null;
  rank_drops: number | null;
  rank_drops_long: number | null;
  nsellers: number | null;
};

const money = (c: number | null) => (c === null ? null : centsToNumber(c));

export function tradeJson(r: TradeRow): Record<string, unknown> {
  const velocity = MARKETS[r.market as MarketId]?.quotes_velocity ?? r.sales_velocity !== null;
  const out: Record<string, unknown> = {
    id: r.id,
    market: r.market,
    tick: r.tick,
    offer_key: r.offer_key,
    cluster: r.cluster,
    actor: r.actor,
  };
  if (r.actor === 'user') out.account_id = r.account_id;
  out.position_id = r.position_id;
  out.qty = r.qty;
  out.unit_cost = centsToNumber(r.unit_cost_cents);
  out.list_price = centsToNumber(r.list_price_cents);
  if (velocity) out.sales_velocity = r.sales_velocity;
  else for (const f of RANKING_FIELDS) out[f] = r[f];
  Object.assign(out, {
    cost_basis: centsToNumber(r.cost_basis_cents),
    revealed_ticks: r.revealed_ticks,
    horizon: r.horizon,
    settled: r.settled,
    sales_by_tick: r.sales_by_tick.slice(0, r.revealed_ticks),
    units_sold_so_far: r.units_sold,
    qty_left: r.qty_left,
    revenue_so_far: centsToNumber(r.revenue_cents),
    holding_cost_so_far: centsToNumber(r.holding_cost_cents),
  });
  if (!velocity) {
    out.price_by_tick = (r.price_by_tick_cents ?? []).slice(0, r.revealed_ticks).map(centsToNumber);
    out.nsellers_by_tick = (r.nsellers_by_tick ?? []).slice(0, r.revealed_ticks);
  }
  if (r.settled) {
    Object.assign(out, {
      units_sold: r.units_sold,
      sold_out: r.sold_out,
      regime: r.regime,
      surcharge: money(r.surcharge_cents),
      writeoff: money(r.writeoff_cents),
      realized_pnl: money(r.realized_pnl_cents),
    });
  }
  return out;
}
