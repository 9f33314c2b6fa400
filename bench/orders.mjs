// Load scenario (issue 4): many agents placing pay_from_balance orders at once, every 201 a
// committed row, against a single-row-update transaction loop (pgbench) on the same PostgreSQL in
// the same run. Target: orders/s >= 60 % of pgbench's tps at the same client count and duration.
//
//   npm run build && node bench/orders.mjs [--duration 20] [--warmup 3] [--connections 32]
//       [--agents 1000] [--threads 1] [--shards N] [--holders 1] [--market m15] [--scale 10]
//       [--pgbench-jobs 2] [--only orders|pgbench] [--ready-timeout 180] [--max-wait 960]
//       [--pg postgres://postgres@127.0.0.1:5432/] [--service dist/src/main.js]
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
//  7. pgbench on a second fresh database bench_pgbench_<pid> (pgbench -i -s 10; then -n -c C -j 2
//     -T D with the one-UPDATE script), same connections and duration;
//  8. prints a JSON summary (orders/s, tps, ratio, CPU per process) and writes
//     bench/results/<iso-date>-orders.json.
// Only 127.0.0.1 is targeted; every wait is bounded.
import { spawn, execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, sleep, stopChild, within } from './lib/process.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const HOST = '127.0.0.1';
const LUA = path.join(BENCH_DIR, 'orders.lua');
const FIXTURE_CENTS = 10n ** 12n;

// ---------------------------------------------------------------- options

const USAGE = `usage: node bench/orders.mjs [--duration S] [--warmup S] [--connections N] [--agents N]
       [--threads N] [--shards N] [--holders N] [--market m15|m45|h2|h10] [--scale N]
       [--pgbench-jobs N] [--only orders|pgbench] [--ready-timeout S] [--max-wait S] [--pg URL]
       [--service PATH]`;

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
const ONLY = opts.only;
if (ONLY !== undefined && !['orders', 'pgbench'].includes(ONLY)) {
  console.error(`--only must be orders or pgbench, got ${JSON.stringify(ONLY)}`);
  process.exit(2);
}
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
if (ONLY !== 'pgbench' && !fs.existsSync(SERVICE_MAIN)) {
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
if (ONLY !== 'pgbench' && !WRK_VERSION) {
  console.error('wrk is not installed (apt-get update && apt-get install -y wrk)');
  process.exit(2);
}
if (ONLY !== 'orders' && !PGBENCH_VERSION) {
  console.error('pgbench is not installed (apt-get install -y postgresql-contrib or postgresql-client)');
  process.exit(2);
}

// ---------------------------------------------------------------- small helpers

const log = (msg) => console.error(`[orders ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const round = (x, d = 1) => (x === undefined || x === null || !Number.isFinite(x) ? x : Math.round(x * 10 ** d) / 10 ** d);


const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 80 characters of [A-Za-z0-9] from the CSPRNG (rejection sampling: no modulo bias). */
function newKey() {
  let out = '';
  while (out.length < 80) {
    for (const b of randomBytes(96)) {
      if (b < 248 && out.length < 80) out += ALPHABET[b % 62];
    }
  }
  return out;
}

// ---------------------------------------------------------------- database

let pgMod;
async function pgClient(dbName) {
  pgMod ??= (await import('pg')).default;
  const url = new URL(PG_BASE);
  url.pathname = `/${dbName}`;
  const client = new pgMod.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5000, statement_timeout: 120_000 });
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
  const args = ['-h', PG_BASE.hostname, '-p', PG_BASE.port || '5432', '-U', decodeURIComponent(PG_BASE.username || 'postgres')];
  return args;
}
function pgEnv() {
  const env = { ...process.env };
  if (PG_BASE.password) env.PGPASSWORD = decodeURIComponent(PG_BASE.password);
  return env;
}

// ---------------------------------------------------------------- CPU accounting (/proc)

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5000 }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function procTicks(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime (fields 14, 15)
  } catch {
    return undefined;
  }
}

/** Per-thread ticks of a process: { tid: { comm, ticks } }. */
function threadTicks(pid) {
  const out = {};
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const s = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const comm = s.slice(s.indexOf('(') + 1, s.lastIndexOf(')'));
        const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
        out[tid] = { comm, ticks: Number(f[11]) + Number(f[12]) };
      } catch {}
    }
  } catch {}
  return out;
}

/**
 * ticks of every process whose comm is `postgres`, with the database of a client backend (from its
 * process title "postgres: 15/main: <user> <db> <host>(<port>) <state>"); '' = a background process
 * (walwriter, checkpointer, autovacuum, ...).
 */
const backendDb = new Map(); // pid -> database: a backend never changes database, its title does
function postgresTicks() {
  const out = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim() !== 'postgres') continue;
      const t = procTicks(d);
      if (t === undefined) continue;
      let db = backendDb.get(d);
      if (db === undefined) {
        // a title read while the backend rewrites it can come back cut: only a match is remembered
        const title = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
        const m = /^postgres: [^:]+: \S+ (\S+) (?:\S+\(\d+\)|\[local\])/.exec(title);
        if (m) backendDb.set(d, (db = m[1]));
      }
      out.set(d, { ticks: t, db: db ?? '' });
    } catch {}
  }
  return out;
}

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
          if (d > 0) threads.push({ tid: Number(tid), comm: v.comm, main: Number(tid) === servicePid, cpu_pct: pct(d) });
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
        others_pct_of_core: busyCores === undefined ? undefined : round(Math.max(0, busyCores - svc - gen - pct(pg.ours) - pct(pg.background))),
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
      const avg = [...tally.entries()].map(([k, n]) => [k, round(n / Math.max(samples, 1), 2)]).sort((a, b) => b[1] - a[1]);
      return { samples, avg_backends: Object.fromEntries(avg) };
    },
  };
}

function topSnapshot() {
  return new Promise((resolve) => {
    // two iterations half a second apart: the first one's %Cpu line covers the time since boot
    execFile('top', ['-b', '-n2', '-d0.5', '-w', '180'], { timeout: 5000, encoding: 'utf8' }, (err, out) => {
      if (err) return resolve(`top failed: ${err.message}`);
      const at = out.lastIndexOf('\ntop - ');
      resolve((at >= 0 ? out.slice(at + 1) : out).split('\n').slice(0, 22).join('\n'));
    });
  });
}

// ---------------------------------------------------------------- state and cleanup

const PID = process.pid;
const state = {
  dbs: [],
  service: undefined,
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
    if (state.service && state.service.exitCode === null && state.service.signalCode === null) {
      await stopChild(state.service, 'service', 20_000, log);
      const { exitCode, signalCode } = state.service;
      log(`service stopped (${exitCode !== null ? `exit code ${exitCode}` : `signal ${signalCode}`})`);
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
  const env = { ...process.env, PORT: String(port), HOST, LOG_LEVEL: 'warn', BASE_URL: `http://${HOST}:${port}`, SVC_BACKFILL_DAYS: '0' };
  delete env.DATA_DIR;
  delete env.SVC_TIME_SCALE;
  if (SHARDS !== undefined) env.SVC_SHARDS = String(SHARDS);
  else delete env.SVC_SHARDS;
  const url = new URL(PG_BASE);
  url.pathname = `/${dbName}`;
  env.DATABASE_URL = url.toString();
  log(`starting service ${path.relative(process.cwd(), SERVICE_MAIN)} on ${HOST}:${port}, database ${dbName}`);
  const child = spawn(process.execPath, [SERVICE_MAIN], { cwd: path.resolve(path.dirname(SERVICE_MAIN), '..', '..'), env, stdio: ['ignore', 'pipe', 'pipe'] });
  state.service = child;
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let rec;
    try {
      rec = JSON.parse(line);
    } catch {
      rec = { level: 40, msg: line };
    }
    if ((rec.level ?? 40) >= 40) {
      state.serviceLog.warningCount++;
      if (state.serviceLog.warnings.length < 20) state.serviceLog.warnings.push(rec);
    }
  });
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    if (state.serviceLog.stderr.length < 200) state.serviceLog.stderr.push(line);
  });
  child.once('exit', (code, signal) => {
    if (!state.stopping && !state.serviceStopAsked) console.error(`service exited unexpectedly (code ${code}, signal ${signal})`);
  });

  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_S * 1000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    checkInterrupted();
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`service exited before ready (code ${child.exitCode}, signal ${child.signalCode}):\n${state.serviceLog.stderr.slice(-20).join('\n')}`);
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
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (labels.method === 'POST' && labels.route === '/api/v1/orders') out[labels.status] = Number(m[2]);
  }
  return out;
}
function delta(before, after) {
  const d = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) d[k] = v - (before[k] ?? 0);
  return d;
}

/** Registers `n` agents with bounded concurrency; returns [{ key, agent_id, account_id }]. */
async function registerAgents(base, n) {
  const agents = new Array(n);
  let next = 0;
  const statuses = {};
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n || interrupted) return;
      const key = newKey();
      const body = JSON.stringify({
        token: key,
        name: `bench agent ${i + 1}`,
        recall_phrase: `bench orders ${PID} ${i + 1}`,
        agent: { kind: 'script', model: 'bench/orders.mjs' },
        purpose: 'load benchmark (bench/orders.mjs)',
      });
      const r = await fetch(`${base}/api/v1/agents/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await r.text();
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status !== 201) throw new Error(`POST /api/v1/agents/register answered ${r.status}: ${text.slice(0, 300)}`);
      const j = JSON.parse(text);
      agents[i] = { key, agent_id: j.agent_id, account_id: j.account_id };
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, n) }, worker));
  checkInterrupted();
  return agents;
}

/**
 * BENCH FIXTURE (not an API path): holders, agents connected with autonomous funding on, accounts
 * topped up by 10^12 cents with a matching 'topup' ledger row, in one transaction.
 */
async function fixture(dbName, agents) {
  return withDb(dbName, async (c) => {
    await c.query('begin');
    try {
      const holders = [];
      for (let h = 0; h < HOLDERS; h++) {
        const { rows } = await c.query(`insert into holder (email, password_hash, display_name) values ($1, $2, $3) returning id::float8 as id`, [
          `bench-${PID}-${h + 1}@bench.invalid`,
          'bench-fixture:no-login',
          `bench holder ${h + 1}`,
        ]);
        holders.push(rows[0].id);
      }
      const agentIds = agents.map((a) => a.agent_id);
      const accountIds = agents.map((a) => a.account_id);
      const holderOf = agents.map((_, i) => holders[i % HOLDERS]);
      const a = await c.query(
        `update agent g set holder_id = x.holder_id, paired_at = now(), autonomous_funding = true, funding_changed_at = now()
           from unnest($1::bigint[], $2::bigint[]) as x(id, holder_id) where g.id = x.id`,
        [agentIds, holderOf],
      );
      const l = await c.query(
        `with u as (update account t set holder_id = x.holder_id, balance_cents = t.balance_cents + $3::bigint
                      from unnest($1::bigint[], $2::bigint[]) as x(id, holder_id) where t.id = x.id
                    returning t.id, t.balance_cents)
         insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref)
         select id, 'topup', $3::bigint, balance_cents, 'bench:fixture' from u`,
        [accountIds, holderOf, FIXTURE_CENTS.toString()],
      );
      if (a.rowCount !== agents.length || l.rowCount !== agents.length) {
        throw new Error(`fixture touched ${a.rowCount} agents and ${l.rowCount} accounts, expected ${agents.length}`);
      }
      await c.query('commit');
      return { holders: holders.length, agents: a.rowCount, accounts_topped_up: l.rowCount };
    } catch (err) {
      await c.query('rollback').catch(() => {});
      throw err;
    }
  });
}

/** The market's current menu, once at least `needS` seconds are left before its close. */
async function currentDeals(base, needS) {
  const deadline = Date.now() + MAX_WAIT_S * 1000;
  for (;;) {
    checkInterrupted();
    const m = await getJson(`${base}/api/v1/markets/${MARKET}`);
    const menu = await getJson(`${base}/api/v1/markets/${MARKET}/deals?limit=5000`);
    const deals = (menu.deals ?? []).filter((d) => d.tick === m.current_tick && d.max_qty >= 1);
    const left = m.seconds_to_close;
    if (deals.length && left >= needS) return { tick: m.current_tick, seconds_to_close: left, keys: deals.map((d) => d.key) };
    const waitS = deals.length ? left + 2 : 1;
    if (Date.now() + waitS * 1000 > deadline) {
      throw new Error(`${MARKET} session ${m.current_tick} closes in ${left} s, the run needs ${needS} s, and the next one is beyond --max-wait ${MAX_WAIT_S} s`);
    }
    log(`${MARKET} session ${m.current_tick}: ${round(left)} s left, the run needs ${needS} s: waiting ${round(waitS)} s for the next session`);
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
  const stats = /^\s*Latency\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)/m.exec(out);
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
      ? { connect: Number(sock[1]), read: Number(sock[2]), write: Number(sock[3]), timeout: Number(sock[4]) }
      : { connect: 0, read: 0, write: 0, timeout: 0 },
  };
}

function runWrk(base, dataFile, durationS, servicePid, dbName) {
  const args = [`-t${THREADS}`, `-c${CONNECTIONS}`, `-d${durationS}s`, '--latency', '-s', LUA, base, '--', dataFile];
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
      if (code !== 0) return reject(new Error(`wrk ${args.join(' ')} failed (code ${code}, signal ${signal}): ${err || out}`));
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
  const { rows } = await c.query('select xact_commit::float8 as n from pg_stat_database where datname = $1', [dbName]);
  return rows[0]?.n ?? 0;
}

async function ordersHalf(summary) {
  const dbName = `bench_orders_${PID}`;
  await pgAdmin(`CREATE DATABASE "${dbName}"`);
  state.dbs.push(dbName);
  const service = await startService(dbName);
  log(`service ready at ${service.base} (pid ${service.pid})`);

  const t0 = Date.now();
  const agents = await registerAgents(service.base, AGENTS);
  const regS = (Date.now() - t0) / 1000;
  log(`registered ${agents.length} agents in ${round(regS, 2)} s (${round(agents.length / regS, 0)} /s)`);
  const fx = await fixture(dbName, agents);
  log(`fixture: ${JSON.stringify(fx)}`);

  // The fixture as the service sees it (not fatal: the orders' statuses are what the run checks).
  const notes = [];
  const me = await fetch(`${service.base}/api/v1/agents/me`, { headers: { authorization: `Bearer ${agents[0].key}` }, signal: AbortSignal.timeout(10_000) });
  const meText = await me.text();
  let meJson;
  try {
    meJson = JSON.parse(meText);
  } catch {}
  if (me.status !== 200) notes.push(`GET /api/v1/agents/me of a fixture agent answered ${me.status}: ${meText.slice(0, 200)}`);
  else if (meJson?.autonomous_funding !== true || meJson?.paired !== true) notes.push(`GET /api/v1/agents/me: autonomous_funding ${meJson?.autonomous_funding}, paired ${meJson?.paired}`);
  for (const n of notes) log(`note: ${n}`);

  const need = WARMUP + DURATION + 15;
  const deals = await currentDeals(service.base, need);
  log(`${MARKET} session ${deals.tick}: ${deals.keys.length} deals, ${round(deals.seconds_to_close)} s to its close`);

  state.tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-orders-'));
  const dataFile = path.join(state.tmpDir, 'orders.txt');
  fs.writeFileSync(dataFile, [`market ${MARKET}`, ...agents.map((a) => `key ${a.key}`), ...deals.keys.map((k) => `deal ${k}`)].join('\n') + '\n', { mode: 0o600 });

  // Setup wrote rows: flush them now so that no checkpoint of ours lands in the measured period.
  await pgAdmin('CHECKPOINT');
  let warmup;
  if (WARMUP > 0) {
    log(`warm-up: ${WARMUP} s`);
    const w = await runWrk(service.base, dataFile, WARMUP, service.pid, dbName);
    warmup = { requests: w.requests, statuses: w.statuses, wrk_requests_per_s: w.wrk_requests_per_s };
    await sleep(1000);
  }
  checkInterrupted();

  return withDb(dbName, async (c) => {
    const before = await paidCounts(c, 0);
    const metricsBefore = await orderCounts(service.base);
    const xactBefore = await xactCommits(c, dbName);
    log(`measured: ${DURATION} s, ${CONNECTIONS} connections, ${agents.length} agents, ${deals.keys.length} deals`);
    const waits = await waitSampler(dbName);
    const r = await runWrk(service.base, dataFile, DURATION, service.pid, dbName);
    const pgWaits = await waits.stop();
    await sleep(1500); // let the last in-flight turns commit
    const metricsAfter = await orderCounts(service.base);
    const xactAfter = await xactCommits(c, dbName);
    const after = await paidCounts(c, before.max_id);
    const statusNow = await getJson(`${service.base}/api/v1/markets/${MARKET}`);
    const [{ n: mismatched }] = (
      await c.query(
        `select count(*)::int as n from account a
          where balance_cents <> coalesce((select sum(amount_cents) from ledger l where l.account_id = a.id), 0)`,
      )
    ).rows;
    const [debits] = (
      await c.query(`select count(*)::float8 as n from ledger where kind = 'order_debit' and ref like 'order:%'`)
    ).rows;
    const [{ n: allPaid }] = (await c.query(`select count(*)::float8 as n from orders where status in ('paid', 'filled')`)).rows;

    const ok201 = r.statuses['201'] ?? 0;
    const non201 = Object.entries(r.statuses).filter(([k]) => k !== '201').reduce((a, [, v]) => a + v, 0);
    const svc = delta(metricsBefore, metricsAfter);
    const svc201 = svc['201'] ?? 0;
    const rate = ok201 / r.elapsed_s;
    const problems = [];
    if (non201) problems.push(`${non201} non-201 answers: ${JSON.stringify(r.statuses)}`);
    const sockErr = Object.values(r.socket_errors).reduce((a, b) => a + b, 0);
    if (sockErr) problems.push(`socket errors ${JSON.stringify(r.socket_errors)}`);
    if (after.paid < ok201) problems.push(`DURABILITY: ${after.paid} paid rows < ${ok201} 201s seen by wrk`);
    if (after.paid < svc201) problems.push(`DURABILITY: ${after.paid} paid rows < ${svc201} 201s counted by the service`);
    if (after.paid - ok201 > CONNECTIONS) problems.push(`${after.paid - ok201} more paid rows than 201s seen, more than the ${CONNECTIONS} requests that can be in flight`);
    if (mismatched !== 0) problems.push(`LEDGER: ${mismatched} accounts whose balance differs from the sum of their ledger`);
    if (debits.n !== allPaid) problems.push(`LEDGER: ${debits.n} order_debit rows for ${allPaid} paid orders`);
    if (statusNow.current_tick !== deals.tick) problems.push(`the ${MARKET} session closed during the run (deal keys expired)`);
    if (state.serviceLog.warningCount) problems.push(`service logged ${state.serviceLog.warningCount} warn/error lines (first: ${JSON.stringify(state.serviceLog.warnings[0]).slice(0, 400)})`);

    summary.orders = {
      command: r.command.replace(dataFile, '<data file: keys and deals>'),
      agents: agents.length,
      holders: fx.holders,
      market: MARKET,
      session_tick: deals.tick,
      deals: deals.keys.length,
      registration_s: round(regS, 2),
      warmup,
      duration_s: round(r.elapsed_s, 2),
      requests: r.requests,
      statuses: r.statuses,
      non_201: non201,
      non_201_samples: r.non_201_samples,
      socket_errors: r.socket_errors,
      orders_per_s: round(rate),
      latency_ms: r.latency_ms,
      durability: {
        created_201_seen_by_wrk: ok201,
        created_201_counted_by_service: svc201,
        service_statuses: svc,
        paid_rows_in_window: after.paid,
        order_rows_in_window: after.total,
        paid_minus_201_seen: after.paid - ok201,
        accounts_balance_ne_ledger_sum: mismatched,
        order_debit_rows: debits.n,
        paid_orders_total: allPaid,
      },
      // every transaction the service committed on its database in the window (order batches, and
      // anything else: market actor, key look-ups); paid rows per commit = the mean batch size at most
      database_commits: xactAfter - xactBefore,
      paid_rows_per_commit: round(after.paid / Math.max(1, xactAfter - xactBefore), 2),
      cpu: r.cpu,
      pg_activity: pgWaits,
      top_mid_run: r.top,
      problems,
      notes,
    };
    state.serviceStopAsked = true;
    await stopChild(state.service, 'service', 20_000, log);
    log(`service stopped (${state.service.exitCode !== null ? `exit code ${state.service.exitCode}` : `signal ${state.service.signalCode}`})`);
    summary.orders.service_exit = { code: state.service.exitCode, signal: state.service.signalCode };
    return summary.orders;
  });
}

// ---------------------------------------------------------------- the pgbench half

const PGBENCH_SCRIPT = '\\set aid random(1, 100000 * :scale)\nupdate pgbench_accounts set abalance = abalance + 1 where aid = :aid;\n';

function runPgbench(args, durationS, withCpu, dbName) {
  return new Promise((resolve, reject) => {
    const child = spawn('pgbench', args, { stdio: ['ignore', 'pipe', 'pipe'], env: pgEnv() });
    const cpu = withCpu ? cpuSampler({ generatorPid: child.pid, dbName }) : undefined;
    let top;
    const topTimer = withCpu ? setTimeout(async () => (top = await topSnapshot()), (durationS * 1000) / 2) : undefined;
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
      if (code !== 0) return reject(new Error(`pgbench ${args.join(' ')} failed (code ${code}, signal ${signal}):\n${err}${out}`));
      resolve({ out, err, cpu: usage, top });
    });
  });
}

async function pgbenchHalf(summary) {
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
  await pgAdmin('CHECKPOINT'); // pgbench -i wrote ~1.3 M rows: flush them before the load
  const run = (t) => [...pgConnArgs(), '-n', '-c', String(CONNECTIONS), '-j', String(PGBENCH_JOBS), '-T', String(t), '-s', String(SCALE), '-f', script, dbName];
  if (WARMUP > 0) {
    log(`pgbench warm-up: ${WARMUP} s`);
    await runPgbench(run(WARMUP), WARMUP, false);
  }
  checkInterrupted();
  log(`pgbench measured: ${DURATION} s, ${CONNECTIONS} clients, ${PGBENCH_JOBS} threads`);
  const waits = await waitSampler(dbName);
  const r = await runPgbench(run(DURATION), DURATION, true, dbName);
  const pgWaits = await waits.stop();
  const num = (re) => {
    const m = re.exec(r.out);
    return m ? Number(m[1]) : undefined;
  };
  const tps = num(/tps = ([\d.]+) \(without initial connection time\)/) ?? num(/tps = ([\d.]+)/);
  if (tps === undefined) throw new Error(`cannot parse pgbench output:\n${r.out}\n${r.err}`);
  summary.pgbench = {
    command: `pgbench ${run(DURATION).join(' ').replace(script, '<script>')}`,
    script: PGBENCH_SCRIPT,
    scale: SCALE,
    clients: CONNECTIONS,
    threads: PGBENCH_JOBS,
    duration_s: DURATION,
    transactions: num(/number of transactions actually processed: (\d+)/),
    failed: num(/number of failed transactions: (\d+)/) ?? 0,
    tps: round(tps),
    latency_avg_ms: num(/latency average = ([\d.]+) ms/),
    cpu: r.cpu,
    pg_activity: pgWaits,
    top_mid_run: r.top,
    raw: r.out,
  };
  return summary.pgbench;
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
  log(`machine: ${m.nproc} CPUs (${m.cpu}), node ${m.node}, load average ${m.loadavg_at_start.join(' ')}`);
  if (m.loadavg_at_start[0] > 0.5 * m.nproc) {
    log(`WARNING: the machine is busy (1-min load ${m.loadavg_at_start[0]} on ${m.nproc} CPUs); other processes will distort the figures`);
  }
  // The commit the service under test was built from: the repository holding --service (the
  // working tree's HEAD for dist/src/main.js, which may carry uncommitted edits: `dirty`).
  const serviceRoot = path.resolve(path.dirname(fs.realpathSync(SERVICE_MAIN)), '..', '..');
  const git = (...args) => {
    try {
      return execFileSync('git', ['-C', serviceRoot, ...args], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return undefined;
    }
  };
  const head = git('log', '-1', '--format=%h %s');
  const dirty = head !== undefined && git('status', '--porcelain', '--untracked-files=no') !== '';
  const gitHead = head === undefined ? `unknown: ${serviceRoot} is not in a git repository` : `${head}${dirty ? ' (working tree with uncommitted changes)' : ''}`;
  const summary = {
    scenario: 'orders',
    date: started.toISOString(),
    machine: m,
    code: gitHead,
    service_main: SERVICE_MAIN.startsWith(ROOT + path.sep) ? path.relative(ROOT, SERVICE_MAIN) : SERVICE_MAIN,
    postgres: await postgresInfo(),
    config: { connections: CONNECTIONS, duration_s: DURATION, warmup_s: WARMUP, agents: AGENTS, holders: HOLDERS, market: MARKET, wrk_threads: THREADS, shards: SHARDS ?? 'default (CPUs)', pgbench_scale: SCALE, pgbench_jobs: PGBENCH_JOBS },
    generator: { wrk: WRK_VERSION, pgbench: PGBENCH_VERSION },
  };
  if (ONLY !== 'pgbench') await ordersHalf(summary);
  checkInterrupted();
  if (ONLY !== 'orders') await pgbenchHalf(summary);
  summary.loadavg_at_end = os.loadavg().map((x) => round(x, 2));
  if (summary.orders && summary.pgbench) {
    summary.ratio = round(summary.orders.orders_per_s / summary.pgbench.tps, 4);
    summary.ratio_pct = round(100 * summary.ratio, 1);
    summary.target_pct = 60;
    summary.target_met = summary.ratio >= 0.6;
  }
  summary.service_log = { warn_or_error_lines: state.serviceLog.warningCount, first: state.serviceLog.warnings.slice(0, 5), stderr_tail: state.serviceLog.stderr.slice(-20) };

  const dir = path.join(BENCH_DIR, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${started.toISOString().replace(/:/g, '-').replace(/\.\d+Z$/, 'Z')}-orders.json`);
  const { raw: _raw, ...pgbenchShort } = summary.pgbench ?? {};
  const printed = {
    ...summary,
    orders: summary.orders ? { ...summary.orders, top_mid_run: undefined } : undefined,
    pgbench: summary.pgbench ? { ...pgbenchShort, top_mid_run: undefined } : undefined,
    service_log: { warn_or_error_lines: state.serviceLog.warningCount },
    result_file: path.relative(ROOT, file),
  };
  fs.writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
  console.log(JSON.stringify(printed, null, 2));
  if (summary.ratio !== undefined) {
    log(`orders ${summary.orders.orders_per_s}/s vs pgbench ${summary.pgbench.tps} tps: ${summary.ratio_pct} % (target 60 %)`);
  }
  for (const p of summary.orders?.problems ?? []) log(`problem: ${p}`);
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  if (!interrupted) {
    console.error(`bench failed: ${err.stack ?? err}`);
    for (const w of state.serviceLog.warnings.slice(0, 5)) console.error(`service: ${JSON.stringify(w).slice(0, 2000)}`);
    if (state.serviceLog.stderr.length) console.error(`service stderr:\n${state.serviceLog.stderr.slice(-20).join('\n')}`);
  }
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : exitCode);
