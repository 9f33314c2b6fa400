// Memory with many agents: the service's resident memory with --agents registered agents
// of which --active poll their account, and the record's cache filled by reads of the record.
//
//   npm run build && node bench/agents-memory.mjs [--agents 100000] [--active 10000] [--rounds 3]
//        [--concurrency 32] [--days 3] [--pg postgres://postgres@127.0.0.1:5432/]
//
// One run: a fresh database bench_memory_<time>_<pid>; the built service with SVC_BACKFILL_DAYS=--days
// (default settings otherwise: the key cache of src/http/authenticators/agent-key.ts holds at most 100 000 keys, the
// record's cache SVC_RECORD_CACHE_MB); waits for the history; registers the agents over HTTP
// (POST /api/v1/agents/register, random 80-character keys); then --rounds times every active agent
// GETs /api/v1/account with its key; then the record routes are read over the whole recorded
// range (filling the record's cache). The service's RSS (VmRSS, and the peak VmHWM, of the whole
// process: main thread and worker threads) is sampled after each phase, the peak reset once the
// history is loaded (clear_refs): target < 600 MB with the agents registered and active. Writes
// bench/results/<date>-memory.json. Everything is stopped and the database dropped at the end.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  checkLocalPg,
  getJson,
  pgAdmin,
  resetPeak,
  rssOf,
  startWithHistory,
} from './lib/service.mjs';
import { runBench, runFacts, writeResult } from './lib/results.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');

const { values: opts } = parseArgs({
  options: {
    agents: { type: 'string', default: '100000' },
    active: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '32' },
    days: { type: 'string', default: '3' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
  },
});
const AGENTS = Number(opts.agents);
const ACTIVE = Math.min(Number(opts.active), AGENTS);
const ROUNDS = Number(opts.rounds);
const CONCURRENCY = Number(opts.concurrency);
const DAYS = Number(opts.days);
checkLocalPg(opts.pg);

const log = (msg) => console.error(`[memory ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 80 characters of [A-Za-z0-9] from the CSPRNG (rejection sampling: no modulo bias). */
function newKey() {
  let out = '';
  while (out.length < 80)
    for (const b of randomBytes(96)) if (b < 248 && out.length < 80) out += ALPHABET[b % 62];
  return out;
}

/** Runs `job(i)` for i in 0..n-1, `CONCURRENCY` at a time; logs progress every 10 %. */
async function pool(n, what, job) {
  let next = 0;
  let done = 0;
  const t0 = Date.now();
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await job(i);
      if (++done % Math.max(1, Math.floor(n / 10)) === 0)
        log(`${what}: ${done}/${n} (${round(done / ((Date.now() - t0) / 1000), 0)}/s)`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, worker));
  return (Date.now() - t0) / 1000;
}

const state = { service: undefined, db: undefined };
let cleaned;
const cleanup = () =>
  (cleaned ??= (async () => {
    await state.service?.stop();
    if (state.db)
      await pgAdmin(opts.pg, `DROP DATABASE IF EXISTS "${state.db}" WITH (FORCE)`).catch((err) =>
        console.error(err.message),
      );
    log(`dropped database ${state.db}`);
  })());
for (const sig of ['SIGINT', 'SIGTERM'])
  process.once(sig, () => cleanup().finally(() => process.exit(130)));

async function main() {
  const started = new Date();
  state.db = `bench_memory_${started.toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  const svc = (state.service = await startWithHistory({
    main: MAIN,
    pgBase: opts.pg,
    dbName: state.db,
    days: DAYS,
    log,
    historyWaitS: 900,
  }));
  const samples = { history_loaded: rssOf(svc.pid) };
  // The agents' phases get a peak of their own: the history's first load is a start-up peak.
  const peakReset = resetPeak(svc.pid);
  log(
    `history of ${DAYS} days loaded; RSS ${samples.history_loaded.rss_mb} MB (peak ${samples.history_loaded.peak_mb} MB)${peakReset ? '; peak reset' : ''}`,
  );

  const keys = new Array(AGENTS);
  const regS = await pool(AGENTS, 'registered', async (i) => {
    const key = newKey();
    const r = await fetch(`${svc.base}/api/v1/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        token: key,
        name: `memory agent ${i + 1}`,
        recall_phrase: `memory ${process.pid} ${i + 1}`,
        agent: { model: 'bench/agents-memory.mjs' },
        purpose: 'memory benchmark',
      }),
      signal: AbortSignal.timeout(60_000),
    });
    await r.arrayBuffer();
    if (r.status !== 201) throw new Error(`register answered ${r.status}`);
    keys[i] = key;
  });
  samples.registered = rssOf(svc.pid);
  log(`${AGENTS} agents registered in ${round(regS)} s; RSS ${samples.registered.rss_mb} MB`);

  let activeS = 0;
  for (let round_ = 0; round_ < ROUNDS; round_++) {
    activeS += await pool(ACTIVE, `active round ${round_ + 1}`, async (i) => {
      const r = await fetch(`${svc.base}/api/v1/account`, {
        headers: { authorization: `Bearer ${keys[i]}` },
        signal: AbortSignal.timeout(60_000),
      });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`GET /account answered ${r.status}`);
    });
  }
  samples.active = rssOf(svc.pid);
  log(
    `${ACTIVE} active agents x ${ROUNDS} rounds in ${round(activeS)} s; RSS ${samples.active.rss_mb} MB`,
  );

  // The record's cache: every settled session of each market read once in each default series.
  const spans = { history: 20, tape: 500, stats: 400, trades: 200, 'dataset.csv': 400 };
  let reads = 0;
  for (const m of ['m15', 'm45', 'h2', 'h10']) {
    const cov = await getJson(`${svc.base}/api/v1/markets/${m}/coverage`);
    if (cov.first_recorded_tick === null) continue;
    for (const [route, span] of Object.entries(spans)) {
      for (let to = cov.last_settled_tick; to >= cov.first_recorded_tick; to -= span) {
        const r = await fetch(
          `${svc.base}/api/v1/markets/${m}/${route}?from_tick=${Math.max(cov.first_recorded_tick, to - span + 1)}&to_tick=${to}`,
        );
        await r.arrayBuffer();
        reads++;
      }
    }
  }
  samples.record_read = rssOf(svc.pid);
  const metrics = await (await fetch(`${svc.base}/metrics`)).text();
  const heap = /^nodejs_heap_size_used_bytes\s+(\S+)$/m.exec(metrics);
  log(`${reads} record reads; RSS ${samples.record_read.rss_mb} MB`);

  const result = {
    ...runFacts('memory with many agents', started),
    agents: AGENTS,
    active: ACTIVE,
    rounds: ROUNDS,
    days: DAYS,
    register_s: round(regS),
    active_s: round(activeS),
    record_reads: reads,
    rss: samples,
    main_heap_used_mb: heap ? round(Number(heap[1]) / 2 ** 20) : undefined,
    // The target: RSS, and its peak, once the agents are registered and active (after the history's load).
    peak_reset_after_history: peakReset,
    target_mb: 600,
    met:
      Math.max(
        ...['registered', 'active', 'record_read'].map((k) =>
          peakReset ? samples[k].peak_mb : samples[k].rss_mb,
        ),
      ) < 600,
    service_warnings: svc.warnings.count,
  };
  const file = writeResult('memory', started, result);
  console.log(JSON.stringify({ rss: samples, met: result.met }, null, 2));
  log(`wrote ${path.relative(process.cwd(), file)}`);
}

runBench(main, cleanup);
