// The supervisor's bounded retries against a scripted actor system (no database): backoff delays,
// a start that fails then recovers or gives up, backfill chunks given up after their bound, and a
// stop that does not wait out a backoff. No wall clock: every wait the supervisor takes is recorded
// (its Sleeper's sleeps, the timers it arms) in order with the asks, and the session boundary is
// crossed by moving an injected clock.
import t from 'tap';
import pino from 'pino';
import { Writable } from 'node:stream';
import { Clock } from '../../src/supervisor/clock.js';
import { backoffMs, Sleeper } from '../../src/supervisor/backoff.js';
import { eventually } from '../helpers/wait.js';
import { AskTimedOut } from '../../actors/runtime/client.js';
import {
  CLOSE_TIMEOUTS_RETRIED_AT_ONCE,
  Supervisor,
  type Asker,
  type SupervisorMetrics,
  type SupervisorOptions,
} from '../../src/supervisor/supervisor.js';

const M = { id: 'm15', interval_seconds: 900 };
const OPEN = 2_000_000;

/** A clock whose session OPEN of m15 is open now (closes in 15 minutes). */
const clock = () => new Clock({ real: Date.now() / 1000, service: OPEN * 900 + 1, scale: 1 });

type Msg = { kind: string; [k: string]: unknown };
/** What happened, in order: the asks (failed or not) and the waits between them. */
type Event = { msg: Msg; ok: boolean } | { sleepMs: number } | { timerMs: number };
const isAsk = (e: Event): e is { msg: Msg; ok: boolean } => 'msg' in e;

/** Records every backoff sleep of the supervisors (the real sleep still runs) into `events`. */
function recordSleeps(tt: Tap.Test, events: Event[]) {
  const sleep = Sleeper.prototype.sleep;
  Sleeper.prototype.sleep = function (ms: number) {
    events.push({ sleepMs: ms });
    return sleep.call(this, ms);
  };
  tt.teardown(() => void (Sleeper.prototype.sleep = sleep));
}

/** Records the delay of every timer armed (the supervisor schedules closes and their retries with timers) into `events`. */
function recordTimers(tt: Tap.Test, events: Event[]) {
  const real = globalThis.setTimeout;
  globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...rest: unknown[]) => {
    events.push({ timerMs: ms ?? 0 });
    return real(fn, ms, ...rest);
  }) as typeof setTimeout;
  tt.teardown(() => void (globalThis.setTimeout = real));
}

/** The waits recorded between the `i`-th and the next of the asks `asks` picks out of `events`. */
function waitsBetween(events: Event[], pick: (e: { msg: Msg; ok: boolean }) => boolean): Event[][] {
  const at = events.flatMap((e, i) => (isAsk(e) && pick(e) ? [i] : []));
  return at.slice(1).map((end, k) => events.slice(at[k] + 1, end).filter((e) => !isAsk(e)));
}

/** An actor system that answers like the market actor; `fail(msg, n)` decides whether the n-th ask of this kind throws. */
function scripted(
  fail: (msg: Msg, n: number) => boolean,
  events: Event[] = [],
  failure = (msg: Msg, n: number): Error => new Error(`injected ${msg.kind} failure ${n}`),
) {
  const asks: { msg: Msg; ok: boolean }[] = [];
  const count = new Map<string, number>();
  const asker: Asker = {
    async ask<T>(_to: string, msg: Msg): Promise<T> {
      const n = (count.get(msg.kind) ?? 0) + 1;
      count.set(msg.kind, n);
      const ok = !fail(msg, n);
      asks.push({ msg, ok });
      events.push({ msg, ok });
      if (!ok) throw failure(msg, n);
      if (msg.kind === 'start') return { open: OPEN, liveStart: OPEN, fromTick: OPEN - 100 } as T;
      if (msg.kind === 'open') return { id: _to, due: [] } as T; // a competition window (CompetitionActor)
      if (msg.kind === 'backfill')
        return { recorded: (msg.to as number) - (msg.from as number) + 1, ms: 1 } as T;
      return { closed: true, open: (msg.tick as number) + 1, ms: 1, quarantined: [] } as T;
    },
  };
  return { asker, asks };
}

function recorder() {
  const logs: Record<string, any>[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({ write: (c, _e, cb) => (logs.push(JSON.parse(String(c))), cb()) }),
  );
  const counts = {
    closeFailed: 0,
    quarantined: 0,
    backfillFailed: 0,
    backfillAbandoned: 0,
    startFailed: 0,
  };
  const metrics: SupervisorMetrics = {
    closeFailed: () => counts.closeFailed++,
    ordersQuarantined: (_m, n) => (counts.quarantined += n),
    backfillChunkFailed: (_m, abandoned) =>
      abandoned ? counts.backfillAbandoned++ : counts.backfillFailed++,
    startFailed: () => counts.startFailed++,
    webhookPass: () => {},
  };
  return { log, logs, metrics, counts };
}

function supervisor(tt: Tap.Test, asker: Asker, c: Clock, opts: Partial<SupervisorOptions> = {}) {
  const r = recorder();
  const sup = new Supervisor(asker, c, [M], {
    catchupLimit: 1000,
    log: r.log,
    metrics: r.metrics,
    ...opts,
  });
  tt.teardown(() => sup.stop());
  return { sup, ...r };
}

t.test(
  'backoffMs: base doubling to the cap, half of it jittered, never shrinking before the cap',
  async (tt) => {
    const p = { baseMs: 1000, capMs: 60_000 };
    tt.same(
      [1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffMs(a, p, () => 1)),
      [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000],
    );
    tt.same(
      [1, 2, 7].map((a) => backoffMs(a, p, () => 0)),
      [500, 1000, 30000],
    );
    for (let a = 1; a < 6; a++)
      tt.ok(
        backoffMs(a, p, () => 1) <= backoffMs(a + 1, p, () => 0),
        `attempt ${a + 1} waits at least as long as ${a}`,
      );
    tt.equal(
      backoffMs(10_000, p, () => 1),
      60_000,
      'no overflow on a long outage',
    );
  },
);

t.test('a start that fails is retried with backoff and recovers', async (tt) => {
  const events: Event[] = [];
  recordSleeps(tt, events);
  const s = scripted((m, n) => m.kind === 'start' && n <= 2, events);
  const { sup, logs, counts } = supervisor(tt, s.asker, clock(), {
    startRetry: { baseMs: 20, capMs: 1000, attempts: 5 },
  });
  await sup.start();
  tt.ok(sup.ready);
  tt.equal(counts.startFailed, 2);
  const starts = s.asks.filter((a) => a.msg.kind === 'start');
  tt.same(
    starts.map((a) => a.ok),
    [false, false, true],
  );
  const waits = waitsBetween(events, (e) => e.msg.kind === 'start');
  tt.same(
    waits.map((w) => w.length),
    [1, 1],
    'one backoff sleep between attempts',
  );
  tt.ok(
    (waits[0][0] as { sleepMs: number }).sleepMs >= 10 &&
      (waits[1][0] as { sleepMs: number }).sleepMs >= 20,
    `waited the backoff between attempts (${JSON.stringify(waits)})`,
  );
  tt.same(
    logs.filter((l) => l.level === 40).map((l) => l.msg),
    [
      'supervisor failed to start: injected start failure 1; retrying',
      'supervisor failed to start: injected start failure 2; retrying',
    ],
    'each retried failure is a warning',
  );
  tt.same(
    logs.filter((l) => l.level >= 50),
    [],
    'no error: the start recovered',
  );
});

t.test('a start that keeps failing gives up after its bound', async (tt) => {
  const events: Event[] = [];
  recordSleeps(tt, events);
  const s = scripted((m) => m.kind === 'start', events);
  const { sup, logs, counts } = supervisor(tt, s.asker, clock(), {
    startRetry: { baseMs: 20, capMs: 1000, attempts: 3 },
  });
  await tt.rejects(sup.start(), /injected start failure 3/);
  const sleeps = waitsBetween(events, (e) => e.msg.kind === 'start').map((w) =>
    w.map((e) => (e as { sleepMs: number }).sleepMs),
  );
  tt.ok(
    sleeps.length === 2 &&
      sleeps[0].length === 1 &&
      sleeps[1].length === 1 &&
      sleeps[0][0] >= 10 &&
      sleeps[1][0] >= 20,
    `backed off between attempts (${JSON.stringify(sleeps)})`,
  );
  tt.notOk(events.length > 0 && !isAsk(events.at(-1)!), 'no sleep after the last attempt');
  tt.equal(counts.startFailed, 3);
  tt.equal(s.asks.length, 3, 'three attempts, no more');
  tt.notOk(sup.ready);
  tt.match(logs.at(-1), {
    level: 50,
    msg: 'supervisor failed to start after 3 attempts: injected start failure 3',
  });
});

t.test('stop ends a start backoff at once', async (tt) => {
  const events: Event[] = [];
  recordSleeps(tt, events);
  // A backoff of about 12 days (the longest timer Node arms): waiting it out would hang the test.
  const s = scripted((m) => m.kind === 'start', events);
  const { sup } = supervisor(tt, s.asker, clock(), {
    startRetry: { baseMs: 2 ** 31 - 1, capMs: 2 ** 31 - 1, attempts: 5 },
  });
  const started = sup.start();
  await eventually(() => events.some((e) => 'sleepMs' in e), 'the start to back off');
  await sup.stop();
  // Stopping wakes the sleeper: the start ends within the same turn of the event loop (microtasks
  // only), so it has ended before any timer or I/O callback could run.
  const first = await Promise.race([
    started.then(() => 'ended'),
    new Promise((r) => setImmediate(() => r('still waiting'))),
  ]);
  tt.equal(first, 'ended', 'stopped without waiting out the backoff');
  tt.notOk(sup.ready);
});

t.test(
  'a backfill chunk that keeps failing is given up after its bound; the others are recorded',
  async (tt) => {
    // Chunks of 24 newest first below OPEN - 8: [OPEN-32, OPEN-9], [OPEN-56, OPEN-33], ...; the second one always fails.
    const bad = OPEN - 33;
    const events: Event[] = [];
    recordSleeps(tt, events);
    const s = scripted((m) => m.kind === 'backfill' && m.to === bad, events);
    const { sup, logs, counts } = supervisor(tt, s.asker, clock(), {
      backfillRetry: { baseMs: 10, capMs: 40, attempts: 3 },
    });
    await sup.start();
    await sup.backfilled();
    const tries = s.asks.filter((a) => a.msg.kind === 'backfill' && a.msg.to === bad);
    tt.equal(tries.length, 3, 'three attempts at the bad chunk');
    const sleeps = waitsBetween(events, (e) => e.msg.kind === 'backfill' && e.msg.to === bad).map(
      (w) => w.map((e) => (e as { sleepMs: number }).sleepMs),
    );
    tt.ok(
      sleeps.length === 2 &&
        sleeps[0].length === 1 &&
        sleeps[1].length === 1 &&
        sleeps[0][0] >= 5 &&
        sleeps[1][0] >= 10,
      `with growing delays (${JSON.stringify(sleeps)})`,
    );
    tt.same([counts.backfillFailed, counts.backfillAbandoned], [2, 1]);
    const done = s.asks.filter((a) => a.msg.kind === 'backfill' && a.ok).map((a) => a.msg.from);
    tt.ok(done.includes(OPEN - 100), 'the chunks after the abandoned one were recorded');
    tt.notOk(sup.historyLoaded('m15'), 'a history with a gap is not complete');
    tt.ok(
      logs.some(
        (l) =>
          l.level === 50 &&
          l.msg.startsWith(
            `backfill chunk m15 ${OPEN - 56}..${bad} abandoned after 3 attempts: injected backfill failure`,
          ),
      ),
    );
    tt.ok(
      logs.some(
        (l) =>
          l.level === 50 && l.msg === 'history backfill of m15 incomplete: 1 chunk(s) abandoned',
      ),
    );
  },
);

t.test('a failing close is retried with growing delays, then the market goes on', async (tt) => {
  // The open session ends 100 ms after the injected clock's now; its close fails 4 times.
  const boundary = (OPEN + 1) * 900;
  let nowMs = (boundary - 0.1) * 1000;
  const c = new Clock({ real: boundary, service: boundary, scale: 1 }, () => nowMs);
  const events: Event[] = [];
  const s = scripted((m, n) => m.kind === 'close' && n <= 4, events);
  let closed!: () => void;
  const wentThrough = new Promise<void>((r) => (closed = r));
  const { sup, logs, counts } = supervisor(tt, s.asker, c, {
    closeRetry: { baseMs: 40, capMs: 10_000 },
    onClose: () => closed(),
  });
  recordTimers(tt, events);
  await sup.start();
  tt.equal(sup.openTick('m15'), OPEN, 'the session is open at the start');
  // The boundary passes (on the injected clock) before the close's timer fires (real time, ~105 ms).
  nowMs = (boundary + 1) * 1000;
  await wentThrough;
  tt.equal(sup.openTick('m15'), OPEN + 1, 'the close went through');
  const closes = s.asks.filter((a) => a.msg.kind === 'close');
  tt.same(
    closes.map((a) => a.ok),
    [false, false, false, false, true],
  );
  tt.ok(
    closes.every((a) => a.msg.tick === OPEN),
    'the same session each time',
  );
  const waits = logs.filter((l) => l.level === 50).map((l) => l.retryInMs);
  tt.equal(waits.length, 4);
  for (let i = 1; i < waits.length; i++)
    tt.ok(waits[i] >= waits[i - 1], `delays grow: ${waits.join(', ')}`);
  // Between two attempts the supervisor armed the retry's timer with the delay it logged.
  const armed = waitsBetween(events, (e) => e.msg.kind === 'close').map((w) =>
    w.map((e) => (e as { timerMs: number }).timerMs),
  );
  tt.equal(armed.length, 4);
  armed.forEach((ms, i) => {
    const retry = ms.find((x) => Math.round(x) === waits[i]);
    tt.ok(
      retry !== undefined && retry >= (40 * 2 ** i) / 2,
      `attempt ${i + 2} came after a timer of the logged ${waits[i]} ms, at least ${(40 * 2 ** i) / 2} (armed: ${ms.join(', ')})`,
    );
  });
  tt.equal(counts.closeFailed, 4);
  tt.match(
    logs.find((l) => l.level === 50),
    {
      market: 'm15',
      tick: OPEN,
      attempt: 1,
      msg: `close of m15 ${OPEN} failed: injected close failure 1; retrying`,
    },
  );
});

t.test(
  'a close whose market actor did not answer in time is asked again at once, then with backoff',
  async (tt) => {
    // As above, but the asks time out (a busy process): the first retries come at once, and only
    // after CLOSE_TIMEOUTS_RETRIED_AT_ONCE of them does the backoff start.
    const boundary = (OPEN + 1) * 900;
    let nowMs = (boundary - 0.1) * 1000;
    const c = new Clock({ real: boundary, service: boundary, scale: 1 }, () => nowMs);
    const failing = CLOSE_TIMEOUTS_RETRIED_AT_ONCE + 1;
    const s = scripted(
      (m, n) => m.kind === 'close' && n <= failing,
      [],
      () => new AskTimedOut(503, `market:m15 did not answer within 10000 ms`, 1),
    );
    let closed!: () => void;
    const wentThrough = new Promise<void>((r) => (closed = r));
    const { sup, logs } = supervisor(tt, s.asker, c, {
      closeRetry: { baseMs: 40, capMs: 10_000 },
      onClose: () => closed(),
    });
    await sup.start();
    nowMs = (boundary + 1) * 1000;
    await wentThrough;
    tt.equal(sup.openTick('m15'), OPEN + 1, 'the close went through');
    const retries = logs.filter((l) => l.level === 50).map((l) => l.retryInMs);
    tt.same(
      retries.slice(0, CLOSE_TIMEOUTS_RETRIED_AT_ONCE),
      Array(CLOSE_TIMEOUTS_RETRIED_AT_ONCE).fill(0),
      'the first retries at once',
    );
    tt.ok(
      retries[CLOSE_TIMEOUTS_RETRIED_AT_ONCE] >= (40 * 2 ** CLOSE_TIMEOUTS_RETRIED_AT_ONCE) / 2,
      `then the backoff (${retries.join(', ')})`,
    );
    tt.match(
      logs.find((l) => l.level === 50).msg,
      /did not answer within 10000 ms; retrying at once$/,
    );
  },
);

t.test('orders a close refunded are logged by order and cause, and counted', async (tt) => {
  const c = new Clock({ real: Date.now() / 1000, service: (OPEN + 1) * 900 + 1, scale: 1 });
  const asker: Asker = {
    async ask<T>(_to: string, msg: Msg): Promise<T> {
      if (msg.kind === 'start') return { open: OPEN, liveStart: OPEN, fromTick: OPEN } as T;
      if (msg.kind === 'open') return { id: _to, due: [] } as T;
      const quarantined = [
        {
          order_id: 7,
          account_id: 3,
          reason: 'not filled: its unit_cost differs',
          total_cents: 500,
          refunded_cents: 500,
        },
      ];
      return { closed: true, open: OPEN + 1, ms: 1, quarantined } as T;
    },
  };
  const { sup, logs, counts } = supervisor(tt, asker, c);
  await sup.start();
  tt.equal(counts.quarantined, 1);
  tt.match(
    logs.find((l) => l.level === 50),
    {
      market: 'm15',
      tick: OPEN,
      order: 7,
      reason: 'not filled: its unit_cost differs',
      msg: /refunded order 7 instead of filling it/,
    },
  );
});
