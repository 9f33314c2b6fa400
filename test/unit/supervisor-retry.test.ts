// The supervisor's bounded retries against a scripted actor system (no database): backoff delays,
// a start that fails then recovers or gives up, backfill chunks given up after their bound, and a
// stop that does not wait out a backoff.
import t from 'tap';
import pino from 'pino';
import { Writable } from 'node:stream';
import { Clock } from '../../src/supervisor/clock.js';
import { backoffMs } from '../../src/supervisor/backoff.js';
import { Supervisor, type Asker, type SupervisorMetrics, type SupervisorOptions } from '../../src/supervisor/supervisor.js';

const M = { id: 'm15', interval_seconds: 900 };
const OPEN = 2_000_000;

/** A clock whose session OPEN of m15 is open now (closes in 15 minutes). */
const clock = () => new Clock({ real: Date.now() / 1000, service: OPEN * 900 + 1, scale: 1 });

type Msg = { kind: string; [k: string]: unknown };

/** An actor system that answers like the market actor; `fail(msg, n)` decides whether the n-th ask of this kind throws. */
function scripted(fail: (msg: Msg, n: number) => boolean) {
  const asks: { msg: Msg; at: number; ok: boolean }[] = [];
  const count = new Map<string, number>();
  const asker: Asker = {
    async ask<T>(_to: string, msg: Msg): Promise<T> {
      const n = (count.get(msg.kind) ?? 0) + 1;
      count.set(msg.kind, n);
      const ok = !fail(msg, n);
      asks.push({ msg, at: Date.now(), ok });
      if (!ok) throw new Error(`injected ${msg.kind} failure ${n}`);
      if (msg.kind === 'start') return { open: OPEN, liveStart: OPEN, fromTick: OPEN - 100 } as T;
      if (msg.kind === 'open') return { id: _to, due: [] } as T; // a competition window (CompetitionActor)
      if (msg.kind === 'backfill') return { recorded: (msg.to as number) - (msg.from as number) + 1, ms: 1 } as T;
      return { closed: true, open: (msg.tick as number) + 1, ms: 1, quarantined: [] } as T;
    },
  };
  return { asker, asks };
}

function recorder() {
  const logs: Record<string, any>[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (logs.push(JSON.parse(String(c))), cb()) }));
  const counts = { closeFailed: 0, quarantined: 0, backfillFailed: 0, backfillAbandoned: 0, startFailed: 0 };
  const metrics: SupervisorMetrics = {
    closeFailed: () => counts.closeFailed++,
    ordersQuarantined: (_m, n) => (counts.quarantined += n),
    backfillChunkFailed: (_m, abandoned) => (abandoned ? counts.backfillAbandoned++ : counts.backfillFailed++),
    startFailed: () => counts.startFailed++,
  };
  return { log, logs, metrics, counts };
}

function supervisor(tt: Tap.Test, asker: Asker, c: Clock, opts: Partial<SupervisorOptions> = {}) {
  const r = recorder();
  const sup = new Supervisor(asker, c, [M], { catchupLimit: 1000, log: r.log, metrics: r.metrics, ...opts });
  tt.teardown(() => sup.stop());
  return { sup, ...r };
}

t.test('backoffMs: base doubling to the cap, half of it jittered, never shrinking before the cap', async (tt) => {
  const p = { baseMs: 1000, capMs: 60_000 };
  tt.same([1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffMs(a, p, () => 1)), [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
  tt.same([1, 2, 7].map((a) => backoffMs(a, p, () => 0)), [500, 1000, 30000]);
  for (let a = 1; a < 6; a++) tt.ok(backoffMs(a, p, () => 1) <= backoffMs(a + 1, p, () => 0), `attempt ${a + 1} waits at least as long as ${a}`);
  tt.equal(backoffMs(10_000, p, () => 1), 60_000, 'no overflow on a long outage');
});

t.test('a start that fails is retried with backoff and recovers', async (tt) => {
  const s = scripted((m, n) => m.kind === 'start' && n <= 2);
  const { sup, logs, counts } = supervisor(tt, s.asker, clock(), { startRetry: { baseMs: 20, capMs: 1000, attempts: 5 } });
  await sup.start();
  tt.ok(sup.ready);
  tt.equal(counts.startFailed, 2);
  const starts = s.asks.filter((a) => a.msg.kind === 'start');
  tt.same(starts.map((a) => a.ok), [false, false, true]);
  tt.ok(starts[1].at - starts[0].at >= 10 && starts[2].at - starts[1].at >= 20, 'waited the backoff between attempts');
  tt.same(logs.filter((l) => l.level === 40).map((l) => l.msg), [
    'supervisor failed to start: injected start failure 1; retrying',
    'supervisor failed to start: injected start failure 2; retrying',
  ], 'each retried failure is a warning');
  tt.same(logs.filter((l) => l.level >= 50), [], 'no error: the start recovered');
});

t.test('a start that keeps failing gives up after its bound', async (tt) => {
  const s = scripted((m) => m.kind === 'start');
  const { sup, logs, counts } = supervisor(tt, s.asker, clock(), { startRetry: { baseMs: 20, capMs: 1000, attempts: 3 } });
  const t0 = Date.now();
  await tt.rejects(sup.start(), /injected start failure 3/);
  tt.ok(Date.now() - t0 >= 10 + 20, 'backed off between attempts');
  tt.equal(counts.startFailed, 3);
  tt.equal(s.asks.length, 3, 'three attempts, no more');
  tt.notOk(sup.ready);
  tt.match(logs.at(-1), { level: 50, msg: 'supervisor failed to start after 3 attempts: injected start failure 3' });
});

t.test('stop ends a start backoff at once', async (tt) => {
  const s = scripted((m) => m.kind === 'start');
  const { sup } = supervisor(tt, s.asker, clock(), { startRetry: { baseMs: 60_000, capMs: 60_000, attempts: 5 } });
  const started = sup.start();
  await new Promise((r) => setTimeout(r, 50));
  const t0 = Date.now();
  await sup.stop();
  await started;
  tt.ok(Date.now() - t0 < 1000, 'stopped without waiting out the 30..60 s backoff');
  tt.notOk(sup.ready);
});

t.test('a backfill chunk that keeps failing is given up after its bound; the others are recorded', async (tt) => {
  // Chunks of 24 newest first below OPEN - 8: [OPEN-32, OPEN-9], [OPEN-56, OPEN-33], ...; the second one always fails.
  const bad = OPEN - 33;
  const s = scripted((m) => m.kind === 'backfill' && m.to === bad);
  const { sup, logs, counts } = supervisor(tt, s.asker, clock(), { backfillRetry: { baseMs: 10, capMs: 40, attempts: 3 } });
  await sup.start();
  await sup.backfilled();
  const tries = s.asks.filter((a) => a.msg.kind === 'backfill' && a.msg.to === bad);
  tt.equal(tries.length, 3, 'three attempts at the bad chunk');
  tt.ok(tries[1].at - tries[0].at >= 5 && tries[2].at - tries[1].at >= 10, 'with growing delays');
  tt.same([counts.backfillFailed, counts.backfillAbandoned], [2, 1]);
  const done = s.asks.filter((a) => a.msg.kind === 'backfill' && a.ok).map((a) => a.msg.from);
  tt.ok(done.includes(OPEN - 100), 'the chunks after the abandoned one were recorded');
  tt.notOk(sup.historyLoaded('m15'), 'a history with a gap is not complete');
  tt.ok(logs.some((l) => l.level === 50 && l.msg.startsWith(`backfill chunk m15 ${OPEN - 56}..${bad} abandoned after 3 attempts: injected backfill failure`)));
  tt.ok(logs.some((l) => l.level === 50 && l.msg === 'history backfill of m15 incomplete: 1 chunk(s) abandoned'));
});

t.test('a failing close is retried with growing delays, then the market goes on', async (tt) => {
  // The open session ends 100 ms from now; its close fails 4 times.
  const c = new Clock({ real: Date.now() / 1000, service: (OPEN + 1) * 900 - 0.1, scale: 1 });
  const s = scripted((m, n) => m.kind === 'close' && n <= 4);
  const { sup, logs, counts } = supervisor(tt, s.asker, c, { closeRetry: { baseMs: 40, capMs: 10_000 } });
  await sup.start();
  for (let i = 0; i < 100 && sup.openTick('m15') === OPEN; i++) await new Promise((r) => setTimeout(r, 20));
  tt.equal(sup.openTick('m15'), OPEN + 1, 'the close went through');
  const closes = s.asks.filter((a) => a.msg.kind === 'close');
  tt.same(closes.map((a) => a.ok), [false, false, false, false, true]);
  tt.ok(closes.every((a) => a.msg.tick === OPEN), 'the same session each time');
  const gaps = closes.slice(1).map((a, i) => a.at - closes[i].at);
  gaps.forEach((g, i) => tt.ok(g >= 40 * 2 ** i / 2 - 2, `attempt ${i + 2} waited ${g} ms, at least ${40 * 2 ** i / 2}`));
  const waits = logs.filter((l) => l.level === 50).map((l) => l.retryInMs);
  tt.equal(waits.length, 4);
  for (let i = 1; i < waits.length; i++) tt.ok(waits[i] >= waits[i - 1], `delays grow: ${waits.join(', ')}`);
  tt.equal(counts.closeFailed, 4);
  tt.match(logs.find((l) => l.level === 50), { market: 'm15', tick: OPEN, attempt: 1, msg: `close of m15 ${OPEN} failed: injected close failure 1; retrying` });
});

t.test('orders a close refunded are logged by order and cause, and counted', async (tt) => {
  const c = new Clock({ real: Date.now() / 1000, service: (OPEN + 1) * 900 + 1, scale: 1 });
  const asker: Asker = {
    async ask<T>(_to: string, msg: Msg): Promise<T> {
      if (msg.kind === 'start') return { open: OPEN, liveStart: OPEN, fromTick: OPEN } as T;
      if (msg.kind === 'open') return { id: _to, due: [] } as T;
      const quarantined = [{ order_id: 7, account_id: 3, reason: 'not filled: its unit_cost differs', total_cents: 500, refunded_cents: 500 }];
      return { closed: true, open: OPEN + 1, ms: 1, quarantined } as T;
    },
  };
  const { sup, logs, counts } = supervisor(tt, asker, c);
  await sup.start();
  tt.equal(counts.quarantined, 1);
  tt.match(logs.find((l) => l.level === 50), { market: 'm15', tick: OPEN, order: 7, reason: 'not filled: its unit_cost differs', msg: /refunded order 7 instead of filling it/ });
});
