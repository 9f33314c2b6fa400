// The closes' lease (CONTRACT.md "Several front ends"): of two supervisors on one database, one runs
// the closes and the other follows them as they commit; when the holder stops, the other takes the
// closes over within 5 s and replays the missed ones in order; a holder whose lease connection dies
// stops closing until it holds the lease again. The clock is driven; real time bounds only the
// takeover the contract promises.
import t from 'tap';
import pino from 'pino';
import { Writable } from 'node:stream';
import { CloseLease, NotifyListener } from '../../actors/runtime/client.js';
import { SESSIONS_CHANNEL } from '../../actors/events/messages.js';
import type { ScheduledMarket, Supervisor } from '../../src/supervisor/supervisor.js';
import { clockRig, T0, type ClockRig } from '../helpers/clock-rig.js';
import { fileTimeout } from '../helpers/file-timeout.js';
import { within } from '../helpers/wait.js';

fileTimeout(120);

const M15: ScheduledMarket = { id: 'm15', interval_seconds: 900 };
const t15 = T0 / 900;
/** The contract's takeover bound (5 s) in polls of 50 ms. */
const FIVE_SECONDS = 100;

type Node = {
  sup: Supervisor;
  lease: CloseLease;
  closes: [number, boolean][];
  logs: { level: number; msg: string }[];
};

/** A supervisor with its own runtime, lease and NOTIFY listener, as a process of the service has. */
async function node(tt: Tap.Test, r: ClockRig, name: string): Promise<Node> {
  const logs: Node['logs'] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _e, cb) {
        logs.push(JSON.parse(String(chunk)));
        cb();
      },
    }),
  );
  const lease = new CloseLease(
    r.url,
    () => name,
    () => {},
  );
  const closes: [number, boolean][] = [];
  const sup = r.supervisor(r.runtime(), [M15], {
    lease,
    leaseTryMs: 200,
    log,
    onClose: (_m, tick, reply) => closes.push([tick, reply.closed]),
  });
  const listener = new NotifyListener(r.url);
  await listener.listen(SESSIONS_CHANNEL, (p) => sup.heardClose(p));
  tt.teardown(async () => {
    await sup.stop();
    await lease.release();
    await listener.close();
  });
  await sup.start();
  return { sup, lease, closes, logs };
}

t.test(
  'one node runs the closes, the other follows them and takes them over when it stops',
  async (tt) => {
    const r = await clockRig(tt);
    const a = await node(tt, r, 'node-a');
    const b = await node(tt, r, 'node-b');
    tt.equal(a.sup.holdsCloses, true, 'the first to start holds the closes');
    tt.equal(b.sup.holdsCloses, false, 'the second follows');
    tt.equal(await b.lease.holder(), 'node-a', 'any node can name the holder');
    tt.equal(b.sup.openTick('m15'), t15);

    r.setNow(T0 + 900 + 1);
    await a.sup.runDue();
    tt.same(a.closes, [[t15, true]]);
    await within(
      FIVE_SECONDS,
      () => b.sup.openTick('m15') === t15 + 1,
      'the follower to hear of the close',
    );
    tt.equal(b.sup.recordOpenTick('m15'), t15 + 1, "the follower's record moved too");
    tt.same(b.closes, [[t15, false]], 'the follower saw the close and performed nothing');

    // Two sessions end while the holder is going away: the other replays both, in order.
    r.setNow(T0 + 3 * 900 + 1);
    await a.sup.stop();
    await a.lease.release();
    await within(FIVE_SECONDS, () => b.sup.holdsCloses, 'the follower to take the closes over');
    await within(
      FIVE_SECONDS,
      () => b.sup.openTick('m15') === t15 + 3,
      'the missed closes to be replayed',
    );
    tt.same(
      b.closes.filter((c) => c[1]).map((c) => c[0]),
      [t15 + 1, t15 + 2],
      'replayed oldest first, each once',
    );
    tt.equal(await b.lease.holder(), 'node-b');
    tt.ok(
      b.logs.some((l) => /runs the market closes/.test(l.msg)),
      'the takeover is logged',
    );
    const rows = await r.q(
      'select tick::float8 as tick from market_session where market = ? and closed_at is not null order by tick',
      ['m15'],
    );
    tt.same(
      rows.map((x) => x.tick),
      [t15, t15 + 1, t15 + 2],
      'each session closed once',
    );
  },
);

t.test(
  'a holder whose lease connection dies stops closing until it holds the lease again',
  async (tt) => {
    const r = await clockRig(tt);
    const a = await node(tt, r, 'node-solo');
    tt.equal(a.sup.holdsCloses, true);
    const killed = await r.q(
      `select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'node-solo'`,
    );
    tt.same(
      killed.map((k) => k.ok),
      [true],
      'its lease connection ended (as when the database restarts)',
    );
    await within(
      FIVE_SECONDS,
      () => a.logs.some((l) => /lost the closes' lease/.test(l.msg)),
      'the loss to be noticed and logged',
    );
    await within(
      FIVE_SECONDS,
      () => a.sup.holdsCloses,
      'the lease taken again, no other node holding it',
    );
    r.setNow(T0 + 900 + 1);
    await a.sup.runDue();
    // Its takeover's catch-up and runDue may both ask for the close: the market actor performs it once.
    tt.same(
      a.closes.filter((c) => c[1]),
      [[t15, true]],
      'and it closes again, once',
    );
  },
);
