// Waits for a database connection in a shard's worker, where the turns and read tasks run their
// queries. The worker counts into a SharedArrayBuffer the front end made (each shard's workerData,
// kept by a replacement worker), which the metrics read at each scrape: no message per turn.
// Neither MikroORM nor knex exposes pool counters; knex's pool is a tarn.js Pool, whose
// acquire events are tarn's documented API, reached through knex's client (orm/connections.ts).

/** Slots of the buffer (float64 each): written by one worker thread only, read by the front end. */
const ACQUIRES = 0;
const WAITED = 1;
const WAIT_SECONDS = 2;
const WAITING = 3;
const SLOTS = 4;

/**
 * Since the shard started: connections asked for, those asked for when none was idle (they waited
 * for one to be released or opened) and the seconds all of them waited; `waiting`: asks not yet served.
 */
export type PoolWaits = { acquires: number; waited: number; wait_seconds: number; waiting: number };

export const poolWaitsBuffer = () => new SharedArrayBuffer(SLOTS * Float64Array.BYTES_PER_ELEMENT);

export function readPoolWaits(buf: SharedArrayBuffer): PoolWaits {
  const a = new Float64Array(buf);
  return {
    acquires: a[ACQUIRES],
    waited: a[WAITED],
    wait_seconds: a[WAIT_SECONDS],
    waiting: a[WAITING],
  };
}

/** What of a tarn.js Pool is used. */
type TarnPool = { numFree(): number; on(event: string, listener: (eventId: number) => void): void };

/**
 * In the worker: counts the acquires of `knex`'s pool into `buf` from now on. False (nothing
 * counted, the figures stay unknown) when the pool is not a tarn.js Pool.
 */
export function countPoolWaits(
  knex: unknown,
  buf: SharedArrayBuffer,
  monotonicSeconds: () => number,
): boolean {
  const pool = (knex as { client?: { pool?: Partial<TarnPool> } } | undefined)?.client?.pool;
  if (typeof pool?.on !== 'function' || typeof pool.numFree !== 'function') return false;
  const a = new Float64Array(buf);
  a[WAITING] = 0; // a worker that replaced a dead one starts with none waiting
  const started = new Map<number, number>();
  const tarn = pool as TarnPool;
  tarn.on('acquireRequest', (id) => {
    started.set(id, monotonicSeconds());
    a[ACQUIRES]++;
    if (tarn.numFree() === 0) a[WAITED]++;
    a[WAITING]++;
  });
  const served = (id: number) => {
    const t0 = started.get(id);
    if (t0 === undefined) return;
    started.delete(id);
    a[WAIT_SECONDS] += Math.max(0, monotonicSeconds() - t0);
    a[WAITING]--;
  };
  tarn.on('acquireSuccess', served);
  tarn.on('acquireFail', served);
  return true;
}
