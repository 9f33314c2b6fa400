// Read task of the record: the naive projection of a deal (SPEC.md "Projection"), for a deal of the
// current menu or a hypothetical one of a family at a given unit cost. All record work (family
// sales history from the tape, the family's trades) runs here, on the pool.
//
// Choices the SPEC leaves open:
// - history: the family's tape rows (cluster = the deal's) of the last `lookback` closed sessions
//   that had positions selling (active > 0); velocity = sold / active (units per position per
//   session). A session in which the family was not listed has no family tape row.
// - projection: the fit extended over the 8 sessions the deal would sell in. A deal of the open
//   session fills at its close (x = -1) and sells in the sessions after: x = -2 .. -9 (lead 1).
// - scenarios: low_mult = p10 / p50 and high_mult = p90 / p50 of the per-deal velocities
//   (units_sold / horizon) of the family's settled trades in the window, clamped to [0, 1] and
//   [1, 5], when at least 5 trades settled with p50 > 0; otherwise 0.5 and 1.5.
// - realised: the family's settled trades filled in the window; pnl_repriced replays the same
//   sales path with this deal's unit_cost and list_price (engine accounting) and keeps the trade's
//   own surcharge. samples adds how many lost money and the median and worst result per unit, and
//   calibration how many ended below the low scenario they would have been given
//   (src/analytics/similar-deals.ts): it reads the tape and trades of twice the lookback.
import { FAMILIES, MARKETS, centsToNumber, simulatePosition } from '../../src/engine/index.js';
import { project, scenariosFrom } from '../../src/analytics/projection.js';
import {
  belowLowScenario,
  settledResults,
  surchargeRecord,
  type SettledDeal,
} from '../../src/analytics/similar-deals.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ActorError } from '../runtime/actor.js';
import { defineReads } from '../runtime/read.js';
import type { DealProjectionArgs } from './messages.js';

type TradeRow = {
  tick: number;
  actor: string;
  qty: number;
  unit_cost_cents: number;
  list_price_cents: number;
  fee_cents: number;
  holding_cents: number;
  horizon: number;
  sales_by_tick: number[];
  units_sold: number;
  settled: boolean;
  sold_out: boolean | null;
  regime: boolean | null;
  surcharge_cents: number | null;
  pnl_cents: number | null;
};

const LEAD = 1;
const PATH_DIGITS = 6;
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

const settledDeal = (t: TradeRow): SettledDeal => ({
  tick: t.tick,
  horizon: t.horizon,
  qty: t.qty,
  unitsSold: t.units_sold,
  unitCostCents: t.unit_cost_cents,
  listPriceCents: t.list_price_cents,
  feeCents: t.fee_cents,
  holdingCents: t.holding_cents,
  pnlCents: t.pnl_cents!,
});

/** The sessions a projection reads: the lookback from..last, and reach..last for the calibration. */
type Window = { from: number; last: number; reach: number };
/** The list price projected, and where it came from (the deal's, or the record's mean). */
type ListPrice = { listPriceCents: number; basis: string };
type Velocity = { tick: number; velocity: number; sold: number; active: number };
type Scenarios = ReturnType<typeof scenariosFrom>;

export const dealProjectionReads = defineReads({
  'projection.deal': async ({ em }, a: DealProjectionArgs) => {
    const family = FAMILIES[a.cluster];
    if (!family) throw new ActorError(404, `unknown cluster ${a.cluster}`);
    const last = a.open - 1;
    const from = last - a.lookback + 1;
    // The calibration projects each deal of the window as of its own session: the lookback before it too.
    const w: Window = { from, last, reach: from - a.lookback };
    const price = await listPriceOf(em, a);
    const reached = await familyVelocities(em, a, w);
    const reachedTrades = await familyTrades(em, a, w);
    const history = reached.filter((r) => r.tick >= from);
    const trades = reachedTrades.filter((t) => t.tick >= from);
    const settled = trades.filter((t) => t.settled);
    const velocities = scenariosFrom(settled.map((t) => t.units_sold / t.horizon));
    const p = projectDeal(a, history, last, price.listPriceCents, velocities.scenarios);
    return {
      market: a.market,
      tick: a.open,
      cluster: a.cluster,
      sku_family: family.sku_family,
      history: history.map((r) => ({
        tick: r.tick,
        velocity: r4(r.velocity),
        sold: r.sold,
        active: r.active,
      })),
      fit: {
        kind: p.fit.kind,
        intercept: r6(p.fit.intercept),
        slope: r6(p.fit.slope),
        r2: r6(p.fit.r2),
        points: p.fit.points,
      },
      projection: p.projection,
      scenarios: velocities.scenarios,
      qty: p.qty,
      curve: p.curve,
      best_qty: p.best_qty,
      realised: settled.map((t) => realisedOf(t, a.unitCostCents, price.listPriceCents)),
      samples: samplesOf(trades, settled, velocities),
      params: paramsOf(a, w, price),
      quoted_velocity: MARKETS[a.market].quotes_velocity ? a.quotedVelocity : null,
      calibration: calibrationOf(a, w, reached, reachedTrades),
      // The curve replays sales only: a downside event's surcharge comes on top, as the record shows it.
      surcharge: {
        in_scenarios: false,
        ...surchargeRecord(
          settled.map((t) => ({
            qty: t.qty,
            downside: !!t.regime,
            surchargeCents: t.surcharge_cents ?? 0,
          })),
        ),
      },
    };
  },
});

/** The deal's list price, or (none given) the family's mean on its latest listed session on record. */
async function listPriceOf(em: EntityManager, a: DealProjectionArgs): Promise<ListPrice> {
  if (a.listPriceCents !== null)
    return { listPriceCents: a.listPriceCents, basis: a.listPriceBasis };
  const [row] = await em.execute(
    `select round(avg(list_price_cents))::float8 as p, max(tick)::float8 as tick from menu_row
          where market = ? and cluster = ? and tick = (select max(tick) from menu_row where market = ? and cluster = ? and tick <= ?)`,
    [a.market, a.cluster, a.market, a.cluster, a.open],
  );
  if (row?.p === null || row?.p === undefined)
    throw new ActorError(404, `family ${a.cluster} was never listed on ${a.market}`);
  return { listPriceCents: row.p as number, basis: 'record_mean' };
}

/** The family's sales velocity per session reach..last, of the sessions that had positions selling. */
async function familyVelocities(
  em: EntityManager,
  a: DealProjectionArgs,
  w: Window,
): Promise<Velocity[]> {
  const tape = await em.execute(
    `select tick::float8 as tick, (row->>'sold')::float8 as sold, (row->>'active')::float8 as active
         from tape where market = ? and tick between ? and ? and cluster = ? order by tick`,
    [a.market, w.reach, w.last, a.cluster],
  );
  return (tape as { tick: number; sold: number; active: number }[])
    .filter((r) => r.active > 0)
    .map((r) => ({ tick: r.tick, velocity: r.sold / r.active, sold: r.sold, active: r.active }));
}

/** The family's trades filled reach..last, newest first. */
async function familyTrades(
  em: EntityManager,
  a: DealProjectionArgs,
  w: Window,
): Promise<TradeRow[]> {
  return (await em.execute(
    `select tick::float8 as tick, actor, qty, unit_cost_cents, list_price_cents, fee_cents, holding_cents, horizon,
              sales_by_tick, units_sold, settled, sold_out, regime, surcharge_cents::float8 as surcharge_cents,
              realized_pnl_cents::float8 as pnl_cents
         from trade where market = ? and tick between ? and ? and cluster = ? order by tick desc, id desc`,
    [a.market, w.reach, w.last, a.cluster],
  )) as TradeRow[];
}

/** The fit of the family's history extended over the sessions the deal would sell in, and its P&L curve. */
function projectDeal(
  a: DealProjectionArgs,
  history: Velocity[],
  last: number,
  listPriceCents: number,
  scenarios: Scenarios['scenarios'],
) {
  const spec = MARKETS[a.market];
  return project({
    history,
    fit: a.fit,
    horizon: spec.settlement_horizon_ticks,
    lastTick: last,
    lead: LEAD,
    pathDigits: PATH_DIGITS,
    unitCost: centsToNumber(a.unitCostCents),
    listPrice: centsToNumber(listPriceCents),
    feePerUnit: centsToNumber(spec.fees.fulfilment_per_unit_cents),
    holdingPerUnit: centsToNumber(spec.fees.holding_per_unit_session_cents),
    maxQty: a.maxQty,
    scenarios: { low_mult: scenarios.low_mult, high_mult: scenarios.high_mult },
  });
}

/** A settled trade of the family, and its sales path replayed at this deal's unit cost and list price. */
function realisedOf(t: TradeRow, unitCostCents: number, listPriceCents: number) {
  const replay = simulatePosition({
    qty: t.qty,
    unitCostCents,
    listPriceCents,
    feeCents: t.fee_cents,
    holdingCents: t.holding_cents,
    demand: t.sales_by_tick,
    regime: false,
    extraCostFrac: 0,
    flatExtraCostCents: 0,
  });
  return {
    tick: t.tick,
    actor: t.actor,
    qty: t.qty,
    unit_cost: centsToNumber(t.unit_cost_cents),
    list_price: centsToNumber(t.list_price_cents),
    units_sold: t.units_sold,
    pnl: centsToNumber(t.pnl_cents!),
    pnl_repriced: centsToNumber(replay.realized_pnl_cents - (t.surcharge_cents ?? 0)),
    sold_out: t.sold_out,
    downside_event: t.regime,
  };
}

/** How the window's deals did: counts, results per unit, and the per-deal velocity quantiles. */
function samplesOf(trades: TradeRow[], settled: TradeRow[], v: Scenarios) {
  const results = settledResults(settled.map(settledDeal));
  return {
    deals: trades.length,
    settled: settled.length,
    profitable: settled.filter((t) => (t.pnl_cents ?? 0) > 0).length,
    downside_events: settled.filter((t) => t.regime).length,
    sold_out: settled.filter((t) => t.sold_out).length,
    lost: results.lost,
    median_pnl_per_unit: results.median_pnl_per_unit,
    worst_pnl_per_unit: results.worst_pnl_per_unit,
    per_deal_velocity_p10: v.p10 === null ? null : r4(v.p10),
    per_deal_velocity_p50: v.p50 === null ? null : r4(v.p50),
    per_deal_velocity_p90: v.p90 === null ? null : r4(v.p90),
  };
}

function paramsOf(a: DealProjectionArgs, w: Window, price: ListPrice) {
  const spec = MARKETS[a.market];
  return {
    lookback: a.lookback,
    fit: a.fit,
    horizon: spec.settlement_horizon_ticks,
    lead: LEAD,
    from_tick: w.from,
    to_tick: w.last,
    fee: centsToNumber(spec.fees.fulfilment_per_unit_cents),
    holding: centsToNumber(spec.fees.holding_per_unit_session_cents),
    unit_cost: centsToNumber(a.unitCostCents),
    list_price: centsToNumber(price.listPriceCents),
    list_price_basis: price.basis,
    cluster: a.cluster,
    max_qty: a.maxQty,
  };
}

/** How many of the family's settled deals ended below the low scenario they would have been given. */
function calibrationOf(
  a: DealProjectionArgs,
  w: Window,
  reached: Velocity[],
  reachedTrades: TradeRow[],
) {
  return belowLowScenario({
    history: reached,
    settled: reachedTrades.filter((t) => t.settled).map(settledDeal),
    from: w.from,
    lookback: a.lookback,
    fit: a.fit,
    lead: LEAD,
    pathDigits: PATH_DIGITS,
  });
}
