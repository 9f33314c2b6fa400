// A close that throws inside the market actor (a database trigger fails it 3 times) is retried by
// the supervisor's timer with growing delays, each failure logged with its cause and counted, and
// then the session closes exactly once and the market goes on. Real actors and database, the clock
// driven.
import t from 'tap';
import pino from 'pino';
import { Writable } from 'node:stream';
import type { SupervisorMetrics } from '../../src/supervisor/supervisor.js';
import type { CloseReply } from '../../actors/market/messages.js';
import { clockRig, T0 } from '../helpers/clock-rig.js';

const M15 = { id: 'm15', interval_seconds: 900 };

t.test('a failing close is retried with backoff and recovers', async (t) => {
  const r = await clockRig(t);
  // Non-transactional counter: the failing close's rollback does not undo it.
  await r.q(`create sequence close_failures`);
  await r.q(`create function inject_close_failure() returns trigger language plpgsql as $$
    begin
      if nextval('close_failures') <= 3 then raise exception 'injected close failure'; end if;
      return new;
    end $$`);
  await r.q(`create trigger inject_close_failure before update on market_session for each row
    when (old.closed_at is null and new.closed_at is not null) execute function inject_close_failure()`);

  const logs: Record<string, any>[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({ write: (c, _e, cb) => (logs.push(JSON.parse(String(c))), cb()) }),
  );
  let failures = 0;
  const metrics: SupervisorMetrics = {
    closeFailed: () => failures++,
    ordersQuarantined: () => {},
    backfillChunkFailed: () => {},
    startFailed: () => {},
    webhookPass: () => {},
  };
  const closed: number[] = [];
  const replies: CloseReply[] = [];
  const tick = T0 / 900;
  // Resolves at the first close this supervisor performs (an event, not a deadline: tap's timeout is the cap).
  let performed!: () => void;
  const firstClose = new Promise<void>((resolve) => (performed = resolve));

  r.setNow(T0 + 899.7); // the session's close is due in 0.3 s
  const sup = r.supervisor(r.runtime(), [M15], {
    log,
    metrics,
    closeRetry: { baseMs: 200, capMs: 5000 },
    onClose: (_m, tk, reply) => {
      if (!reply.closed) return;
      closed.push(tk);
      replies.push(reply);
      performed();
    },
  });
  await sup.start();
  r.setNow(T0 + 901);
  // The supervisor's own timer (armed 0.3 s ahead) fails three times and retries with backoff.
  await firstClose;

  t.equal(sup.openTick('m15'), tick + 1, 'the close went through');
  t.same(closed, [tick], 'performed once');
  // The close accounts for its time step by step (its log line and bench/close.mjs show them).
  const steps = replies[0].steps!;
  t.same(
    Object.keys(steps),
    [
      'locks',
      'menu',
      'open_trades_read',
      'advance',
      'trades_update',
      'ledger',
      'settle_positions',
      'house_trades',
      'fills_read',
      'fills_terms',
      'fills_positions',
      'fills_trades',
      'fills_orders',
      'expire',
      'tape',
      'events',
      'next_menu',
      'commit',
    ],
    'the close names its steps in order',
  );
  const sum = Object.values(steps).reduce((a, b) => a + b, 0);
  t.ok(
    Object.values(steps).every((ms) => ms >= 0) && sum <= replies[0].ms + 1,
    `steps (${sum.toFixed(1)} ms) within the close (${replies[0].ms} ms)`,
  );
  t.equal(failures, 3);
  t.same(
    (await r.q(`select last_value::int as n from close_failures`))[0].n,
    4,
    'three failed attempts, then the one that closed',
  );
  const errs = logs.filter((l) => l.level === 50);
  t.equal(errs.length, 3);
  errs.forEach((e, i) =>
    t.match(e, {
      market: 'm15',
      tick,
      attempt: i + 1,
      msg: `close of m15 ${tick} failed: DriverException P0001 in update market_session: injected close failure; retrying`,
    }),
  );
  const waits = errs.map((e) => e.retryInMs);
  t.ok(
    waits[0] >= 100 && waits[0] <= 200 && waits[1] >= 200 && waits[2] >= 400,
    `delays double: ${waits.join(', ')} ms`,
  );
  for (let i = 1; i < waits.length; i++) t.ok(waits[i] >= waits[i - 1], 'and never shrink');
  const took = errs.map((e) => e.time);
  t.ok(took[2] - took[0] >= waits[0] + waits[1] - 20, 'the retries waited them out');

  const sessions = await r.q(
    `select tick::float8 as tick, closed_at is not null as closed from market_session where market = 'm15' order by tick`,
  );
  t.same(
    sessions,
    [
      { tick, closed: true },
      { tick: tick + 1, closed: false },
    ],
    'closed once, the next session open',
  );
  t.ok(
    (await r.q(`select count(*)::int as n from tape where market = 'm15' and tick = ?`, [tick]))[0]
      .n > 0,
    "the session's tape was written",
  );

  // Healthy again: the next close needs no retry.
  await r.q(`drop trigger inject_close_failure on market_session`);
  r.setNow(T0 + 1801);
  await sup.runDue();
  t.equal(sup.openTick('m15'), tick + 2);
  t.equal(failures, 3);
});
