// The supervisor and the market actor on a real database with a driven clock: sessions close in
// order, exactly once per (market, tick), also with two supervisors on one database; missed
// closes are replayed in order after downtime, within the catch-up bound.
import t from 'tap';
import type { ActorRuntime } from '../../actors/runtime/shards.js';
import type { Orm } from '../../orm/database.js';
import type { Clock } from '../../src/supervisor/clock.js';
import { Supervisor, type ScheduledMarket } from '../../src/supervisor/supervisor.js';
import pino from 'pino';
import { clockRig, T0, type ClockRig } from '../helpers/clock-rig.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(150); // sessions closed on a driven clock, also by two supervisors

const M15: ScheduledMarket = { id: 'm15', interval_seconds: 900 };
const M45: ScheduledMarket = { id: 'm45', interval_seconds: 2700 };
const log = pino({ level: 'silent' });

type Rig = ClockRig;
const rig = clockRig;
const runtime = (tt: Tap.Test, r: Rig) => r.runtime();

async function sessions(orm: Orm, market: string) {
  const rows = await orm.em
    .fork()
    .execute(
      'select tick::float8 as tick, closed_at is not null as closed from market_session where market = ? order by tick',
      [market],
    );
  return rows.map((r: any) => [r.tick, r.closed]);
}

function supervisor(
  rt: ActorRuntime,
  clock: Clock,
  closes: [string, number, boolean][],
  catchupLimit = 1000,
  markets = [M15, M45],
) {
  const s = new Supervisor(rt, clock, markets, {
    catchupLimit,
    log,
    onClose: (m, tick, r) => closes.push([m, tick, r.closed]),
  });
  return s;
}

t.test(
  'first start opens the current session of every market; due closes run in order',
  async (tt) => {
    const r = await rig(tt);
    const closes: [string, number, boolean][] = [];
    const sup = supervisor(runtime(tt, r), r.clock, closes);
    tt.teardown(() => sup.stop());
    await sup.start();
    tt.ok(sup.ready);
    const t15 = T0 / 900;
    tt.same(await sessions(r.orm, 'm15'), [[t15, false]]);
    r.setNow(T0 + 3 * 900 + 1);
    await sup.runDue();
    tt.same(await sessions(r.orm, 'm15'), [
      [t15, true],
      [t15 + 1, true],
      [t15 + 2, true],
      [t15 + 3, false],
    ]);
    tt.same(
      closes.filter((c) => c[0] === 'm15').map((c) => c[1]),
      [t15, t15 + 1, t15 + 2],
      'closed oldest first',
    );
    tt.same(await sessions(r.orm, 'm45'), [
      [T0 / 2700, true],
      [T0 / 2700 + 1, false],
    ]);
    await sup.runDue();
    tt.equal(closes.length, 4, 'nothing more is due');
  },
);

t.test('two supervisors on one database never double-close', async (tt) => {
  const r = await rig(tt);
  const a: [string, number, boolean][] = [];
  const b: [string, number, boolean][] = [];
  const supA = supervisor(runtime(tt, r), r.clock, a);
  const supB = supervisor(runtime(tt, r), r.clock, b);
  tt.teardown(() => Promise.all([supA.stop(), supB.stop()]));
  await Promise.all([supA.start(), supB.start()]);
  r.setNow(T0 + 6 * 900 + 1);
  await Promise.all([supA.runDue(), supB.runDue(), supA.runDue()]);
  const performed = [...a, ...b]
    .filter((c) => c[2] && c[0] === 'm15')
    .map((c) => c[1])
    .sort();
  const t15 = T0 / 900;
  tt.same(
    performed,
    [0, 1, 2, 3, 4, 5].map((i) => t15 + i),
    'each session closed by exactly one of them',
  );
  const rows = await sessions(r.orm, 'm15');
  tt.equal(rows.length, 7, 'no session opened twice');
  tt.same(rows.at(-1), [t15 + 6, false]);
});

t.test('after downtime the missed closes are replayed in order before ready', async (tt) => {
  const r = await rig(tt);
  const closes: [string, number, boolean][] = [];
  const rt = runtime(tt, r);
  const first = supervisor(rt, r.clock, closes, 1000, [M15]);
  await first.start();
  await first.stop();
  r.setNow(T0 + 10 * 900 + 1); // ten sessions pass while the service is down
  const second = supervisor(runtime(tt, r), r.clock, closes, 1000, [M15]);
  tt.teardown(() => second.stop());
  await second.start();
  const t15 = T0 / 900;
  tt.same(
    closes.map((c) => c[1]),
    Array.from({ length: 10 }, (_, i) => t15 + i),
  );
  tt.ok(second.ready);
  tt.equal(second.openTick('m15'), t15 + 10);
});

t.test('a catch-up beyond its bound skips the oldest sessions', async (tt) => {
  const r = await rig(tt);
  const closes: [string, number, boolean][] = [];
  const first = supervisor(runtime(tt, r), r.clock, closes, 3, [M15]);
  await first.start();
  await first.stop();
  r.setNow(T0 + 10 * 900 + 1);
  const second = supervisor(runtime(tt, r), r.clock, closes, 3, [M15]);
  tt.teardown(() => second.stop());
  await second.start();
  const t15 = T0 / 900;
  tt.equal(closes.length, 3, 'three closes replayed');
  tt.same(
    (await sessions(r.orm, 'm15')).map((s) => s[0]),
    [t15, t15 + 8, t15 + 9, t15 + 10],
  );
});
