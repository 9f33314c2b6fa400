// The answer to a placed order (`POST /api/v1/orders` 201), built where the order is placed so that
// the very same bytes can be stored with it under an Idempotency-Key and answered again on a retry.
import { orderJson, type OrderRow } from './views.js';
import { centsToNumber } from '../../src/engine/money.js';
import { SETTLEMENT_HORIZON_SESSIONS } from '../../src/rules.js';

/**
 * What the agent does next, by the case: an order waiting for payment goes to the holder; one already
 * paid from the balance only waits for its close (telling it to hand over purchase_url would have a
 * holder asked to pay a paid order).
 */
export function orderInstructions(order: Pick<OrderRow, 'id' | 'status' | 'payment_source'>): string {
  const after = `A funded order fills at the session close and sells through over ${SETTLEMENT_HORIZON_SESSIONS} sessions as a position (GET /api/v1/positions).`;
  if (order.status === 'paid') {
    return `This order is paid${order.payment_source === 'balance' ? ' from your account balance' : ''}: nothing is left for your holder to do. ` +
      `It fills at the close of its session (closes_at, unix seconds); follow it with GET /api/v1/orders/${order.id}. ${after}`;
  }
  return 'Hand purchase_url to your account holder: they review your identity and this order and fund it on that page before the session ' +
    `closes (closes_at, unix seconds). Unfunded orders expire at the close. ${after}`;
}

export function orderReply(order: OrderRow, baseUrl: string, feeCents: number): Record<string, unknown> {
  return { ...orderJson(order, baseUrl), instructions: orderInstructions(order), monthly_fee_charged: centsToNumber(feeCents) };
}
