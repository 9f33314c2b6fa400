// Demand of a deal over its settlement horizon. Keyed by the deal (seed, market, tick, index), not
// by the position: the house, every holder and the oracle see the same path.
//
// d_k ~ NegBin(mean = rate_family(tick+k) * m, size = family dispersion), k = 1..horizon, where
//   m = sell_through_bias(family) * relativePrice^-elasticity * exp(deal_sd*z - deal_sd^2/2)
// so demand follows the family's autocorrelated index forward in time, a listing priced above its
// family sells slower, and each deal has its own unobservable luck. A downside regime strikes
// with the family's propensity at a uniform session; demand is multiplied by REGIME.collapse from
// that session on and settlement carries a surcharge.

import { familyByCluster } from './catalog.js';
import { familyTick } from './latent.js';
import { type MarketId, MARKETS } from './markets.js';
import { dealWithLatent, parseDealKey } from './menu.js';
import { DYNAMICS, LISTING, REGIME } from './params.js';
import { keyedStream } from './rng.js';
import type { DealLatent, OutcomeInputs } from './types.js';
import { surchargeCents } from './accounting.js';

/** The deal's demand path, regime and surcharge parameters. `ref` is the menu index or the key. */
export function dealOutcomeInputs(
  seed: number,
  market: MarketId,
  tick: number,
  ref: number | string,
): OutcomeInputs {
  let index: number;
  if (typeof ref === 'number') index = ref;
  else {
    const parsed = parseDealKey(seed, ref);
    if (!parsed || parsed.market !== market || parsed.tick !== tick)
      throw new RangeError(`unknown deal key ${ref}`);
    index = parsed.index;
  }
  return outcomeInputsFor(seed, market, tick, dealWithLatent(seed, market, tick, index).latent);
}

/**
 * dealOutcomeInputs remembered per (tick, index) for one pass over many trades of the same few
 * sessions (a close advances every open trade: 10k trades come from a few hundred menu rows, and
 * each draw would recompute its deal). Drop it after the pass: it holds every row asked for.
 */
export function outcomeInputsMemo(
  seed: number,
  market: MarketId,
): (tick: number, index: number) => OutcomeInputs {
  const known = new Map<string, OutcomeInputs>();
  return (tick, index) => {
    const k = `${tick}/${index}`;
    let v = known.get(k);
    if (!v) known.set(k, (v = dealOutcomeInputs(seed, market, tick, index)));
    return v;
  };
}

/** Same as dealOutcomeInputs for a deal whose latent facts are already at hand (menu walks). */
export function outcomeInputsFor(
  seed: number,
  market: MarketId,
  tick: number,
  latent: DealLatent,
): OutcomeInputs {
  const fam = familyByCluster(latent.cluster);
  const horizon = MARKETS[market].settlement_horizon_ticks;
  const s = keyedStream(seed, market, tick, 'outcome', latent.menuIndex);
  const sd = LISTING.deal_sd;
  const mult =
    fam.sell_through_bias *
    Math.pow(latent.relativePrice, -LISTING.elasticity) *
    Math.exp(sd * s.normal() - (sd * sd) / 2);
  const regime = s.uniform() < fam.downside * REGIME.propensity_mult;
  const strike = s.int(1, horizon);
  const [fracLo, fracHi] = REGIME.extra_cost_frac;
  const frac = Math.round(s.between(fracLo, fracHi) * 1e4) / 1e4;
  const [flatLo, flatHi] = DYNAMICS[market].flat_surcharge_cents;
  const flat = s.int(flatLo, flatHi);
  const demand: number[] = [];
  for (let k = 1; k <= horizon; k++) {
    const rate = familyTick(seed, market, tick + k, latent.cluster).rate;
    const d = s.negBinomial(rate * mult, fam.dispersion);
    demand.push(regime && k >= strike ? Math.round(d * REGIME.collapse) : d);
  }
  return {
    demand,
    regime,
    regime_session: regime ? strike : null,
    extra_cost_frac: regime ? frac : 0,
    flat_extra_cost_cents: regime ? flat : 0,
  };
}

/**
 * The settlement surcharge a downside event would bring a position of `qty` bought at
 * `unitCostCents` on `market`, at the least and the most its draw allows (cents): the fraction and
 * the flat amount are drawn per deal in REGIME's and the market's ranges (outcomeInputsFor).
 */
export function surchargeRangeCents(
  market: MarketId,
  qty: number,
  unitCostCents: number,
): { low: number; high: number } {
  const [fracLo, fracHi] = REGIME.extra_cost_frac;
  const [flatLo, flatHi] = DYNAMICS[market].flat_surcharge_cents;
  const at = (extraCostFrac: number, flatExtraCostCents: number) =>
    surchargeCents(qty, unitCostCents, { regime: true, extraCostFrac, flatExtraCostCents });
  return { low: at(fracLo, flatLo), high: at(fracHi, flatHi) };
}
