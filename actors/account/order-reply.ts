// The answer to a placed order (`POST /api/v1/orders` 201), built where the order is placed so that
// the very same bytes can be stored with it under an Idempotency-Key and answered again on a retry.
import { orderJson, type OrderRow } from './views.js';
import { centsToNumber } from '../../src/engine/money.js';
import { SETTLEMENT_HORIZON_SESSIONS } from '../../src/rules.js';

/**
 * What the agent does next, by the case: an order waiting for payment goes to the holder; one already
 * paid from the balance only waits for its close (telling it to hand over purchase_url would have a
 * holder asked to pay a paid order); a filled one is followed as its position; an expired one has no
 * link left and is ordered again from the current menu, whose URL it names. What happens next is
 * told by events (CONTRACT.md "Events"): the answer points to them, never to polling the order.
 */
/** Where an agent hears what happens next, without polling. */
const EVENTS =
  'GET /api/v1/events/stream or the WebSocket, and GET /api/v1/events?after= with the last id you saw to catch up';

export function orderInstructions(
  order: Pick<OrderRow, 'id' | 'status' | 'payment_source' | 'market' | 'position_id'>,
  baseUrl: string,
): string {
  const after = `A funded order fills at the session close and sells through over ${SETTLEMENT_HORIZON_SESSIONS} sessions as a position (GET /api/v1/positions); a downside event can add a settlement surcharge when it settles, which pnl_so_far leaves out until then.`;
  if (order.status === 'expired') {
    return (
      'This order expired unfunded when its session closed: its purchase link no longer works and nothing was charged. ' +
      `To trade again, pick a deal of the current menu, ${baseUrl}/api/v1/markets/${order.market}/deals, and order it (POST /api/v1/orders); hand the new purchase_url to your holder before that session closes.`
    );
  }
  if (order.status === 'cancelled') {
    return (
      'This order was withdrawn unfunded (order.cancelled says by whom): its purchase link takes no payment and nothing was charged. ' +
      `To trade again, pick a deal of the current menu, ${baseUrl}/api/v1/markets/${order.market}/deals, and order it (POST /api/v1/orders).`
    );
  }
  if (order.status === 'filled') {
    return `This order filled into position ${order.position_id}: it sells through over ${SETTLEMENT_HORIZON_SESSIONS} sessions and settles; its position.advanced and position.settled events tell you as it does (${EVENTS}), and GET /api/v1/positions/${order.position_id} serves it.`;
  }
  if (order.status === 'refunded') {
    return "This order was paid but could not fill: it was refunded (refund_reason says why). Order again from the current menu if you still want the deal's kind.";
  }
  if (order.status === 'paid') {
    return (
      `This order is paid${order.payment_source === 'balance' ? ' from your account balance' : ''}: nothing is left for your holder to do. ` +
      `It fills at the close of its session (closes_at, unix seconds): its order.filled event tells you (${EVENTS}), so there is no need to poll GET /api/v1/orders/${order.id}. ${after}`
    );
  }
  return (
    'Hand purchase_url to your account holder: they review your identity and this order and fund it on that page before the session ' +
    `closes (closes_at, unix seconds). Unfunded orders expire at the close. ${after}`
  );
}

/** `feeCharged`: for an order left awaiting payment, whether its holder's fee of the month is charged (holder_pays). */
export function orderReply(
  order: OrderRow,
  baseUrl: string,
  feeCents: number,
  feeCharged?: boolean,
): Record<string, unknown> {
  return {
    ...orderJson(order, baseUrl, feeCharged),
    instructions: orderInstructions(order, baseUrl),
    monthly_fee_charged: centsToNumber(feeCents),
  };
}
