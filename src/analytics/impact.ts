/**
 * Kyle's lambda: price impact per unit of signed order flow (SPEC.md "Book": price_impact).
 *
 * Estimated WITH an intercept, the standard regression Δp_t = α + λ·q_t + ε_t, so a drift in
 * prices unrelated to flow goes into α rather than biasing λ:
 *   λ = Σ(q - q̄)(Δp - Δp̄) / Σ(q - q̄)²
 * Null with fewer than 3 points (a line through 2 points has no residual) or when q has zero
 * variance. Throws on unequal lengths (caller bug).
 */
import { moments } from './stats.js';

export function kyleLambda(
  priceChanges: readonly number[],
  signedVolumes: readonly number[],
): number | null {
  const { n, sxx, sxy } = moments(signedVolumes, priceChanges);
  if (n < 3 || sxx === 0) return null;
  return sxy / sxx;
}
