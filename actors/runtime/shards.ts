// The front end's handle on the actors: N shards, each a Piscina pool of exactly one worker, so an
// actor id always reaches the same thread (affinity) and its mailbox. Every queue is bounded: a
// shard with too many pending messages refuses new ones (503 + Retry-After) instead of growing.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { ActorError, AskTimedOut } from './actor.js';
import {
  shardOf,
  type ActorRef,
  type BatchEnvelope,
  type Envelope,
  type IdemRequest,
  type ReadEnvelope,
  type ReadSource,
  type Replies,
  type TurnResult,
} from './protocol.js';
import type { WorkerOptions } from './worker.js';
import { poolWaitsBuffer, readPoolWaits, type PoolWaits } from './pool-waits.js';

/** A request's Idempotency-Key on its way to the turn that stores its answer; `replayed` is set on the way back. */
export type IdemTicket = IdemRequest & { replayed?: boolean };
export type AskOptions = {
  timeoutMs?: number;
  idem?: IdemTicket;
  /**
   * Travel to the worker with the other grouped asks of this event-loop turn for the same shard, in
   * one message, and come back with them in one reply: for turns that end together anyway (order
   * placement: one commit for the worker's whole batch), so the front end pays one message per shard
   * and batch instead of one per order. A group answers when its last
   * turn ends: never for turns of unequal length.
   */
  grouped?: boolean;
};

/** Why a 503 may hide an effect, and what to do about it (CONTRACT.md "Retries and idempotency"). */
const mayHaveHappened = (idem: IdemTicket | undefined) =>
  idem
    ? 'the request may still take effect: retry with the same Idempotency-Key to get its answer'
    : 'the request may still take effect: check before retrying, or send an Idempotency-Key so that retries are safe';

export type RuntimeOptions = Omit<WorkerOptions, 'actorModules' | 'replicaUrl'> & {
  /** Streaming replicas (SVC_REPLICA_URLS): shard i reads replica-safe tasks from replica i mod n. */
  replicaUrls?: readonly string[];
  /**
   * What the front end has seen committed, sent with each read when there are replicas (opaque
   * here: the replica-safe module compares it with a replica's position); undefined: the primary.
   */
  readMark?: () => unknown;
  shards: number;
  askTimeoutMs: number;
  /** Pending messages per shard before refusing. */
  mailboxLimit: number;
  /**
   * Each worker's old-generation heap, in MB. V8's default scales with the machine's memory (GBs
   * here), so a worker let its garbage grow to hundreds of MB under a burst (the first start's
   * history backfill) before collecting; a cap makes it collect sooner. Unset: V8's default.
   */
  workerHeapMb?: number;
  /** Extra actor modules (tests); the service's own kinds are always loaded. */
  extraActorModules?: string[];
  /**
   * Now, in real unix seconds: the service's one Clock (ARCHITECTURE rule 7). Every message and read
   * carries it to its turn (TurnContext.at), which stores and compares no other instant.
   */
  clock: () => number;
  /** A turn or read task ended on shard `shard` (metrics). */
  onTurn?: (
    actorKind: string,
    msgKind: string,
    seconds: number,
    ok: boolean,
    shard: number,
  ) => void;
};

// Workers load JavaScript: the runtime always starts the compiled worker under dist/, also when
// the caller runs from TypeScript sources (tests), so `npm run build` precedes both.
const here = path.dirname(fileURLToPath(import.meta.url));
const distRuntime = here.includes(`${path.sep}dist${path.sep}`)
  ? here
  : path.resolve(here, '..', '..', 'dist', 'actors', 'runtime');
const WORKER_FILE = path.join(distRuntime, 'worker.js');

/**
 * The Node flags a worker starts with: the process's own, less its module loaders. Workers run the
 * compiled JavaScript only; a loader the process was started with (a test runner's TypeScript
 * loader) would otherwise start again in every worker and go through every module it loads.
 */
export function workerExecArgv(parent: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const flag = /^(?:--import|--loader|--experimental-loader|--require|-r)(=|$)/.exec(parent[i]);
    // The young generation's size: a process-wide V8 flag a worker may not be given again.
    if (/^--max-semi-space-size=/.test(parent[i])) continue;
    if (!flag) out.push(parent[i]);
    else if (!flag[1]) i++; // the loader is the next argument
  }
  return out;
}

const SERVICE_ACTORS = pathToFileURL(path.resolve(distRuntime, '..', 'index.js')).href;

type Waiter = {
  envelope: Envelope;
  resolve: (r: TurnResult) => void;
  reject: (e: unknown) => void;
};
type Shard = {
  pool: Piscina;
  pending: number;
  restarts: number;
  poolWaits: SharedArrayBuffer;
  group?: Waiter[];
};

export class ActorRuntime {
  private readonly shards: Shard[];
  private closing = false;
  private nextReader = 0;
  /** Idempotency keys whose request is still running here, until its turn really ends (not at a timeout). */
  private readonly busyKeys = new Map<string, number>();

  /** Replica-safe reads answered, by where they were served from. */
  private readonly readsFrom: Record<ReadSource, number> = { replica: 0, primary: 0 };

  constructor(private readonly opts: RuntimeOptions) {
    const replicas = opts.replicaUrls ?? [];
    const common: WorkerOptions = {
      databaseUrl: opts.databaseUrl,
      poolMax: opts.poolMax,
      seed: opts.seed,
      baseUrl: opts.baseUrl,
      idleMs: opts.idleMs,
      logLevel: opts.logLevel,
      actorModules: [SERVICE_ACTORS, ...(opts.extraActorModules ?? [])],
      replicaPoolMax: opts.replicaPoolMax,
    };
    this.shards = Array.from({ length: opts.shards }, (_, i) => {
      const workerData: WorkerOptions = replicas.length
        ? { ...common, replicaUrl: replicas[i % replicas.length] }
        : common;
      const poolWaits = poolWaitsBuffer();
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
          ...(opts.workerHeapMb
            ? { resourceLimits: { maxOldGenerationSizeMb: opts.workerHeapMb } }
            : {}),
          workerData: { ...workerData, poolWaits },
          execArgv: workerExecArgv(process.execArgv),
        }),
        pending: 0,
        restarts: 0,
        poolWaits,
      };
      // Piscina replaces a worker that exits; count it so operators see it in /metrics.
      shard.pool.on('workerDestroy', () => {
        if (!this.closing) shard.restarts++;
      });
      shard.pool.on('error', () => {});
      return shard;
    });
  }

  /**
   * Sends `msg` to actor `to` and waits for its reply; throws ActorError for refusals. The address
   * types both: `msg` is one of its kind's messages, the answer that message kind's reply.
   */
  ask<M extends { kind: string }, R extends Replies<M>, K extends M['kind']>(
    to: ActorRef<M, R>,
    msg: NoInfer<M> & { kind: K },
    opts: number | AskOptions = {},
  ): Promise<R[K]> {
    const {
      timeoutMs = this.opts.askTimeoutMs,
      idem,
      grouped = false,
    } = typeof opts === 'number' ? { timeoutMs: opts } : opts;
    const sent = msg as Envelope['msg'];
    const at = this.opts.clock();
    const envelope: Envelope = idem
      ? { to, msg: sent, idem: { scope: idem.scope, key: idem.key, hash: idem.hash }, at }
      : { to, msg: sent, at };
    return this.run<R[K]>(
      shardOf(to, this.shards.length),
      envelope,
      to,
      msg.kind,
      timeoutMs,
      idem,
      grouped,
    );
  }

  /** Joins the shard's group of this event-loop turn; the first member schedules the group's one message. */
  private grouped(shard: Shard, envelope: Envelope): Promise<TurnResult> {
    return new Promise((resolve, reject) => {
      if (!shard.group) {
        const group: Waiter[] = (shard.group = []);
        setImmediate(() => {
          shard.group = undefined;
          this.sendGroup(shard, group);
        });
      }
      shard.group.push({ envelope, resolve, reject });
    });
  }

  private sendGroup(shard: Shard, group: Waiter[]): void {
    const one = group.length === 1;
    const task: Envelope | BatchEnvelope = one
      ? group[0].envelope
      : { batch: group.map((w) => w.envelope) };
    (shard.pool.run(task) as Promise<TurnResult | TurnResult[]>).then(
      (r) =>
        one
          ? group[0].resolve(r as TurnResult)
          : group.forEach((w, i) => w.resolve((r as TurnResult[])[i])),
      (err) => group.forEach((w) => w.reject(err)),
    );
  }

  /** Is a request with this Idempotency-Key (scope + key) still running in this process? */
  keyBusy(k: string): boolean {
    return this.busyKeys.has(k);
  }

  /** Marks a key busy until the returned release is called (counts nest). */
  holdKey(k: string): () => void {
    this.busyKeys.set(k, (this.busyKeys.get(k) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const n = (this.busyKeys.get(k) ?? 1) - 1;
      if (n > 0) this.busyKeys.set(k, n);
      else this.busyKeys.delete(k);
    };
  }

  /** How many shards (workers) read tasks are spread over. */
  get shardCount(): number {
    return this.shards.length;
  }

  /** Runs the read task `name` on the next shard in turn (no actor, no mailbox). */
  read<T = unknown>(name: string, args: unknown, timeoutMs = this.opts.askTimeoutMs): Promise<T> {
    this.nextReader = (this.nextReader + 1) % this.shards.length;
    const mark = this.opts.replicaUrls?.length ? this.opts.readMark?.() : undefined;
    const envelope: ReadEnvelope =
      mark === undefined
        ? { read: name, args, at: this.opts.clock() }
        : { read: name, args, at: this.opts.clock(), mark };
    return this.run<T>(this.nextReader, envelope, 'read:', name, timeoutMs);
  }

  private async run<T>(
    index: number,
    envelope: Envelope | ReadEnvelope,
    to: string,
    kind: string,
    timeoutMs: number,
    idem?: IdemTicket,
    grouped = false,
  ): Promise<T> {
    if (this.closing)
      throw new ActorError(503, 'service is shutting down; nothing was done: retry shortly', 5);
    const shard = this.shards[index];
    if (shard.pending >= this.opts.mailboxLimit) {
      throw new ActorError(
        503,
        `too many pending requests for ${to}; nothing was done: retry shortly`,
        1,
      );
    }
    shard.pending++;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AskTimedOut(
              503,
              `${to} did not answer within ${timeoutMs} ms; ${mayHaveHappened(idem)}`,
              1,
            ),
          ),
        timeoutMs,
      );
    });
    const run =
      grouped && 'to' in envelope
        ? this.grouped(shard, envelope)
        : (shard.pool.run(envelope) as Promise<TurnResult>);
    // A late answer after the timeout is dropped; the turn itself still completes (and commits),
    // so its key stays busy (a retry answers 409) until the turn really ends.
    const release = idem ? this.holdKey(`${idem.scope}\n${idem.key}`) : undefined;
    run.then(
      () => release?.(),
      () => release?.(),
    );
    try {
      const result = await Promise.race([run, timeout]).catch((err: unknown) => {
        if (err instanceof ActorError) throw err;
        // The worker died mid-turn (it is being replaced) or the queue was full.
        throw new ActorError(503, `${to} is restarting; ${mayHaveHappened(idem)}`, 1);
      });
      this.opts.onTurn?.(
        to.slice(0, to.indexOf(':')),
        kind,
        result.turnMs / 1000,
        result.ok,
        index,
      );
      if (idem && result.replayed) idem.replayed = true;
      if (result.ok && result.from) this.readsFrom[result.from]++;
      if (!result.ok)
        throw new ActorError(result.status, result.detail, result.retryAfter, result.facts);
      return result.reply as T;
    } finally {
      clearTimeout(timer);
      shard.pending--;
    }
  }

  /** Replica-safe reads answered so far, by where they were served from (metrics). */
  readSources(): Readonly<Record<ReadSource, number>> {
    return this.readsFrom;
  }

  stats(): {
    shard: number;
    pending: number;
    utilization: number;
    restarts: number;
    poolWaits: PoolWaits;
  }[] {
    return this.shards.map((s, shard) => ({
      shard,
      pending: s.pending,
      utilization: s.pool.utilization,
      restarts: s.restarts,
      poolWaits: readPoolWaits(s.poolWaits),
    }));
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
