// The closed record read from a streaming replica (CONTRACT.md "Several front ends"): a
// service with SVC_REPLICA_URLS serves record reads from the replica only when the replica has
// replayed every close the service has seen, so its answers are always those of the primary (a
// second service on the primary alone answers the same requests). A replica held behind (replay
// paused) or gone leaves the reads on the primary, without an error. The record cache is off
// (SVC_RECORD_CACHE_MB=0) so that every answer is read afresh; the clock is driven.
import t from 'tap';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { startEmbedded } from '../../orm/embedded.js';
import { startReplica } from '../../orm/replica.js';
import { embeddedDataDir } from '../helpers/db.js';
import { fileTimeout } from '../helpers/file-timeout.js';
import { BASE, startTestService } from '../helpers/service.js';
import { withClock } from '../helpers/clocked.js';
import { metricValue } from '../helpers/metrics.js';
import { within } from '../helpers/wait.js';

fileTimeout(180);

/** Every closed-record read of m15 a client can make, by path (the replica-safe reads behind them). */
const READS = (lastClosed: number) => [
  `/api/v1/markets/m15/history?from_tick=${lastClosed - 2}&to_tick=${lastClosed}`,
  `/api/v1/markets/m15/tape?from_tick=${lastClosed - 2}&to_tick=${lastClosed}`,
  `/api/v1/markets/m15/stats?from_tick=${lastClosed - 2}&to_tick=${lastClosed}`,
  `/api/v1/markets/m15/trades?from_tick=${lastClosed - 2}&to_tick=${lastClosed}`,
  `/api/v1/markets/m15/dataset.csv?from_tick=${lastClosed - 2}&to_tick=${lastClosed}`,
  '/api/v1/markets/m15/coverage',
  '/api/v1/markets/m15/book',
  '/api/v1/markets/m15/families',
  '/api/v1/pulse',
];

t.test(
  'record reads come from the replica when it has replayed the closes, else from the primary, and never differ',
  async (t) => {
    const dir = await embeddedDataDir(t);
    const primary = await startEmbedded(dir, { maxConnections: 200 });
    t.teardown(() => primary.stop());
    const replica = await startReplica(
      primary,
      path.join(path.dirname(primary.clusterDir), 'replica-t'),
      'replica-t',
      { maxConnections: 200 },
    );
    t.teardown(() => replica.stop());
    const onReplica = new pg.Client({ connectionString: replica.url });
    await onReplica.connect();
    t.teardown(() => onReplica.end().catch(() => {}));

    const env = { ...BASE, DATABASE_URL: primary.url, SVC_RECORD_CACHE_MB: '0' };
    // A: reads may go to the replica; B (same primary, same clock, no replica): what the primary says.
    const a = await withClock((realMs) =>
      startTestService(
        t,
        {},
        { realMs },
        loadConfig({ ...env, SVC_REPLICA_URLS: replica.url, SVC_NODE_NAME: 'with-replica' }),
      ),
    );
    const b = await startTestService(
      t,
      {},
      { realMs: a.now },
      loadConfig({ ...env, SVC_NODE_NAME: 'primary-only' }),
    );
    const sources = () => ({ ...a.svc.services.runtime.readSources() });

    /** Closes an m15 session on A (which holds the closes) and waits for B to serve the same record. */
    async function close(): Promise<number> {
      const open = await a.closeSession('m15');
      await within(
        100,
        () => b.services.supervisor.recordOpenTick('m15') === open,
        'the other service to follow the close',
      );
      return open - 1;
    }
    /** Each read's answer on A equals B's. */
    async function same(lastClosed: number, what: string): Promise<void> {
      for (const p of READS(lastClosed)) {
        const [ra, rb] = await Promise.all([a.svc.get(p), b.get(p)]);
        t.equal(ra.status, 200, `${p}: 200 (${what})`);
        const [ta, tb] = [await ra.text(), await rb.text()];
        t.equal(ta, tb, `${p}: as the primary says (${what})`);
      }
    }

    let last = 0;
    for (let i = 0; i < 3; i++) last = await close();
    // The replica replays within milliseconds: a first read may still find it behind.
    await within(
      100,
      async () => {
        await a.svc.get('/api/v1/markets/m15/coverage');
        return sources().replica > 0;
      },
      'a record read served by the replica',
    );
    let before = sources();
    await same(last, 'the replica caught up');
    let after = sources();
    t.ok(
      after.replica - before.replica >= READS(last).length - 2,
      `the reads came from the replica (${JSON.stringify(before)} -> ${JSON.stringify(after)})`,
    );
    const metrics = await (await a.svc.get('/metrics')).text();
    t.ok(
      metricValue(metrics, 'record_replica_reads_total{source="replica"}') > 0,
      '/metrics counts the replica reads',
    );

    // Held behind: replay paused, a session closes on the primary. A's reads show that close (from the primary).
    await onReplica.query('select pg_wal_replay_pause()');
    last = await close();
    before = sources();
    await same(last, 'the replica held behind');
    after = sources();
    t.equal(
      after.replica,
      before.replica,
      'no read went to a replica that had not replayed the close',
    );
    t.ok(after.primary > before.primary, 'the primary served them');
    const history = await (
      await a.svc.get(`/api/v1/markets/m15/history?from_tick=${last}&to_tick=${last}`)
    ).json();
    t.equal(history.last_closed, last, 'the newest close is in the answer');
    t.same([history.sessions, history.recorded_sessions], [1, 1], 'with its session, recorded');
    t.ok(
      history.rows.length > 0 && history.rows.every((r: { tick: number }) => r.tick === last),
      "and that session's deals",
    );

    // Replay resumed: the replica serves again.
    await onReplica.query('select pg_wal_replay_resume()');
    await within(
      100,
      async () => {
        const n = sources().replica;
        await a.svc.get('/api/v1/markets/m15/coverage');
        return sources().replica > n;
      },
      'the replica to serve again once it has replayed the close',
    );
    await same(last, 'replay resumed');

    // Gone: the replica stops; the reads fall back to the primary, no error.
    await onReplica.end().catch(() => {});
    await replica.stop();
    last = await close();
    before = sources();
    await same(last, 'the replica stopped');
    after = sources();
    t.equal(after.replica, before.replica, 'nothing was read from the stopped replica');
    t.ok(after.primary - before.primary >= READS(last).length - 2, 'the primary served the reads');
  },
);
