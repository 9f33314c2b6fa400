// Pairing: an agent, its trading account and its carts become a holder's (SPEC.md "Cart
// connection"): when the holder pays one of its orders, opens its cart link while logged in, or pays
// a cart. An agent has one holder, for good. One definition for the account actor (purchase links)
// and the cart actor (cart links and checkouts).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, AgentSchema } from '../../orm/entities/index.js';
import { ActorError } from '../runtime/actor.js';
import { appendEvents } from '../events/log.js';
import { instantDate, instantSql, unixSql } from '../runtime/sql.js';

/**
 * The agent (of `accountId` when given), its row locked until the transaction ends (pairing and the
 * funding switch decide on its holder), or null. Only its holder and account are read.
 */
export function lockAgent(em: EntityManager, agentId: number, accountId?: number) {
  const where = accountId === undefined ? { id: agentId } : { id: agentId, account: accountId };
  return em.findOne(AgentSchema, where, {
    fields: ['holder', 'account'],
    lockMode: LockMode.PESSIMISTIC_WRITE,
  });
}

/**
 * Connects the agent, its account and every cart of it to the holder; nothing to do when it is the
 * holder's already. 403 when another holder has it; 404 when there is no such agent (on the account).
 * Returns whether this call connected it. `at`: the turn's instant (TurnContext.at).
 */
export async function connectAgent(
  em: EntityManager,
  agentId: number,
  holderId: number,
  at: number,
  accountId?: number,
): Promise<boolean> {
  const agent = await lockAgent(em, agentId, accountId);
  if (!agent)
    throw new ActorError(
      404,
      `no agent ${agentId}${accountId === undefined ? '' : ` on account ${accountId}`}`,
    );
  const current = agent.holder?.id ?? null;
  if (current === holderId) return false;
  if (current !== null)
    throw new ActorError(403, 'this agent is connected to another account holder');
  await em.nativeUpdate(
    AgentSchema,
    { id: agentId },
    { holder: holderId, pairedAt: instantDate(at) },
  );
  await em.nativeUpdate(AccountSchema, { id: agent.account.id }, { holder: holderId });
  const carts = await em.execute<{ id: number; since: number }[]>(
    `update cart set holder_id = ?, updated_at = ${instantSql()} where agent_id = ? and holder_id is null
     returning id::float8 as id, ${unixSql('updated_at')} as since`,
    [holderId, at, agentId],
  );
  // CONTRACT.md "Events": each of the agent's carts is connected to the holder now.
  await appendEvents(
    em,
    carts.map((c) => ({
      account_id: agent.account.id,
      type: 'cart.connected',
      data: { cart_id: c.id, holder: { connected: true, since: c.since } },
    })),
    at,
  );
  return true;
}
