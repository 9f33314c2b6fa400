// Read tasks over the agent and cart tables: the key look-up behind the key authenticator's cache,
// an agent's own state, the recall check and the agent behind a cart link. Plain data out.
import type { EntityManager } from '@mikro-orm/postgresql';
import { LIST_CAPS } from '../../src/rules.js';
import { unix } from '../account/views.js';
import { defineReads } from '../runtime/read.js';
import type { AgentKey, AgentRecall, AgentState, CartAgent, CartView } from './messages.js';

async function agentByKeyId(em: EntityManager, keyId: string): Promise<AgentKey | null> {
  const [row] = await em.execute<AgentKey[]>('select id::float8 as id, account_id::float8 as account_id, key_hash from agent where key_id = ?', [keyId]);
  return row ?? null;
}

async function recallOf(em: EntityManager, keyId: string): Promise<AgentRecall | null> {
  const [row] = await em.execute<AgentRecall[]>(
    `select g.name, g.recall_phrase, g.holder_id is not null as connected,
            (select count(*)::int from cart c where c.agent_id = g.id or (g.holder_id is not null and c.holder_id = g.holder_id)) as carts
       from agent g where g.key_id = ?`,
    [keyId],
  );
  return row ?? null;
}

/** The agent's row, its balance, and the carts it sees: its own, its holder's and the holder's other agents' (up to LIST_CAPS.carts). */
async function agentState(em: EntityManager, agentId: number): Promise<AgentState | null> {
  const [a] = await em.execute(
    `select g.id::float8 as id, g.key_id, g.name, g.recall_phrase, g.identity, g.operator, g.purpose, g.contact, g.account_id::float8 as account_id,
            g.holder_id::float8 as holder_id, g.paired_at, g.autonomous_funding, a.balance_cents::float8 as balance_cents
       from agent g join account a on a.id = g.account_id where g.id = ?`,
    [agentId],
  );
  if (!a) return null;
  const carts = await em.execute<CartView[]>(
    `select c.id::float8 as id, c.name, c.kind, c.token, c.agent_id::float8 as agent_id from cart c
      where c.agent_id = ? or (?::bigint is not null and (c.holder_id = ? or c.agent_id in (select id from agent where holder_id = ?)))
      order by c.id limit ?`,
    [a.id, a.holder_id, a.holder_id, a.holder_id, LIST_CAPS.carts],
  );
  return { ...(a as Omit<AgentState, 'paired_at' | 'carts'>), paired_at: unix(a.paired_at), carts };
}

async function cartAgent(em: EntityManager, token: string): Promise<CartAgent | null> {
  const [a] = await em.execute<CartAgent[]>(
    `select g.id::float8 as agent_id, g.account_id::float8 as account_id, g.holder_id::float8 as holder_id, g.name, g.key_id,
            g.identity, g.operator, g.purpose, g.contact
       from cart c join agent g on g.id = c.agent_id where c.token = ?`,
    [token],
  );
  return a ?? null;
}

export const agentReads = defineReads({
  'agent.byKeyId': async ({ em }, a: { keyId: string }) => agentByKeyId(em, a.keyId),
  'agent.recall': async ({ em }, a: { keyId: string }) => recallOf(em, a.keyId),
  'agent.me': async ({ em }, a: { agentId: number }) => agentState(em, a.agentId),
  /** The agent whose cart has this link token, or null. */
  'agent.cart': async ({ em }, a: { token: string }) => cartAgent(em, a.token),
});
