// The fence between a session's close and the payments into it. Funding an order holds the market's
// session lock shared; the close holds it exclusively while it flips closed_at and fills. So a close
// waits for payments in flight, and a payment that starts after the close finds its session closed:
// an order is funded before its close or never. An advisory lock, not FOR SHARE on the session row:
// many concurrent share-lockers of one row cost PostgreSQL a multixact each time.
import type { EntityManager } from '@mikro-orm/postgresql';

/** The lock's key (hashed with hashtext); order batches that build their own SQL use it too. */
export const sessionLockKey = (market: string) => `session:${market}`;

/** Held by order placement and payment, to the end of their transaction. */
export async function shareSessionLock(em: EntityManager, markets: string[]): Promise<void> {
  for (const m of [...new Set(markets)].sort())
    await em.execute('select pg_advisory_xact_lock_shared(hashtext(?))', [sessionLockKey(m)]);
}

/** Held by the close, to the end of its transaction. */
export async function exclusiveSessionLock(em: EntityManager, market: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtext(?))', [sessionLockKey(market)]);
}
