/**
 * Small descriptive statistics shared by tape, stats, pulse, fit and the estimators.
 * Empty or undefined cases return null rather than NaN so callers must decide what to serve.
 */

export function sum(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** Arithmetic mean; null for an empty list. */
export function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : sum(xs) / xs.length;
}

/** Median (mean of the two middle values for even n); null for an empty list. Input need not be sorted. */
export function median(xs: readonly number[]): number | null {
  return quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
}

/**
 * Quantile of an ascending-sorted list with linear interpolation between order statistics
 * (numpy's default, "type 7"): position h = (n - 1) * q, value = s[floor h] + (h - floor h) * (s[ceil h] - s[floor h]).
 * q is clamped to [0, 1]; null for an empty list.
 */
export function quantile(sorted: readonly number[], q: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const h = (n - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

/**
 * Centred cross-products of two equal-length series: { sxx, syy, sxy, mx, my, n }.
 * Centring first keeps the sums accurate when values are large relative to their spread.
 */
export function moments(xs: readonly number[], ys: readonly number[]) {
  if (xs.length !== ys.length)
    throw new RangeError(`length mismatch: ${xs.length} vs ${ys.length}`);
  const n = xs.length;
  const mx = n ? sum(xs) / n : 0;
  const my = n ? sum(ys) / n : 0;
  let sxx = 0,
    syy = 0,
    sxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = xs[i] - mx,
      dy = ys[i] - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  return { n, mx, my, sxx, syy, sxy };
}

/** Pearson correlation; null with fewer than 2 points or when either series is constant. */
export function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  const { n, sxx, syy, sxy } = moments(xs, ys);
  if (n < 2 || sxx === 0 || syy === 0) return null;
  // Clamp: rounding can push |r| a hair past 1.
  return Math.max(-1, Math.min(1, sxy / Math.sqrt(sxx * syy)));
}

/** Volume-weighted average price Σp·v / Σv; null when total volume is not positive. */
export function vwap(prices: readonly number[], volumes: readonly number[]): number | null {
  if (prices.length !== volumes.length)
    throw new RangeError(`length mismatch: ${prices.length} vs ${volumes.length}`);
  let pv = 0,
    v = 0;
  for (let i = 0; i < prices.length; i++) {
    pv += prices[i] * volumes[i];
    v += volumes[i];
  }
  return v > 0 ? pv / v : null;
}
