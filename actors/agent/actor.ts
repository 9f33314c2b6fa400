// AgentActor ("agent:<key id>"): registers an agent under its own key. One key = one agent = one
// trading account, created together with the agent's default cart in one transaction; the unique
// key id makes a second registration of the same key a 409, also across processes.
import { randomBytes } from 'node:crypto';
import { ActorError, defineActor } from '../runtime/actor.js';
import { isUniqueViolation } from '../runtime/sql.js';
import type { AgentMessage, Registered } from './messages.js';


export const agentActor = defineActor<{ keyId: string }, AgentMessage>({
  kind: 'agent',

  async activate(ctx) {
    return { keyId: ctx.id };
  },

  handlers: {
    async register(state, msg, ctx): Promise<Registered> {
      const p = msg.profile;
      try {
        return await ctx.em.transactional(async (em) => {
          const taken = await em.execute('select 1 from agent where key_id = ?', [state.keyId]);
          if (taken.length) throw new ActorError(409, 'this key is already registered; use it, or register another key');
          const [account] = await em.execute('insert into account default values returning id::float8 as id');
          const [agent] = await em.execute(
            `insert into agent (key_id, key_hash, name, recall_phrase, identity, operator, purpose, contact, account_id)
             values (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?) returning id::float8 as id`,
            [state.keyId, msg.keyHash, p.name, p.recall_phrase, jsonOrNull(p.agent), jsonOrNull(p.operator), p.purpose ?? null, p.contact ?? null, account.id],
          );
          const token = randomBytes(24).toString('base64url');
          const [cart] = await em.execute(
            `insert into cart (agent_id, name, kind, token) values (?, ?, 'trade', ?) returning id::float8 as id`,
            [agent.id, `${p.name}'s cart`, token],
          );
          return { agent_id: agent.id, account_id: account.id, cart_id: cart.id, cart_token: token, cart_kind: 'trade' as const };
        });
      } catch (err) {
        // Another process registered the same key between our check and insert.
        if (isUniqueViolation(err)) throw new ActorError(409, 'this key is already registered; use it, or register another key');
        throw err;
      }
    },
  },
});

const jsonOrNull = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));
