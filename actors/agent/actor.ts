// AgentActor ("agent:<key id>"): registers an agent under its own key. One key = one agent = one
// trading account, created together with the agent's default cart in one transaction; the unique
// key id makes a second registration of the same key a 409, also across processes.
import { randomBytes } from 'node:crypto';
import { AccountSchema, AgentSchema, CartSchema } from '../../orm/entities/index.js';
import { ActorError, defineActor } from '../runtime/actor.js';
import { instantDate, isUniqueViolation } from '../runtime/sql.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  KEY_REVOKED,
  type AgentMessage,
  type AgentReplies,
  type AgentProfile,
  type CartMade,
  type KeyRevoked,
  type Registered,
} from './messages.js';
import { revokeKey } from './revocation.js';

/** Carts one agent may own (a bound; SPEC.md leaves it open). */
export const MAX_CARTS_PER_AGENT = 50;

export const agentActor = defineActor<{ keyId: string }, AgentMessage, AgentReplies>({
  kind: 'agent',

  async activate(ctx) {
    return { keyId: ctx.id };
  },

  handlers: {
    async newCart(state, msg, ctx): Promise<CartMade> {
      return ctx.em.transactional(async (em) => {
        const agent = await em.findOne(AgentSchema, { keyId: state.keyId }, { fields: ['holder'] });
        if (!agent) throw new ActorError(404, 'no agent has this key');
        if ((await em.count(CartSchema, { agent: agent.id })) >= MAX_CARTS_PER_AGENT) {
          throw new ActorError(
            409,
            `you have ${MAX_CARTS_PER_AGENT} carts, the most an agent can: use one of them`,
          );
        }
        const token = randomBytes(24).toString('base64url');
        const at = instantDate(ctx.at);
        const cart = em.create(CartSchema, {
          agent: agent.id,
          holder: agent.holder?.id ?? null,
          name: msg.name,
          kind: 'trade',
          token,
          createdAt: at,
          updatedAt: at,
        });
        await em.flush();
        return { id: cart.id, name: msg.name, kind: 'trade', token };
      });
    },

    async register(state, msg, ctx): Promise<Registered> {
      return registerAgent(ctx.em, state.keyId, msg.keyHash, msg.profile, null, ctx.at);
    },

    async revoke(state, msg, ctx): Promise<KeyRevoked> {
      return ctx.em.transactional((em) => revokeKey(em, state.keyId, msg, ctx.at, ctx.baseUrl));
    },

    async registerForHolder(state, msg, ctx): Promise<Registered> {
      return registerAgent(
        ctx.em,
        state.keyId,
        msg.keyHash,
        msg.profile,
        { holderId: msg.holderId, accountId: msg.accountId },
        ctx.at,
      );
    },
  },
});

/** The unique index that keeps one agent per account (orm/entities/trading.ts). */
const AGENT_ACCOUNT_UNIQUE = 'agent_account_id_key';
const accountTaken = (id: number) =>
  new ActorError(
    409,
    `account ${id} already has an agent: one key = one agent = one trading account`,
  );

/**
 * One aggregate, one flush: the account (new, or the holder's own one given), the agent on it, its
 * default cart. With a holder, the agent, its account and its cart are the holder's from the start.
 * All made at `at` (the turn's instant).
 */
async function registerAgent(
  em0: EntityManager,
  keyId: string,
  keyHash: string,
  p: AgentProfile,
  holder: { holderId: number; accountId: number | null } | null,
  at: number,
): Promise<Registered> {
  const createdAt = instantDate(at);
  const taken = () =>
    new ActorError(409, 'this key is already registered; use it, or register another key');
  try {
    return await em0.transactional(async (em) => {
      const known = await em.findOne(AgentSchema, { keyId }, { fields: ['revokedAt'] });
      if (known?.revokedAt) throw new ActorError(409, KEY_REVOKED);
      if (known) throw taken();
      const account = holder?.accountId
        ? await holderAccount(em, holder.holderId, holder.accountId)
        : em.create(AccountSchema, { holder: holder?.holderId ?? null, createdAt });
      const agent = em.create(AgentSchema, {
        keyId,
        keyHash,
        name: p.name,
        recallPhrase: p.recall_phrase,
        identity: p.agent ?? null,
        operator: p.operator ?? null,
        purpose: p.purpose ?? null,
        contact: p.contact ?? null,
        account,
        holder: holder?.holderId ?? null,
        pairedAt: holder ? createdAt : null,
        createdAt,
      });
      const token = randomBytes(24).toString('base64url');
      const cart = em.create(CartSchema, {
        agent,
        holder: holder?.holderId ?? null,
        name: `${p.name}'s cart`,
        kind: 'trade',
        token,
        createdAt,
        updatedAt: createdAt,
      });
      await em.flush();
      return {
        agent_id: agent.id,
        account_id: account.id,
        cart_id: cart.id,
        cart_token: token,
        cart_kind: 'trade' as const,
      };
    });
  } catch (err) {
    // Another registration (another key) took the holder's account between our check and insert.
    if (
      holder?.accountId &&
      isUniqueViolation(err) &&
      (err as { constraint?: string }).constraint === AGENT_ACCOUNT_UNIQUE
    )
      throw accountTaken(holder.accountId);
    // Another process registered the same key between our check and insert.
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
}

/** An account the holder owns that no agent trades yet (one key = one agent = one trading account). */
async function holderAccount(em: EntityManager, holderId: number, accountId: number) {
  const account = await em.findOne(AccountSchema, { id: accountId, holder: holderId });
  if (!account) throw new ActorError(404, `no account ${accountId} of yours`);
  // The Manual desk takes the holder's own picks; an agent trades an account of its own.
  if (account.kind === 'manual')
    throw new ActorError(
      400,
      `account ${accountId} is your Manual desk, which takes your own picks: leave account_id empty to give the agent a new account`,
    );
  if (await em.count(AgentSchema, { account: accountId })) throw accountTaken(accountId);
  return account;
}
