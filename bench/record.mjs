// Record reads: the public record's routes over settled sessions, before and after the
// in-memory fragments, in one run.
//
//   npm run build && node bench/record.mjs [--runs 3] [--duration 10] [--warmup 3] [--connections 64]
//        [--days 3] [--modes before,after] [--before-service PATH] [--targets history,tape,...] [--cpu-prof DIR]
//        [--pg postgres://postgres@127.0.0.1:5432/]
//
// One run: a fresh database bench_record_<time>_<pid>; the built service records --days days of
// history (SVC_BACKFILL_DAYS) once; then, --runs times, for each mode the service is started on
// that database — `before`: SVC_RECORD_CACHE_MB=0, every answer read whole by a worker (the code
// before the cache); `after`: the default cache — and measured: one cold request per record target
// (the first on a service started for it: nothing kept yet), a miss on a warm service (the range
// read first on a service whose workers have served the same route on other markets), then wrk -c{connections} per target (warm-up, then
// the measured period). Targets: m15 history (20 settled sessions), tape (250), stats (200),
// trades (100), dataset.csv (100), and families, book, pulse. Prints the medians and the after /
// before ratios; writes bench/results/<date>-record.json. Everything started is stopped at the end
// (also on error and Ctrl-C) and the database dropped. Only 127.0.0.1 is targeted; every wait is
// bounded.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sleep } from './lib/process.mjs';
import { checkLocalPg, getJson, pgAdmin, rssOf, startService } from './lib/service.mjs';
import { runWrk, wrkVersion } from './lib/wrk.mjs';
import { runBench } from './lib/results.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    days: { type: 'string', default: '3' },
    modes: { type: 'string', default: 'before,after' },
    'before-service': { type: 'string' },
    targets: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'backfill-timeout': { type: 'string', default: '900' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) {
  console.log(
    'usage: node bench/record.mjs [--runs 3] [--duration 10] [--warmup 3] [--connections 64] [--days 3] [--modes before,after] [--before-service PATH] [--targets history,...] [--cpu-prof DIR] [--pg URL]',
  );
  process.exit(0);
}
const RUNS = Number(opts.runs);
const DURATION = Number(opts.duration);
const WARMUP = Number(opts.warmup);
const CONNECTIONS = Number(opts.connections);
const DAYS = Number(opts.days);
const MODES = opts.modes.split(',');
for (const [k, v] of Object.entries({ RUNS, DURATION, WARMUP, CONNECTIONS, DAYS }))
  if (!Number.isInteger(v) || v < 0) throw new Error(`bad ${k}: ${v}`);
if (!MODES.every((m) => m === 'before' || m === 'after'))
  throw new Error('--modes: before and/or after');
checkLocalPg(opts.pg);
const WRK = wrkVersion();
if (!WRK) {
  console.error('wrk is not installed (apt-get install -y wrk)');
  process.exit(2);
}

const log = (msg) => console.error(`[record ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length
    ? s.length % 2
      ? s[(s.length - 1) / 2]
      : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
    : undefined;
};
const round = (x, d = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

/** The measured targets: the five record routes over settled m15 sessions, then three neighbours. */
function targets(lastSettled, market = 'm15') {
  const range = (n) => `from_tick=${lastSettled - n + 1}&to_tick=${lastSettled}`;
  const m = `/api/v1/markets/${market}`;
  return [
    { name: 'history', sessions: 20, path: `${m}/history?${range(20)}`, record: true },
    { name: 'tape', sessions: 250, path: `${m}/tape?${range(250)}`, record: true },
    { name: 'stats', sessions: 200, path: `${m}/stats?${range(200)}`, record: true },
    { name: 'trades', sessions: 100, path: `${m}/trades?${range(100)}`, record: true },
    { name: 'dataset.csv', sessions: 100, path: `${m}/dataset.csv?${range(100)}`, record: true },
    { name: 'families', path: `${m}/families` },
    { name: 'book', path: `${m}/book` },
    { name: 'pulse', path: '/api/v1/pulse' },
  ];
}

const state = { service: undefined, stopWrk: undefined, db: undefined };
let cleaned;
function cleanup() {
  return (cleaned ??= (async () => {
    state.stopWrk?.();
    await state.service?.stop();
    if (state.db) {
      await pgAdmin(opts.pg, `DROP DATABASE IF EXISTS "${state.db}" WITH (FORCE)`).catch((err) =>
        console.error(`could not drop ${state.db}: ${err.message}`),
      );
      log(`dropped database ${state.db}`);
    }
  })());
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    console.error(`\n${sig}: stopping`);
    cleanup().finally(() => process.exit(130));
  });
}

async function start(mode, run) {
  const env = {
    SVC_BACKFILL_DAYS: String(DAYS),
    SVC_RECORD_CACHE_MB: mode === 'before' ? '0' : '64',
  };
  const nodeArgs = opts['cpu-prof']
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(opts['cpu-prof'], `${mode}-run${run}`)}`]
    : [];
  log(`starting the service (${mode}: SVC_RECORD_CACHE_MB=${env.SVC_RECORD_CACHE_MB})`);
  // --before-service: the before mode runs another build (dist/src/main.js of an older commit).
  const main =
    mode === 'before' && opts['before-service'] ? path.resolve(opts['before-service']) : MAIN;
  state.service = await startService({
    main,
    pgBase: opts.pg,
    dbName: state.db,
    env,
    nodeArgs,
    log,
  });
  return state.service;
}

/** Waits (bounded) until every market's history is loaded. */
async function backfilled(base) {
  const t0 = Date.now();
  for (;;) {
    const cov = await Promise.all(
      ['m15', 'm45', 'h2', 'h10'].map((m) => getJson(`${base}/api/v1/markets/${m}/coverage`)),
    );
    if (cov.every((c) => c.history_load?.complete))
      return {
        seconds: (Date.now() - t0) / 1000,
        sessions: cov.reduce((n, c) => n + c.recorded_sessions, 0),
      };
    if (Date.now() - t0 > Number(opts['backfill-timeout']) * 1000)
      throw new Error('history not loaded in time');
    await sleep(1000);
  }
}

async function timedGet(url) {
  const t0 = performance.now();
  const r = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  const body = Buffer.from(await r.arrayBuffer());
  return { status: r.status, ms: round(performance.now() - t0, 2), bytes: body.length };
}

/**
 * Waits (bounded) until the service answers a record read task promptly again: requests wrk left in
 * flight (64 of them, each a whole-range read without the cache) are still being served after it
 * stops, and would slow the next target down.
 */
async function drained(base) {
  const t0 = Date.now();
  let quick = 0;
  while (quick < 2 && Date.now() - t0 < 180_000) {
    const r = await timedGet(`${base}/api/v1/markets/m15/coverage`);
    quick = r.ms < 300 ? quick + 1 : 0;
    if (quick < 2) await sleep(500);
  }
  return round((Date.now() - t0) / 1000);
}

/**
 * Waits (bounded) until no message is pending in any shard for three polls in a row: a start catches
 * up on the sessions that ended while the service was down, and those closes (and, with the cache,
 * the warming of what they settled) would otherwise run beside the first, cold requests.
 */
async function quiet(base) {
  const t0 = Date.now();
  let still = 0;
  while (still < 3 && Date.now() - t0 < 60_000) {
    const text = await (await fetch(`${base}/metrics`)).text();
    const pending = [...text.matchAll(/^actor_mailbox_depth\{[^}]*\} (\d+)/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
    still = pending === 0 ? still + 1 : 0;
    await sleep(200);
  }
  const text = await (await fetch(`${base}/metrics`)).text();
  return {
    seconds: round((Date.now() - t0) / 1000),
    record_cache_sessions: Number(/^record_cache_sessions (\d+)/m.exec(text)?.[1] ?? 0),
  };
}

/**
 * Cold: each record target's first request on a service started for it alone (nothing kept, no
 * code warmed by another target's requests), once it is quiet; then a second request. Measured one
 * after another on one service, a target's "cold" time depended on what the targets before it had
 * warmed, and the two modes warm differently (before, every second request is a worker read again).
 *
 * Then a miss on a warm service: on another fresh service, the same target is first read on m45
 * and h2 (twice each: the workers' code compiled, their connections used, as on a service that has
 * been running), then the m15 range, which nothing has read: the cost of sessions not in memory,
 * without the fresh process's interpreted code, which dominates the first figure.
 */
async function coldReads(mode, run, list) {
  const cold = {};
  for (const t of list.filter((x) => x.record)) {
    const svc = await start(mode, run);
    const settled = await quiet(svc.base);
    const first = await timedGet(svc.base + t.path);
    const second = await timedGet(svc.base + t.path);
    if (first.status !== 200 || second.status !== 200)
      throw new Error(`${t.name}: HTTP ${first.status}/${second.status}`);
    await svc.stop();
    state.service = undefined;

    const warm = await start(mode, run);
    await quiet(warm.base);
    for (const market of ['m45', 'm45', 'h2', 'h2']) {
      const cov = await getJson(`${warm.base}/api/v1/markets/${market}/coverage`);
      const other = targets(cov.last_settled_tick, market).find((x) => x.name === t.name);
      const r = await timedGet(warm.base + other.path);
      if (r.status !== 200) throw new Error(`${t.name} on ${market}: HTTP ${r.status}`);
    }
    await quiet(warm.base);
    const miss = await timedGet(warm.base + t.path);
    if (miss.status !== 200) throw new Error(`${t.name}: HTTP ${miss.status}`);
    await warm.stop();
    state.service = undefined;

    cold[t.name] = {
      first_ms: first.ms,
      second_ms: second.ms,
      miss_ms: miss.ms,
      bytes: first.bytes,
      quiet_after_s: settled.seconds,
      sessions_kept_before: settled.record_cache_sessions,
    };
    log(
      `${mode} cold ${t.name}: ${first.ms} ms, then ${second.ms} ms (${first.bytes} B; quiet after ${settled.seconds} s, ${settled.record_cache_sessions} sessions kept before); a miss on a warm service ${miss.ms} ms`,
    );
  }
  return cold;
}

async function measureMode(mode, run) {
  const probe = await start(mode, run);
  const cov = await getJson(`${probe.base}/api/v1/markets/m15/coverage`);
  await probe.stop();
  state.service = undefined;
  const only = opts.targets?.split(',');
  const list = targets(cov.last_settled_tick).filter((t) => !only || only.includes(t.name));
  const out = {
    mode,
    run,
    last_settled_tick: cov.last_settled_tick,
    cold: await coldReads(mode, run, list),
    load: {},
    rss_after_mb: undefined,
  };
  const svc = await start(mode, run);
  await quiet(svc.base);
  for (const t of list) {
    const url = svc.base + t.path;
    if (WARMUP) {
      await runWrk({
        url,
        connections: CONNECTIONS,
        seconds: WARMUP,
        onStart: (s) => (state.stopWrk = s),
      });
      await drained(svc.base);
    }
    const r = await runWrk({
      url,
      connections: CONNECTIONS,
      seconds: DURATION,
      onStart: (s) => (state.stopWrk = s),
    });
    state.stopWrk = undefined;
    out.load[t.name] = {
      path: t.path,
      sessions: t.sessions,
      ...r,
      drained_after_s: await drained(svc.base),
    };
    log(
      `${mode} ${t.name}: ${round(r.requests_per_s)} req/s, p50 ${r.latency_ms.p50} ms, p99 ${r.latency_ms.p99} ms${r.non_2xx ? `, ${r.non_2xx} non-2xx` : ''}`,
    );
  }
  out.rss_after_mb = rssOf(svc.pid).rss_mb;
  out.service_warnings = { count: svc.warnings.count, first: svc.warnings.first };
  await svc.stop();
  state.service = undefined;
  return out;
}

function machine() {
  return {
    nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    total_mem_mb: Math.round(os.totalmem() / 2 ** 20),
    node: process.version,
    loadavg_at_start: os.loadavg().map((x) => round(x, 2)),
  };
}

/** The short commit of the checkout at `dir`, if it is one. */
function commitOf(dir) {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: dir,
      encoding: 'utf8',
    }).trim();
  } catch {
    return undefined;
  }
}

async function main() {
  const started = new Date();
  const m = machine();
  log(`machine: ${m.nproc} CPUs, node ${m.node}, load average ${m.loadavg_at_start.join(' ')}`);
  if (m.loadavg_at_start[0] > 0.5 * m.nproc)
    log(
      `WARNING: the machine is busy (1-min load ${m.loadavg_at_start[0]}); compare the ratios of one run only`,
    );
  const commit = commitOf(ROOT);
  state.db = `bench_record_${started.toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  await pgAdmin(opts.pg, `CREATE DATABASE "${state.db}"`);
  log(`created database ${state.db}`);

  // Record the history once (the cache plays no part in it).
  const first = await start('after', 0);
  const loaded = await backfilled(first.base);
  log(
    `history of ${DAYS} days recorded: ${loaded.sessions} sessions in ${round(loaded.seconds)} s`,
  );
  await first.stop();
  state.service = undefined;

  const measured = [];
  for (let run = 1; run <= RUNS; run++)
    for (const mode of MODES) measured.push(await measureMode(mode, run));

  const names = targets(0)
    .map((t) => t.name)
    .filter((n) => measured.some((x) => x.load[n]));
  const summary = {};
  for (const name of names) {
    const per = (mode) => measured.filter((x) => x.mode === mode).map((x) => x.load[name]);
    const med = (mode, f) => median(per(mode).map(f));
    const s = {};
    for (const mode of MODES) {
      s[mode] = {
        requests_per_s: round(med(mode, (x) => x.requests_per_s)),
        p50_ms: med(mode, (x) => x.latency_ms.p50),
        p99_ms: med(mode, (x) => x.latency_ms.p99),
        non_2xx: per(mode).reduce((n, x) => n + x.non_2xx, 0),
        cold_first_ms: median(
          measured.filter((x) => x.mode === mode && x.cold[name]).map((x) => x.cold[name].first_ms),
        ),
        cold_miss_ms: median(
          measured.filter((x) => x.mode === mode && x.cold[name]).map((x) => x.cold[name].miss_ms),
        ),
      };
    }
    // Per run ratios (both modes measured back to back), then their median.
    const ratios = [];
    for (let run = 1; run <= RUNS; run++) {
      const b = measured.find((x) => x.mode === 'before' && x.run === run)?.load[name];
      const a = measured.find((x) => x.mode === 'after' && x.run === run)?.load[name];
      if (a && b) ratios.push(a.requests_per_s / b.requests_per_s);
    }
    s.ratio_after_before = ratios.length ? round(median(ratios), 1) : undefined;
    s.ratios_per_run = ratios.map((r) => round(r, 1));
    summary[name] = s;
  }

  console.log(
    `\nrecord reads, ${RUNS} run(s), wrk ${WRK} -t1 -c${CONNECTIONS} ${WARMUP}s + ${DURATION}s per target; medians`,
  );
  console.log(
    'target        |  before req/s  p99 ms | after req/s  p99 ms | after/before | cold first ms before / after | miss on a warm service ms before / after',
  );
  for (const name of names) {
    const s = summary[name];
    const f = (x, w) => String(x ?? '-').padStart(w);
    console.log(
      `${name.padEnd(13)} | ${f(s.before?.requests_per_s, 13)} ${f(s.before?.p99_ms, 7)} | ${f(s.after?.requests_per_s, 11)} ${f(s.after?.p99_ms, 7)} | ${f(s.ratio_after_before, 12)} | ${f(s.before?.cold_first_ms, 8)} / ${f(s.after?.cold_first_ms, 8)} | ${f(s.before?.cold_miss_ms, 8)} / ${f(s.after?.cold_miss_ms, 8)}`,
    );
  }

  const file = path.join(
    BENCH_DIR,
    'results',
    `${started
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}-record.json`,
  );
  const result = {
    scenario: 'record reads (issue 14)',
    started: started.toISOString(),
    finished: new Date().toISOString(),
    commit,
    before_service: opts['before-service']
      ? {
          main: path.resolve(opts['before-service']),
          commit: commitOf(path.resolve(opts['before-service'], '../../..')),
        }
      : undefined,
    machine: { ...m, loadavg_at_end: os.loadavg().map((x) => round(x, 2)) },
    generator: {
      name: 'wrk',
      version: WRK,
      threads: 1,
      connections: CONNECTIONS,
      duration_s: DURATION,
      warmup_s: WARMUP,
    },
    days: DAYS,
    history: loaded,
    summary,
    runs: measured.map((x) => ({
      ...x,
      load: Object.fromEntries(
        Object.entries(x.load).map(([k, v]) => [k, { ...v, raw: undefined }]),
      ),
    })),
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  log(`wrote ${path.relative(process.cwd(), file)}`);
}

runBench(main, cleanup);
