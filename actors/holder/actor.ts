// HolderActor ("holder:<lowercased e-mail>"): an account holder's registration and web sessions.
// It is an actor so that password hashing (deliberately slow) runs in a worker thread, not on the
// front end's event loop, and so that one e-mail's register/login turns never interleave. Only
// sha256 of a session token is stored; the token itself goes back to the caller once.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  AccountSchema,
  CartSchema,
  HolderSchema,
  HolderSessionSchema,
} from '../../orm/entities/index.js';
import { ActorError, defineActor } from '../runtime/actor.js';
import { DECOY_HASH, hashPassword, verifyPassword } from '../../src/auth/passwords.js';
import { holderThrottle } from './throttle.js';
import { effectOnce, priorAnswer, refused } from '../runtime/idempotency.js';
import { instantDate, isUniqueViolation } from '../runtime/sql.js';
import { sessionTokenHash } from '../../src/auth/sessions.js';
import { SESSION_DAYS } from '../../src/rules.js';
import type {
  CardRemoved,
  CoinsBought,
  Granted,
  HolderMessage,
  HolderReplies,
  HolderSession,
  LoggedOut,
  Revoked,
} from './messages.js';
import { buyCoins, postCoins, registrationGrant, removeCard } from './coins.js';
import { GC_GRANT_HUNDREDTHS } from '../../src/payments/terms.js';
import { grant, revoke } from './grants.js';

type HolderRow = { id: number; email: string; display_name: string; password_hash: string };

async function holderByEmail(em: EntityManager, email: string): Promise<HolderRow | undefined> {
  const h = await em.findOne(
    HolderSchema,
    { email },
    { fields: ['email', 'displayName', 'passwordHash'] },
  );
  return h
    ? { id: h.id, email: h.email, display_name: h.displayName, password_hash: h.passwordHash }
    : undefined;
}

/** A web session opened at `at` (the turn's instant); the session look-up compares its expiry with the service clock too (holder/reads.ts). */
async function openSession(
  em: EntityManager,
  h: { id: number; email: string; display_name: string },
  at: number,
): Promise<HolderSession> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = instantDate(at + SESSION_DAYS * 24 * 3600);
  await em.insert(HolderSessionSchema, {
    tokenHash: sessionTokenHash(token),
    holder: h.id,
    expiresAt,
    createdAt: instantDate(at),
  });
  // Expired sessions of this holder are dead weight: drop them while we are here.
  await em.nativeDelete(HolderSessionSchema, {
    holder: h.id,
    expiresAt: { $lte: instantDate(at) },
  });
  return {
    holder_id: h.id,
    email: h.email,
    display_name: h.display_name,
    token,
    expires_at: expiresAt.getTime() / 1000,
  };
}

const throttle = holderThrottle;

function sameEmail(stateEmail: string, email: string): void {
  // The route addresses the actor by the normalised e-mail; a mismatch is a caller bug, not input.
  if (stateEmail !== email) throw new ActorError(400, 'e-mail does not match this holder');
}

/** A session answer as stored under an Idempotency-Key: never the token (only its hash is ever kept). */
const withoutToken = (s: HolderSession): Omit<HolderSession, 'token'> => ({
  holder_id: s.holder_id,
  email: s.email,
  display_name: s.display_name,
  expires_at: s.expires_at,
});

export const holderActor = defineActor<{ email: string }, HolderMessage, HolderReplies>({
  kind: 'holder',
  // Their throttle counts must outlive a refused attempt: they run outside the transaction that
  // stores the answer.
  ownsIdempotency: ['register', 'login'],

  async activate(ctx) {
    return { email: ctx.id };
  },

  handlers: {
    async register(state, msg, ctx) {
      const prior = await priorAnswer(ctx.em, ctx.idem, ctx.at);
      if (prior) return prior;
      sameEmail(state.email, msg.email);
      const taken = () => new ActorError(409, 'e-mail already registered');
      // Every attempt counts, a refused one too: probing which e-mails are registered is throttled.
      await throttle(ctx.em).register(msg.address, ctx.at);
      // Refuse a known e-mail before paying for a hash.
      if (await holderByEmail(ctx.em, state.email))
        return refused(ctx.em, ctx.idem, ctx.at, taken());
      const hash = await hashPassword(msg.password);
      try {
        return await effectOnce(
          ctx.em,
          ctx.idem,
          ctx.at,
          async (em) => {
            const createdAt = instantDate(ctx.at);
            const h = em.create(HolderSchema, {
              email: state.email,
              passwordHash: hash,
              displayName: msg.display_name,
              createdAt,
            });
            // The holder's Manual desk (the lines they pick, CONTRACT.md "The holder's money") and own cart.
            em.create(AccountSchema, { holder: h, kind: 'manual', createdAt });
            em.create(CartSchema, {
              holder: h,
              name: 'My cart',
              kind: 'trade',
              token: randomBytes(24).toString('base64url'),
              createdAt,
              updatedAt: createdAt,
            });
            await em.flush();
            await postCoins(em, h.id, registrationGrant(GC_GRANT_HUNDREDTHS), ctx.at);
            return openSession(
              em,
              { id: h.id, email: state.email, display_name: msg.display_name },
              ctx.at,
            );
          },
          withoutToken,
        );
      } catch (err) {
        // Another process registered the same e-mail between our check and insert.
        if (isUniqueViolation(err)) throw taken();
        throw err;
      }
    },

    async login(state, msg, ctx) {
      const prior = await priorAnswer(ctx.em, ctx.idem, ctx.at);
      if (prior) return prior;
      sameEmail(state.email, msg.email);
      // A throttled login (this address, or this e-mail from this address) is refused before its
      // password is checked, the right one too; the same e-mail from another address is checked.
      await throttle(ctx.em).checkLogin(state.email, msg.address, ctx.at);
      const h = await holderByEmail(ctx.em, state.email);
      // An unknown e-mail costs a full verification too: timing does not reveal who is registered.
      const ok = await verifyPassword(msg.password, h?.password_hash ?? DECOY_HASH);
      if (!h || !ok) {
        await throttle(ctx.em).loginFailed(state.email, msg.address, ctx.at);
        return refused(ctx.em, ctx.idem, ctx.at, new ActorError(401, 'wrong e-mail or password'));
      }
      const session = await effectOnce(
        ctx.em,
        ctx.idem,
        ctx.at,
        (em) => openSession(em, h, ctx.at),
        withoutToken,
      );
      await throttle(ctx.em).loginSucceeded(state.email, msg.address);
      return session;
    },

    async resume(state, msg, ctx): Promise<HolderSession> {
      const h = await holderByEmail(ctx.em, state.email);
      if (!h || h.id !== msg.holderId) throw new ActorError(404, 'no such holder');
      return ctx.em.transactional((em) => openSession(em, h, ctx.at));
    },

    async buyCoins(_state, msg, ctx): Promise<CoinsBought> {
      return ctx.em.transactional((em) => buyCoins(em, msg));
    },

    async removeCard(_state, msg, ctx): Promise<CardRemoved> {
      return ctx.em.transactional((em) => removeCard(em, msg.holderId, msg.cardId, ctx.at));
    },

    async grant(_state, msg, ctx): Promise<Granted> {
      return ctx.em.transactional((em) => grant(em, msg, ctx.at));
    },

    async revoke(_state, msg, ctx): Promise<Revoked> {
      return ctx.em.transactional((em) => revoke(em, msg.holderId, msg.grantId, ctx.at));
    },

    async logout(state, msg, ctx): Promise<LoggedOut> {
      const ended = await ctx.em.nativeDelete(HolderSessionSchema, {
        tokenHash: msg.tokenHash,
        holder: { email: state.email },
      });
      return { ended: ended > 0 };
    },
  },
});
