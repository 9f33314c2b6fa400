// Glue between a deal, its market's fees and the cash formulas: what a history backfill or a
// session close calls to turn menu rows into positions and records.

import {
  type PositionTerms,
  type ProfitCurve,
  type RegimeTerms,
  type SettledPosition,
  profitCurve,
  simulatePosition,
} from './accounting.js';
import { outcomeInputsFor } from './demand.js';
import { type MarketId, MARKETS } from './markets.js';
import { familyTick, levelsAt } from './latent.js';
import { dealWithLatent, menuSize } from './menu.js';
import type { Deal, OutcomeInputs } from './types.js';

export function positionTerms(market: MarketId, deal: Deal, qty: number): PositionTerms {
  const fees = MARKETS[market].fees;
  return {
    qty,
    unitCostCents: deal.unit_cost_cents,
    listPriceCents: deal.list_price_cents,
    feeCents: fees.fulfilment_per_unit_cents,
    holdingCents: fees.holding_per_unit_session_cents,
  };
}

export function regimeTerms(o: OutcomeInputs): RegimeTerms {
  return {
    regime: o.regime,
    extraCostFrac: o.extra_cost_frac,
    flatExtraCostCents: o.flat_extra_cost_cents,
  };
}

/** Settled result of holding `qty` units of `deal` through its whole horizon. */
export function settleDeal(
  market: MarketId,
  deal: Deal,
  inputs: OutcomeInputs,
  qty: number,
): SettledPosition {
  const fees = MARKETS[market].fees;
  return simulatePosition({
    qty,
    unitCostCents: deal.unit_cost_cents,
    listPriceCents: deal.list_price_cents,
    feeCents: fees.fulfilment_per_unit_cents,
    holdingCents: fees.holding_per_unit_session_cents,
    regime: inputs.regime,
    extraCostFrac: inputs.extra_cost_frac,
    flatExtraCostCents: inputs.flat_extra_cost_cents,
    demand: inputs.demand,
  });
}

/** Profit curve of a deal executed at `executedQty` (largest executor; 0 = oracle, all known). */
export function dealProfitCurve(
  market: MarketId,
  deal: Deal,
  inputs: OutcomeInputs,
  executedQty: number,
): ProfitCurve {
  const { qty: _q, ...terms } = positionTerms(market, deal, 0);
  return profitCurve(
    { ...terms, ...regimeTerms(inputs), demand: inputs.demand },
    executedQty,
    deal.max_qty,
  );
}

export interface SessionRow {
  deal: Deal;
  inputs: OutcomeInputs;
}

/** A session's menu with every row's outcome inputs (the backfill's unit of work; the oracle
 *  reads rejected rows' outcomes from the same inputs). */
export function sessionRows(seed: number, market: MarketId, tick: number): SessionRow[] {
  const n = menuSize(seed, market, tick);
  return Array.from({ length: n }, (_, i) => sessionRow(seed, market, tick, i, n));
}

/** Row `index` of a session's menu with its outcome inputs: what sessionRows holds at `index`,
 *  without drawing the session's other rows (a record read needs only the rows it reveals). */
export function sessionRow(
  seed: number,
  market: MarketId,
  tick: number,
  index: number,
  n = menuSize(seed, market, tick),
): SessionRow {
  const { deal, latent } = dealWithLatent(seed, market, tick, index, n);
  return { deal, inputs: outcomeInputsFor(seed, market, tick, latent) };
}

export interface MarketPath {
  /** Resale price of this listing's bundle at each session after the fill, cents: its list
   *  price moved with the family price level (ranking markets reveal it as price_by_tick). */
  price_by_tick_cents: number[];
  /** Sellers of the family at each session after the fill (nsellers_by_tick). */
  nsellers_by_tick: number[];
}

export function dealMarketPath(seed: number, market: MarketId, deal: Deal): MarketPath {
  const at = levelsAt(seed, market, deal.tick, deal.cluster, deal.listed_at).price;
  const price_by_tick_cents: number[] = [];
  const nsellers_by_tick: number[] = [];
  for (let k = 1; k <= MARKETS[market].settlement_horizon_ticks; k++) {
    const st = familyTick(seed, market, deal.tick + k, deal.cluster);
    price_by_tick_cents.push(Math.max(1, Math.round((deal.list_price_cents * st.priceLevel) / at)));
    nsellers_by_tick.push(st.nsellers);
  }
  return { price_by_tick_cents, nsellers_by_tick };
}
