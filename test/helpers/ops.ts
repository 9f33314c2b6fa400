// The operators' pages in tests: a real 5xx for /ops to show.
import type { TestService } from './service.js';

/**
 * A real 5xx: the tape's read task runs while its table is renamed away, so the database refuses the
 * query and the service answers 500 (on a service with SVC_RECORD_CACHE_MB=0, whose tape reads the
 * database each time). The table is back before this returns.
 */
export async function answerA5xx(svc: TestService): Promise<number> {
  const em = svc.orm.em.fork();
  await em.execute('alter table trade rename to trade_away_for_a_5xx');
  try {
    const res = await svc.get('/api/v1/markets/m15/tape?from_tick=1&to_tick=2');
    await res.arrayBuffer();
    return res.status;
  } finally {
    await em.execute('alter table trade_away_for_a_5xx rename to trade');
  }
}
