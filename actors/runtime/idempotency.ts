// Retries and idempotency (CONTRACT.md): the first answer to a request that carries an
// `Idempotency-Key` is stored in the same transaction as its effect, so a retry can never apply the
// effect twice: either the effect and its answer committed together (the retry gets the answer
// again) or neither did (the retry runs it). Two processes racing on one key meet at the primary
// key: the loser's transaction (effect included) rolls back and it answers the winner's answer.
import { raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IdempotencySchema } from '../../orm/entities/index.js';
import { ActorError } from './actor.js';
import type { IdemRequest } from './protocol.js';
import { defineReads } from './read.js';
import { instantDate, isUniqueViolation } from './sql.js';

/** A stored answer: 2xx with the turn's reply, or a refusal's status with `{detail}`. */
export type StoredAnswer = { hash: string; status: number; reply: unknown };

/** Answers are kept this long (CONTRACT.md: 24 hours), then swept in bounded batches. */
export const ANSWER_RETENTION_HOURS = 24;
/** Most answers one sweep deletes. */
export const SWEEP_BATCH = 5000;

/** Stored answers older than this are gone: `at` (the turn's instant, unix seconds) less the retention. */
const retentionCutoff = (at: number) => instantDate(at - ANSWER_RETENTION_HOURS * 3600);

export const REUSED_KEY =
  'this Idempotency-Key was already used with a different request body: use a new key for a new request';

/** The answer stored under the key and still kept at `at` (the turn's instant, unix seconds). */
export async function findAnswer(
  em: EntityManager,
  idem: Pick<IdemRequest, 'scope' | 'key'>,
  at: number,
): Promise<StoredAnswer | undefined> {
  // Never from the turn's identity map: a twin process may have stored the key since.
  const row = await em.findOne(
    IdempotencySchema,
    { scope: idem.scope, key: idem.key, createdAt: { $gt: retentionCutoff(at) } },
    { fields: ['requestHash', 'status', 'reply'], disableIdentityMap: true },
  );
  return row ? { hash: row.requestHash, status: row.status, reply: row.reply } : undefined;
}

/**
 * Stores an answer in the caller's transaction. A plain insert on purpose: when a twin of this
 * request (another process) holds or committed the key, the insert waits and then fails with
 * 23505, rolling this effect back. An answer past retention is deleted first: the key is free again.
 * Stored at `at` (the turn's instant, unix seconds).
 */
export async function storeAnswer(
  em: EntityManager,
  idem: IdemRequest,
  status: number,
  reply: unknown,
  at: number,
): Promise<void> {
  await em.nativeDelete(IdempotencySchema, {
    scope: idem.scope,
    key: idem.key,
    createdAt: { $lte: retentionCutoff(at) },
  });
  await em.insert(IdempotencySchema, {
    scope: idem.scope,
    key: idem.key,
    requestHash: idem.hash,
    status,
    createdAt: instantDate(at),
    // The column is `jsonb not null`: an empty reply is JSON null (the json type would send SQL NULL).
    reply: reply === undefined || reply === null ? raw(`'null'::jsonb`) : reply,
  });
}

/** The stored answer as a turn's outcome: its reply, or the refusal it was. */
export function replayOf(
  stored: StoredAnswer,
  idem: IdemRequest,
): { replayed: true; reply: unknown } {
  if (stored.hash !== idem.hash) throw new ActorError(400, REUSED_KEY);
  if (stored.status >= 400) {
    const refusal = ActorError.fromBody(stored.status, stored.reply);
    refusal.replayed = true;
    throw refusal;
  }
  return { replayed: true, reply: stored.reply };
}

/**
 * Runs `effect` (which opens its own, here nested, transaction) with its answer stored in one
 * transaction, at `at` (the turn's instant). A refusal (ActorError 4xx) rolls the effect back and
 * stores the refusal.
 */
export async function withIdempotency(
  em: EntityManager,
  idem: IdemRequest,
  at: number,
  effect: (em: EntityManager) => Promise<unknown>,
  stored: (reply: unknown) => unknown = (r) => r,
): Promise<{ replayed: boolean; reply: unknown }> {
  let outcome: { replayed: boolean; reply: unknown } | { refused: ActorError };
  try {
    outcome = await em.transactional(async (tem) => {
      const prior = await findAnswer(tem, idem, at);
      if (prior) return replayOf(prior, idem);
      try {
        // Its own savepoint: a refusal undoes the effect's writes, not the stored refusal.
        const reply = await tem.transactional((inner) => effect(inner));
        await storeAnswer(tem, idem, 200, stored(reply), at);
        return { replayed: false, reply };
      } catch (err) {
        // A throttle's 429 passes with time: it is not the request's answer.
        if (!(err instanceof ActorError) || err.status >= 500 || err.status === 429) throw err;
        await storeAnswer(tem, idem, err.status, err.body, at);
        return { refused: err };
      }
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // Another process committed this key first: its answer is the answer.
    const prior = await findAnswer(em.fork(), idem, at);
    if (!prior) throw err;
    return replayOf(prior, idem);
  }
  if ('refused' in outcome) throw outcome.refused;
  return outcome;
}

/**
 * For handlers that own their idempotency (`ownsIdempotency`) because part of their turn must run
 * outside any transaction (a throttle's counts, which a refused attempt must keep): the
 * stored answer of this key, as a replay, before anything else happens.
 */
export async function priorAnswer(
  em: EntityManager,
  idem: IdemRequest | undefined,
  at: number,
): Promise<{ replayed: true; reply: unknown } | undefined> {
  const prior = idem && (await findAnswer(em, idem, at));
  return prior ? replayOf(prior, idem!) : undefined;
}

/** The effect in one transaction, its answer stored with it under the key (`stored` picks what of it). */
export async function effectOnce<T>(
  em: EntityManager,
  idem: IdemRequest | undefined,
  at: number,
  effect: (em: EntityManager) => Promise<T>,
  stored?: (reply: T) => unknown,
): Promise<T | { replayed: true; reply: unknown }> {
  if (!idem) return em.transactional(effect);
  const out = await withIdempotency(
    em,
    idem,
    at,
    effect as (em: EntityManager) => Promise<unknown>,
    stored as ((r: unknown) => unknown) | undefined,
  );
  return out.replayed ? { replayed: true, reply: out.reply } : (out.reply as T);
}

/**
 * A refusal decided outside the effect's transaction: stored as the key's answer and thrown. If a
 * twin (another process) answered the key meanwhile, its answer is the answer, a success too.
 */
export async function refused(
  em: EntityManager,
  idem: IdemRequest | undefined,
  at: number,
  err: ActorError,
): Promise<{ replayed: true; reply: unknown }> {
  if (!idem || err.status === 429 || err.status >= 500) throw err;
  try {
    await storeAnswer(em, idem, err.status, err.body, at);
  } catch (e) {
    if (!isUniqueViolation(e)) throw e;
    const prior = await findAnswer(em, idem, at);
    if (prior) return replayOf(prior, idem);
    throw e;
  }
  throw err;
}

/** Deletes up to SWEEP_BATCH answers expired at `at` (unix seconds); returns how many (the supervisor repeats while full). */
export async function sweepAnswers(em: EntityManager, at: number): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `with d as (delete from idempotency where ctid in (
       select ctid from idempotency where created_at <= ? limit ?) returning 1)
     select count(*)::int as n from d`,
    [retentionCutoff(at), SWEEP_BATCH],
  );
  return row.n;
}

/** The front end looks a key up before running a route (a retry after its session closed still replays). */
export const idempotencyReads = defineReads({
  'idempotency.find': async ({ em, at }, a: { scope: string; key: string }) =>
    (await findAnswer(em, a, at)) ?? null,
});
