// Read tasks over a holder's tables and what the console shows of its agents: the session look-up
// behind the holder authenticator, stored cards (checkout), the console's agents with their wins.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CardSchema, HolderSessionSchema } from '../../orm/entities/index.js';
import type { StoredCard } from '../../src/payments/cards.js';
import { LIST_CAPS } from '../../src/rules.js';
import { defineReads } from '../runtime/read.js';
import { profitableSettledTradesSql } from '../account/funding.js';
import type { CardRow, ConsoleAgent, SessionHolder } from './messages.js';
import { grantsOf } from './grants.js';
import { instantDate, unixSql } from '../runtime/sql.js';

/** The holder of a session live at `at` (the read's instant). */
async function sessionHolder(
  em: EntityManager,
  tokenHash: string,
  at: number,
): Promise<SessionHolder | null> {
  const hs = await em.findOne(
    HolderSessionSchema,
    { tokenHash, expiresAt: { $gt: instantDate(at) } },
    { fields: ['holder.email', 'holder.displayName'] },
  );
  const h = hs?.holder.$;
  return h ? { id: h.id, email: h.email, display_name: h.displayName } : null;
}

/** The holder's stored cards, newest first, up to LIST_CAPS.cards. */
async function cardsOf(em: EntityManager, holderId: number): Promise<CardRow[]> {
  const cards = await em.find(
    CardSchema,
    { holder: holderId },
    {
      fields: ['brand', 'last4', 'expMonth', 'expYear'],
      orderBy: { id: 'desc' },
      limit: LIST_CAPS.cards,
    },
  );
  return cards.map((c) => ({
    id: c.id,
    brand: c.brand,
    last4: c.last4,
    exp_month: c.expMonth,
    exp_year: c.expYear,
  }));
}

async function cardOf(
  em: EntityManager,
  holderId: number,
  cardId: number,
): Promise<StoredCard | null> {
  const c = await em.findOne(
    CardSchema,
    { id: cardId, holder: holderId },
    { fields: ['brand', 'last4', 'expMonth', 'expYear'] },
  );
  return c && { brand: c.brand, last4: c.last4, expMonth: c.expMonth, expYear: c.expYear };
}

/** The holder's agents (up to LIST_CAPS.agents), or just `agentId` if it is one of them. */
function agentsOf(
  em: EntityManager,
  holderId: number,
  agentId: number | null,
): Promise<ConsoleAgent[]> {
  return em.execute<ConsoleAgent[]>(
    `select g.id::float8 as id, g.name, g.key_id, g.identity->>'model' as model, g.account_id::float8 as account_id, g.autonomous_funding,
            ${profitableSettledTradesSql('g.account_id')} as wins,
            g.limit_max_order_cents::float8 / 100 as max_order, g.limit_max_day_cents::float8 / 100 as max_day, array_to_string(g.limit_markets, ',') as markets,
            g.limit_max_week_cents::float8 / 100 as max_week, g.limit_expires_at as expires_at,
            ${unixSql('g.revoked_at')} as revoked_at
       from agent g
      where (g.holder_id = ? or g.account_id in (select id from account where holder_id = ?)) and (?::bigint is null or g.id = ?)
      order by g.id limit ?`,
    [holderId, holderId, agentId, agentId, LIST_CAPS.agents],
  );
}

/** The holder's live grants, newest first, with the names of their agent and cart. */
export const holderReads = defineReads({
  'holder.grants': async ({ em, at }, a: { holderId: number }) => grantsOf(em, a.holderId, at),
  /** The holder of a live session (by the sha256 of its token), or null. */
  'holder.session': async ({ em, at }, a: { tokenHash: string }) =>
    sessionHolder(em, a.tokenHash, at),
  'holder.cards': async ({ em }, a: { holderId: number }) => cardsOf(em, a.holderId),
  /** One stored card of the holder, as the payment charges it, or null. */
  'holder.card': async ({ em }, a: { holderId: number; cardId: number }) =>
    cardOf(em, a.holderId, a.cardId),
  'holder.agents': async ({ em }, a: { holderId: number; agentId?: number }) =>
    agentsOf(em, a.holderId, a.agentId ?? null),
});
