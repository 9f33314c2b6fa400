// Read tasks over a holder's tables and what the console shows of its agents: the session look-up
// behind the holder authenticator, stored cards (checkout), the console's agents with their wins.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { StoredCard } from '../../src/payments/cards.js';
import { LIST_CAPS } from '../../src/rules.js';
import { defineReads } from '../runtime/read.js';
import { profitableSettledTradesSql } from '../account/funding.js';
import type { CardRow, ConsoleAgent, SessionHolder } from './messages.js';

async function sessionHolder(em: EntityManager, tokenHash: string): Promise<SessionHolder | null> {
  const [row] = await em.execute<SessionHolder[]>(
    `select h.id::float8 as id, h.email, h.display_name
       from holder_session hs join holder h on h.id = hs.holder_id
      where hs.token_hash = ? and hs.expires_at > now()`,
    [tokenHash],
  );
  return row ?? null;
}

/** The holder's stored cards, newest first, up to LIST_CAPS.cards. */
const cardsOf = (em: EntityManager, holderId: number) =>
  em.execute<CardRow[]>('select id::float8 as id, brand, last4, exp_month, exp_year from card where holder_id = ? order by id desc limit ?', [
    holderId, LIST_CAPS.cards,
  ]);

async function cardOf(em: EntityManager, holderId: number, cardId: number): Promise<StoredCard | null> {
  const [c] = await em.execute<StoredCard[]>(
    'select brand, last4, exp_month as "expMonth", exp_year as "expYear" from card where id = ? and holder_id = ?',
    [cardId, holderId],
  );
  return c ?? null;
}

/** The holder's agents (up to LIST_CAPS.agents), or just `agentId` if it is one of them. */
function agentsOf(em: EntityManager, holderId: number, agentId: number | null): Promise<ConsoleAgent[]> {
  return em.execute<ConsoleAgent[]>(
    `select g.id::float8 as id, g.name, g.key_id, g.identity->>'model' as model, g.account_id::float8 as account_id, g.autonomous_funding,
            ${profitableSettledTradesSql('g.account_id')} as wins
       from agent g
      where (g.holder_id = ? or g.account_id in (select id from account where holder_id = ?)) and (?::bigint is null or g.id = ?)
      order by g.id limit ?`,
    [holderId, holderId, agentId, agentId, LIST_CAPS.agents],
  );
}

export const holderReads = defineReads({
  /** The holder of a live session (by the sha256 of its token), or null. */
  'holder.session': async ({ em }, a: { tokenHash: string }) => sessionHolder(em, a.tokenHash),
  'holder.cards': async ({ em }, a: { holderId: number }) => cardsOf(em, a.holderId),
  /** One stored card of the holder, as the payment charges it, or null. */
  'holder.card': async ({ em }, a: { holderId: number; cardId: number }) => cardOf(em, a.holderId, a.cardId),
  'holder.agents': async ({ em }, a: { holderId: number; agentId?: number }) => agentsOf(em, a.holderId, a.agentId ?? null),
});
