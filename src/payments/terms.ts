// Payment terms of SPEC.md item 10, declared once: the manifest and GET /payments/methods serve
// them, and the account actor charges by the same numbers (integer cents where money moves).

// The month's participation fee is src/payments/fee.ts's (its amount, month and decision in one module).
export { MONTHLY_FEE } from './fee.js';
export const PAYOUTS = {
  delay_days: 3.0,
  commission: 0.06,
  commission_pct: 6.0,
  minimum: 10.0,
  currency: 'USD',
} as const;
export const GOLD_COINS = {
  free_at_registration: 5.0,
  coin_price: 5.0,
  currency: 'USD',
  packs: [5, 10, 25, 50, 100],
  convertible_to_money: false,
} as const;

/** Payout amounts in integer cents (PAYOUTS in USD is what is served). */
export const PAYOUT_MINIMUM_CENTS = 1000;
/** The payout commission in basis points (PAYOUTS.commission 0.06). */
export const PAYOUT_COMMISSION_BP = 600;

/** The commission on a payout of `amountCents`, rounded half up to the cent. */
export function payoutCommissionCents(amountCents: number): number {
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0)
    throw new RangeError(`payout amount must be positive integer cents, got ${amountCents}`);
  return Math.floor((amountCents * PAYOUT_COMMISSION_BP + 5000) / 10_000);
}

/** Gold Coins move in hundredths of a coin (5.0 coins = 500). */
export const GC_HUNDREDTHS = 100;
export const GC_GRANT_HUNDREDTHS = GOLD_COINS.free_at_registration * GC_HUNDREDTHS;
/** What a pack of `coins` costs by card, in cents (coin_price USD a coin). */
export const packPriceCents = (coins: number) => coins * GOLD_COINS.coin_price * 100;
export const isPack = (coins: number): boolean =>
  (GOLD_COINS.packs as readonly number[]).includes(coins);
