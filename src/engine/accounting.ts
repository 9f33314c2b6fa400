// The cash formulas of SPEC.md "Cash accounting", in integer cents. A position of q units at unit
// cost c, list price p, fee f per unit and holding h per unit per session, on demand d_1..d_H:
//   cost_basis = q*c + q*f                                (debited at payment)
//   session k: sold_k = min(d_k, left); revenue += sold_k*p; holding += left*h; left -= sold_k
//   writeoff   = left*c at settlement                     (already paid; no cash move)
//   surcharge  = round_half_up(q*c*extra_cost_frac) + flat_extra_cost   (only with the regime)
//   realized_pnl = revenue - cost_basis - holding - surcharge
// Holding is charged on the units held during the session, i.e. `left` before that session's
// sales (the same `left` as in sold_k = min(d_k, left)); a session after a sell-out costs nothing.

import { fractionOfCents } from './money.js';
import { orderAmounts } from '../rules.js';

export interface PositionTerms {
  qty: number;
  unitCostCents: number;
  listPriceCents: number;
  /** Fulfilment fee per unit. */
  feeCents: number;
  /** Holding cost per unit per session. */
  holdingCents: number;
}

export interface PositionState extends PositionTerms {
  ticks_done: number;
  qty_left: number;
  units_sold: number;
  revenue_cents: number;
  holding_cost_cents: number;
  sales_by_tick: number[];
  /** True once a session sold everything that was left (its demand is then only known to be
   *  at least what was left: censored). */
  censored: boolean;
}

export interface RegimeTerms {
  regime: boolean;
  extraCostFrac: number;
  flatExtraCostCents: number;
}

export interface SettledPosition extends PositionState {
  sold_out: boolean;
  regime: boolean;
  cost_basis_cents: number;
  writeoff_cents: number;
  surcharge_cents: number;
  realized_pnl_cents: number;
}

export interface SimulateInput extends PositionTerms, RegimeTerms {
  demand: readonly number[];
}

function assertCount(name: string, v: number): void {
  if (!Number.isSafeInteger(v) || v < 0)
    throw new RangeError(`${name} must be a non-negative integer, got ${v}`);
}

/** What funding the position's order debited (src/rules.ts orderAmounts). */
export function costBasisCents(t: PositionTerms): number {
  return orderAmounts(t.qty, t.unitCostCents, t.feeCents).totalCents;
}

/** A freshly filled position (no session done yet). */
export function openPosition(terms: PositionTerms): PositionState {
  assertCount('qty', terms.qty);
  assertCount('unitCostCents', terms.unitCostCents);
  assertCount('listPriceCents', terms.listPriceCents);
  assertCount('feeCents', terms.feeCents);
  assertCount('holdingCents', terms.holdingCents);
  return {
    qty: terms.qty,
    unitCostCents: terms.unitCostCents,
    listPriceCents: terms.listPriceCents,
    feeCents: terms.feeCents,
    holdingCents: terms.holdingCents,
    ticks_done: 0,
    qty_left: terms.qty,
    units_sold: 0,
    revenue_cents: 0,
    holding_cost_cents: 0,
    sales_by_tick: [],
    censored: false,
  };
}

/** One session of sales: the live close calls this once per open position per close. */
export function stepPosition(state: PositionState, demandK: number): PositionState {
  assertCount('demand', demandK);
  const left = state.qty_left;
  const sold = Math.min(demandK, left);
  return {
    qty: state.qty,
    unitCostCents: state.unitCostCents,
    listPriceCents: state.listPriceCents,
    feeCents: state.feeCents,
    holdingCents: state.holdingCents,
    ticks_done: state.ticks_done + 1,
    qty_left: left - sold,
    units_sold: state.units_sold + sold,
    revenue_cents: state.revenue_cents + sold * state.listPriceCents,
    holding_cost_cents: state.holding_cost_cents + left * state.holdingCents,
    sales_by_tick: state.sales_by_tick.concat(sold),
    censored: state.censored || (left > 0 && sold === left),
  };
}

/** Cash result so far (before settlement): revenue - cost_basis - holding. */
export function pnlSoFarCents(state: PositionState): number {
  return state.revenue_cents - costBasisCents(state) - state.holding_cost_cents;
}

export function surchargeCents(qty: number, unitCostCents: number, r: RegimeTerms): number {
  if (!r.regime) return 0;
  return fractionOfCents(qty * unitCostCents, r.extraCostFrac) + r.flatExtraCostCents;
}

/** Settlement after the last session. */
export function settlePosition(state: PositionState, r: RegimeTerms): SettledPosition {
  const cost_basis_cents = costBasisCents(state);
  const surcharge_cents = surchargeCents(state.qty, state.unitCostCents, r);
  return {
    qty: state.qty,
    unitCostCents: state.unitCostCents,
    listPriceCents: state.listPriceCents,
    feeCents: state.feeCents,
    holdingCents: state.holdingCents,
    ticks_done: state.ticks_done,
    qty_left: state.qty_left,
    units_sold: state.units_sold,
    revenue_cents: state.revenue_cents,
    holding_cost_cents: state.holding_cost_cents,
    sales_by_tick: state.sales_by_tick,
    censored: state.censored,
    sold_out: state.qty_left === 0,
    regime: r.regime,
    cost_basis_cents,
    writeoff_cents: state.qty_left * state.unitCostCents,
    surcharge_cents,
    realized_pnl_cents:
      state.revenue_cents - cost_basis_cents - state.holding_cost_cents - surcharge_cents,
  };
}

/** Every session at once, then settlement. Same arithmetic as stepPosition in one loop (a
 *  backfill settles hundreds of thousands of positions; a test checks both agree). */
export function simulatePosition(input: SimulateInput): SettledPosition {
  const st = openPosition(input);
  const p = input.listPriceCents;
  const h = input.holdingCents;
  let left = st.qty_left;
  let revenue = 0;
  let holding = 0;
  let censored = false;
  const sales: number[] = [];
  for (const d of input.demand) {
    assertCount('demand', d);
    const sold = d < left ? d : left;
    if (left > 0 && sold === left) censored = true;
    revenue += sold * p;
    holding += left * h;
    left -= sold;
    sales.push(sold);
  }
  st.ticks_done = sales.length;
  st.qty_left = left;
  st.units_sold = input.qty - left;
  st.revenue_cents = revenue;
  st.holding_cost_cents = holding;
  st.sales_by_tick = sales;
  st.censored = censored;
  return settlePosition(st, input);
}

export interface ProfitCurve {
  /** Index q-1: realised profit (cents) at volume q on the same demand path, null if unknown. */
  profit_curve_cents: Array<number | null>;
  known_up_to_qty: number;
}

/**
 * Realised profit at every volume 1..maxQty on the deal's demand path, as far as the record can
 * vouch for it. Rule: a session is censored when the executed position sold everything it had
 * left (sold_k == left before the sale, left > 0): demand is then only known to be >= left.
 *  - No censored session: every d_k was observed, so every volume is known:
 *    known_up_to_qty = maxQty.
 *  - Some censored session: volumes up to the executed one are still exact (a smaller position
 *    never holds more than the executed one, so in a censored session it sells out too), larger
 *    ones are not: known_up_to_qty = executedQty and the curve is null above it.
 * With several executors of one deal pass the largest executed volume: its censoring is binding.
 */
export function profitCurve(
  input: Omit<SimulateInput, 'qty'>,
  executedQty: number,
  maxQty: number,
): ProfitCurve {
  assertCount('executedQty', executedQty);
  const executed = simulatePosition({ ...input, qty: executedQty });
  const known = executed.censored ? Math.min(executedQty, maxQty) : maxQty;
  const curve: Array<number | null> = [];
  for (let q = 1; q <= maxQty; q++) {
    curve.push(q <= known ? simulatePosition({ ...input, qty: q }).realized_pnl_cents : null);
  }
  return { profit_curve_cents: curve, known_up_to_qty: known };
}
