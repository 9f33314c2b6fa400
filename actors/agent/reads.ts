// Read tasks over the agent and cart tables: the key look-up behind the key authenticator's cache,
// an agent's own state and the recall check. Plain data out.
import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AgentSchema, CartSchema, type Cart } from '../../orm/entities/index.js';
import { LIST_CAPS } from '../../src/rules.js';
import { unix } from '../account/views.js';
import { spentOf } from '../money/limits.js';
import { centsToNumber } from '../../src/engine/money.js';
import { defineReads } from '../runtime/read.js';
import type { AgentKey, AgentRecall, AgentState } from './messages.js';

async function agentByKeyId(em: EntityManager, keyId: string): Promise<AgentKey | null> {
  const g = await em.findOne(
    AgentSchema,
    { keyId },
    { fields: ['account', 'keyHash', 'revokedAt'] },
  );
  return g && { id: g.id, account_id: g.account.id, key_hash: g.keyHash, revoked: !!g.revokedAt };
}

/**
 * The carts an agent sees: its own, and once connected every cart of its holder (its agents' carts
 * carry the holder from the connection on: actors/account/pairing.ts). As actors/cart/lines.ts reads them.
 */
const cartsSeenBy = (agentId: number, holderId: number | null): FilterQuery<Cart> =>
  holderId === null ? { agent: agentId } : { $or: [{ agent: agentId }, { holder: holderId }] };

async function recallOf(em: EntityManager, keyId: string): Promise<AgentRecall | null> {
  const g = await em.findOne(
    AgentSchema,
    { keyId },
    { fields: ['name', 'recallPhrase', 'holder'] },
  );
  if (!g) return null;
  const holderId = g.holder?.id ?? null;
  const carts = await em.count(CartSchema, cartsSeenBy(g.id, holderId));
  return { name: g.name, recall_phrase: g.recallPhrase, connected: holderId !== null, carts };
}

/** The columns GET /agents/me serves. */
const AGENT_FIELDS = [
  'keyId',
  'name',
  'recallPhrase',
  'identity',
  'operator',
  'purpose',
  'contact',
  'account.balanceCents',
  'holder',
  'pairedAt',
  'autonomousFunding',
  'limitMaxOrderCents',
  'limitMaxDayCents',
  'limitMarkets',
  'limitMaxWeekCents',
  'limitExpiresAt',
] as const;

/** The agent's row, its balance, and the carts it sees (up to LIST_CAPS.carts). */
/** `at`: now on the service clock (real unix seconds), for the day of `limits.spent_today`. */
async function agentState(
  em: EntityManager,
  agentId: number,
  at: number,
): Promise<AgentState | null> {
  const g = await em.findOne(
    AgentSchema,
    { id: agentId },
    {
      fields: [...AGENT_FIELDS],
    },
  );
  if (!g) return null;
  const spent = await spentOf(em, agentId, at);
  const usd = (c: number | null | undefined) =>
    c === null || c === undefined ? null : centsToNumber(c);
  const holderId = g.holder?.id ?? null;
  const carts = await em.find(CartSchema, cartsSeenBy(g.id, holderId), {
    fields: ['name', 'kind', 'token', 'agent'],
    orderBy: { id: 'asc' },
    limit: LIST_CAPS.carts,
  });
  return {
    id: g.id,
    key_id: g.keyId,
    name: g.name,
    recall_phrase: g.recallPhrase,
    identity: g.identity ?? null,
    operator: g.operator ?? null,
    purpose: g.purpose ?? null,
    contact: g.contact ?? null,
    account_id: g.account.id,
    holder_id: holderId,
    paired_at: unix(g.pairedAt ?? null),
    autonomous_funding: g.autonomousFunding,
    balance_cents: g.account.$.balanceCents,
    carts: carts.map((c) => ({
      id: c.id,
      name: c.name,
      kind: c.kind,
      token: c.token,
      agent_id: c.agent?.id ?? null,
    })),
    limits: {
      max_order: usd(g.limitMaxOrderCents),
      max_day: usd(g.limitMaxDayCents),
      max_week: usd(g.limitMaxWeekCents),
      markets: g.limitMarkets ?? null,
      expires_at: g.limitExpiresAt ?? null,
      spent_today: centsToNumber(spent.dayCents),
      spent_week: centsToNumber(spent.weekCents),
    },
  };
}

export const agentReads = defineReads({
  'agent.byKeyId': async ({ em }, a: { keyId: string }) => agentByKeyId(em, a.keyId),
  'agent.recall': async ({ em }, a: { keyId: string }) => recallOf(em, a.keyId),
  'agent.me': async ({ em }, a: { agentId: number; at: number }) => agentState(em, a.agentId, a.at),
});
