// CONTRACT.md "Quotes": what an order would be before it is placed (POST /api/v1/orders/quote). The
// body is the order's own (OrderCreate); nothing is stored, reserved or charged.
import Type from 'typebox';
import { bool, int, list, num, numOrNull, obj, oneOf, str } from './common.js';
import { HolderPays } from './order.js';
import { Problem } from './common.js';

const LIMIT_NAMES = ['expires_at', 'markets', 'max_order', 'max_day', 'max_week'] as const;

/** One spending limit checked against an order: the same fields a 403 over it carries. */
export const LimitCheck = obj(
  {
    limit: oneOf(LIMIT_NAMES, 'which of the limits the holder set'),
    limit_value: Type.Union([Type.Number(), Type.Array(Type.String())], {
      description:
        'the limit: USD, the markets allowed, or (expires_at) the instant in unix seconds',
    }),
    spent: numOrNull(
      'USD already counted against it (max_day: funded today, UTC); null where nothing accumulates',
    ),
    remaining: numOrNull(
      'USD left under it (max_order: what one order may total); null for markets',
    ),
    ok: bool('the order is within it'),
  },
  'a spending limit checked against the order',
);

/** The 403 over a limit (CONTRACT.md "Spending limits"): the sentence and its figures. */
export const LimitRefusal = obj(
  {
    detail: str('the refusal in words'),
    limit: LimitCheck.properties.limit,
    limit_value: LimitCheck.properties.limit_value,
    spent: LimitCheck.properties.spent,
    remaining: LimitCheck.properties.remaining,
    order_total: num("the order's total_amount (USD)"),
  },
  'over a spending limit the holder set',
);

/** A 403 of a route that funds without the holder: over a limit (with its figures), or another refusal. */
export const FundingRefused = Type.Union([LimitRefusal, Problem], {
  description:
    'refused: over a spending limit the holder set (limit, limit_value, spent, remaining and order_total beside detail), or autonomous funding is off',
});

export const QuoteAnswer = obj(
  {
    market: str('market id'),
    offer_key: str("the deal's key"),
    qty: int('units quoted'),
    unit_cost: num('landed cost per unit'),
    fee_amount: num('qty x fulfilment fee per unit'),
    total_amount: num('what funding the order costs (its total_amount)'),
    holder_pays: HolderPays,
    limits: obj(
      {
        allowed: bool(
          'every limit the holder set allows funding it without them (pay_from_balance)',
        ),
        checks: list(LimitCheck, 'each limit set, checked; empty when none is set'),
      },
      "the holder's spending limits against this order",
    ),
    funding: obj(
      {
        pay_from_balance_allowed: bool(
          'pay_from_balance would fund it now: autonomous funding on, within the limits, balance enough',
        ),
        balance: num('the account balance (USD)'),
      },
      'funding it from the balance',
    ),
    session: obj(
      {
        tick: int('the session it would be placed in'),
        closes_at: num('when that session closes (real unix seconds): the holder pays before'),
        seconds_to_close: num('real seconds until then'),
      },
      "the deal's session",
    ),
    risk: obj(
      {
        similar: obj(
          {
            n: int("settled deals of the family in the projection's lookback"),
            lost: int('of those, settled at a loss'),
            median_per_unit: numOrNull('their median realised P&L per unit bought (USD)'),
            worst_per_unit: numOrNull('the lowest of the same'),
          },
          'how similar deals ended (the projection samples)',
        ),
        surcharge: obj(
          {
            rate: numOrNull(
              'share of those settled deals a downside event hit, bringing a settlement surcharge',
            ),
            median: numOrNull('the median surcharge per unit bought when it happened (USD)'),
            this_order_low: num('what a downside event would add to this order at the least (USD)'),
            this_order_high: num('and at the most'),
          },
          'the settlement surcharge: a loss the projection curve leaves out',
        ),
        max_loss: num(
          'USD: everything paid (total_amount) plus the holding fees of every unit for every session if nothing sells',
        ),
        max_loss_with_surcharge: num('max_loss plus this_order_high: the most this order can lose'),
      },
      'what this order risks',
    ),
    would_answer: Type.Object(
      {
        status: Type.Union(
          [
            Type.Literal(201),
            Type.Literal(400),
            Type.Literal(403),
            Type.Literal(404),
            Type.Literal(409),
            Type.Literal(422),
          ],
          { description: 'the status POST /orders would answer now' },
        ),
        detail: Type.Optional(Type.Unknown({ description: 'its detail, when not 201' })),
      },
      {
        additionalProperties: true,
        description:
          'what POST /orders with this body would answer now (a limit refusal carries its fields beside detail)',
      },
    ),
  },
  'what the order would be; nothing is stored, reserved or charged',
);
