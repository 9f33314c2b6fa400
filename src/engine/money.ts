// Money inside the engine is integer cents. These helpers convert at the edge (JSON numbers with
// 2 decimals) and do the one rounding the cash formulas need, in integer arithmetic.

/** Cents -> JSON number with 2 decimals (exact for every integer cent amount below 2^53/100). */
export function centsToNumber(cents: number): number {
  return Math.round(cents) / 100;
}

/** Dollars (a number with at most 2 decimals) -> integer cents. */
export function numberToCents(amount: number): number {
  return Math.round(amount * 100);
}

/** A fraction carried as integer basis points of a basis point (1e-4 steps) so rounding of
 *  amount x fraction is exact: round half-up of cents * frac4 / 10000. */
export function fractionOfCents(cents: number, frac: number): number {
  const frac4 = Math.round(frac * 10000);
  const num = cents * frac4;
  if (!Number.isSafeInteger(num)) throw new RangeError('amount too large for exact rounding');
  // Half-up for non-negative amounts: floor((num + 5000) / 10000) in integers.
  return Math.floor((num + 5000) / 10000);
}
