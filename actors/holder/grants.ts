// A holder's cart grants (SPEC.md "Cart connection, kind and funding switch"): `write` lets an agent
// add, change and remove lines of a cart that is not its own; `execute` also lets it check the cart
// out, and takes effect only while the agent's autonomous funding is on (actors/cart/permissions.ts
// decides). One agent or all of the holder's, one cart or all. Revoking keeps the row (revoked_at).
import { sql } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentSchema, CardSchema, CartGrantSchema, CartSchema } from '../../orm/entities/index.js';
import { ActorError } from '../runtime/actor.js';
import type { GrantMessage, Granted, Revoked } from './messages.js';

type Grant = Extract<GrantMessage, { kind: 'grant' }>;

/** Live grants one holder may hold at once: a bound, and far more than a console can show. */
export const MAX_LIVE_GRANTS = 200;

export async function grant(em: EntityManager, g: Grant): Promise<Granted> {
  if (g.agentId !== null && !(await em.count(AgentSchema, { id: g.agentId, holder: g.holderId }))) {
    throw new ActorError(404, `no agent ${g.agentId} of yours: an agent becomes yours when you open its cart link or pay for it`);
  }
  if (g.cartId !== null && !(await em.count(CartSchema, { id: g.cartId, holder: g.holderId }))) throw new ActorError(404, `no cart ${g.cartId} of yours`);
  if (g.payWith === 'card') {
    if (g.level !== 'execute') throw new ActorError(400, 'pay_with card only means something on an execute grant');
    if (g.cardId === null) throw new ActorError(400, 'pay_with card needs card_id: one of your stored cards');
  }
  if (g.cardId !== null && !(await em.count(CardSchema, { id: g.cardId, holder: g.holderId }))) throw new ActorError(404, `no stored card ${g.cardId} of yours`);
  if ((await em.count(CartGrantSchema, { holder: g.holderId, revokedAt: null })) >= MAX_LIVE_GRANTS) {
    throw new ActorError(409, `you hold ${MAX_LIVE_GRANTS} live grants, the most there can be: revoke some first`);
  }
  const row = em.create(CartGrantSchema, {
    holder: g.holderId, agent: g.agentId, cart: g.cartId, level: g.level, payWith: g.payWith, card: g.payWith === 'card' ? g.cardId : null, note: g.note,
  });
  await em.flush();
  return { grant_id: row.id };
}

export async function revoke(em: EntityManager, holderId: number, grantId: number): Promise<Revoked> {
  const found = await em.count(CartGrantSchema, { id: grantId, holder: holderId });
  if (!found) throw new ActorError(404, `no grant ${grantId} of yours`);
  const n = await em.nativeUpdate(CartGrantSchema, { id: grantId, holder: holderId, revokedAt: null }, { revokedAt: sql.now() });
  return { grant_id: grantId, revoked: n > 0 };
}
