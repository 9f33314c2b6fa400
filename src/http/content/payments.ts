// Payment terms of SPEC.md item 10, declared once: the manifest and GET /payments/methods both
// serve them, and the accounting issue charges by the same numbers.

export const MONTHLY_FEE = { amount: 15.0, currency: 'USD' } as const;
export const PAYOUTS = { delay_days: 3.0, commission: 0.06, commission_pct: 6.0, minimum: 10.0, currency: 'USD' } as const;
export const GOLD_COINS = {
  free_at_registration: 5.0,
  coin_price: 5.0,
  currency: 'USD',
  packs: [5, 10, 25, 50, 100],
  convertible_to_money: false,
} as const;

export const TERMS_VERSION = '2026-11-01';

export function paymentMethods(baseUrl: string) {
  return {
    environment: 'demo',
    real_charges: false,
    methods: [
      { id: 'balance', ready: true, description: 'the trading account balance' },
      {
        id: 'card',
        ready: true,
        description: 'test cards only; no real charge',
        test_cards: [
          { number: '4242 4242 4242 4242', result: 'approved' },
          { number: '4000 0000 0000 0002', result: 'declined (402)' },
        ],
      },
      { id: 'crypto', ready: false, description: 'not available yet' },
    ],
    monthly_fee: {
      ...MONTHLY_FEE,
      charged: 'once per calendar month, with the first real-money checkout that delivers',
      not_charged_on: ['further checkouts of the same month', 'top-ups', 'payouts', 'anything paid in Gold Coins'],
    },
    gold_coins: GOLD_COINS,
    payouts: PAYOUTS,
    terms_url: `${baseUrl}/terms`,
    privacy_url: `${baseUrl}/privacy`,
  };
}
