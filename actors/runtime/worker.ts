// A shard's worker thread (Piscina entry). Holds the activations of the actors hashed to this
// shard, one mailbox each, and its own database pool. A turn: activate if needed (state from the
// database), run the message's handler, reply. A failed turn drops the activation so the next turn
// reloads from the database, which is the last word.
import { workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openOrm, type Orm } from '../../orm/database.js';
import { ActorError, type ActorKind } from './actor.js';
import { Mailboxes } from './mailbox.js';
import {
  splitActorId,
  type BatchEnvelope,
  type Envelope,
  type ReadEnvelope,
  type TurnResult,
} from './protocol.js';
import type { ReadTask } from './read.js';
import { ReplicaGate, type ReplicaReads } from './replica.js';
import { logSerializers } from './log.js';
import { withIdempotency } from './idempotency.js';
import { countPoolWaits } from './pool-waits.js';

export type WorkerOptions = {
  databaseUrl: string;
  poolMax: number;
  seed: number;
  /** The service's public address (BASE_URL): the purchase links in the orders events carry. */
  baseUrl: string;
  /** Modules whose `actorKinds` export is registered (file URLs); the service's own list first. */
  actorModules: string[];
  /** An activation unused this long is dropped (its state stays in the database). */
  idleMs: number;
  logLevel: string;
  /** A streaming replica this worker may serve replica-safe reads from (SVC_REPLICA_URLS), and its pool's size. */
  replicaUrl?: string;
  replicaPoolMax?: number;
  /** Where this shard's waits for a database connection are counted (pool-waits.ts); the front end reads it. */
  poolWaits?: SharedArrayBuffer;
};

type Activation = { state: unknown; lastUsed: number };

const options = workerData as WorkerOptions;
// Errors are logged through the secret-free serializer: a failed statement's values never reach a log.
// Written synchronously to fd 1: a worker's (rare) lines are then out before its answer reaches the
// front end, and none waits in a buffer of a thread that may be ended.
const log = pino(
  { level: options.logLevel, name: 'worker', serializers: logSerializers },
  pino.destination({ fd: 1, sync: true }),
);
const mailboxes = new Mailboxes();
const activations = new Map<string, Activation>();
let ready:
  | Promise<{
      orm: Orm;
      kinds: Map<string, ActorKind>;
      reads: Map<string, ReadTask>;
      replica: ReplicaGate | undefined;
    }>
  | undefined;

function init() {
  ready ??= (async () => {
    const kinds = new Map<string, ActorKind>();
    const reads = new Map<string, ReadTask>();
    let replicaReads: ReplicaReads | undefined;
    for (const url of options.actorModules) {
      const mod = (await import(url)) as {
        actorKinds?: ActorKind[];
        readTasks?: Record<string, ReadTask>;
        replicaReads?: ReplicaReads;
      };
      for (const k of mod.actorKinds ?? []) kinds.set(k.kind, k);
      for (const [name, task] of Object.entries(mod.readTasks ?? {})) reads.set(name, task);
      replicaReads ??= mod.replicaReads;
    }
    const orm = await openOrm(options.databaseUrl, options.poolMax, { migrations: false });
    const replica =
      options.replicaUrl && replicaReads
        ? new ReplicaGate(options.replicaUrl, options.replicaPoolMax ?? 2, replicaReads, (err) =>
            log.warn({ err }, 'the replica failed; record reads go to the primary for a while'),
          )
        : undefined;
    if (options.poolWaits)
      countPoolWaits(
        orm.em.getConnection().getKnex(),
        options.poolWaits,
        () => performance.now() / 1000,
      );
    setInterval(sweepIdle, Math.max(1000, options.idleMs / 2)).unref();
    return { orm, kinds, reads, replica };
  })();
  return ready;
}

function sweepIdle(): void {
  const cutoff = Date.now() - options.idleMs;
  for (const [id, a] of activations) if (a.lastUsed < cutoff) activations.delete(id);
}

export default async function task(
  envelope: Envelope | ReadEnvelope | BatchEnvelope,
): Promise<TurnResult | TurnResult[]> {
  if ('batch' in envelope) return Promise.all(envelope.batch.map(turn)); // each turn in its own mailbox, as if sent alone
  return 'read' in envelope ? read(envelope) : turn(envelope);
}

/** Read tasks need no mailbox: they only read the record, which closes change atomically. */
async function read(envelope: ReadEnvelope): Promise<TurnResult> {
  const { orm, reads, replica } = await init();
  const t0 = performance.now();
  const run = reads.get(envelope.read);
  if (!run) return { ok: false, status: 500, detail: `no read task ${envelope.read}`, turnMs: 0 };
  const onReplica = replica?.serves(envelope.read) ? replica : undefined;
  try {
    const em = await onReplica?.emFor(envelope.mark);
    if (em) {
      try {
        const reply = await run({ em, seed: options.seed, at: envelope.at }, envelope.args);
        return { ok: true, reply, turnMs: performance.now() - t0, from: 'replica' };
      } catch (err) {
        if (err instanceof ActorError) throw err;
        onReplica!.failed(err); // e.g. a query cancelled by the replica's recovery: the primary answers
      }
    }
    const reply = await run(
      { em: orm.em.fork(), seed: options.seed, at: envelope.at },
      envelope.args,
    );
    return {
      ok: true,
      reply,
      turnMs: performance.now() - t0,
      ...(onReplica ? { from: 'primary' as const } : {}),
    };
  } catch (err) {
    if (err instanceof ActorError)
      return { ok: false, status: err.status, detail: err.detail, turnMs: performance.now() - t0 };
    log.error({ err, read: envelope.read }, 'read task failed');
    return { ok: false, status: 500, detail: 'internal error', turnMs: performance.now() - t0 };
  }
}

async function turn(envelope: Envelope): Promise<TurnResult> {
  const { orm, kinds } = await init();
  const { kind, id } = splitActorId(envelope.to);
  const actor = kinds.get(kind);
  const handler = actor?.handlers[envelope.msg.kind as never] as
    ((state: unknown, msg: unknown, ctx: unknown) => Promise<unknown>) | undefined;
  if (!actor || !handler) {
    return {
      ok: false,
      status: 500,
      detail: `no handler for ${envelope.msg.kind} on ${kind}`,
      turnMs: 0,
    };
  }
  return mailboxes.post(envelope.to, async (): Promise<TurnResult> => {
    const t0 = performance.now();
    // The turn's fork is made on first use: an order turn hands its request to the batch and never
    // touches it (a fork per order costs under load).
    let em: EntityManager | undefined;
    const ctx = {
      get em() {
        return (em ??= orm.em.fork());
      },
      id,
      seed: options.seed,
      baseUrl: options.baseUrl,
      idem: envelope.idem,
      log,
      at: envelope.at,
    };
    try {
      let activation = activations.get(envelope.to);
      if (!activation) {
        activation = { state: await actor.activate(ctx), lastUsed: 0 };
        activations.set(envelope.to, activation);
      }
      activation.lastUsed = Date.now();
      const state = activation.state;
      if (envelope.idem && !actor.ownsIdempotency?.includes(envelope.msg.kind)) {
        const out = await withIdempotency(ctx.em, envelope.idem, envelope.at, (em) =>
          handler(state, envelope.msg, { ...ctx, em }),
        );
        return {
          ok: true,
          reply: out.reply,
          replayed: out.replayed,
          turnMs: performance.now() - t0,
        };
      }
      const reply = await handler(state, envelope.msg, ctx);
      if (envelope.idem && isReplay(reply))
        return { ok: true, reply: reply.reply, replayed: true, turnMs: performance.now() - t0 };
      return { ok: true, reply, turnMs: performance.now() - t0 };
    } catch (err) {
      activations.delete(envelope.to);
      if (err instanceof ActorError)
        return {
          ok: false,
          status: err.status,
          detail: err.detail,
          retryAfter: err.retryAfter,
          facts: err.facts,
          replayed: err.replayed,
          turnMs: performance.now() - t0,
        };
      log.error({ err, actor: envelope.to, turn: envelope.msg.kind }, 'turn failed'); // `msg` would clash with pino's message key
      return { ok: false, status: 500, detail: 'internal error', turnMs: performance.now() - t0 };
    }
  });
}

/** Queued and running turns in this worker, for the shard's metrics. */
export function depth(): number {
  return mailboxes.depth;
}

/** A handler that owns its idempotency answers a replay as `{replayed: true, reply}`. */
function isReplay(reply: unknown): reply is { replayed: true; reply: unknown } {
  return (
    typeof reply === 'object' &&
    reply !== null &&
    (reply as { replayed?: unknown }).replayed === true &&
    'reply' in reply
  );
}
