// Load scenario: many agents placing pay_from_balance orders at once, every 201 a
// committed row, against a naive peer of the same endpoint (bench/orders-peer.mjs: Fastify + pg, one
// transaction per request, same database, same checks and rows) and a single-row-update transaction
// loop (pgbench) on the same PostgreSQL, all in the same run. Targets: service orders/s
// >= 2.0x the peer's, >= 50 % of pgbench's tps, p99 <= 25 ms at 32 connections.
//
//   npm run build && node bench/orders.mjs [--duration 20] [--warmup 3] [--connections 32]
//       [--agents 1000] [--threads 1] [--shards N] [--holders 1] [--market m15] [--scale 10]
//       [--pgbench-jobs 2] [--only orders,peer,pgbench] [--peer-pool 10] [--cpu-prof DIR]
//       [--ready-timeout 180] [--max-wait 960] [--pg postgres://postgres@127.0.0.1:5432/]
//       [--service dist/src/main.js]
//
// One run, everything started and stopped by the script (also on error and Ctrl-C):
//  1. a fresh database bench_orders_<pid>; the built service (dist/src/main.js) on it with
//     SVC_BACKFILL_DAYS=0, LOG_LEVEL=warn, a free port; wait for GET /readyz = 200;
//  2. registers --agents agents (POST /api/v1/agents/register, random 80-char keys);
//  3. FIXTURE, in the database: one holder (or --holders), every agent connected to it with
//     autonomous_funding = true, every account topped up with 10^12 cents through a ledger row
//     (kind 'topup', ref 'bench:fixture', balance_after_cents), so balance = sum(ledger) still holds.
//     Earning the switch honestly takes 3 settled profitable trades per agent, which a bench cannot
//     wait for; nothing else about the order path is bypassed;
//  4. picks the deal keys of the market's current menu, waiting for the next session if the open one
//     closes before the run would end (deal keys die at the close);
//  5. wrk with bench/orders.lua: random key, random deal, qty 1, pay_from_balance, warm-up then the
//     measured period; the Lua response() callback tallies statuses;
//  6. durability: orders paid in the measured window (rows in the database) vs 201s wrk saw and
//     201s the service counted (/metrics); balance = sum(ledger) for every account;
//  6b. the same warm-up, measured period and checks for the naive peer, started on the same
//     database while the service idles (its market actor keeps the session and its close);
//  7. pgbench on a second fresh database bench_pgbench_<pid> (pgbench -i -s 10; then -n -c C -j 2
//     -T D with the one-UPDATE script), same connections and duration;
//  8. prints a JSON summary (orders/s, tps, ratio, CPU per process) and writes
//     bench/results/<iso-date>-orders.json.
// Only 127.0.0.1 is targeted; every wait is bounded.
import { spawn, execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  followServiceLog,
  freePort,
  SERVICE_NODE_FLAGS,
  sleep,
  stopChild,
  within,
} from './lib/process.mjs';
import { fundAgents, registerMany } from './lib/agents.mjs';
import { CLK_TCK, postgresTicks, procTicks, threadTicks } from './lib/cpu.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const HOST = '127.0.0.1';
const LUA = path.join(BENCH_DIR, 'orders.lua');
const FIXTURE_CENTS = 10n ** 12n;

// ---------------------------------------------------------------- options

const USAGE = `usage: node bench/orders.mjs [--duration S] [--warmup S] [--connections N] [--agents N]
       [--threads N] [--shards N] [--holders N] [--market m15|m45|h2|h10] [--scale N]
       [--pgbench-jobs N] [--only orders,peer,pgbench] [--peer-pool N] [--cpu-prof DIR]
       [--ready-timeout S] [--max-wait S] [--pg URL] [--service PATH]`;

let opts;
try {
  opts = parseArgs({
    options: {
      duration: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '3' },
      connections: { type: 'string', default: '32' },
      agents: { type: 'string', default: '1000' },
      threads: { type: 'string', default: '1' },
      shards: { type: 'string' },
      holders: { type: 'string', default: '1' },
      market: { type: 'string', default: 'm15' },
      scale: { type: 'string', default: '10' },
      'pgbench-jobs': { type: 'string', default: '2' },
      only: { type: 'string' },
      'peer-pool': { type: 'string', default: '10' },
      rounds: { type: 'string', default: '4' },
      'cpu-prof': { type: 'string' },
      'ready-timeout': { type: 'string', default: '180' },
      'max-wait': { type: 'string', default: '960' },
      pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
      service: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
} catch (err) {
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}

function integer(name, raw, min, max) {
  const n = Number(String(raw).replace(/s$/, ''));
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return n;
}

const DURATION = integer('duration', opts.duration, 1, 3600);
const WARMUP = integer('warmup', opts.warmup, 0, 600);
const CONNECTIONS = integer('connections', opts.connections, 1, 10_000);
const AGENTS = integer('agents', opts.agents, 1, 1_000_000);
const THREADS = integer('threads', opts.threads, 1, 64);
const SHARDS = opts.shards === undefined ? undefined : integer('shards', opts.shards, 1, 64);
const HOLDERS = integer('holders', opts.holders, 1, 1_000_000);
const SCALE = integer('scale', opts.scale, 1, 10_000);
const PGBENCH_JOBS = integer('pgbench-jobs', opts['pgbench-jobs'], 1, 64);
const READY_TIMEOUT_S = integer('ready-timeout', opts['ready-timeout'], 1, 3600);
const MAX_WAIT_S = integer('max-wait', opts['max-wait'], 0, 86_400);
const MARKET = opts.market;
if (!['m15', 'm45', 'h2', 'h10'].includes(MARKET)) {
  console.error(`--market must be m15, m45, h2 or h10, got ${JSON.stringify(MARKET)}`);
  process.exit(2);
}
// Targets run: the service ('orders'), the naive peer ('peer'), pgbench; --only takes a comma list.
const ONLY = opts.only;
const RUN = new Set(ONLY === undefined ? ['orders', 'peer', 'pgbench'] : ONLY.split(','));
if (![...RUN].every((t) => ['orders', 'peer', 'pgbench'].includes(t))) {
  console.error(
    `--only takes orders, peer and/or pgbench (comma-separated), got ${JSON.stringify(ONLY)}`,
  );
  process.exit(2);
}
const PEER = path.join(BENCH_DIR, 'orders-peer.mjs');
// --cpu-prof DIR: the service and the peer run under `node --cpu-prof` (a .cpuprofile per thread, written at exit)
const CPU_PROF =
  opts['cpu-prof'] === undefined
    ? []
    : ['--cpu-prof', '--cpu-prof-dir', path.resolve(opts['cpu-prof'])];
const PEER_POOL = integer('peer-pool', opts['peer-pool'], 1, 90);
// Slices per target: --duration is split into --rounds slices, interleaved service, peer, pgbench.
const ROUNDS = integer('rounds', opts.rounds, 1, 100);
if (THREADS > CONNECTIONS) {
  console.error('--threads must not exceed --connections');
  process.exit(2);
}
if (PGBENCH_JOBS > CONNECTIONS) {
  console.error('--pgbench-jobs must not exceed --connections');
  process.exit(2);
}
if (HOLDERS > AGENTS) {
  console.error('--holders must not exceed --agents');
  process.exit(2);
}
const PG_BASE = new URL(opts.pg);
if (!['127.0.0.1', 'localhost'].includes(PG_BASE.hostname)) {
  console.error(`--pg must point at 127.0.0.1, got ${PG_BASE.hostname}`);
  process.exit(2);
}
const SERVICE_MAIN = path.resolve(opts.service ?? path.join(ROOT, 'dist', 'src', 'main.js'));
if ((RUN.has('orders') || RUN.has('peer')) && !fs.existsSync(SERVICE_MAIN)) {
  console.error(`${SERVICE_MAIN} is missing: run \`npm run build\` first.`);
  process.exit(2);
}

function toolVersion(cmd, args, re) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 5000 });
  if (r.error) return undefined;
  const m = re.exec(`${r.stdout}${r.stderr}`);
  return m ? m[1] : 'unknown';
}
const WRK_VERSION = toolVersion('wrk', ['-v'], /wrk\s+(\S+)/);
const PGBENCH_VERSION = toolVersion('pgbench', ['--version'], /pgbench \(PostgreSQL\) (\S+)/);
if ((RUN.has('orders') || RUN.has('peer')) && !WRK_VERSION) {
  console.error('wrk is not installed (apt-get update && apt-get install -y wrk)');
  process.exit(2);
}
if (RUN.has('pgbench') && !PGBENCH_VERSION) {
  console.error(
    'pgbench is not installed (apt-get install -y postgresql-contrib or postgresql-client)',
  );
  process.exit(2);
}

// ---------------------------------------------------------------- small helpers

const log = (msg) => console.error(`[orders ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const round = (x, d = 1) =>
  x === undefined || x === null || !Number.isFinite(x) ? x : Math.round(x * 10 ** d) / 10 ** d;

// ---------------------------------------------------------------- database

let pgMod;
async function pgClient(dbName) {
  pgMod ??= (await import('pg')).default;
  const url = new URL(PG_BASE);
  url.pathname = `/${dbName}`;
  const client = new pgMod.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: 5000,
    statement_timeout: 120_000,
  });
  await within(10_000, client.connect(), `connect to PostgreSQL database ${dbName}`);
  return client;
}

async function pgAdmin(sql) {
  const client = await pgClient('postgres');
  try {
    await within(125_000, client.query(sql), sql);
  } finally {
    await client.end().catch(() => {});
  }
}

async function withDb(dbName, fn) {
  const client = await pgClient(dbName);
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

function pgConnArgs() {
  const args = [
    '-h',
    PG_BASE.hostname,
    '-p',
    PG_BASE.port || '5432',
    '-U',
    decodeURIComponent(PG_BASE.username || 'postgres'),
  ];
  return args;
}
function pgEnv() {
  const env = { ...process.env };
  if (PG_BASE.password) env.PGPASSWORD = decodeURIComponent(PG_BASE.password);
  return env;
}

// ---------------------------------------------------------------- CPU accounting (/proc)

function machineTicks() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = v[3] + (v[4] ?? 0);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
  return { idle, total };
}

/**
 * Samples CPU once a second while a load runs: the service (whole process and per thread), the
 * load generator, the postgres backends of `dbName`, postgres' background processes, postgres
 * backends of other databases and the machine. stop() returns the use over the window from the
 * first to the last sample in % of one core; `others` is what the machine spent outside all of
 * ours (another engineer's tests, other databases' backends): a run with much of it is distorted.
 */
function cpuSampler({ servicePid, generatorPid, dbName }) {
  const nproc = os.availableParallelism();
  const sample = () => ({
    t: process.hrtime.bigint(),
    service: servicePid ? procTicks(servicePid) : undefined,
    serviceThreads: servicePid ? threadTicks(servicePid) : undefined,
    generator: generatorPid ? procTicks(generatorPid) : undefined,
    postgres: postgresTicks(),
    machine: machineTicks(),
  });
  const first = sample();
  let last = first;
  const timer = setInterval(() => {
    const s = sample();
    // the generator exits at the end of its run: keep the last sample where it was alive
    if (generatorPid && s.generator === undefined) return;
    last = s;
  }, 1000);
  return {
    stop() {
      clearInterval(timer);
      const secs = Number(last.t - first.t) / 1e9;
      if (secs < 0.5) return undefined;
      const pct = (d) => (d === undefined ? undefined : round((100 * d) / CLK_TCK / secs));
      const pg = { ours: 0, background: 0, other: 0 };
      for (const [pid, v] of last.postgres) {
        const d = v.ticks - (first.postgres.get(pid)?.ticks ?? 0);
        pg[v.db === dbName ? 'ours' : v.db === '' ? 'background' : 'other'] += d;
      }
      const threads = [];
      if (last.serviceThreads) {
        for (const [tid, v] of Object.entries(last.serviceThreads)) {
          const d = v.ticks - (first.serviceThreads?.[tid]?.ticks ?? 0);
          if (d > 0)
            threads.push({
              tid: Number(tid),
              comm: v.comm,
              main: Number(tid) === servicePid,
              cpu_pct: pct(d),
            });
        }
        threads.sort((a, b) => b.cpu_pct - a.cpu_pct);
      }
      const mt = last.machine.total - first.machine.total;
      const busyFrac = mt > 0 ? (mt - (last.machine.idle - first.machine.idle)) / mt : undefined;
      const svc = servicePid ? pct(last.service - first.service) : 0;
      const gen = generatorPid ? pct(last.generator - first.generator) : 0;
      const busyCores = busyFrac === undefined ? undefined : round(100 * busyFrac * nproc);
      return {
        window_s: round(secs, 2),
        service_pct_of_core: servicePid ? svc : undefined,
        service_threads: servicePid ? threads.slice(0, 6) : undefined,
        generator_pct_of_core: generatorPid ? gen : undefined,
        postgres_backends_pct_of_core: pct(pg.ours),
        postgres_background_pct_of_core: pct(pg.background),
        postgres_other_databases_pct_of_core: pct(pg.other),
        machine_busy_pct_of_core: busyCores,
        machine_capacity_pct_of_core: 100 * nproc,
        others_pct_of_core:
          busyCores === undefined
            ? undefined
            : round(Math.max(0, busyCores - svc - gen - pct(pg.ours) - pct(pg.background))),
      };
    },
  };
}

/**
 * Samples pg_stat_activity of `dbName` every 200 ms: how many of the database's backends are in
 * each (state, wait event) on average. `idle in transaction` + Client:ClientRead = the backend
 * waits for its client (the service) inside a transaction; `active` with no wait event = on CPU.
 */
async function waitSampler(dbName) {
  const c = await pgClient('postgres');
  const tally = new Map();
  let samples = 0;
  let busy = false;
  let stopped = false;
  const timer = setInterval(async () => {
    if (busy || stopped) return;
    busy = true;
    try {
      const { rows } = await c.query(
        `select state, coalesce(wait_event_type || ':' || wait_event, 'CPU (no wait event)') as wait, count(*)::int as n
           from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and backend_type = 'client backend'
          group by 1, 2`,
        [dbName],
      );
      samples++;
      for (const r of rows) {
        const k = `${r.state} | ${r.wait}`;
        tally.set(k, (tally.get(k) ?? 0) + r.n);
      }
    } catch {}
    busy = false;
  }, 200);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await c.end().catch(() => {});
      const avg = [...tally.entries()]
        .map(([k, n]) => [k, round(n / Math.max(samples, 1), 2)])
        .sort((a, b) => b[1] - a[1]);
      return { samples, avg_backends: Object.fromEntries(avg) };
    },
  };
}

function topSnapshot() {
  return new Promise((resolve) => {
    // two iterations half a second apart: the first one's %Cpu line covers the time since boot
    execFile(
      'top',
      ['-b', '-n2', '-d0.5', '-w', '180'],
      { timeout: 5000, encoding: 'utf8' },
      (err, out) => {
        if (err) return resolve(`top failed: ${err.message}`);
        const at = out.lastIndexOf('\ntop - ');
        resolve((at >= 0 ? out.slice(at + 1) : out).split('\n').slice(0, 22).join('\n'));
      },
    );
  });
}

// ---------------------------------------------------------------- state and cleanup

const PID = process.pid;
const state = {
  dbs: [],
  service: undefined,
  peer: undefined,
  peerStderr: [],
  generator: undefined,
  tmpDir: undefined,
  serviceLog: { warnings: [], warningCount: 0, stderr: [] },
  stopping: false,
};

let cleaned;
function cleanup() {
  return (cleaned ??= (async () => {
    state.stopping = true;
    try {
      state.generator?.stop();
    } catch {}
    await stopChild(state.peer, 'peer', 10_000, log);
    if (state.service && state.service.exitCode === null && state.service.signalCode === null) {
      await stopChild(state.service, 'service', 20_000, log);
      const { exitCode, signalCode } = state.service;
      log(
        `service stopped (${exitCode !== null ? `exit code ${exitCode}` : `signal ${signalCode}`})`,
      );
    }
    for (const db of state.dbs) {
      try {
        await pgAdmin(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
        log(`dropped database ${db}`);
      } catch (err) {
        console.error(`could not drop database ${db}: ${err.message}`);
      }
    }
    if (state.tmpDir) fs.rmSync(state.tmpDir, { recursive: true, force: true });
  })());
}

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${sig}: stopping`);
    process.once(sig, () => process.exit(130));
    cleanup().finally(() => process.exit(130));
  });
}
function checkInterrupted() {
  if (interrupted) throw new Error('interrupted');
}

// ---------------------------------------------------------------- the service

async function startService(dbName) {
  const port = await freePort(HOST);
  const env = {
    ...process.env,
    PORT: String(port),
    HOST,
    LOG_LEVEL: 'warn',
    BASE_URL: `http://${HOST}:${port}`,
    SVC_BACKFILL_DAYS: '0',
  };
  delete env.DATA_DIR;
  delete env.SVC_TIME_SCALE;
  if (SHARDS !== undefined) env.SVC_SHARDS = String(SHARDS);
  else delete env.SVC_SHARDS;
  const url = new URL(PG_BASE);
  url.pathname = `/${dbName}`;
  env.DATABASE_URL = url.toString();
  log(
    `starting service ${path.relative(process.cwd(), SERVICE_MAIN)} on ${HOST}:${port}, database ${dbName}`,
  );
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...CPU_PROF, SERVICE_MAIN], {
    cwd: path.resolve(path.dirname(SERVICE_MAIN), '..', '..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  state.service = child;
  followServiceLog(child, {
    onWarning: (rec) => {
      state.serviceLog.warningCount++;
      if (state.serviceLog.warnings.length < 20) state.serviceLog.warnings.push(rec);
    },
    onStderr: (line) => state.serviceLog.stderr.length < 200 && state.serviceLog.stderr.push(line),
  });
  child.once('exit', (code, signal) => {
    if (!state.stopping && !state.serviceStopAsked)
      console.error(`service exited unexpectedly (code ${code}, signal ${signal})`);
  });

  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_S * 1000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    checkInterrupted();
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `service exited before ready (code ${child.exitCode}, signal ${child.signalCode}):\n${state.serviceLog.stderr.slice(-20).join('\n')}`,
      );
    }
    try {
      const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.status === 200) return { base, port, pid: child.pid };
      last = `HTTP ${r.status}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    await sleep(250);
  }
  throw new Error(`service not ready within ${READY_TIMEOUT_S} s (last /readyz: ${last})`);
}

async function getJson(url) {
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** POST /orders statuses from the service's own http_requests_total. */
async function orderCounts(base) {
  const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await r.text();
  const out = {};
  for (const m of text.matchAll(/^http_requests_total\{([^}]*)\}\s+(\S+)$/gm)) {
    const labels = Object.fromEntries(
      [...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (labels.method === 'POST' && labels.route === '/api/v1/orders')
      out[labels.status] = Number(m[2]);
  }
  return out;
}
function delta(before, after) {
  const d = {};
  for (const [k, v] of Object.entries(after))
    if (v - (before[k] ?? 0) > 0) d[k] = v - (before[k] ?? 0);
  return d;
}

/** Registers `n` agents (bench/lib/agents.mjs), stopping on Ctrl-C. */
const registerAgents = (base, n) =>
  registerMany(base, n, {
    tag: `bench orders ${PID}`,
    model: 'bench/orders.mjs',
    stop: () => interrupted,
  }).finally(checkInterrupted);
/** The fixture (bench/lib/agents.mjs): holders, agents paired with autonomous funding, funded accounts. */
const fixture = (dbName, agents) =>
  withDb(dbName, (c) =>
    fundAgents(c, agents, { holders: HOLDERS, tag: `bench-${PID}`, cents: FIXTURE_CENTS }),
  );

/** The market's current menu, once at least `needS` seconds are left before its close. */
async function currentDeals(base, needS) {
  const deadline = Date.now() + MAX_WAIT_S * 1000;
  for (;;) {
    checkInterrupted();
    const m = await getJson(`${base}/api/v1/markets/${MARKET}`);
    const menu = await getJson(`${base}/api/v1/markets/${MARKET}/deals?limit=5000`);
    const deals = (menu.deals ?? []).filter((d) => d.tick === m.current_tick && d.max_qty >= 1);
    const left = m.seconds_to_close;
    if (deals.length && left >= needS)
      return { tick: m.current_tick, seconds_to_close: left, keys: deals.map((d) => d.key) };
    const waitS = deals.length ? left + 2 : 1;
    if (Date.now() + waitS * 1000 > deadline) {
      throw new Error(
        `${MARKET} session ${m.current_tick} closes in ${left} s, the run needs ${needS} s, and the next one is beyond --max-wait ${MAX_WAIT_S} s`,
      );
    }
    log(
      `${MARKET} session ${m.current_tick}: ${round(left)} s left, the run needs ${needS} s: waiting ${round(waitS)} s for the next session`,
    );
    const until = Date.now() + waitS * 1000;
    while (Date.now() < until) {
      checkInterrupted();
      await sleep(Math.min(1000, until - Date.now()));
    }
  }
}

// ---------------------------------------------------------------- wrk

const UNIT_MS = { us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const ms = (v, unit) => Number(v) * UNIT_MS[unit];

function parseWrk(out) {
  const lat = (pct) => {
    const m = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(out);
    return m ? round(ms(m[1], m[2]), 3) : undefined;
  };
  const stats =
    /^\s*Latency\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)/m.exec(
      out,
    );
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h)/.exec(out);
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const lua = /^ORDERS_WRK_JSON (.*)$/m.exec(out);
  if (!rps || !total) throw new Error(`cannot parse wrk output:\n${out}`);
  const tallies = lua ? JSON.parse(lua[1]) : { statuses: {}, samples: [] };
  return {
    requests: Number(total[1]),
    elapsed_s: ms(total[2], total[3]) / 1000,
    wrk_requests_per_s: Number(rps[1]),
    latency_ms: {
      avg: stats ? round(ms(stats[1], stats[2]), 3) : undefined,
      p50: lat(50),
      p75: lat(75),
      p90: lat(90),
      p99: lat(99),
      max: stats ? round(ms(stats[5], stats[6]), 3) : undefined,
    },
    statuses: tallies.statuses,
    non_201_samples: tallies.samples,
    socket_errors: sock
      ? {
          connect: Number(sock[1]),
          read: Number(sock[2]),
          write: Number(sock[3]),
          timeout: Number(sock[4]),
        }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

function runWrk(base, dataFile, durationS, servicePid, dbName) {
  const args = [
    `-t${THREADS}`,
    `-c${CONNECTIONS}`,
    `-d${durationS}s`,
    '--latency',
    '-s',
    LUA,
    base,
    '--',
    dataFile,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const cpu = cpuSampler({ servicePid, generatorPid: child.pid, dbName });
    let top;
    const topTimer = setTimeout(async () => (top = await topSnapshot()), (durationS * 1000) / 2);
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), (durationS + 30) * 1000);
    state.generator = { stop: () => child.kill('SIGKILL') };
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(kill);
      clearTimeout(topTimer);
      const usage = cpu.stop();
      state.generator = undefined;
      if (code !== 0)
        return reject(
          new Error(`wrk ${args.join(' ')} failed (code ${code}, signal ${signal}): ${err || out}`),
        );
      try {
        resolve({ ...parseWrk(out), cpu: usage, top, command: `wrk ${args.join(' ')}`, raw: out });
      } catch (e) {
        reject(e);
      }
    });
  });
}

// ---------------------------------------------------------------- the orders half

async function paidCounts(c, afterId) {
  const { rows } = await c.query(
    `select count(*) filter (where status in ('paid', 'filled') and payment_source = 'balance')::float8 as paid,
            count(*)::float8 as total,
            coalesce(max(id), 0)::float8 as max_id
       from orders where id > $1`,
    [afterId],
  );
  return rows[0];
}

/** Committed transactions of `dbName` so far (pg_stat_database, flushed by the stats collector). */
async function xactCommits(c, dbName) {
  await c.query('select pg_stat_clear_snapshot()');
  const { rows } = await c.query(
    'select xact_commit::float8 as n from pg_stat_database where datname = $1',
    [dbName],
  );
  return rows[0]?.n ?? 0;
}

/** Balance = sum(ledger) for every account, and one order_debit row per paid order (the whole database). */
async function ledgerChecks(c) {
  const [{ n: mismatched }] = (
    await c.query(
      `select count(*)::int as n from account a
        where balance_cents <> coalesce((select sum(amount_cents) from ledger l where l.account_id = a.id), 0)`,
    )
  ).rows;
  const [debits] = (
    await c.query(
      `select count(*)::float8 as n from ledger where kind = 'order_debit' and ref like 'order:%'`,
    )
  ).rows;
  const [{ n: allPaid }] = (
    await c.query(`select count(*)::float8 as n from orders where status in ('paid', 'filled')`)
  ).rows;
  return { mismatched, debits: debits.n, allPaid };
}

/**
 * pg_stat_statements, when the server preloads it (shared_preload_libraries; a restart of the
 * server, so the bench never sets it): the extension is created in the `postgres` database and its
 * counters reset before each measured period; statements() answers the top statements of `dbName`
 * by plan + execution time. Undefined when the server does not load it.
 */
async function statementStats(dbName) {
  const loaded = await withDb('postgres', async (c) => {
    const { rows } = await c.query(
      `select setting from pg_settings where name = 'shared_preload_libraries'`,
    );
    if (!/\bpg_stat_statements\b/.test(rows[0]?.setting ?? '')) return false;
    await c.query('create extension if not exists pg_stat_statements');
    return true;
  });
  if (!loaded) return undefined;
  await withDb('postgres', (c) => c.query('select pg_stat_statements_reset()'));
  return {
    statements: () =>
      withDb('postgres', async (c) => {
        const { rows } = await c.query(
          `select calls::float8 as calls, round(total_plan_time::numeric, 1)::float8 as plan_ms, round(total_exec_time::numeric, 1)::float8 as exec_ms,
                  rows::float8 as rows, shared_blks_hit::float8 as blks_hit, wal_records::float8 as wal_records, wal_bytes::float8 as wal_bytes,
                  left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 300) as query
             from pg_stat_statements s join pg_database d on d.oid = s.dbid
            where d.datname = $1 order by total_plan_time + total_exec_time desc limit 20`,
          [dbName],
        );
        return rows;
      }),
  };
}

/** Starts the naive peer (bench/orders-peer.mjs) on the service's database; resolves once it listens. */
async function startPeer(dbName) {
  const port = await freePort(HOST);
  const url = new URL(PG_BASE);
  url.pathname = `/${dbName}`;
  const env = {
    ...process.env,
    PORT: String(port),
    HOST,
    BASE_URL: `http://${HOST}:${port}`,
    DATABASE_URL: url.toString(),
    PEER_POOL: String(PEER_POOL),
  };
  log(`starting the naive peer bench/orders-peer.mjs on ${HOST}:${port} (pool ${PEER_POOL})`);
  const child = spawn(process.execPath, [...CPU_PROF, PEER], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  state.peer = child;
  const stderr = [];
  readline
    .createInterface({ input: child.stderr })
    .on('line', (line) => stderr.length < 200 && stderr.push(line));
  state.peerStderr = stderr;
  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    checkInterrupted();
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the peer exited (code ${child.exitCode}):\n${stderr.join('\n')}`);
    try {
      // an empty POST is refused by its body validation: the peer answers, nothing is written
      const r = await fetch(`${base}/api/v1/orders`, {
        method: 'POST',
        signal: AbortSignal.timeout(2000),
      });
      await r.arrayBuffer();
      return { base, port, pid: child.pid };
    } catch {}
    await sleep(200);
  }
  throw new Error(`the peer did not listen within 30 s:\n${stderr.join('\n')}`);
}

/** Weighted mean of the numeric fields of per-slice CPU samples (by window), threads summed by id. */
function mergeCpu(cpus) {
  const list = cpus.filter(Boolean);
  if (!list.length) return undefined;
  const total = list.reduce((a, c) => a + c.window_s, 0);
  const out = { window_s: round(total, 2) };
  for (const k of Object.keys(list[0])) {
    if (k === 'window_s' || typeof list[0][k] !== 'number') continue;
    out[k] = round(list.reduce((a, c) => a + (c[k] ?? 0) * c.window_s, 0) / total);
  }
  if (list[0].service_threads) {
    const byTid = new Map();
    for (const c of list)
      for (const t of c.service_threads ?? []) {
        const x = byTid.get(t.tid) ?? { ...t, cpu_pct: 0 };
        x.cpu_pct += (t.cpu_pct * c.window_s) / total;
        byTid.set(t.tid, x);
      }
    out.service_threads = [...byTid.values()]
      .map((t) => ({ ...t, cpu_pct: round(t.cpu_pct) }))
      .sort((x, y) => y.cpu_pct - x.cpu_pct)
      .slice(0, 6);
  }
  return out;
}

/** pg_stat_activity samples of several slices as one average. */
function mergeWaits(waits) {
  const samples = waits.reduce((a, w) => a + w.samples, 0);
  const sum = new Map();
  for (const w of waits)
    for (const [k, v] of Object.entries(w.avg_backends))
      sum.set(k, (sum.get(k) ?? 0) + v * w.samples);
  return {
    samples,
    avg_backends: Object.fromEntries(
      [...sum].map(([k, v]) => [k, round(v / Math.max(samples, 1), 2)]).sort((x, y) => y[1] - x[1]),
    ),
  };
}

/** One measured slice of a wrk target (the service, or the peer on the same database). */
async function wrkSlice(c, { base, pid, dbName, dataFile, counted }, secs) {
  const before = await paidCounts(c, 0);
  const metricsBefore = counted ? await counted() : undefined;
  const xactBefore = await xactCommits(c, dbName);
  const pgss = await statementStats(dbName);
  const waits = await waitSampler(dbName);
  const r = await runWrk(base, dataFile, secs, pid, dbName);
  const pgWaits = await waits.stop();
  const statements = await pgss?.statements();
  await sleep(1500); // let the last in-flight requests commit
  const metricsAfter = counted ? await counted() : undefined;
  const xactAfter = await xactCommits(c, dbName);
  const after = await paidCounts(c, before.max_id);
  const ledger = await ledgerChecks(c);
  return {
    r,
    pgWaits,
    statements,
    ledger,
    svc: counted ? delta(metricsBefore, metricsAfter) : undefined,
    commits: xactAfter - xactBefore,
    paid: after.paid,
    total: after.total,
  };
}

/**
 * A wrk target's slices as one result, and its durability checks: every 201 a committed paid row,
 * balance = sum(ledger) everywhere, one order_debit row per paid order.
 */
function wrkResult(slices, counted) {
  // the worst slice's ledger check, and the totals after the last one
  const ledger = {
    ...slices.at(-1).ledger,
    mismatched: Math.max(...slices.map((x) => x.ledger.mismatched)),
  };
  const sum = (f) => slices.reduce((a, x) => a + f(x), 0);
  const statuses = {};
  const sockets = { connect: 0, read: 0, write: 0, timeout: 0 };
  for (const { r } of slices) {
    for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    for (const k of Object.keys(sockets)) sockets[k] += r.socket_errors[k] ?? 0;
  }
  const elapsed = sum((x) => x.r.elapsed_s);
  const ok201 = statuses['201'] ?? 0;
  const non201 = Object.entries(statuses)
    .filter(([k]) => k !== '201')
    .reduce((a, [, v]) => a + v, 0);
  const svc201 = counted ? sum((x) => x.svc['201'] ?? 0) : undefined;
  const paid = sum((x) => x.paid);
  const commits = sum((x) => x.commits);
  const rate = ok201 / elapsed;
  const problems = [];
  if (non201) problems.push(`${non201} non-201 answers: ${JSON.stringify(statuses)}`);
  const sockErr = Object.values(sockets).reduce((a, b) => a + b, 0);
  if (sockErr) problems.push(`socket errors ${JSON.stringify(sockets)}`);
  if (paid < ok201) problems.push(`DURABILITY: ${paid} paid rows < ${ok201} 201s seen by wrk`);
  if (svc201 !== undefined && paid < svc201)
    problems.push(`DURABILITY: ${paid} paid rows < ${svc201} 201s counted by the service`);
  if (paid - ok201 > CONNECTIONS * slices.length)
    problems.push(
      `${paid - ok201} more paid rows than 201s seen, more than the ${CONNECTIONS} requests in flight at the end of each slice`,
    );
  if (ledger.mismatched !== 0)
    problems.push(
      `LEDGER: ${ledger.mismatched} accounts whose balance differs from the sum of their ledger`,
    );
  if (ledger.debits !== ledger.allPaid)
    problems.push(`LEDGER: ${ledger.debits} order_debit rows for ${ledger.allPaid} paid orders`);
  const cpu = mergeCpu(slices.map((x) => x.r.cpu));
  const perOrderMs = (pct) =>
    pct === undefined || !rate ? undefined : round((10 * pct) / rate, 3); // % of a core / orders per s -> ms
  const lat = slices.map((x) => x.r.latency_ms);
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  return {
    command: slices[0].r.command,
    slices: slices.length,
    duration_s: round(elapsed, 2),
    requests: sum((x) => x.r.requests),
    statuses,
    non_201: non201,
    non_201_samples: slices.flatMap((x) => x.r.non_201_samples).slice(0, 10),
    socket_errors: sockets,
    orders_per_s: round(rate),
    // wrk reports percentiles per slice: the median slice's p50, the worst slice's p99 and max
    latency_ms: {
      p50: median(lat.map((l) => l.p50)),
      p90: Math.max(...lat.map((l) => l.p90)),
      p99: Math.max(...lat.map((l) => l.p99)),
      max: Math.max(...lat.map((l) => l.max)),
    },
    latency_ms_by_slice: lat,
    orders_per_s_by_slice: slices.map((x) => round((x.r.statuses['201'] ?? 0) / x.r.elapsed_s)),
    durability: {
      created_201_seen_by_wrk: ok201,
      created_201_counted_by_service: svc201,
      paid_rows_in_window: paid,
      order_rows_in_window: sum((x) => x.total),
      paid_minus_201_seen: paid - ok201,
      accounts_balance_ne_ledger_sum: ledger.mismatched,
      order_debit_rows: ledger.debits,
      paid_orders_total: ledger.allPaid,
    },
    // every transaction committed on the database in the windows (order batches, and anything
    // else: the market actor, key look-ups); paid rows per commit = the mean batch size at most
    database_commits: commits,
    paid_rows_per_commit: round(paid / Math.max(1, commits), 2),
    // CPU per order, in ms of one core: the target's process (all threads), the database's backends, wrk
    cpu_ms_per_order: {
      target: perOrderMs(cpu?.service_pct_of_core),
      postgres: perOrderMs(cpu?.postgres_backends_pct_of_core),
      wrk: perOrderMs(cpu?.generator_pct_of_core),
    },
    cpu,
    cpu_by_slice: slices.map((x) => x.r.cpu),
    pg_activity: mergeWaits(slices.map((x) => x.pgWaits)),
    // of the last slice (pg_stat_statements is reset before each)
    pg_stat_statements: slices.at(-1).statements,
    top_mid_run: slices.at(-1).r.top,
    problems,
  };
}

/**
 * The whole measurement: the service (and its database) set up, the peer started on that database,
 * pgbench's database initialised; a warm-up of each; then --rounds rounds of one slice each
 * (service, peer, pgbench; --duration / --rounds seconds a slice), so that all three see the same
 * neighbours on a shared machine on average; then the service and peer stop.
 */
async function measure(summary) {
  if (!RUN.has('orders') && !RUN.has('peer')) return pgbenchOnly(summary);
  const dbName = `bench_orders_${PID}`;
  await pgAdmin(`CREATE DATABASE "${dbName}"`);
  state.dbs.push(dbName);
  const service = await startService(dbName);
  state.serviceBase = service.base;
  log(`service ready at ${service.base} (pid ${service.pid})`);

  const t0 = Date.now();
  const agents = await registerAgents(service.base, AGENTS);
  const regS = (Date.now() - t0) / 1000;
  log(
    `registered ${agents.length} agents in ${round(regS, 2)} s (${round(agents.length / regS, 0)} /s)`,
  );
  const fx = await fixture(dbName, agents);
  log(`fixture: ${JSON.stringify(fx)}`);

  // The fixture as the service sees it (not fatal: the orders' statuses are what the run checks).
  const notes = [];
  const me = await fetch(`${service.base}/api/v1/agents/me`, {
    headers: { authorization: `Bearer ${agents[0].key}` },
    signal: AbortSignal.timeout(10_000),
  });
  const meText = await me.text();
  let meJson;
  try {
    meJson = JSON.parse(meText);
  } catch {}
  if (me.status !== 200)
    notes.push(
      `GET /api/v1/agents/me of a fixture agent answered ${me.status}: ${meText.slice(0, 200)}`,
    );
  else if (meJson?.autonomous_funding !== true || meJson?.paired !== true)
    notes.push(
      `GET /api/v1/agents/me: autonomous_funding ${meJson?.autonomous_funding}, paired ${meJson?.paired}`,
    );
  for (const n of notes) log(`note: ${n}`);

  const pb = RUN.has('pgbench') ? await pgbenchSetup() : undefined;
  const peer = RUN.has('peer') ? await startPeer(dbName) : undefined;
  const targets = [
    ...(RUN.has('orders')
      ? [
          {
            name: 'service',
            base: service.base,
            pid: service.pid,
            dbName,
            counted: () => orderCounts(service.base),
          },
        ]
      : []),
    ...(peer ? [{ name: 'peer', base: peer.base, pid: peer.pid, dbName }] : []),
  ];
  // Every slice places orders in the same session: its deal keys die at the close.
  const secs = Math.max(1, Math.round(DURATION / ROUNDS));
  const perSlice = secs + 3; // counts, samplers, the 1.5 s settle
  const need = (targets.length + (pb ? 1 : 0)) * (WARMUP + 2 + ROUNDS * perSlice) + 15;
  const deals = await currentDeals(service.base, need);
  log(
    `${MARKET} session ${deals.tick}: ${deals.keys.length} deals, ${round(deals.seconds_to_close)} s to its close`,
  );

  state.tmpDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'bench-orders-'));
  const dataFile = path.join(state.tmpDir, 'orders.txt');
  fs.writeFileSync(
    dataFile,
    [
      `market ${MARKET}`,
      ...agents.map((a) => `key ${a.key}`),
      ...deals.keys.map((k) => `deal ${k}`),
    ].join('\n') + '\n',
    { mode: 0o600 },
  );
  for (const t of targets) t.dataFile = dataFile;

  // Setup wrote rows: flush them now so that no checkpoint of ours lands in a measured slice.
  await pgAdmin('CHECKPOINT');
  const warmups = {};
  if (WARMUP > 0) {
    for (const t of targets) {
      log(`${t.name} warm-up: ${WARMUP} s`);
      const w = await runWrk(t.base, dataFile, WARMUP, t.pid, dbName);
      warmups[t.name] = {
        requests: w.requests,
        statuses: w.statuses,
        wrk_requests_per_s: w.wrk_requests_per_s,
      };
    }
    if (pb) {
      log(`pgbench warm-up: ${WARMUP} s`);
      await runPgbench(pb.run(WARMUP), WARMUP, false);
    }
    await sleep(1000);
  }
  checkInterrupted();
  const slices = Object.fromEntries(targets.map((t) => [t.name, []]));
  const pbSlices = [];
  await withDb(dbName, async (c) => {
    for (let k = 1; k <= ROUNDS; k++) {
      log(
        `round ${k}/${ROUNDS}: ${[...targets.map((t) => t.name), ...(pb ? ['pgbench'] : [])].join(', ')}, ${secs} s each, ${CONNECTIONS} connections`,
      );
      for (const t of targets) {
        slices[t.name].push(await wrkSlice(c, t, secs));
        checkInterrupted();
      }
      if (pb) pbSlices.push(await pgbenchSlice(pb, secs));
    }
  });
  const closed =
    (await getJson(`${service.base}/api/v1/markets/${MARKET}`)).current_tick !== deals.tick;
  const common = {
    agents: agents.length,
    holders: fx.holders,
    market: MARKET,
    session_tick: deals.tick,
    deals: deals.keys.length,
    registration_s: round(regS, 2),
  };
  for (const t of targets) {
    const res = { ...common, warmup: warmups[t.name], ...wrkResult(slices[t.name], t.counted) };
    if (closed)
      res.problems.push(`the ${MARKET} session closed during the run (deal keys expired)`);
    if (t.name === 'service') summary.orders = { ...res, notes };
    else
      summary.peer = {
        implementation: 'bench/orders-peer.mjs: Fastify 5 + pg, one transaction per request',
        pool: PEER_POOL,
        ...res,
        stderr_tail: state.peerStderr.slice(-10),
      };
  }
  if (pb) summary.pgbench = pgbenchResult(pb, pbSlices);
  if (peer) await stopChild(state.peer, 'peer', 10_000, log);
  if (state.serviceLog.warningCount && summary.orders) {
    summary.orders.problems.push(
      `service logged ${state.serviceLog.warningCount} warn/error lines (first: ${JSON.stringify(state.serviceLog.warnings[0]).slice(0, 400)})`,
    );
  }
  state.serviceStopAsked = true;
  await stopChild(state.service, 'service', 20_000, log);
  log(
    `service stopped (${state.service.exitCode !== null ? `exit code ${state.service.exitCode}` : `signal ${state.service.signalCode}`})`,
  );
  if (summary.orders)
    summary.orders.service_exit = {
      code: state.service.exitCode,
      signal: state.service.signalCode,
    };
}

// ---------------------------------------------------------------- the pgbench half

const PGBENCH_SCRIPT =
  '\\set aid random(1, 100000 * :scale)\nupdate pgbench_accounts set abalance = abalance + 1 where aid = :aid;\n';

function runPgbench(args, durationS, withCpu, dbName) {
  return new Promise((resolve, reject) => {
    const child = spawn('pgbench', args, { stdio: ['ignore', 'pipe', 'pipe'], env: pgEnv() });
    const cpu = withCpu ? cpuSampler({ generatorPid: child.pid, dbName }) : undefined;
    let top;
    const topTimer = withCpu
      ? setTimeout(async () => (top = await topSnapshot()), (durationS * 1000) / 2)
      : undefined;
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), (durationS + 120) * 1000);
    state.generator = { stop: () => child.kill('SIGKILL') };
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(kill);
      clearTimeout(topTimer);
      const usage = cpu?.stop();
      state.generator = undefined;
      if (code !== 0)
        return reject(
          new Error(
            `pgbench ${args.join(' ')} failed (code ${code}, signal ${signal}):\n${err}${out}`,
          ),
        );
      resolve({ out, err, cpu: usage, top });
    });
  });
}

/** --only pgbench: its warm-up and slices alone (no service). */
async function pgbenchOnly(summary) {
  const pb = await pgbenchSetup();
  await pgAdmin('CHECKPOINT');
  if (WARMUP > 0) await runPgbench(pb.run(WARMUP), WARMUP, false);
  const slices = [];
  for (let k = 1; k <= ROUNDS; k++)
    slices.push(await pgbenchSlice(pb, Math.max(1, Math.round(DURATION / ROUNDS))));
  summary.pgbench = pgbenchResult(pb, slices);
}

/** pgbench's own database, initialised (pgbench -i -s SCALE), and its command line for t seconds. */
async function pgbenchSetup() {
  const dbName = `bench_pgbench_${PID}`;
  await pgAdmin(`CREATE DATABASE "${dbName}"`);
  state.dbs.push(dbName);
  state.tmpDir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'bench-orders-'));
  const script = path.join(state.tmpDir, 'update.sql');
  fs.writeFileSync(script, PGBENCH_SCRIPT);
  log(`pgbench -i -s ${SCALE} ${dbName}`);
  const t0 = Date.now();
  await runPgbench([...pgConnArgs(), '-i', '-q', '-s', String(SCALE), dbName], 600, false);
  log(`initialised in ${round((Date.now() - t0) / 1000, 1)} s`);
  // -s sets :scale for a custom script (pgbench reads pgbench_branches only for its built-in ones)
  const run = (t) => [
    ...pgConnArgs(),
    '-n',
    '-c',
    String(CONNECTIONS),
    '-j',
    String(PGBENCH_JOBS),
    '-T',
    String(t),
    '-s',
    String(SCALE),
    '-f',
    script,
    dbName,
  ];
  return { dbName, script, run };
}

async function pgbenchSlice(pb, secs) {
  const waits = await waitSampler(pb.dbName);
  const r = await runPgbench(pb.run(secs), secs, true, pb.dbName);
  const pgWaits = await waits.stop();
  const num = (re) => {
    const m = re.exec(r.out);
    return m ? Number(m[1]) : undefined;
  };
  const tps = num(/tps = ([\d.]+) \(without initial connection time\)/) ?? num(/tps = ([\d.]+)/);
  if (tps === undefined) throw new Error(`cannot parse pgbench output:\n${r.out}\n${r.err}`);
  return {
    tps,
    transactions: num(/number of transactions actually processed: (\d+)/),
    failed: num(/number of failed transactions: (\d+)/) ?? 0,
    latency_avg_ms: num(/latency average = ([\d.]+) ms/),
    cpu: r.cpu,
    pgWaits,
    top: r.top,
    raw: r.out,
  };
}

function pgbenchResult(pb, slices) {
  // tps over the slices: each slice's tps weighted by its (equal) duration
  const tps = slices.reduce((a, x) => a + x.tps, 0) / slices.length;
  return {
    command: `pgbench ${pb
      .run(Math.max(1, Math.round(DURATION / ROUNDS)))
      .join(' ')
      .replace(pb.script, '<script>')}`,
    script: PGBENCH_SCRIPT,
    scale: SCALE,
    clients: CONNECTIONS,
    threads: PGBENCH_JOBS,
    slices: slices.length,
    duration_s: DURATION,
    transactions: slices.reduce((a, x) => a + (x.transactions ?? 0), 0),
    failed: slices.reduce((a, x) => a + x.failed, 0),
    tps: round(tps),
    tps_by_slice: slices.map((x) => round(x.tps)),
    latency_avg_ms: round(
      slices.reduce((a, x) => a + (x.latency_avg_ms ?? 0), 0) / slices.length,
      3,
    ),
    cpu: mergeCpu(slices.map((x) => x.cpu)),
    pg_activity: mergeWaits(slices.map((x) => x.pgWaits)),
    top_mid_run: slices.at(-1).top,
    raw: slices.map((x) => x.raw).join('\n'),
  };
}

// ---------------------------------------------------------------- main

function machine() {
  let nproc;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8', timeout: 5000 }).trim());
  } catch {
    nproc = os.availableParallelism();
  }
  return {
    nproc,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    total_mem_mb: Math.round(os.totalmem() / 2 ** 20),
    platform: `${process.platform} ${os.release()} ${process.arch}`,
    node: process.version,
    loadavg_at_start: os.loadavg().map((x) => round(x, 2)),
  };
}

async function postgresInfo() {
  return withDb('postgres', async (c) => {
    const { rows } = await c.query(
      `select name, setting from pg_settings where name in ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay', 'shared_buffers', 'max_connections')`,
    );
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  });
}

async function main() {
  const started = new Date();
  const m = machine();
  log(
    `machine: ${m.nproc} CPUs (${m.cpu}), node ${m.node}, load average ${m.loadavg_at_start.join(' ')}`,
  );
  if (m.loadavg_at_start[0] > 0.5 * m.nproc) {
    log(
      `WARNING: the machine is busy (1-min load ${m.loadavg_at_start[0]} on ${m.nproc} CPUs); other processes will distort the figures`,
    );
  }
  // The commit the service under test was built from: the repository holding --service (the
  // working tree's HEAD for dist/src/main.js, which may carry uncommitted edits: `dirty`).
  const serviceRoot = path.resolve(path.dirname(fs.realpathSync(SERVICE_MAIN)), '..', '..');
  const git = (...args) => {
    try {
      return execFileSync('git', ['-C', serviceRoot, ...args], {
        encoding: 'utf8',
        timeout: 5000,
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return undefined;
    }
  };
  const head = git('log', '-1', '--format=%h %s');
  const dirty = head !== undefined && git('status', '--porcelain', '--untracked-files=no') !== '';
  const gitHead =
    head === undefined
      ? `unknown: ${serviceRoot} is not in a git repository`
      : `${head}${dirty ? ' (working tree with uncommitted changes)' : ''}`;
  const summary = {
    scenario: 'orders',
    date: started.toISOString(),
    machine: m,
    code: gitHead,
    service_main: SERVICE_MAIN.startsWith(ROOT + path.sep)
      ? path.relative(ROOT, SERVICE_MAIN)
      : SERVICE_MAIN,
    postgres: await postgresInfo(),
    config: {
      connections: CONNECTIONS,
      duration_s: DURATION,
      warmup_s: WARMUP,
      agents: AGENTS,
      holders: HOLDERS,
      market: MARKET,
      wrk_threads: THREADS,
      shards: SHARDS ?? 'default (CPUs)',
      pgbench_scale: SCALE,
      pgbench_jobs: PGBENCH_JOBS,
    },
    generator: { wrk: WRK_VERSION, pgbench: PGBENCH_VERSION },
  };
  await measure(summary);
  summary.loadavg_at_end = os.loadavg().map((x) => round(x, 2));
  // The ratios, all measured in this run: the service against the naive peer and against
  // pgbench's single-row update, and the peer against pgbench.
  const per = (a, b) => (a && b ? round(a / b, 4) : undefined);
  summary.ratios = {
    service_to_peer: per(summary.orders?.orders_per_s, summary.peer?.orders_per_s),
    service_to_pgbench: per(summary.orders?.orders_per_s, summary.pgbench?.tps),
    peer_to_pgbench: per(summary.peer?.orders_per_s, summary.pgbench?.tps),
  };
  summary.targets = { service_to_peer: 2.0, service_to_pgbench: 0.5, service_p99_ms: 25 };
  if (summary.orders && summary.pgbench) {
    // the older results' single ratio, which src/ops/bench.ts still reads
    summary.ratio = summary.ratios.service_to_pgbench;
    summary.ratio_pct = round(100 * summary.ratio, 1);
  }
  summary.service_log = {
    warn_or_error_lines: state.serviceLog.warningCount,
    first: state.serviceLog.warnings.slice(0, 5),
    stderr_tail: state.serviceLog.stderr.slice(-20),
  };

  const dir = path.join(BENCH_DIR, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(
    dir,
    `${started
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}-orders.json`,
  );
  const { raw: _raw, ...pgbenchShort } = summary.pgbench ?? {};
  const printed = {
    ...summary,
    orders: summary.orders ? { ...summary.orders, top_mid_run: undefined } : undefined,
    peer: summary.peer ? { ...summary.peer, top_mid_run: undefined } : undefined,
    pgbench: summary.pgbench ? { ...pgbenchShort, top_mid_run: undefined } : undefined,
    service_log: { warn_or_error_lines: state.serviceLog.warningCount },
    result_file: path.relative(ROOT, file),
  };
  fs.writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
  console.log(JSON.stringify(printed, null, 2));
  console.error(table(summary));
  for (const [name, t] of [
    ['service', summary.orders],
    ['peer', summary.peer],
  ])
    for (const p of t?.problems ?? []) log(`problem (${name}): ${p}`);
}

/** The run at a glance (stderr): rate, latency, CPU per order, rows per commit, the three ratios. */
function table(summary) {
  const pgCpu = summary.pgbench?.cpu;
  const pgMs = (pct) =>
    pct === undefined || !summary.pgbench?.tps
      ? undefined
      : round((10 * pct) / summary.pgbench.tps, 3);
  const rows = [
    [
      '',
      'per s',
      'p50 ms',
      'p99 ms',
      'CPU ms/order: target',
      'PostgreSQL',
      'paid rows/commit',
      'others % core',
    ],
    ...[
      ['service', summary.orders],
      ['peer', summary.peer],
    ]
      .filter(([, t]) => t)
      .map(([n, t]) => [
        n,
        t.orders_per_s,
        t.latency_ms.p50,
        t.latency_ms.p99,
        t.cpu_ms_per_order.target,
        t.cpu_ms_per_order.postgres,
        t.paid_rows_per_commit,
        t.cpu?.others_pct_of_core,
      ]),
    ...(summary.pgbench
      ? [
          [
            'pgbench',
            summary.pgbench.tps,
            '',
            '',
            pgMs(pgCpu?.generator_pct_of_core),
            pgMs(pgCpu?.postgres_backends_pct_of_core),
            '',
            pgCpu?.others_pct_of_core,
          ],
        ]
      : []),
  ];
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i] ?? '').length)));
  const lines = rows.map((r) => r.map((v, i) => String(v ?? '').padStart(w[i])).join('  '));
  const pct = (x) => (x === undefined ? '—' : `${round(100 * x, 1)} %`);
  const r = summary.ratios;
  lines.push(
    `service/peer ${r.service_to_peer === undefined ? '—' : `${round(r.service_to_peer, 2)}x`} (target 2.0x) · service/pgbench ${pct(r.service_to_pgbench)} (target 50 %) · peer/pgbench ${pct(r.peer_to_pgbench)}`,
  );
  return lines.join('\n');
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  if (!interrupted) {
    console.error(`bench failed: ${err.stack ?? err}`);
    for (const w of state.serviceLog.warnings.slice(0, 5))
      console.error(`service: ${JSON.stringify(w).slice(0, 2000)}`);
    if (state.serviceLog.stderr.length)
      console.error(`service stderr:\n${state.serviceLog.stderr.slice(-20).join('\n')}`);
  }
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : exitCode);
