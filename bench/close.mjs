// Scale scenario: how long a market's close takes with many open positions. Target: an
// m15 close with 10k open positions in under 1 s.
//
//   npm run build && node bench/close.mjs [--positions 10000] [--agents 1000] [--market m15]
//       [--time-scale 30] [--closes 3] [--connections 32] [--pg postgres://postgres@127.0.0.1:5432/]
//       [--service dist/src/main.js] [--cpu-prof DIR] [--ready-timeout 180] [--keep-db]
//
// --keep-db leaves the database behind (its name is logged) for EXPLAIN ANALYZE of the close's
// statements on its data; drop it yourself afterwards.
//
// One run, everything started and stopped by the script (also on error and Ctrl-C; every wait
// bounded; only 127.0.0.1):
//  1. a fresh database bench_close_<pid>; the built service on it with SVC_TIME_SCALE (sessions run
//     that many times faster: an m15 session lasts 30 s at 30), SVC_BACKFILL_DAYS=0, LOG_LEVEL=info (its
//     "session closed" lines carry the close's steps in ms: steps_ms in the result);
//  2. --agents agents registered through the API and the bench fixture (bench/lib/agents.mjs);
//  3. --positions orders, pay_from_balance, qty 1, random agent and deal of the current menu,
//     through POST /api/v1/orders (--connections in flight), into the next session's menu when one
//     closes meanwhile (positions a few sessions apart are all open: they settle after 8);
//  4. the closes that follow, --closes of them: the first fills the last paid orders into positions
//     (and trades), each later one advances every open position one session (sales, holding fees: ledger
//     rows per position). For each close: close_ms as the close recorded it (market_session.close_ms:
//     the close's transaction, from its locks to its next menu), the open positions it carried, CPU
//     of the service and of the database's backends over the close, and, when the server preloads
//     pg_stat_statements, the close's statements by time (where its time goes);
//  5. checks: every placed order filled into a position, balance = sum(ledger) for every account;
//  6. writes bench/results/<iso-date>-close.json and prints a table.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
import { CLK_TCK, postgresTicks, procTicks } from './lib/cpu.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const HOST = '127.0.0.1';
const MARKET_INTERVALS = { m15: 900, m45: 2700, h2: 7200, h10: 36000 };

const { values: opts } = parseArgs({
  options: {
    positions: { type: 'string', default: '10000' },
    agents: { type: 'string', default: '1000' },
    market: { type: 'string', default: 'm15' },
    'time-scale': { type: 'string', default: '30' },
    closes: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
    service: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'ready-timeout': { type: 'string', default: '180' },
    'keep-db': { type: 'boolean', default: false },
  },
});
const int = (name, min, max) => {
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be an integer in ${min}..${max}`);
    process.exit(2);
  }
  return n;
};
const POSITIONS = int('positions', 1, 1_000_000);
const AGENTS = int('agents', 1, 100_000);
const CLOSES = int('closes', 1, 20);
const CONNECTIONS = int('connections', 1, 512);
const READY_TIMEOUT_S = int('ready-timeout', 1, 3600);
const SCALE = Number(opts['time-scale']);
const MARKET = opts.market;
if (!(MARKET in MARKET_INTERVALS)) throw new Error('--market must be m15, m45, h2 or h10');
if (!(SCALE > 0 && SCALE <= 10_000)) throw new Error('--time-scale must be in (0, 10000]');
const SESSION_S = MARKET_INTERVALS[MARKET] / SCALE; // real seconds per session
const PG_BASE = new URL(opts.pg);
if (!['127.0.0.1', 'localhost'].includes(PG_BASE.hostname))
  throw new Error('--pg must point at 127.0.0.1');
const SERVICE_MAIN = path.resolve(opts.service ?? path.join(ROOT, 'dist', 'src', 'main.js'));
if (!fs.existsSync(SERVICE_MAIN)) {
  console.error(`${SERVICE_MAIN} is missing: run \`npm run build\` first.`);
  process.exit(2);
}
const CPU_PROF =
  opts['cpu-prof'] === undefined
    ? []
    : ['--cpu-prof', '--cpu-prof-dir', path.resolve(opts['cpu-prof'])];

const PID = process.pid;
const DB = `bench_close_${PID}`;
const log = (msg) => console.error(`[close ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const round = (x, d = 1) =>
  x === undefined || x === null || !Number.isFinite(x) ? x : Math.round(x * 10 ** d) / 10 ** d;
const state = {
  service: undefined,
  dbCreated: false,
  warnings: [],
  stderr: [],
  interrupted: false,
  closeSteps: new Map(),
};

let pgMod;
async function withDb(dbName, fn) {
  pgMod ??= (await import('pg')).default;
  const url = new URL(PG_BASE);
  url.pathname = `/${dbName}`;
  const c = new pgMod.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: 5000,
    statement_timeout: 120_000,
  });
  await within(10_000, c.connect(), `connect to ${dbName}`);
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}
const one = async (c, sql, args = []) => (await c.query(sql, args)).rows[0];

async function startService() {
  const port = await freePort(HOST);
  const url = new URL(PG_BASE);
  url.pathname = `/${DB}`;
  const env = {
    ...process.env,
    PORT: String(port),
    HOST,
    LOG_LEVEL: 'info',
    BASE_URL: `http://${HOST}:${port}`,
    SVC_BACKFILL_DAYS: '0',
    SVC_TIME_SCALE: String(SCALE),
    DATABASE_URL: url.toString(),
  };
  delete env.DATA_DIR;
  log(
    `starting ${path.relative(process.cwd(), SERVICE_MAIN)} on ${HOST}:${port}, database ${DB}, SVC_TIME_SCALE=${SCALE} (${MARKET} sessions of ${round(SESSION_S)} s)`,
  );
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...CPU_PROF, SERVICE_MAIN], {
    cwd: path.resolve(path.dirname(SERVICE_MAIN), '..', '..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  state.service = child;
  followServiceLog(child, {
    onWarning: (rec) => state.warnings.length < 20 && state.warnings.push(rec),
    // The close's own account of its steps (actors/runtime/laps.ts): where its time goes.
    onRecord: (rec) =>
      rec.msg === 'session closed' &&
      rec.market === MARKET &&
      rec.steps &&
      state.closeSteps.set(rec.tick, rec),
    onStderr: (line) => state.stderr.length < 200 && state.stderr.push(line),
  });
  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_S * 1000;
  while (Date.now() < deadline) {
    if (state.interrupted) throw new Error('interrupted');
    if (child.exitCode !== null)
      throw new Error(
        `service exited (code ${child.exitCode}):\n${state.stderr.slice(-20).join('\n')}`,
      );
    try {
      const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.status === 200) return { base, pid: child.pid };
    } catch {}
    await sleep(250);
  }
  throw new Error(`service not ready within ${READY_TIMEOUT_S} s`);
}

async function getJson(url) {
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * Places `n` paid orders, qty 1 each, from the current session on: when a session closes while
 * placing (its deal keys answer 404), the rest go into the next one (positions open at most a few
 * sessions apart are all still open: they settle after 8). Returns the last session placed into.
 */
async function placeOrders(base, agents, n) {
  let current;
  let refreshing;
  const refresh = () =>
    (refreshing ??= (async () => {
      // right after a session's end its close may still run: the next menu is served once it opened
      for (let i = 0; ; i++) {
        const m = await getJson(`${base}/api/v1/markets/${MARKET}`);
        const deals = (
          await getJson(`${base}/api/v1/markets/${MARKET}/deals?limit=5000`)
        ).deals.filter((d) => d.tick === m.current_tick && d.max_qty >= 1);
        if (deals.length && m.seconds_to_close > 1 && m.current_tick !== current?.tick) {
          current = { tick: m.current_tick, deals };
          log(
            `placing into ${MARKET} session ${m.current_tick} (${deals.length} deals, ${round(m.seconds_to_close)} s left)`,
          );
          return;
        }
        if (i >= 600)
          throw new Error(`no new ${MARKET} menu within 60 s (session ${m.current_tick})`);
        await sleep(100);
      }
    })().finally(() => (refreshing = undefined)));
  await refresh();
  const statuses = {};
  const samples = [];
  const ticks = new Set();
  let placed = 0;
  let sent = 0;
  const t0 = Date.now();
  const worker = async () => {
    while (sent < n && !state.interrupted) {
      sent++;
      const { tick, deals } = current;
      const a = agents[Math.floor(Math.random() * agents.length)];
      const d = deals[Math.floor(Math.random() * deals.length)];
      const r = await fetch(`${base}/api/v1/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${a.key}` },
        body: JSON.stringify({ market: MARKET, offer_key: d.key, qty: 1, pay_from_balance: true }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await r.text();
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      if (r.status === 201) {
        placed++;
        ticks.add(tick);
        continue;
      }
      sent--; // placed again
      if (samples.length < 5) samples.push(`${r.status} ${text.slice(0, 200)}`);
      if (r.status === 404 && current.tick === tick)
        await refresh(); // the session closed: the next one's menu
      else if (r.status !== 404 && r.status !== 503)
        throw new Error(`POST /api/v1/orders answered ${r.status}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const s = (Date.now() - t0) / 1000;
  log(
    `placed ${placed} orders in ${round(s, 1)} s (${round(placed / s, 0)}/s) into sessions ${[...ticks].join(', ')}`,
  );
  return {
    tick: Math.max(...ticks),
    ticks: [...ticks],
    placed,
    statuses,
    samples,
    seconds: round(s, 2),
  };
}

async function statementStats() {
  const loaded = await withDb('postgres', async (c) => {
    const { setting } = await one(
      c,
      `select setting from pg_settings where name = 'shared_preload_libraries'`,
    );
    if (!/\bpg_stat_statements\b/.test(setting)) return false;
    await c.query('create extension if not exists pg_stat_statements');
    return true;
  });
  if (!loaded) return undefined;
  return {
    reset: () => withDb('postgres', (c) => c.query('select pg_stat_statements_reset()')),
    top: () =>
      withDb(
        'postgres',
        async (c) =>
          (
            await c.query(
              `select calls::float8 as calls, round(total_plan_time::numeric, 1)::float8 as plan_ms, round(total_exec_time::numeric, 1)::float8 as exec_ms,
                    rows::float8 as rows, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 240) as query
               from pg_stat_statements s join pg_database d on d.oid = s.dbid
              where d.datname = $1 order by total_plan_time + total_exec_time desc limit 15`,
              [DB],
            )
          ).rows,
      ),
  };
}

/** The bench database's backends: ticks by pid. */
const pgBackendTicks = () =>
  new Map([...postgresTicks()].filter(([, v]) => v.db === DB).map(([pid, v]) => [pid, v.ticks]));
/**
 * Ticks the backends used between two snapshots, per backend: a backend that ended in between is
 * left out (its last ticks are unknown) instead of being subtracted, which made a sum go negative.
 */
const pgTicksBetween = (a, b) => [...b].reduce((n, [pid, t]) => n + t - (a.get(pid) ?? 0), 0);

/** Waits for the close of `tick` (bounded), measuring CPU around it; returns what the close recorded. */
async function measureClose(c, service, tick, pgss) {
  const open = await one(
    c,
    `select count(*) filter (where actor = 'user')::int as user_trades, count(*)::int as trades from trade where market = $1 and tick < $2 and not settled`,
    [MARKET, tick],
  );
  const openPositions = await one(
    c,
    `select count(*)::int as n from position p join trade t on t.position_id = p.id where p.market = $1 and not t.settled and t.tick < $2`,
    [MARKET, tick],
  );
  const paid = await one(
    c,
    `select count(*)::int as n from orders where market = $1 and tick = $2 and status = 'paid'`,
    [MARKET, tick],
  );
  // Wait until the session is about to close, then sample from just before it.
  const m = await getJson(`${service.base}/api/v1/markets/${MARKET}`);
  if (m.current_tick !== tick)
    throw new Error(`expected session ${tick} open, the market is at ${m.current_tick}`);
  await sleep(Math.max(0, (m.seconds_to_close - 1) * 1000));
  await pgss?.reset();
  const before = { service: procTicks(service.pid), pg: pgBackendTicks(), t: Date.now() };
  const deadline = Date.now() + (SESSION_S + 120) * 1000;
  let row;
  while (Date.now() < deadline) {
    if (state.interrupted) throw new Error('interrupted');
    row = await one(
      c,
      `select closed_at is not null as closed, close_ms from market_session where market = $1 and tick = $2`,
      [MARKET, tick],
    );
    if (row?.closed && row.close_ms !== null) break;
    await sleep(100);
  }
  const after = { service: procTicks(service.pid), pg: pgBackendTicks(), t: Date.now() };
  if (!row?.closed) throw new Error(`session ${tick} did not close in time`);
  // Its log line follows the commit by a moment.
  for (const until = Date.now() + 5000; !state.closeSteps.has(tick) && Date.now() < until;)
    await sleep(50);
  const logged = state.closeSteps.get(tick);
  const ms = (d) => round((1000 * d) / CLK_TCK, 0);
  return {
    tick,
    close_ms: row.close_ms,
    paid_orders_filled_here: paid.n,
    open_positions: openPositions.n,
    open_trades: open.trades,
    open_user_trades: open.user_trades,
    window_ms: after.t - before.t,
    cpu_ms: {
      service: ms(after.service - before.service),
      postgres_backends: ms(pgTicksBetween(before.pg, after.pg)),
    },
    /** The close turn as the service timed it (with its commit), and its steps in ms. */
    turn_ms: logged?.ms ?? null,
    steps_ms: logged?.steps ?? null,
    statements: await pgss?.top(),
  };
}

async function main() {
  const started = new Date();
  const summary = {
    scenario: 'close',
    date: started.toISOString(),
    machine: {
      nproc: os.availableParallelism(),
      cpu: os.cpus()[0]?.model,
      node: process.version,
      loadavg_at_start: os.loadavg().map((x) => round(x, 2)),
    },
    config: {
      positions: POSITIONS,
      agents: AGENTS,
      market: MARKET,
      time_scale: SCALE,
      session_s: round(SESSION_S, 1),
      closes: CLOSES,
      connections: CONNECTIONS,
    },
  };
  try {
    summary.code = execFileSync('git', ['-C', ROOT, 'log', '-1', '--format=%h %s'], {
      encoding: 'utf8',
    }).trim();
  } catch {}
  await withDb('postgres', (c) => c.query(`create database "${DB}"`));
  state.dbCreated = true;
  const service = await startService();
  log(`service ready (pid ${service.pid})`);
  const agents = await registerMany(service.base, AGENTS, {
    tag: `bench close ${PID}`,
    model: 'bench/close.mjs',
    stop: () => state.interrupted,
  });
  const fx = await withDb(DB, (c) =>
    fundAgents(c, agents, { holders: 1, tag: `bench-close-${PID}`, cents: 10n ** 12n }),
  );
  log(`registered and funded ${fx.agents} agents`);
  const pgss = await statementStats();
  if (!pgss)
    log(
      'pg_stat_statements is not preloaded by this server: no statement breakdown (see bench/README.md "Issue 14")',
    );
  const placed = await placeOrders(service.base, agents, POSITIONS);
  summary.placing = placed;
  summary.closes = [];
  await withDb(DB, async (c) => {
    // From the session open now: the last one placed into (its close fills the last orders), or a
    // later one if that closed meanwhile.
    const first = (await getJson(`${service.base}/api/v1/markets/${MARKET}`)).current_tick;
    for (let k = 0; k < CLOSES; k++) {
      const r = await measureClose(c, service, first + k, pgss);
      log(
        `close of session ${r.tick}: ${r.close_ms} ms, ${r.paid_orders_filled_here} paid orders to fill, ${r.open_positions} open positions (${r.open_trades} open trades); CPU service ${r.cpu_ms.service} ms, PostgreSQL ${r.cpu_ms.postgres_backends} ms`,
      );
      summary.closes.push(r);
    }
    const problems = [];
    const filled = await one(
      c,
      `select count(*)::int as n from orders where market = $1 and tick = any($2::bigint[]) and status = 'filled' and position_id is not null`,
      [MARKET, placed.ticks],
    );
    if (filled.n !== placed.placed)
      problems.push(`${filled.n} of ${placed.placed} placed orders filled into positions`);
    const bad = await one(
      c,
      `select count(*)::int as n from account a where balance_cents <> coalesce((select sum(amount_cents) from ledger l where l.account_id = a.id), 0)`,
    );
    if (bad.n)
      problems.push(`LEDGER: ${bad.n} accounts whose balance differs from the sum of their ledger`);
    if (state.warnings.length)
      problems.push(
        `service logged ${state.warnings.length} warn/error lines (first: ${JSON.stringify(state.warnings[0]).slice(0, 300)})`,
      );
    summary.checks = {
      filled_positions: filled.n,
      accounts_balance_ne_ledger_sum: bad.n,
      problems,
    };
  });
  const withPositions = summary.closes.filter((r) => r.open_positions >= POSITIONS);
  summary.target = {
    close_ms_below: 1000,
    open_positions: POSITIONS,
    met: withPositions.length > 0 && withPositions.every((r) => r.close_ms < 1000),
  };
  const file = path.join(
    BENCH_DIR,
    'results',
    `${started
      .toISOString()
      .replace(/:/g, '-')
      .replace(/\.\d+Z$/, 'Z')}-close.json`,
  );
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
  console.log(
    JSON.stringify(
      {
        ...summary,
        closes: summary.closes.map(({ statements: _s, ...r }) => r),
        result_file: path.relative(ROOT, file),
      },
      null,
      2,
    ),
  );
  for (const r of summary.closes) {
    log(
      `session ${r.tick}: close ${r.close_ms} ms · fills ${r.paid_orders_filled_here} · open positions ${r.open_positions} · CPU service ${r.cpu_ms.service} ms, PostgreSQL ${r.cpu_ms.postgres_backends} ms`,
    );
    if (r.steps_ms)
      log(
        `  steps (ms): ${Object.entries(r.steps_ms)
          .map(([k, v]) => `${k} ${v}`)
          .join(' · ')}`,
      );
  }
  for (const p of summary.checks.problems) log(`problem: ${p}`);
}

async function cleanup() {
  if (state.service && state.service.exitCode === null)
    await stopChild(state.service, 'service', 20_000, log);
  if (state.dbCreated && opts['keep-db']) log(`database ${DB} kept (--keep-db): drop it when done`);
  else if (state.dbCreated)
    await withDb('postgres', (c) => c.query(`drop database if exists "${DB}" with (force)`)).catch(
      (e) => console.error(`drop ${DB}: ${e.message}`),
    );
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    state.interrupted = true;
    cleanup().finally(() => process.exit(130));
  });
}
let code = 0;
try {
  await main();
} catch (err) {
  console.error(`bench failed: ${err.stack ?? err}`);
  if (state.stderr.length) console.error(state.stderr.slice(-20).join('\n'));
  // The service's own warnings and errors say why (a close that failed and is retried, say).
  for (const w of state.warnings.slice(-10)) console.error(JSON.stringify(w).slice(0, 2000));
  code = 1;
} finally {
  await cleanup();
}
process.exit(code);
