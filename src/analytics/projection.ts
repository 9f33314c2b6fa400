/**
 * Naive projection for a deal (SPEC.md "Projection"; naive by design).
 *
 * 1. Fit velocity against x = sessions before the last close (x = lastTick - tick, so the last
 *    closed session is x = 0 and older ones are positive), by least squares ('trend') or the
 *    mean ('mean').
 * 2. Extend the fit over the settlement sessions k = 1..horizon at x = -k. Negative fitted
 *    velocities are clamped to 0 (a family cannot un-sell).
 * 3. For each qty q = 1..maxQty and each scenario (demand path × low_mult, × 1, × high_mult) run
 *    the cash rules of SPEC.md "Cash accounting" with no surcharge:
 *      cost_basis = q·c + q·f; each session: sold_k = min(d_k, left); revenue += sold_k·p;
 *      left -= sold_k; holding += left·h   (units still held at the session's end)
 *      pnl = revenue - cost_basis - holding
 *    Sales are expected values and may be fractional; P&L is rounded to cents.
 * 4. best_qty = the qty with the highest mid P&L, the smallest qty on ties; null when maxQty < 1.
 */
import { leastSquares, meanFit, type Fit } from './fit.js';
import { round2 } from './money.js';

export interface HistoryRow { tick: number; velocity: number; sold: number; active: number }
export interface Scenarios { low_mult: number; high_mult: number }

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
}

export interface Projection {
  fit: Fit;
  projection: number[];
  scenarios: Scenarios;
  qty: number[];
  curve: { low: number[]; mid: number[]; high: number[] };
  best_qty: number | null;
}

/** Cash P&L of q units along an expected demand path, per SPEC.md cash accounting (no surcharge). */
export function cashPnl(q: number, demand: readonly number[], c: number, p: number, f: number, h: number): number {
  let left = q, revenue = 0, holding = 0;
  for (const d of demand) {
    const sold = Math.min(Math.max(0, d), left);
    revenue += sold * p;
    left -= sold;
    holding += left * h;
  }
  return round2(revenue - (q * c + q * f) - holding);
}

export function project(input: ProjectionInput): Projection {
  const last = input.lastTick ?? input.history.reduce((m, r) => Math.max(m, r.tick), -Infinity);
  const points = input.history.map((r) => ({ x: last - r.tick, y: r.velocity }));
  const fit: Fit = input.fit === 'mean' ? meanFit(points) : leastSquares(points);

  const horizon = Math.max(0, Math.floor(input.horizon));
  const projection: number[] = [];
  for (let k = 1; k <= horizon; k++) projection.push(Math.max(0, fit.intercept + fit.slope * -k));

  const maxQty = Math.max(0, Math.floor(input.maxQty));
  const qty = Array.from({ length: maxQty }, (_, i) => i + 1);
  const path = (m: number) => projection.map((v) => v * m);
  const curveFor = (m: number) => {
    const d = path(m);
    return qty.map((q) => cashPnl(q, d, input.unitCost, input.listPrice, input.feePerUnit, input.holdingPerUnit));
  };
  const curve = { low: curveFor(input.scenarios.low_mult), mid: curveFor(1), high: curveFor(input.scenarios.high_mult) };

  let best: number | null = null;
  curve.mid.forEach((v, i) => { if (best === null || v > curve.mid[best - 1]) best = i + 1; });

  return { fit, projection, scenarios: { ...input.scenarios }, qty, curve, best_qty: best };
}
