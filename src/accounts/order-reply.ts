// The answer to a placed order (`POST /api/v1/orders` 201), built where the order is placed so that
// the very same bytes can be stored with it under an Idempotency-Key and answered again on a retry.
import { orderJson, type OrderRow } from '../../actors/account/views.js';

export const ORDER_INSTRUCTIONS =
  'Hand purchase_url to your account holder: they review your identity and this order and fund it on that page before the session ' +
  'closes (closes_at, unix seconds). Unfunded orders expire at the close. A funded order fills at the close and sells through over ' +
  '8 sessions as a position (GET /api/v1/positions).';

export function orderReply(order: OrderRow, baseUrl: string, feeCents: number): Record<string, unknown> {
  return { ...orderJson(order, baseUrl), instructions: ORDER_INSTRUCTIONS, monthly_fee_charged: feeCents / 100 };
}
