// The connection budget of one process: the main thread's pool, and per shard (worker thread) its
// ORM pool and the order batch's connection. Start-up refuses a shard count the database cannot
// serve, instead of failing later with "too many connections" under load.
import type { Orm } from './database.js';

/** The main thread's pool: migrations and start-up (the front end's reads run on the workers' pools). */
export const MAIN_POOL = 4;
/** A worker's ORM pool: its turns and read tasks. */
export const WORKER_POOL = 10;
/** A worker's pool on its streaming replica (SVC_REPLICA_URLS): record reads on a cache miss only. */
export const REPLICA_POOL = 2;
/** A worker's order-batch connection (actors/account/order-batch.ts: one batch at a time). */
export const BATCH_CONNECTION = 1;
/** The process's LISTEN connection (actors/runtime/notify.ts: the event log's NOTIFYs). */
export const LISTEN_CONNECTION = 1;
/** The process's closes' lease connection (actors/runtime/close-lease.ts: a session advisory lock). */
export const LEASE_CONNECTION = 1;

export type PoolStats = { used: number; free: number; pending: number; max: number };

/**
 * The pool's gauges for /metrics, from public APIs only. Neither MikroORM 6 nor knex exposes pool
 * counters (knex's pool is an internal of its client), so a connection counts as used
 * while it runs a query, as knex's documented `query` and `query-response` events on MikroORM's
 * knex instance tell (followed from the first call on). Knex reports a failed query on its
 * builder only, so each connection keeps its last query until its next one starts: a connection
 * is never counted twice, and a failed query is forgotten at the connection's next query or after
 * STALE_QUERY_MS. A caller waiting for a connection is not observable this way: `pending` is NaN
 * ("unknown"), never a made-up 0.
 */
export function poolStats(orm: Orm): PoolStats {
  let running = runningQueries.get(orm);
  if (!running) runningQueries.set(orm, (running = followQueries(orm)));
  const now = Date.now();
  for (const [conn, r] of running) if (now - r.at > STALE_QUERY_MS) running.delete(conn);
  const max = orm.config.get('pool')?.max ?? 0;
  const used = Math.min(running.size, max);
  return { used, free: max - used, pending: Number.NaN, max };
}

/** A query running longer than this is taken for one that failed unseen (no main-thread query runs that long). */
const STALE_QUERY_MS = 10 * 60_000;
type Running = Map<string, { query: string; at: number }>;
const runningQueries = new WeakMap<Orm, Running>();

/** Connection id -> its running query, kept up to date by knex's query events. */
function followQueries(orm: Orm): Running {
  type QueryEvent = { __knexUid?: string; __knexQueryUid?: string };
  const running: Running = new Map();
  const knex = orm.em.getConnection().getKnex();
  knex.on('query', (q: QueryEvent) => {
    if (q.__knexUid && q.__knexQueryUid)
      running.set(q.__knexUid, { query: q.__knexQueryUid, at: Date.now() });
  });
  knex.on('query-response', (_res: unknown, q: QueryEvent) => {
    if (q.__knexUid && running.get(q.__knexUid)?.query === q.__knexQueryUid)
      running.delete(q.__knexUid);
  });
  return running;
}

export type Budget = { perShard: number; main: number; total: number };

export function connectionBudget(shards: number): Budget {
  const perShard = WORKER_POOL + BATCH_CONNECTION;
  const main = MAIN_POOL + LISTEN_CONNECTION + LEASE_CONNECTION;
  return { perShard, main, total: shards * perShard + main };
}

/**
 * Connections this process may open: PostgreSQL's max_connections less the slots it keeps for
 * superusers (and, from PostgreSQL 16, for reserved roles). The embedded server is started with
 * room for the budget (orm/embedded.ts), a server of DATABASE_URL is as its operator set it.
 */
export async function connectionLimit(orm: Orm): Promise<number> {
  const rows = await orm.em
    .fork()
    .execute<{ name: string; setting: string }[]>(
      `select name, setting from pg_settings where name in ('max_connections', 'superuser_reserved_connections', 'reserved_connections')`,
    );
  const get = (name: string) => Number(rows.find((r) => r.name === name)?.setting ?? 0);
  return (
    get('max_connections') - get('superuser_reserved_connections') - get('reserved_connections')
  );
}

/** Why `shards` cannot run on a database allowing `limit` connections, or undefined when it can. */
export function budgetProblem(shards: number, limit: number): string | undefined {
  const b = connectionBudget(shards);
  if (b.total <= limit) return undefined;
  const fits = Math.max(0, Math.floor((limit - b.main) / b.perShard));
  return (
    `SVC_SHARDS=${shards} needs up to ${b.total} database connections (${shards} shards x ${b.perShard} + ${b.main}), ` +
    `more than the ${limit} PostgreSQL allows (max_connections less reserved slots); set SVC_SHARDS to at most ${fits} or raise max_connections`
  );
}
