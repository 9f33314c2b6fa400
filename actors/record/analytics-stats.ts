// Read task: per-session stats of settled sessions, from executed trades (and, with the oracle
// switch, the engine's outcomes of every menu row, rejected ones included).
import type { EntityManager } from '@mikro-orm/postgresql';
import { rate } from '../../src/analytics/tape.js';
import {
  FAMILIES,
  MARKETS,
  centsToNumber as money,
  dealProfitCurve,
  sessionRows,
  type MarketId,
} from '../../src/engine/index.js';
import { defineReads } from '../runtime/read.js';

export type StatsArgs = { market: MarketId; from: number; to: number; oracle: boolean };

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** Aggregates of a session's executed trades per family (all settled: the session is settled). */
type Agg = {
  tick: number;
  cluster: number;
  observed: number;
  trades: number;
  units: number;
  house_n: number;
  house_pnl: number;
  house_cost: number;
  user_n: number;
  user_pnl: number;
  profitable: number;
  regime: number;
  censored: number;
  margin_sum: number;
  cost_sum: number;
  sv_sum: number | null;
};

// `largest`: the row's largest trade (its censoring is binding: "censored" = it sold out).
const AGG_SQL = `
  with tr as (
    select t.tick, t.idx, t.cluster, t.actor, t.qty, t.cost_basis_cents, t.realized_pnl_cents, t.sold_out, t.regime,
           row_number() over (partition by t.tick, t.idx order by t.qty desc, t.id) = 1 as largest
      from trade t where t.market = ? and t.tick between ? and ? and t.settled)
  select tr.tick::float8 as tick, tr.cluster,
         count(*) filter (where largest)::int as observed,
         count(*)::int as trades,
         sum(tr.qty)::int as units,
         count(*) filter (where actor = 'house')::int as house_n,
         coalesce(sum(realized_pnl_cents) filter (where actor = 'house'), 0)::float8 as house_pnl,
         coalesce(sum(cost_basis_cents) filter (where actor = 'house'), 0)::float8 as house_cost,
         count(*) filter (where actor = 'user')::int as user_n,
         coalesce(sum(realized_pnl_cents) filter (where actor = 'user'), 0)::float8 as user_pnl,
         count(*) filter (where realized_pnl_cents > 0)::int as profitable,
         count(*) filter (where regime)::int as regime,
         count(*) filter (where largest and sold_out)::int as censored,
         sum(m.list_price_cents - m.unit_cost_cents) filter (where largest)::float8 as margin_sum,
         sum(m.unit_cost_cents) filter (where largest)::float8 as cost_sum,
         sum((m.deal->>'sales_velocity')::float8) filter (where largest) as sv_sum
    from tr join menu_row m on m.market = ? and m.tick = tr.tick and m.idx = tr.idx
   group by tr.tick, tr.cluster order by tr.tick, tr.cluster`;

function add(a: Agg, b: Agg): Agg {
  const out = { ...a };
  for (const k of Object.keys(b) as (keyof Agg)[]) {
    if (k === 'tick' || k === 'cluster') continue;
    out[k] = ((a[k] ?? 0) + (b[k] ?? 0)) as never;
  }
  return out;
}

function family(a: Agg) {
  return {
    sku_family: FAMILIES[a.cluster]?.sku_family ?? null,
    n: a.trades,
    observed_n: a.observed,
    units: a.units,
    pnl: money(a.house_pnl + a.user_pnl),
    profitable_rate: rate(a.profitable, a.trades),
    regime_rate: rate(a.regime, a.trades),
    censored_rate: rate(a.censored, a.observed),
  };
}

function statsRow(tick: number, menuN: number, aggs: Agg[], velocity: boolean) {
  const zero: Agg = {
    tick,
    cluster: -1,
    observed: 0,
    trades: 0,
    units: 0,
    house_n: 0,
    house_pnl: 0,
    house_cost: 0,
    user_n: 0,
    user_pnl: 0,
    profitable: 0,
    regime: 0,
    censored: 0,
    margin_sum: 0,
    cost_sum: 0,
    sv_sum: 0,
  };
  const t = aggs.reduce(add, zero);
  const meanCents = (s: number) => (t.observed ? money(s / t.observed) : null);
  return {
    tick,
    menu_n: menuN,
    observed_n: t.observed,
    observed_rate: rate(t.observed, menuN),
    house_n: t.house_n,
    house_rate: rate(t.house_n, menuN),
    house_pnl: money(t.house_pnl),
    house_pnl_mean: t.house_n ? money(t.house_pnl / t.house_n) : null,
    house_roi: t.house_cost ? r4(t.house_pnl / t.house_cost) : null,
    user_n: t.user_n,
    user_pnl: money(t.user_pnl),
    observed_profitable_rate: rate(t.profitable, t.trades),
    regime_rate: rate(t.regime, t.trades),
    censored_rate: rate(t.censored, t.observed),
    mean_margin: meanCents(t.margin_sum),
    mean_cost: meanCents(t.cost_sum),
    mean_sv: velocity && t.observed ? r4((t.sv_sum ?? 0) / t.observed) : null,
    families: Object.fromEntries(aggs.map((a) => [String(a.cluster), family(a)])),
  };
}

/**
 * What perfect hindsight says about every menu row of a session (the oracle switch): each row's
 * full profit curve from the engine (dealProfitCurve with executedQty 0: nothing censored).
 *   best_pnl*: sum over rows of the best profit at any volume, a row whose best is a loss counting 0
 *   *_profitable_rate_q1: share of rows that would have made a profit at qty 1
 */
export function oracleRow(seed: number, market: MarketId, tick: number, executed: Set<number>) {
  const acc = { all: [0, 0, 0], observed: [0, 0, 0], rejected: [0, 0, 0] }; // rows, profitable at 1, best cents
  let regime = 0;
  let demand = 0;
  let bestQtySum = 0;
  const rows = sessionRows(seed, market, tick);
  rows.forEach(({ deal, inputs }, idx) => {
    const curve = dealProfitCurve(market, deal, inputs, 0).profit_curve_cents as number[];
    let best = 0;
    for (let q = 1; q < curve.length; q++) if (curve[q] > curve[best]) best = q;
    const gain = Math.max(0, curve[best]);
    bestQtySum += curve[best] > 0 ? best + 1 : 0;
    for (const k of ['all', executed.has(idx) ? 'observed' : 'rejected'] as const) {
      acc[k][0]++;
      acc[k][1] += curve[0] > 0 ? 1 : 0;
      acc[k][2] += gain;
    }
    regime += inputs.regime ? 1 : 0;
    demand += inputs.demand.reduce((s, d) => s + d, 0);
  });
  return {
    rows: acc.all[0],
    rejected_n: acc.rejected[0],
    best_pnl: money(acc.all[2]),
    best_pnl_observed: money(acc.observed[2]),
    best_pnl_rejected: money(acc.rejected[2]),
    best_qty_mean: rows.length ? r4(bestQtySum / rows.length) : null,
    profitable_rate_q1: rate(acc.all[1], acc.all[0]),
    observed_profitable_rate_q1: rate(acc.observed[1], acc.observed[0]),
    rejected_profitable_rate_q1: rate(acc.rejected[1], acc.rejected[0]),
    regime_rate: rate(regime, rows.length),
    demand_mean: rows.length ? r4(demand / rows.length) : null,
  };
}

async function executedRows(
  em: EntityManager,
  market: string,
  from: number,
  to: number,
): Promise<Map<number, Set<number>>> {
  const rows = await em.execute(
    'select distinct tick::float8 as tick, idx from trade where market = ? and tick between ? and ?',
    [market, from, to],
  );
  const out = new Map<number, Set<number>>();
  for (const r of rows) {
    if (!out.has(r.tick)) out.set(r.tick, new Set());
    out.get(r.tick)!.add(r.idx);
  }
  return out;
}

/** One row per recorded session from..to (the route clamps `to` to the last settled session). */
export async function statsRows(em: EntityManager, seed: number, a: StatsArgs) {
  // First: a session seen recorded here has all its rows committed for the queries below.
  const sessions = await em.execute(
    `select s.tick::float8 as tick, (select count(*) from menu_row m where m.market = s.market and m.tick = s.tick)::int as menu_n
       from market_session s where s.market = ? and s.recorded and s.tick between ? and ? order by s.tick`,
    [a.market, a.from, a.to],
  );
  if (!sessions.length) return [];
  const aggs = (await em.execute(AGG_SQL, [a.market, a.from, a.to, a.market])) as Agg[];
  const byTick = new Map<number, Agg[]>();
  for (const g of aggs) (byTick.get(g.tick) ?? byTick.set(g.tick, []).get(g.tick)!).push(g);
  const executed = a.oracle ? await executedRows(em, a.market, a.from, a.to) : undefined;
  const velocity = MARKETS[a.market].quotes_velocity;
  return sessions.map((s) => {
    const row = statsRow(s.tick, s.menu_n, byTick.get(s.tick) ?? [], velocity);
    return executed
      ? { ...row, oracle: oracleRow(seed, a.market, s.tick, executed.get(s.tick) ?? new Set()) }
      : row;
  });
}

export const statsReads = defineReads({
  'analytics.stats': async ({ em, seed }, a: StatsArgs) => statsRows(em, seed, a),
});
