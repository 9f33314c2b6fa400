/**
 * Bid-ask spread estimators for a market that has no limit order book: the spread is inferred
 * from the resale-price tape (SPEC.md "Book": spread_method roll | corwin_schultz | floor).
 */

export type SpreadMethod = 'roll' | 'corwin_schultz' | 'floor';

/**
 * Roll (1984): bid-ask bounce makes successive price changes negatively autocorrelated,
 * cov(Δp_t, Δp_{t-1}) = -s²/4, so s = 2·sqrt(-cov). Result is in price units.
 *
 * The autocovariance is the textbook sample estimator at lag 1 over the n = prices.length - 1
 * changes: γ̂(1) = (1/n) Σ_{t=2..n} (Δp_t - m)(Δp_{t-1} - m), m = mean of all changes.
 * Null with fewer than 3 prices (fewer than 2 changes) or when γ̂(1) >= 0 (Roll undefined).
 */
export function rollSpread(prices: readonly number[]): number | null {
  if (prices.length < 3) return null;
  const d: number[] = [];
  for (let i = 1; i < prices.length; i++) d.push(prices[i] - prices[i - 1]);
  const n = d.length;
  const m = d.reduce((a, b) => a + b, 0) / n;
  let acc = 0;
  for (let t = 1; t < n; t++) acc += (d[t] - m) * (d[t - 1] - m);
  const cov = acc / n;
  if (!(cov < 0)) return null; // also rejects NaN
  return 2 * Math.sqrt(-cov);
}

const K = 3 - 2 * Math.SQRT2;

/**
 * Corwin & Schultz (2012) high-low estimator. For each consecutive pair of periods (t, t+1):
 *   β = ln(H_t/L_t)² + ln(H_{t+1}/L_{t+1})²
 *   γ = ln(max(H_t,H_{t+1}) / min(L_t,L_{t+1}))²
 *   α = (√(2β) - √β)/(3 - 2√2) - √(γ/(3 - 2√2))
 *   S = 2(e^α - 1)/(1 + e^α), negative S set to 0
 * and the result is the mean S over pairs: a relative spread (fraction of price).
 * Pairs with a non-positive low, high < low or non-finite values are skipped.
 * Null with fewer than 2 periods or no usable pair. Throws on unequal lengths (caller bug).
 */
export function corwinSchultz(highs: readonly number[], lows: readonly number[]): number | null {
  if (highs.length !== lows.length)
    throw new RangeError(`length mismatch: ${highs.length} vs ${lows.length}`);
  const ok = (i: number) =>
    Number.isFinite(highs[i]) && Number.isFinite(lows[i]) && lows[i] > 0 && highs[i] >= lows[i];
  let total = 0,
    pairs = 0;
  for (let t = 0; t + 1 < highs.length; t++) {
    if (!ok(t) || !ok(t + 1)) continue;
    const b = Math.log(highs[t] / lows[t]) ** 2 + Math.log(highs[t + 1] / lows[t + 1]) ** 2;
    const g = Math.log(Math.max(highs[t], highs[t + 1]) / Math.min(lows[t], lows[t + 1])) ** 2;
    const a = (Math.sqrt(2 * b) - Math.sqrt(b)) / K - Math.sqrt(g / K);
    const s = (2 * (Math.exp(a) - 1)) / (1 + Math.exp(a));
    total += Math.max(0, s);
    pairs++;
  }
  return pairs === 0 ? null : total / pairs;
}

export interface SpreadInput {
  prices: readonly number[];
  highs: readonly number[];
  lows: readonly number[];
  mid: number;
  /** minimum spread as a fraction of mid */
  floorFrac: number;
}

/**
 * Pick the book's spread, in price units, in this order:
 *   1. Roll, when defined and above the floor;
 *   2. else Corwin-Schultz × mid, when defined and above the floor;
 *   3. else the floor, floorFrac × mid.
 * Roll comes first because it uses closes only (the tape's most reliable series); the high-low
 * estimator is the fallback when the closes show no bounce; the floor keeps the book two-sided.
 */
export function chooseSpread(input: SpreadInput): { spread: number; method: SpreadMethod } {
  const floor = input.floorFrac * input.mid;
  const roll = rollSpread(input.prices);
  if (roll !== null && roll > floor) return { spread: roll, method: 'roll' };
  const cs = corwinSchultz(input.highs, input.lows);
  if (cs !== null && cs * input.mid > floor)
    return { spread: cs * input.mid, method: 'corwin_schultz' };
  return { spread: floor, method: 'floor' };
}
