// The house's own policy (house_accepted, house_qty). It reads only what a deal serves — the
// quoted velocity, or on ranking markets the rate implied by sales_rank and nsellers — plus the
// market's fees, and it is deliberately naive so that an analysing agent can beat it:
//  - it takes the quote at face value (no family bias, no mean reversion of the demand index);
//  - it sizes to the expected sales over the horizon instead of the newsvendor optimum, so it
//    overbuys whenever margins are thin or demand is overdispersed;
//  - it models demand as Poisson (real demand is negative binomial, and sometimes collapses);
//  - it ignores the listing's price relative to its family (demand is price-elastic) and the
//    family's downside propensity.

import type { MarketSpec } from './markets.js';
import { HOUSE } from './params.js';
import { logFactorial } from './rng.js';
import { orderAmounts } from '../rules.js';

export interface HouseInput {
  /** Expected units per session the house believes (quoted or read off the rank). */
  rate: number;
  unitCostCents: number;
  listPriceCents: number;
  maxQty: number;
}

export interface HouseDecision {
  accepted: boolean;
  qty: number;
  /** The house's expected profit at qty, cents (not served; useful for analysis and tests). */
  expectedProfitCents: number;
}

/** E[min(D, q)] for D ~ Poisson(lambda) = sum_{j<q} P(D > j). */
export function expectedSalesPoisson(lambda: number, q: number): number {
  if (!(lambda > 0)) return 0;
  const logLam = Math.log(lambda);
  let cdf = 0;
  let total = 0;
  for (let j = 0; j < q; j++) {
    cdf += Math.exp(-lambda + j * logLam - logFactorial(j));
    total += Math.max(0, 1 - cdf);
  }
  return total;
}

export function houseDecision(market: MarketSpec, input: HouseInput): HouseDecision {
  const horizon = market.settlement_horizon_ticks;
  const fee = market.fees.fulfilment_per_unit_cents;
  const hold = market.fees.holding_per_unit_session_cents;
  const { rate, unitCostCents: c, listPriceCents: p, maxQty } = input;
  const lambda = rate * horizon;
  const qty = Math.min(maxQty, Math.max(1, Math.round(lambda * HOUSE.size_factor)));
  // Carry under straight-line depletion at the believed rate.
  let carry = 0;
  for (let k = 0; k < horizon; k++) carry += Math.max(0, qty - k * rate);
  const outlay = orderAmounts(qty, c, fee).totalCents;
  const expected = p * expectedSalesPoisson(lambda, qty) - outlay - hold * carry;
  const accepted = expected >= HOUSE.hurdle[market.id] * outlay;
  return { accepted, qty: accepted ? qty : 0, expectedProfitCents: expected };
}
