// What the service tells clients about payments (manifest, GET /payments/methods); the terms
// themselves live in src/payments/terms.ts.
import { GOLD_COINS, MONTHLY_FEE, PAYOUTS } from '../payments/terms.js';
import { TEST_CARDS } from '../payments/cards.js';

export { GOLD_COINS, MONTHLY_FEE, PAYOUTS };

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
          { number: TEST_CARDS.approved, result: 'approved' },
          { number: TEST_CARDS.declined, result: 'declined (402)' },
        ],
      },
      { id: 'crypto', ready: false, description: 'not available yet' },
    ],
    monthly_fee: {
      ...MONTHLY_FEE,
      charged: 'once per calendar month, with the first real-money checkout that delivers',
      not_charged_on: [
        'further checkouts of the same month',
        'top-ups',
        'payouts',
        'anything paid in Gold Coins',
      ],
    },
    gold_coins: GOLD_COINS,
    payouts: PAYOUTS,
    terms_url: `${baseUrl}/terms`,
    privacy_url: `${baseUrl}/privacy`,
  };
}
