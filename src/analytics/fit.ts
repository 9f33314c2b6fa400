/**
 * Naive fits used by the projection (SPEC.md "Projection": fit {kind, intercept, slope, r2, points}).
 * `points` is the number of points the fit went through.
 * r2 = 1 - SSres/SStot, defined as 0 when SStot = 0 (no variance to explain).
 * Degenerate inputs never produce NaN: no points -> intercept 0; all x equal (incl. one point) -> slope 0.
 */
import { moments } from './stats.js';

export interface Point {
  x: number;
  y: number;
}
export interface Fit {
  kind: 'trend' | 'mean';
  intercept: number;
  slope: number;
  r2: number;
  points: number;
}

/** Ordinary least squares y = intercept + slope·x. */
export function leastSquares(points: readonly Point[]): Fit & { kind: 'trend' } {
  const { n, mx, my, sxx, syy, sxy } = moments(
    points.map((p) => p.x),
    points.map((p) => p.y),
  );
  if (n === 0) return { kind: 'trend', intercept: 0, slope: 0, r2: 0, points: 0 };
  if (sxx === 0) return { kind: 'trend', intercept: my, slope: 0, r2: 0, points: n };
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let ssRes = 0;
  for (const p of points) ssRes += (p.y - intercept - slope * p.x) ** 2;
  // A constant y leaves rounding residue in syy (its mean is inexact): that is no variance either.
  const noVariance = syy <= 1e-12 * n * Math.max(1, my * my);
  // With an intercept r2 lies in [0, 1]; clamp away floating-point overshoot.
  const r2 = noVariance ? 0 : Math.min(1, Math.max(0, 1 - ssRes / syy));
  return { kind: 'trend', intercept, slope, r2, points: n };
}

/** Flat fit at the mean of y: slope 0, r2 0 by definition (the mean explains no variance). */
export function meanFit(points: readonly Point[]): Fit & { kind: 'mean' } {
  const n = points.length;
  const intercept = n === 0 ? 0 : points.reduce((a, p) => a + p.y, 0) / n;
  return { kind: 'mean', intercept, slope: 0, r2: 0, points: n };
}
