// HTTP load scenario 1: how close do the service's read routes come to a bare uWebSockets.js server?
//
//   npm run bench                      (= npm run build && node bench/run.mjs)
//   node bench/run.mjs [--duration 10] [--warmup 3] [--connections 64] [--threads 1]
//                      [--embedded] [--generator wrk|autocannon] [--fixed-bytes 20480|deals]
//                      [--shards N] [--backfill-days 0] [--ready-timeout 180]
//                      [--pg postgres://postgres@127.0.0.1:5432/]
//                      [--targets catalog,markets,deals|market-page,explore-page,families,book,signals,pulse,...]
//                      [--service path/to/dist/src/main.js]
//
// One run: create a fresh PostgreSQL database (or a temporary DATA_DIR with --embedded), start the
// built service (dist/src/main.js) with LOG_LEVEL=warn, wait for GET /readyz = 200, start
// bench/fixed-server.mjs, then load each target for a warm-up and a measured period:
//   fixed-bytes   bare uWS, constant bytes (the ceiling of the HTTP stack here)
//   catalog       GET /api/v1/catalog, pre-serialised bytes through the full route machinery
//   markets       GET /api/v1/markets, computed and JSON-serialised per request
//   deals         GET /api/v1/markets/m15/deals, the current menu: pre-serialised per session
//                 (snapshot lookup + one tick comparison + query validation per request)
//   market-page   GET /markets/m15, the market's HTML page: menu part rendered once per session
//                 and kept (fragment cache), countdown and layout rendered per request
//   explore-page  GET /explore/m15, the record's last 120 sessions as an HTML page with a chart:
//                 rendered once per close and kept (with --backfill-days N the run first waits
//                 until the history load is complete, as the cache waits for it too)
//   families      GET /api/v1/markets/m15/families, book GET /api/v1/markets/m15/book, signals
//                 GET /api/v1/markets/h2/families/0/signals: default queries, answers that change
//                 only at a close (with --backfill-days N the run first waits for the history load)
//   pulse         GET /api/v1/pulse: the record's last 24 hours, kept per close with its bytes and
//                 ETag (target: >= 10 000 req/s, p99 <= 20 ms at -c64)
// `--service` runs another build of the service (a "before" build in a second directory).
// `--targets` picks the targets (fixed-bytes is always measured first, as the baseline).
// `--fixed-bytes deals` sizes the baseline like the deals answer measured before the load.
// Prints a table with each target's ratio to fixed-bytes and writes
// bench/results/<iso-date>-http.json (with the commit), which GET /ops/bench shows as charts. Everything is stopped at the end, also on error or Ctrl-C:
// load generator, fixed server, service (SIGTERM, SIGKILL after a bounded wait), database.
// Only 127.0.0.1 is ever targeted; every wait is bounded in time.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
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

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const HOST = '127.0.0.1';

// ---------------------------------------------------------------- options

const USAGE = `usage: node bench/run.mjs [--duration S] [--warmup S] [--connections N] [--threads N]
       [--embedded] [--generator wrk|autocannon] [--fixed-bytes N|deals] [--shards N]
       [--backfill-days N] [--ready-timeout S] [--pg URL]
       [--targets LIST]   (default catalog,markets,deals; any of catalog, markets, deals, market-page, explore-page, families, book, signals)
       [--service PATH]   (default dist/src/main.js of this checkout)`;

let opts;
try {
  opts = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      connections: { type: 'string', default: '64' },
      threads: { type: 'string', default: '1' },
      embedded: { type: 'boolean', default: false },
      generator: { type: 'string' },
      'fixed-bytes': { type: 'string', default: '20480' },
      shards: { type: 'string' },
      'backfill-days': { type: 'string', default: '0' },
      'ready-timeout': { type: 'string', default: '180' },
      pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
      targets: { type: 'string', default: 'catalog,markets,deals' },
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

function seconds(name, raw, min, max) {
  const n = Number(String(raw).replace(/s$/, ''));
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(
      `--${name} must be a number of seconds in ${min}..${max}, got ${JSON.stringify(raw)}`,
    );
    process.exit(2);
  }
  return n;
}
function integer(name, raw, min, max) {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return n;
}

const DURATION = integer('duration', String(opts.duration).replace(/s$/, ''), 1, 3600);
const WARMUP = integer('warmup', String(opts.warmup).replace(/s$/, ''), 0, 600);
const CONNECTIONS = integer('connections', opts.connections, 1, 10_000);
const THREADS = integer('threads', opts.threads, 1, 64);
// 'deals': the size of the deals answer, probed once the service is ready.
const FIXED_BYTES_DEALS = opts['fixed-bytes'] === 'deals';
let FIXED_BYTES = FIXED_BYTES_DEALS
  ? undefined
  : integer('fixed-bytes', opts['fixed-bytes'], 16, 64 * 1024 * 1024);
// The service's history backfill runs in the background after /readyz; 0 keeps it off the
// machine during the read measurements (the default; the record is not read here).
const BACKFILL_DAYS = integer('backfill-days', opts['backfill-days'], 0, 3650);
const SHARDS = opts.shards === undefined ? undefined : integer('shards', opts.shards, 1, 64);
const READY_TIMEOUT_S = seconds('ready-timeout', opts['ready-timeout'], 1, 3600);
const PG_BASE = new URL(opts.pg);
if (!['127.0.0.1', 'localhost'].includes(PG_BASE.hostname)) {
  console.error(`--pg must point at 127.0.0.1, got ${PG_BASE.hostname}`);
  process.exit(2);
}
const TARGET_PATHS = {
  catalog: '/api/v1/catalog',
  markets: '/api/v1/markets',
  deals: '/api/v1/markets/m15/deals',
  'market-page': '/markets/m15',
  'explore-page': '/explore/m15',
  families: '/api/v1/markets/m15/families',
  book: '/api/v1/markets/m15/book',
  signals: '/api/v1/markets/h2/families/0/signals',
  pulse: '/api/v1/pulse',
};
/** Targets that read the record: with --backfill-days N the run waits for the history load first. */
const RECORD_TARGETS = ['explore-page', 'families', 'book', 'signals', 'pulse'];
const TARGETS = String(opts.targets)
  .split(',')
  .map((x) => x.trim())
  .filter(Boolean);
const unknownTargets = TARGETS.filter((x) => !(x in TARGET_PATHS));
if (!TARGETS.length || unknownTargets.length) {
  console.error(
    `--targets takes a comma-separated list of ${Object.keys(TARGET_PATHS).join(', ')}; got ${JSON.stringify(opts.targets)}`,
  );
  process.exit(2);
}
if (THREADS > CONNECTIONS) {
  console.error('--threads must not exceed --connections');
  process.exit(2);
}

const SERVICE_MAIN = opts.service
  ? path.resolve(opts.service)
  : path.join(ROOT, 'dist', 'src', 'main.js');
// The service's own checkout (dist/src/main.js three levels down): its cwd.
const SERVICE_ROOT = path.resolve(path.dirname(SERVICE_MAIN), '..', '..');
if (!fs.existsSync(SERVICE_MAIN)) {
  console.error(
    `${path.relative(process.cwd(), SERVICE_MAIN)} is missing: run \`npm run build\` first (or \`npm run bench\`).`,
  );
  process.exit(2);
}

function wrkVersion() {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8', timeout: 5000 });
  if (r.error) return undefined;
  const m = /wrk\s+(\S+)/.exec(`${r.stdout}${r.stderr}`);
  return m ? m[1] : 'unknown';
}
let GENERATOR = opts.generator;
const WRK_VERSION = wrkVersion();
if (GENERATOR === undefined) GENERATOR = WRK_VERSION ? 'wrk' : 'autocannon';
if (!['wrk', 'autocannon'].includes(GENERATOR)) {
  console.error(`--generator must be wrk or autocannon, got ${JSON.stringify(GENERATOR)}`);
  process.exit(2);
}
if (GENERATOR === 'wrk' && !WRK_VERSION) {
  console.error(
    'wrk is not installed (apt-get update && apt-get install -y wrk), or use --generator autocannon',
  );
  process.exit(2);
}

// ---------------------------------------------------------------- small helpers

const log = (msg) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

// ---------------------------------------------------------------- database

async function pgAdmin(sql) {
  const { default: pg } = await import('pg');
  const url = new URL(PG_BASE);
  url.pathname = '/postgres';
  const client = new pg.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: 5000,
    statement_timeout: 30_000,
  });
  await within(10_000, client.connect(), 'connect to PostgreSQL');
  try {
    await within(35_000, client.query(sql), sql);
  } finally {
    await client.end().catch(() => {});
  }
}

// ---------------------------------------------------------------- state and cleanup

const state = {
  dbName: undefined,
  dataDir: undefined,
  service: undefined,
  fixed: undefined,
  generator: undefined, // { stop(): void } of the load in progress
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
    await stopChild(state.fixed, 'fixed-server', 3000, log);
    if (state.service && state.service.exitCode === null && state.service.signalCode === null) {
      await stopChild(state.service, 'service', 20_000, log);
      const { exitCode, signalCode } = state.service;
      log(
        `service stopped (${exitCode !== null ? `exit code ${exitCode}` : `signal ${signalCode}`})`,
      );
      if (exitCode !== 0)
        console.error(
          `service did not exit cleanly on SIGTERM:\n${state.serviceLog.stderr.slice(-20).join('\n')}`,
        );
    }
    if (state.dbName) {
      try {
        await pgAdmin(`DROP DATABASE IF EXISTS "${state.dbName}" WITH (FORCE)`);
        log(`dropped database ${state.dbName}`);
      } catch (err) {
        console.error(`could not drop database ${state.dbName}: ${err.message}`);
      }
    }
    if (state.dataDir) {
      fs.rmSync(state.dataDir, { recursive: true, force: true });
      log(`removed ${state.dataDir}`);
    }
  })());
}

let interrupted = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(sig, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${sig}: stopping`);
    // A second signal during cleanup kills us outright.
    process.once(sig, () => process.exit(130));
    cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- processes under test

async function startService() {
  const port = await freePort(HOST);
  const env = {
    ...process.env,
    PORT: String(port),
    HOST,
    LOG_LEVEL: 'warn',
    BASE_URL: `http://${HOST}:${port}`,
    // A scenario drives a few keys at full speed: the per-key rate limit would answer it 429s.
    SVC_RATE_LIMIT: process.env.SVC_RATE_LIMIT ?? '100000000',
  };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  if (SHARDS !== undefined) env.SVC_SHARDS = String(SHARDS);
  env.SVC_BACKFILL_DAYS = String(BACKFILL_DAYS);
  let database;
  if (opts.embedded) {
    state.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-embedded-'));
    fs.chmodSync(state.dataDir, 0o711); // reachable by the embedded server's user when run as root
    env.DATA_DIR = state.dataDir;
    database = `embedded PostgreSQL in ${state.dataDir}`;
  } else {
    const name = `bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
    await pgAdmin(`CREATE DATABASE "${name}"`);
    state.dbName = name;
    const url = new URL(PG_BASE);
    url.pathname = `/${name}`;
    env.DATABASE_URL = url.toString();
    database = `postgresql ${url.host}/${name}`;
  }
  log(`starting service on ${HOST}:${port}, database ${database}`);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, SERVICE_MAIN], {
    cwd: SERVICE_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  state.service = child;
  // pino JSON lines at warn and above (LOG_LEVEL=warn): keep them for the report.
  followServiceLog(child, {
    onWarning: (rec) => {
      state.serviceLog.warningCount++;
      if (state.serviceLog.warnings.length < 50) state.serviceLog.warnings.push(rec);
    },
    onStderr: (line) => state.serviceLog.stderr.length < 200 && state.serviceLog.stderr.push(line),
  });
  child.once('exit', (code, signal) => {
    if (!state.stopping)
      console.error(`service exited unexpectedly (code ${code}, signal ${signal})`);
  });

  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_S * 1000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `service exited before ready (code ${child.exitCode}, signal ${child.signalCode}):\n${state.serviceLog.stderr.slice(-20).join('\n')}`,
      );
    }
    try {
      const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.status === 200)
        return { base, port, database: opts.embedded ? 'embedded' : 'postgresql' };
      last = `HTTP ${r.status}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    await sleep(250);
  }
  throw new Error(`service not ready within ${READY_TIMEOUT_S} s (last /readyz: ${last})`);
}

async function startFixed() {
  const child = spawn(
    process.execPath,
    [
      path.join(BENCH_DIR, 'fixed-server.mjs'),
      '--host',
      HOST,
      '--port',
      '0',
      '--bytes',
      String(FIXED_BYTES),
    ],
    {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  state.fixed = child;
  const listening = await within(
    15_000,
    new Promise((resolve, reject) => {
      readline.createInterface({ input: child.stdout }).once('line', (line) => {
        try {
          resolve(JSON.parse(line).listening);
        } catch (err) {
          reject(new Error(`fixed-server said ${JSON.stringify(line)}`));
        }
      });
      child.once('exit', (code) => reject(new Error(`fixed-server exited (code ${code})`)));
    }),
    'fixed-server start',
  );
  return { base: `http://${HOST}:${listening.port}` };
}

// ---------------------------------------------------------------- load generators

const UNIT_MS = { us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const ms = (v, unit) => Number(v) * UNIT_MS[unit];

function parseWrk(out) {
  const num = (re) => {
    const m = re.exec(out);
    return m ? Number(m[1]) : undefined;
  };
  const lat = (pct) => {
    const m = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(out);
    return m ? ms(m[1], m[2]) : undefined;
  };
  const stats =
    /^\s*Latency\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)/m.exec(
      out,
    );
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h)/.exec(out);
  const rps = num(/Requests\/sec:\s+([\d.]+)/);
  if (rps === undefined || !total) throw new Error(`cannot parse wrk output:\n${out}`);
  return {
    rps,
    requests: Number(total[1]),
    elapsed_s: ms(total[2], total[3]) / 1000,
    latency_ms: {
      avg: stats ? ms(stats[1], stats[2]) : undefined,
      p50: lat(50),
      p75: lat(75),
      p90: lat(90),
      p99: lat(99),
      max: stats ? ms(stats[5], stats[6]) : undefined,
    },
    non2xx3xx: num(/Non-2xx or 3xx responses:\s+(\d+)/) ?? 0,
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

function runWrk(url, durationS) {
  const args = [`-t${THREADS}`, `-c${CONNECTIONS}`, `-d${durationS}s`, '--latency', url];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const kill = setTimeout(() => child.kill('SIGKILL'), (durationS + 30) * 1000);
    state.generator = { stop: () => child.kill('SIGKILL') };
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(kill);
      state.generator = undefined;
      if (code !== 0)
        return reject(
          new Error(`wrk ${args.join(' ')} failed (code ${code}, signal ${signal}): ${err || out}`),
        );
      try {
        resolve({ ...parseWrk(out), raw: out });
      } catch (e) {
        reject(e);
      }
    });
  });
}

let autocannonMod;
async function runAutocannon(url, durationS) {
  autocannonMod ??= (await import('autocannon')).default;
  const instance = autocannonMod({
    url,
    connections: CONNECTIONS,
    duration: durationS,
    pipelining: 1,
    timeout: 2,
  });
  state.generator = { stop: () => instance.stop() };
  try {
    const r = await within((durationS + 30) * 1000, instance, 'autocannon');
    const total = r.requests.total;
    return {
      rps: total / r.duration,
      requests: total,
      elapsed_s: r.duration,
      latency_ms: {
        avg: r.latency.average,
        p50: r.latency.p50,
        p75: r.latency.p75,
        p90: r.latency.p90,
        p99: r.latency.p99,
        max: r.latency.max,
      },
      non2xx3xx: r.non2xx,
      socket_errors: { connect: 0, read: r.errors - r.timeouts, write: 0, timeout: r.timeouts },
    };
  } finally {
    state.generator = undefined;
  }
}

const load = (url, durationS) =>
  GENERATOR === 'wrk' ? runWrk(url, durationS) : runAutocannon(url, durationS);

// ---------------------------------------------------------------- service metrics (cross-check)

/** http_requests_total from /metrics as { "<route> <status>": count }. */
async function requestCounts(base) {
  const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) });
  const text = await r.text();
  const out = {};
  // Greedy to the last brace: route patterns carry braces of their own ({market_id}).
  for (const m of text.matchAll(/^http_requests_total\{(.*)\}\s+(\S+)$/gm)) {
    const labels = Object.fromEntries(
      [...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
    );
    out[`${labels.method} ${labels.route} ${labels.status}`] = Number(m[2]);
  }
  return out;
}

function countsDelta(before, after) {
  const d = {};
  for (const [k, v] of Object.entries(after)) {
    const n = v - (before[k] ?? 0);
    if (n > 0) d[k] = n;
  }
  return d;
}

// ---------------------------------------------------------------- the record

/** Waits (bounded by --ready-timeout) until every market's history load is complete. */
async function historyLoaded(base) {
  const deadline = Date.now() + READY_TIMEOUT_S * 1000;
  const started = Date.now();
  for (;;) {
    const loads = await Promise.all(
      ['m15', 'm45', 'h2', 'h10'].map(async (m) => {
        const r = await fetch(`${base}/api/v1/markets/${m}/coverage`, {
          signal: AbortSignal.timeout(5000),
        });
        return (await r.json()).history_load;
      }),
    );
    if (loads.every((l) => l === null || l.complete)) {
      log(
        `history of ${BACKFILL_DAYS} day(s) loaded in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      return;
    }
    if (Date.now() > deadline)
      throw new Error(
        `history not loaded within ${READY_TIMEOUT_S} s: ${JSON.stringify(loads.map((l) => l?.fraction))}`,
      );
    await sleep(1000);
  }
}

// ---------------------------------------------------------------- the run

async function probe(url) {
  const r = await fetch(url, { signal: AbortSignal.timeout(5000) });
  const body = Buffer.from(await r.arrayBuffer());
  if (r.status !== 200)
    throw new Error(`GET ${url} answered ${r.status}: ${body.toString().slice(0, 200)}`);
  return { bytes: body.length, contentType: r.headers.get('content-type') };
}

async function measure(target) {
  const p = await probe(target.url);
  log(
    `${target.name}: GET ${new URL(target.url).pathname} -> 200, ${p.bytes} bytes; warm-up ${WARMUP} s, then ${DURATION} s`,
  );
  let warmup;
  if (WARMUP > 0) {
    const w = await load(target.url, WARMUP);
    warmup = { rps: w.rps, non2xx3xx: w.non2xx3xx, socket_errors: w.socket_errors };
  }
  const before = target.metricsBase ? await requestCounts(target.metricsBase) : undefined;
  const r = await load(target.url, DURATION);
  const statuses = before
    ? countsDelta(before, await requestCounts(target.metricsBase))
    : undefined;
  const { raw, ...result } = r;
  await sleep(500);
  return {
    name: target.name,
    method: 'GET',
    path: new URL(target.url).pathname,
    bytes: p.bytes,
    ...result,
    warmup,
    service_statuses: statuses,
    ...(raw ? { wrk_output: raw } : {}),
  };
}

const fmtMs = (v) =>
  v === undefined ? '-' : v < 1 ? `${(v * 1000).toFixed(0)} µs` : `${v.toFixed(2)} ms`;
const fmtInt = (v) => Math.round(v).toLocaleString('en-US');

function table(rows) {
  const header = [
    'target',
    'route',
    'bytes',
    'req/s',
    'p50',
    'p99',
    'max',
    'non-2xx',
    'sock err',
    'ratio',
  ];
  const lines = rows.map((r) => [
    r.name,
    `${r.method} ${r.path}`,
    String(r.bytes),
    fmtInt(r.rps),
    fmtMs(r.latency_ms.p50),
    fmtMs(r.latency_ms.p99),
    fmtMs(r.latency_ms.max),
    String(r.non2xx3xx),
    String(Object.values(r.socket_errors).reduce((a, b) => a + b, 0)),
    r.ratio_to_fixed === undefined ? '-' : `${(r.ratio_to_fixed * 100).toFixed(1)} %`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

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
    loadavg_at_start: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/** The checkout's commit (short hash, `+dirty` with uncommitted changes), or null outside git. */
function commit() {
  try {
    const hash = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 5000,
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 5000,
    }).trim();
    return dirty ? `${hash}+dirty` : hash;
  } catch {
    return null;
  }
}

async function main() {
  const started = new Date();
  const m = machine();
  const genLabel =
    GENERATOR === 'wrk'
      ? `wrk ${WRK_VERSION} (-t${THREADS} -c${CONNECTIONS} --latency)`
      : `autocannon (in-process, ${CONNECTIONS} connections)`;
  log(`generator: ${genLabel}; duration ${DURATION} s, warm-up ${WARMUP} s per target`);
  log(
    `machine: ${m.nproc} CPUs (${m.cpu}), node ${m.node}, load average ${m.loadavg_at_start.join(' ')}`,
  );
  if (m.loadavg_at_start[0] > 0.5 * m.nproc) {
    log(
      `WARNING: the machine is busy (1-min load ${m.loadavg_at_start[0]} on ${m.nproc} CPUs); other processes will distort the figures`,
    );
  }

  const service = await startService();
  log(`service ready at ${service.base}`);
  const dealsUrl = `${service.base}/api/v1/markets/m15/deals`;
  if (FIXED_BYTES_DEALS) {
    FIXED_BYTES = (await probe(dealsUrl)).bytes;
    log(
      `--fixed-bytes deals: baseline of ${FIXED_BYTES} bytes, the size of the m15 deals answer now`,
    );
  }
  const fixed = await startFixed();
  log(`fixed-server at ${fixed.base} (${FIXED_BYTES} bytes per GET)`);

  if (BACKFILL_DAYS > 0 && TARGETS.some((x) => RECORD_TARGETS.includes(x)))
    await historyLoaded(service.base);
  const targets = [
    { name: 'fixed-bytes', url: `${fixed.base}/` },
    ...TARGETS.map((name) => ({
      name,
      url: `${service.base}${TARGET_PATHS[name]}`,
      metricsBase: service.base,
    })),
  ];
  const results = [];
  for (const t of targets) {
    if (interrupted) return;
    results.push(await measure(t));
    if (t.name === 'fixed-bytes') await stopChild(state.fixed, 'fixed-server', 3000, log);
  }
  const baseline = results[0].rps;
  for (const r of results) r.ratio_to_fixed = r.rps / baseline;

  console.log('');
  console.log(
    `HTTP scenario — ${started.toISOString()} — ${m.nproc} CPUs ${m.cpu}, node ${m.node}, ${genLabel}, ${DURATION} s per target, database ${service.database}`,
  );
  console.log(table(results));
  console.log('');
  for (const r of results.slice(1))
    console.log(`${r.name}: ${(r.ratio_to_fixed * 100).toFixed(1)} % of fixed-bytes requests/s`);
  if (GENERATOR === 'autocannon') {
    console.log(
      'note: autocannon runs in this Node process and takes a core of its own; ratios near or above 100 % mean the generator, not the server, is the limit. Install wrk for meaningful ratios.',
    );
  }

  // Problems seen during load.
  const problems = [];
  for (const r of results) {
    const sockErr = Object.values(r.socket_errors).reduce((a, b) => a + b, 0);
    if (r.non2xx3xx) problems.push(`${r.name}: ${r.non2xx3xx} non-2xx/3xx answers`);
    if (sockErr) problems.push(`${r.name}: socket errors ${JSON.stringify(r.socket_errors)}`);
    if (r.service_statuses) {
      const bad = Object.entries(r.service_statuses).filter(
        ([k]) => !/ 2\d\d$/.test(k) && !k.includes(' /metrics '),
      );
      if (bad.length)
        problems.push(`${r.name}: service counted ${JSON.stringify(Object.fromEntries(bad))}`);
    }
    if (
      r.latency_ms.max !== undefined &&
      r.latency_ms.p99 !== undefined &&
      r.latency_ms.max > 10 * r.latency_ms.p99
    ) {
      problems.push(
        `${r.name}: latency outlier, max ${fmtMs(r.latency_ms.max)} vs p99 ${fmtMs(r.latency_ms.p99)}`,
      );
    }
  }
  if (state.serviceLog.warningCount)
    problems.push(
      `service logged ${state.serviceLog.warningCount} warn/error lines (first: ${JSON.stringify(state.serviceLog.warnings[0])})`,
    );
  console.log(
    problems.length
      ? `\nproblems:\n  ${problems.join('\n  ')}`
      : '\nno errors, non-2xx answers or service warnings seen',
  );

  const result = {
    scenario: 'http',
    date: started.toISOString(),
    commit: commit(),
    machine: m,
    generator: {
      name: GENERATOR,
      version:
        GENERATOR === 'wrk'
          ? WRK_VERSION
          : JSON.parse(
              fs.readFileSync(
                path.join(ROOT, 'node_modules', 'autocannon', 'package.json'),
                'utf8',
              ),
            ).version,
      threads: GENERATOR === 'wrk' ? THREADS : undefined,
    },
    connections: CONNECTIONS,
    duration_s: DURATION,
    warmup_s: WARMUP,
    database: service.database,
    shards: SHARDS ?? 'default (os.availableParallelism())',
    fixed_bytes: FIXED_BYTES,
    fixed_bytes_sized_as: FIXED_BYTES_DEALS ? 'deals' : undefined,
    backfill_days: BACKFILL_DAYS,
    service: path.relative(ROOT, SERVICE_MAIN),
    targets: TARGETS,
    results,
    loadavg_at_end: os.loadavg().map((x) => Math.round(x * 100) / 100),
    problems,
    service_log: {
      warn_or_error_lines: state.serviceLog.warningCount,
      first: state.serviceLog.warnings,
      stderr: state.serviceLog.stderr,
    },
  };
  const dir = path.join(BENCH_DIR, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(
    dir,
    `${started
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}-http.json`,
  );
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  console.log(`\nwrote ${path.relative(ROOT, file)}`);
  console.log(
    'see every run as charts at /ops/bench of a running service (npm start, then http://127.0.0.1:8080/ops/bench)',
  );
}

let exitCode = 0;
try {
  await main();
} catch (err) {
  if (!interrupted) console.error(`bench failed: ${err.stack ?? err}`);
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(interrupted ? 130 : exitCode);
