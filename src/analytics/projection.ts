/**
 * Naive projection for a deal (SPEC.md "Projection"; naive by design).
 *
 * 1. Fit velocity against x = sessions before the last close (x = lastTick - tick, so the last
 *    closed session is x = 0 and older ones are positive), by least squares ('trend') or the
 *    mean ('mean').
 * 2. Extend the fit over the settlement sessions k = 1..horizon at x = -(k + lead), where `lead`
 *    is the number of sessions between the last close and the first session of sales (default 0).
 *    Negative fitted velocities are clamped to 0 (a family cannot un-sell).
 * 3. For each qty q = 1..maxQty and each scenario (demand path × low_mult, × 1, × high_mult) run
 *    the cash rules of SPEC.md "Cash accounting" with no surcharge, exactly as the engine does
 *    (src/engine/accounting.ts stepPosition):
 *      cost_basis = q·c + q·f; each session: sold_k = min(d_k, left); revenue += sold_k·p;
 *      holding += left·h (units held at the START of the session, before its sales); left -= sold_k
 *      pnl = revenue - cost_basis - holding
 *    Money is carried in cents; sales are expected values and may be fractional, so the P&L is
 *    rounded to cents once at the end. On integer demand this equals the engine's simulatePosition.
 * 4. best_qty = the qty with the highest mid P&L, the smallest qty on ties; null when maxQty < 1.
 */
import { leastSquares, meanFit, type Fit } from './fit.js';
import { round2, toCents } from './money.js';
import { orderAmounts } from '../rules.js';
import { quantile } from './stats.js';

export interface HistoryRow {
  tick: number;
  velocity: number;
  sold: number;
  active: number;
}
export interface Scenarios {
  low_mult: number;
  high_mult: number;
}

export interface ProjectionInput {
  history: readonly HistoryRow[];
  fit: 'trend' | 'mean';
  /** settlement sessions to project (SPEC: 8) */
  horizon: number;
  unitCost: number;
  listPrice: number;
  feePerUnit: number;
  holdingPerUnit: number;
  maxQty: number;
  scenarios: Scenarios;
  /** tick of the last closed session; defaults to the latest tick in history */
  lastTick?: number;
  /** sessions between the last close and the first session of sales (x of sale k = -(k + lead)) */
  lead?: number;
  /** round the projected path to this many decimals before pricing it (what is served is what is priced) */
  pathDigits?: number;
}

export interface Projection {
  fit: Fit;
  projection: number[];
  scenarios: Scenarios;
  qty: number[];
  curve: { low: number[]; mid: number[]; high: number[] };
  best_qty: number | null;
}

/**
 * Cash P&L of q units along a demand path, per SPEC.md cash accounting (no surcharge), with the
 * engine's holding convention: each session charges h on the units held when it starts.
 */
export function cashPnl(
  q: number,
  demand: readonly number[],
  c: number,
  p: number,
  f: number,
  h: number,
): number {
  const [cc, pc, fc, hc] = [toCents(c), toCents(p), toCents(f), toCents(h)];
  let left = q,
    revenue = 0,
    holding = 0;
  for (const d of demand) {
    const sold = Math.min(Math.max(0, d), left);
    revenue += sold * pc;
    holding += left * hc;
    left -= sold;
  }
  return round2((revenue - orderAmounts(q, cc, fc).totalCents - holding) / 100);
}

/** Steps 1 and 2: the fit through the history and the projected path it gives. */
export function projectedPath(
  input: Pick<ProjectionInput, 'history' | 'fit' | 'horizon' | 'lastTick' | 'lead' | 'pathDigits'>,
): { fit: Fit; projection: number[] } {
  const last = input.lastTick ?? input.history.reduce((m, r) => Math.max(m, r.tick), -Infinity);
  const points = input.history.map((r) => ({ x: last - r.tick, y: r.velocity }));
  const fit: Fit = input.fit === 'mean' ? meanFit(points) : leastSquares(points);

  const horizon = Math.max(0, Math.floor(input.horizon));
  const projection: number[] = [];
  const lead = Math.max(0, input.lead ?? 0);
  const digits = input.pathDigits === undefined ? null : 10 ** input.pathDigits;
  for (let k = 1; k <= horizon; k++) {
    const v = Math.max(0, fit.intercept + fit.slope * -(k + lead));
    projection.push(digits === null ? v : Math.round(v * digits) / digits);
  }
  return { fit, projection };
}

/** Settled deals a family needs before its scenarios come from their dispersion. */
export const MIN_SETTLED_FOR_SCENARIOS = 5;
export const DEFAULT_SCENARIOS: Scenarios = { low_mult: 0.5, high_mult: 1.5 };
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/**
 * The scenarios from the per-deal velocities (units sold / horizon) of the family's settled deals:
 * low_mult = p10 / p50 clamped to [0, 1], high_mult = p90 / p50 clamped to [1, 5], with at least
 * MIN_SETTLED_FOR_SCENARIOS deals and p50 > 0; otherwise the defaults. Also the quantiles.
 */
export function scenariosFrom(velocities: readonly number[]) {
  const sorted = [...velocities].sort((x, y) => x - y);
  const [p10, p50, p90] = [0.1, 0.5, 0.9].map((q) => quantile(sorted, q));
  const scenarios =
    sorted.length < MIN_SETTLED_FOR_SCENARIOS ||
    p50 === null ||
    p10 === null ||
    p90 === null ||
    p50 <= 0
      ? { ...DEFAULT_SCENARIOS, basis: 'default' as const }
      : {
          low_mult: r4(clamp(p10 / p50, 0, 1)),
          high_mult: r4(clamp(p90 / p50, 1, 5)),
          basis: 'per_deal_velocity' as const,
        };
  return { scenarios, p10, p50, p90 };
}

export function project(input: ProjectionInput): Projection {
  const { fit, projection } = projectedPath(input);

  const maxQty = Math.max(0, Math.floor(input.maxQty));
  const qty = Array.from({ length: maxQty }, (_, i) => i + 1);
  const path = (m: number) => projection.map((v) => v * m);
  const curveFor = (m: number) => {
    const d = path(m);
    return qty.map((q) =>
      cashPnl(q, d, input.unitCost, input.listPrice, input.feePerUnit, input.holdingPerUnit),
    );
  };
  const curve = {
    low: curveFor(input.scenarios.low_mult),
    mid: curveFor(1),
    high: curveFor(input.scenarios.high_mult),
  };

  let best: number | null = null;
  curve.mid.forEach((v, i) => {
    if (best === null || v > curve.mid[best - 1]) best = i + 1;
  });

  return { fit, projection, scenarios: { ...input.scenarios }, qty, curve, best_qty: best };
}
