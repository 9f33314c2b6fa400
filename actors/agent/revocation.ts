// Revoking an agent's key for good (CONTRACT.md "Spending limits"): the holder ends the key; every
// later request with it is a 401 (the key authenticators of every process forget it on the commit's
// NOTIFY), its streams end, and its orders still awaiting payment are withdrawn as the holder's
// (`order.cancelled`, by: holder), all in one transaction.
//
// An order batch deciding while the revocation commits could place an order the withdrawal never
// saw: the revocation takes REVOCATION_LOCK exclusively, which every order batch holds shared, so
// batches under way commit first (their orders are then withdrawn) and later ones read the key as
// revoked (order-decision.ts refuses it).
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentSchema, OrderSchema } from '../../orm/entities/index.js';
import { ActorError } from '../runtime/actor.js';
import { instantDate } from '../runtime/sql.js';
import { cancelOrder } from '../account/cancel.js';
import { KEYS_CHANNEL, REVOCATION_LOCK, type KeyRevoked } from './messages.js';

/** Orders withdrawn per statement (the turn reads on until none is left). */
const WITHDRAW_CHUNK = 200;

/** Revokes the key of agent `agentId` (key `keyId`), an agent of holder `holderId`, at `at`. */
export async function revokeKey(
  em: EntityManager,
  keyId: string,
  who: { holderId: number; agentId: number },
  at: number,
  baseUrl: string,
): Promise<KeyRevoked> {
  await em.execute('select pg_advisory_xact_lock(hashtext(?))', [REVOCATION_LOCK]);
  const agent = await em.findOne(
    AgentSchema,
    { id: who.agentId, keyId, holder: who.holderId },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  if (!agent) throw new ActorError(404, `no agent ${who.agentId} of yours`);
  if (agent.revokedAt)
    return {
      agent_id: agent.id,
      revoked: false,
      revoked_at: agent.revokedAt.getTime() / 1000,
      withdrawn_order_ids: [],
    };
  const n = await em.nativeUpdate(
    AgentSchema,
    { id: agent.id, revokedAt: null },
    { revokedAt: instantDate(at) },
  );
  if (n !== 1) throw new Error(`revoking agent ${agent.id}: ${n} rows changed`);
  const withdrawn = await withdrawUnpaid(em, agent.account.id, who, at, baseUrl);
  await em.execute('select pg_notify(?, ?)', [KEYS_CHANNEL, `${keyId} ${agent.account.id}`]);
  return { agent_id: agent.id, revoked: true, revoked_at: at, withdrawn_order_ids: withdrawn };
}

/** Every order of the agent still awaiting payment before its close, withdrawn as the holder's. */
async function withdrawUnpaid(
  em: EntityManager,
  accountId: number,
  who: { holderId: number; agentId: number },
  at: number,
  baseUrl: string,
): Promise<number[]> {
  const withdrawn: number[] = [];
  for (;;) {
    const rows = await em.find(
      OrderSchema,
      {
        account: accountId,
        agent: who.agentId,
        status: 'awaiting_payment',
        closesAt: { $gt: at },
      },
      { fields: ['id'], orderBy: { id: 'asc' }, limit: WITHDRAW_CHUNK },
    );
    for (const { id } of rows) {
      // Paid meanwhile (the holder on its link): it stands, as any paid order does.
      if (await withdrawOne(em, accountId, id, who.holderId, at, baseUrl)) withdrawn.push(id);
    }
    if (rows.length < WITHDRAW_CHUNK) return withdrawn;
  }
}

/** One order withdrawn, or false when it can no longer be (409: paid or expired since it was read). */
async function withdrawOne(
  em: EntityManager,
  accountId: number,
  orderId: number,
  holderId: number,
  at: number,
  baseUrl: string,
): Promise<boolean> {
  try {
    await cancelOrder(em, accountId, orderId, { by: 'holder', holderId }, at, baseUrl);
    return true;
  } catch (err) {
    if (err instanceof ActorError && err.status === 409) return false;
    throw err;
  }
}
