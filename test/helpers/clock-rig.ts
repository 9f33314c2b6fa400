// A supervisor and actor runtime on a fresh, migrated database with a clock the test drives.
import pino from 'pino';
import { ActorRuntime } from '../../actors/runtime/shards.js';
import type { Orm } from '../../orm/database.js';
import { Clock } from '../../src/supervisor/clock.js';
import {
  Supervisor,
  type ScheduledMarket,
  type SupervisorOptions,
} from '../../src/supervisor/supervisor.js';
import { migratedOrm } from './db.js';

type T = { teardown: (fn: () => unknown) => void };

/** 1_800_000_900: a session boundary of every market whose interval divides 2700. */
export const T0 = 2700 * 666_667;

export type ClockRig = {
  url: string;
  orm: Orm;
  clock: Clock;
  setNow: (unixSeconds: number) => void;
  runtime: (seed?: number) => ActorRuntime;
  supervisor: (
    rt: ActorRuntime,
    markets: ScheduledMarket[],
    opts?: Partial<SupervisorOptions>,
  ) => Supervisor;
  q: (sql: string, params?: unknown[]) => Promise<any[]>;
};

export async function clockRig(t: T): Promise<ClockRig> {
  const { url, orm } = await migratedOrm(t);
  let now = T0 + 1;
  const clock = new Clock({ real: T0, service: T0, scale: 1 }, () => now * 1000);
  return {
    url,
    orm,
    clock,
    setNow: (s) => (now = s),
    runtime: (seed = 1) => {
      const rt = new ActorRuntime({
        shards: 2,
        databaseUrl: url,
        poolMax: 4,
        seed,
        baseUrl: 'http://svc.test',
        idleMs: 60_000,
        logLevel: 'silent',
        askTimeoutMs: 60_000,
        mailboxLimit: 10_000,
        clock: () => clock.realNow(),
      });
      t.teardown(() => rt.close());
      return rt;
    },
    supervisor: (rt, markets, opts = {}) => {
      const sup = new Supervisor(rt, clock, markets, {
        catchupLimit: 1000,
        log: pino({ level: 'silent' }),
        ...opts,
      });
      t.teardown(() => sup.stop());
      return sup;
    },
    q: (sql, params = []) => orm.em.fork().execute(sql, params),
  };
}
