// A holder's cart grants (SPEC.md "Cart connection, kind and funding switch"): `write` lets an agent
// add, change and remove lines of a cart that is not its own; `execute` also lets it check the cart
// out, and takes effect only while the agent's autonomous funding is on (actors/cart/permissions.ts
// decides). One agent or all of the holder's, one cart or all. Revoking keeps the row (revoked_at).
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentSchema, CardSchema, CartGrantSchema, CartSchema } from '../../orm/entities/index.js';
import { ActorError } from '../runtime/actor.js';
import { LIST_CAPS } from '../../src/rules.js';
import type { GrantMessage, Granted, Revoked } from './messages.js';
import type { GrantView } from '../cart/messages.js';
import { instantDate, intArrayParam } from '../runtime/sql.js';
import { appendEvents } from '../events/log.js';

type Grant = Extract<GrantMessage, { kind: 'grant' }>;

/** Live grants one holder may hold at once: a bound, and far more than a console can show. */
export const MAX_LIVE_GRANTS = 200;

export async function grant(em: EntityManager, g: Grant, at: number): Promise<Granted> {
  if (g.agentId !== null && !(await em.count(AgentSchema, { id: g.agentId, holder: g.holderId }))) {
    throw new ActorError(
      404,
      `no agent ${g.agentId} of yours: an agent becomes yours when you open its cart link or pay for it`,
    );
  }
  if (g.cartId !== null && !(await em.count(CartSchema, { id: g.cartId, holder: g.holderId })))
    throw new ActorError(404, `no cart ${g.cartId} of yours`);
  if (g.payWith === 'card') {
    if (g.level !== 'execute')
      throw new ActorError(400, 'pay_with card only means something on an execute grant');
    if (g.cardId === null)
      throw new ActorError(400, 'pay_with card needs card_id: one of your stored cards');
  }
  if (g.cardId !== null && !(await em.count(CardSchema, { id: g.cardId, holder: g.holderId })))
    throw new ActorError(404, `no stored card ${g.cardId} of yours`);
  const expiresAt = g.expiresAt ?? null;
  if (expiresAt !== null && expiresAt <= at)
    throw new ActorError(400, 'expires_at is not in the future: a grant must end after it is made');
  if (
    (await em.count(CartGrantSchema, {
      holder: g.holderId,
      revokedAt: null,
      $or: [{ expiresAt: null }, { expiresAt: { $gt: instantDate(at) } }],
    })) >= MAX_LIVE_GRANTS
  ) {
    throw new ActorError(
      409,
      `you hold ${MAX_LIVE_GRANTS} live grants, the most there can be: revoke some first`,
    );
  }
  const row = em.create(CartGrantSchema, {
    holder: g.holderId,
    agent: g.agentId,
    cart: g.cartId,
    level: g.level,
    payWith: g.payWith,
    card: g.payWith === 'card' ? g.cardId : null,
    note: g.note,
    createdAt: instantDate(at),
    expiresAt: expiresAt === null ? null : instantDate(expiresAt),
  });
  await em.flush();
  await appendGrantEvents(em, g.holderId, [row.id], 'granted', at);
  return { grant_id: row.id };
}

export async function revoke(
  em: EntityManager,
  holderId: number,
  grantId: number,
  at: number,
): Promise<Revoked> {
  const found = await em.count(CartGrantSchema, { id: grantId, holder: holderId });
  if (!found) throw new ActorError(404, `no grant ${grantId} of yours`);
  const n = await em.nativeUpdate(
    CartGrantSchema,
    { id: grantId, holder: holderId, revokedAt: null },
    { revokedAt: instantDate(at) },
  );
  if (n > 0) await appendGrantEvents(em, holderId, [grantId], 'revoked', at);
  return { grant_id: grantId, revoked: n > 0 };
}

/**
 * The holder's grants not revoked, newest first, each `expired` or not at `at`; or, with
 * `grantIds`, those grants live or revoked (their events).
 */
export async function grantsOf(
  em: EntityManager,
  holderId: number,
  at: number,
  grantIds?: number[],
): Promise<GrantView[]> {
  type Row = Omit<GrantView, 'created_at' | 'expires_at' | 'expired'> & {
    created_at: Date;
    expires_at: Date | null;
  };
  const rows = await em.execute<Row[]>(
    `select gr.id::float8 as id, gr.agent_id::float8 as agent_id, g.name as agent_name, gr.cart_id::float8 as cart_id, c.name as cart_name,
            gr.level, gr.pay_with, gr.card_id::float8 as card_id, gr.note, gr.created_at, gr.expires_at
       from cart_grant gr left join agent g on g.id = gr.agent_id left join cart c on c.id = gr.cart_id
      where gr.holder_id = ? and (case when ?::bigint[] is null then gr.revoked_at is null else gr.id = any(?::bigint[]) end)
      order by gr.id desc limit ?`,
    [
      holderId,
      grantIds ? intArrayParam(grantIds) : null,
      grantIds ? intArrayParam(grantIds) : null,
      MAX_LIVE_GRANTS,
    ],
  );
  const seconds = (d: Date) => new Date(d).getTime() / 1000;
  return rows.map((r) => {
    const expiresAt = r.expires_at === null ? null : seconds(r.expires_at);
    return {
      ...r,
      created_at: seconds(r.created_at),
      expires_at: expiresAt,
      expired: expiresAt !== null && expiresAt <= at,
    };
  });
}

/**
 * CONTRACT.md "Events": `grant.changed` on the log of each agent a grant names (all the holder's
 * agents for a grant to every agent), the grant as a cart's permissions show it.
 */
export async function appendGrantEvents(
  em: EntityManager,
  holderId: number,
  grantIds: number[],
  action: 'granted' | 'revoked',
  at: number,
): Promise<void> {
  if (!grantIds.length) return;
  const views = await grantsOf(em, holderId, at, grantIds);
  const agents = await em.execute<{ id: number; account_id: number }[]>(
    'select id::float8 as id, account_id::float8 as account_id from agent where holder_id = ? order by id limit ?',
    [holderId, LIST_CAPS.accounts],
  );
  await appendEvents(
    em,
    views.flatMap((v) =>
      agents
        .filter((a) => v.agent_id === null || a.id === v.agent_id)
        .map((a) => ({
          account_id: a.account_id,
          type: 'grant.changed' as const,
          data: { action, grant: { ...v, grant_id: v.id } },
        })),
    ),
    at,
  );
}
