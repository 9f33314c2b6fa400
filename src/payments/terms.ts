// Payment terms of SPEC.md item 10, declared once: the manifest and GET /payments/methods serve
// them, and the account actor charges by the same numbers (integer cents where money moves).

export const MONTHLY_FEE = { amount: 15.0, currency: 'USD' } as const;
export const MONTHLY_FEE_CENTS = 1500;
export const PAYOUTS = { delay_days: 3.0, commission: 0.06, commission_pct: 6.0, minimum: 10.0, currency: 'USD' } as const;
export const GOLD_COINS = {
  free_at_registration: 5.0,
  coin_price: 5.0,
  currency: 'USD',
  packs: [5, 10, 25, 50, 100],
  convertible_to_money: false,
} as const;
