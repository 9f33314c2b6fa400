// Withdrawing an order (CONTRACT.md "Withdrawing an order"): its agent cancels it (DELETE
// /orders/{id}) or the holder declines it on its purchase page. Only an order still awaiting payment
// before its close can be withdrawn; its round, never funded, goes with it; `order.cancelled` is
// appended in the same transaction. Nothing was charged, so no money moves.
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { OrderSchema, TradeRoundSchema, type CANCELLED_BY } from '../../orm/entities/index.js';
import { ActorError } from '../runtime/actor.js';
import { appendEvents } from '../events/log.js';
import { instantDate } from '../runtime/sql.js';
import { connectAgent } from './pairing.js';
import { orderOf } from './views.js';
import type { Canceller, ServedOrder } from './messages.js';
import { orderInstructions } from './order-reply.js';

type CancelledBy = (typeof CANCELLED_BY)[number];

/** Why an order that is not awaiting payment cannot be withdrawn (409), by its status. */
const NOT_WITHDRAWABLE: Record<string, string> = {
  paid: 'this order is paid: it fills at its session close and can no longer be withdrawn',
  filled: 'this order filled into a position and can no longer be withdrawn',
  expired: "this order expired unfunded at its session's close: there is nothing to withdraw",
  refunded: 'this order was refunded at its close: there is nothing to withdraw',
};

/**
 * Withdraws order `orderId` of account `accountId` at `at` (the turn's instant) and answers it as
 * served. Withdrawing a withdrawn order answers it again and appends nothing.
 */
export async function cancelOrder(
  em: EntityManager,
  accountId: number,
  orderId: number,
  who: Canceller,
  at: number,
  baseUrl: string,
): Promise<ServedOrder & { instructions: string }> {
  const order = await em.findOne(
    OrderSchema,
    { id: orderId, account: accountId },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  if (!order) throw new ActorError(404, `no order ${orderId} on your account`);
  if (who.by === 'holder')
    await holderMayDecide(em, order.agent?.id ?? null, who.holderId, at, accountId);
  if (order.status !== 'cancelled') {
    if (order.status !== 'awaiting_payment')
      throw new ActorError(409, NOT_WITHDRAWABLE[order.status]);
    // CONTRACT.md "Session boundary": the clock decides, whether or not the record's close has run.
    if (at >= order.closesAt) throw new ActorError(409, NOT_WITHDRAWABLE.expired);
    await withdraw(em, order.id, order.round.id, who.by, at);
  }
  const served = await orderOf(em, [accountId], orderId, baseUrl, at);
  if (!served || served.status !== 'cancelled') throw new Error(`order ${orderId} not cancelled`);
  if (order.status !== 'cancelled')
    await appendEvents(
      em,
      [{ account_id: accountId, type: 'order.cancelled', data: { ...served, by: who.by } }],
      at,
    );
  return { ...served, instructions: orderInstructions(served, baseUrl) };
}

/** The order and its round cancelled, checked to have changed exactly one row each. */
async function withdraw(
  em: EntityManager,
  orderId: number,
  roundId: number,
  by: CancelledBy,
  at: number,
) {
  const orders = await em.nativeUpdate(
    OrderSchema,
    { id: orderId, status: 'awaiting_payment' },
    { status: 'cancelled', cancelledBy: by, cancelledAt: instantDate(at) },
  );
  const rounds = await em.nativeUpdate(
    TradeRoundSchema,
    { id: roundId, status: 'awaiting_payment' },
    { status: 'cancelled' },
  );
  if (orders !== 1 || rounds !== 1)
    throw new Error(`withdrawing order ${orderId}: ${orders} orders and ${rounds} rounds changed`);
}

/**
 * A holder declines only an order of their own agent: as paying does, deciding on the link connects
 * an agent that has no holder yet (403 when another holder has it). A desk order has no link.
 */
async function holderMayDecide(
  em: EntityManager,
  agentId: number | null,
  holderId: number,
  at: number,
  accountId: number,
): Promise<void> {
  if (agentId === null) throw new ActorError(404, 'no order of yours has this purchase link');
  await connectAgent(em, agentId, holderId, at, accountId);
}
