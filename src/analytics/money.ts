/**
 * Money helpers. Amounts are decimal (CONTRACT.md "Money"): 1.005 means one dollar and half a
 * cent, even though the binary double closest to it is 1.00499999999999989...
 */

/**
 * Round to cents, half away from zero, on the *decimal* value.
 * `x * 100` is cleaned to 15 significant digits first, which removes binary noise
 * (1.005 * 100 = 100.49999999999999 -> 100.5) before rounding. Non-finite input is returned as is;
 * -0 becomes 0.
 */
export function round2(x: number): number {
  if (!Number.isFinite(x)) return x;
  const cents = Number((Math.abs(x) * 100).toPrecision(15));
  const r = (Math.sign(x) * Math.round(cents)) / 100;
  return r === 0 ? 0 : r;
}

/** Integer cents of an amount, with the same decimal rounding as `round2`. */
export function toCents(x: number): number {
  return Math.round(round2(x) * 100);
}
