// The front end's handle on the actors: N shards, each a Piscina pool of exactly one worker, so an
// actor id always reaches the same thread (affinity) and its mailbox. Every queue is bounded: a
// shard with too many pending messages refuses new ones (503 + Retry-After) instead of growing.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { ActorError } from './actor.js';
import { shardOf, type Envelope, type ReadEnvelope, type TurnResult } from './protocol.js';
import type { WorkerOptions } from './worker.js';

export type RuntimeOptions = Omit<WorkerOptions, 'actorModules'> & {
  shards: number;
  askTimeoutMs: number;
  /** Pending messages per shard before refusing. */
  mailboxLimit: number;
  /** Extra actor modules (tests); the service's own kinds are always loaded. */
  extraActorModules?: string[];
  onTurn?: (actorKind: string, msgKind: string, seconds: number, ok: boolean) => void;
};

// Workers load JavaScript: the runtime always starts the compiled worker under dist/, also when
// the caller runs from TypeScript sources (tests), so `npm run build` precedes both.
const here = path.dirname(fileURLToPath(import.meta.url));
const distRuntime = here.includes(`${path.sep}dist${path.sep}`)
  ? here
  : path.resolve(here, '..', '..', 'dist', 'actors', 'runtime');
const WORKER_FILE = path.join(distRuntime, 'worker.js');
const SERVICE_ACTORS = pathToFileURL(path.resolve(distRuntime, '..', 'index.js')).href;

type Shard = { pool: Piscina; pending: number; restarts: number };

export class ActorRuntime {
  private readonly shards: Shard[];
  private closing = false;
  private nextReader = 0;

  constructor(private readonly opts: RuntimeOptions) {
    const workerData: WorkerOptions = {
      databaseUrl: opts.databaseUrl,
      poolMax: opts.poolMax,
      seed: opts.seed,
      idleMs: opts.idleMs,
      logLevel: opts.logLevel,
      actorModules: [SERVICE_ACTORS, ...(opts.extraActorModules ?? [])],
    };
    this.shards = Array.from({ length: opts.shards }, () => {
      const shard: Shard = {
        pool: new Piscina({
          filename: WORKER_FILE,
          minThreads: 1,
          maxThreads: 1,
          // Many turns in flight per worker: different actors overlap on database I/O; the
          // mailbox keeps one actor's turns in order.
          concurrentTasksPerWorker: 256,
          idleTimeout: Number.POSITIVE_INFINITY,
          maxQueue: opts.mailboxLimit,
          workerData,
        }),
        pending: 0,
        restarts: 0,
      };
      // Piscina replaces a worker that exits; count it so operators see it in /metrics.
      shard.pool.on('workerDestroy', () => {
        if (!this.closing) shard.restarts++;
      });
      shard.pool.on('error', () => {});
      return shard;
    });
  }

  /** Sends `msg` to actor `to` and waits for its reply; throws ActorError for refusals. */
  ask<T = unknown>(to: string, msg: Envelope['msg'], timeoutMs = this.opts.askTimeoutMs): Promise<T> {
    return this.run<T>(shardOf(to, this.shards.length), { to, msg }, to, msg.kind, timeoutMs);
  }

  /** Runs the read task `name` on the next shard in turn (no actor, no mailbox). */
  read<T = unknown>(name: string, args: unknown, timeoutMs = this.opts.askTimeoutMs): Promise<T> {
    this.nextReader = (this.nextReader + 1) % this.shards.length;
    return this.run<T>(this.nextReader, { read: name, args }, 'read:', name, timeoutMs);
  }

  private async run<T>(index: number, envelope: Envelope | ReadEnvelope, to: string, kind: string, timeoutMs: number): Promise<T> {
    if (this.closing) throw new ActorError(503, 'service is shutting down', 5);
    const shard = this.shards[index];
    if (shard.pending >= this.opts.mailboxLimit) {
      throw new ActorError(503, `too many pending requests for ${to}; retry shortly`, 1);
    }
    shard.pending++;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ActorError(503, `${to} did not answer within ${timeoutMs} ms; retry shortly`, 1)),
        timeoutMs,
      );
    });
    const run = shard.pool.run(envelope) as Promise<TurnResult>;
    // A late answer after the timeout is dropped; the turn itself still completes (and commits).
    run.catch(() => {});
    try {
      const result = await Promise.race([run, timeout]).catch((err: unknown) => {
        if (err instanceof ActorError) throw err;
        // The worker died mid-turn (it is being replaced) or the queue was full.
        throw new ActorError(503, `${to} is restarting; retry shortly`, 1);
      });
      this.opts.onTurn?.(to.slice(0, to.indexOf(':')), kind, result.turnMs / 1000, result.ok);
      if (!result.ok) throw new ActorError(result.status, result.detail);
      return result.reply as T;
    } finally {
      clearTimeout(timer);
      shard.pending--;
    }
  }

  stats(): { shard: number; pending: number; utilization: number; restarts: number }[] {
    return this.shards.map((s, shard) => ({ shard, pending: s.pending, utilization: s.pool.utilization, restarts: s.restarts }));
  }

  /** Terminates a shard's worker thread as a crash would (tests and drills); Piscina replaces it. */
  async killWorker(shard: number): Promise<void> {
    await Promise.all(this.shards[shard].pool.threads.map((t) => t.terminate()));
  }

  shardOf(actorId: string): number {
    return shardOf(actorId, this.shards.length);
  }

  /** Stops taking messages, lets queued turns finish, then stops the workers. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.shards.map((s) => s.pool.close()));
  }
}
