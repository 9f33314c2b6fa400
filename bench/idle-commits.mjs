// What an idle node costs its database: the built service on a database of its own, left alone once
// its history is loaded (no request, no stream, no webhook), while PostgreSQL counts the commits of
// that database (pg_stat_database.xact_commit) over a window. Every market keeps closing meanwhile
// (m15 every 15 minutes at time scale 1): a window that holds a close counts it too. The database
// is vacuumed before the window, so autovacuum's own transactions are not counted.
//
//   node bench/idle-commits.mjs [--seconds 60] [--days 1] [--pg postgres://postgres@127.0.0.1:5432/]
//
// Target: at most 1 commit a second. Writes bench/results/<iso-date>-idle.json (read by /ops/bench)
// and prints its figures.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sleep } from './lib/process.mjs';
import { checkLocalPg, pgAdmin, startWithHistory } from './lib/service.mjs';
import { runBench, runFacts, writeResult } from './lib/results.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(BENCH_DIR, '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');
const TARGET_PER_SECOND = 1;
const STATS_SETTLE_MS = 15_000;

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    days: { type: 'string', default: '1' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
  },
});
const SECONDS = Number(opts.seconds);
const DAYS = Number(opts.days);
if (!(SECONDS >= 5 && SECONDS <= 3600) || !(Number.isInteger(DAYS) && DAYS >= 0 && DAYS <= 30)) {
  console.error('usage: node bench/idle-commits.mjs [--seconds 5..3600] [--days 0..30] [--pg URL]');
  process.exit(2);
}
checkLocalPg(opts.pg);

const log = (msg) => console.error(`[idle ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const state = { service: undefined, db: `bench_idle_${process.pid}` };
let cleaned;
const cleanup = () =>
  (cleaned ??= (async () => {
    await state.service?.stop();
    await pgAdmin(opts.pg, `DROP DATABASE IF EXISTS "${state.db}" WITH (FORCE)`).catch((err) =>
      console.error(err.message),
    );
    log(`dropped database ${state.db}`);
  })());
process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));

const commits = async () =>
  Number(
    (
      await pgAdmin(
        opts.pg,
        `select xact_commit::float8 as n from pg_stat_database where datname = '${state.db}'`,
      )
    ).rows[0].n,
  );

async function vacuum() {
  const { default: pg } = await import('pg');
  const url = new URL(opts.pg);
  url.pathname = `/${state.db}`;
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query('vacuum analyze');
  } finally {
    await client.end().catch(() => {});
  }
}

async function main() {
  const started = new Date();
  const where = { main: MAIN, pgBase: opts.pg, dbName: state.db };
  const svc = (state.service = await startWithHistory({ ...where, days: DAYS, log }));
  // Autovacuum would visit the tables the history just filled, and its transactions count in
  // xact_commit too: vacuumed and analysed now, before the window, it has nothing left to do in it.
  await vacuum();
  // The coverage reads above are the last requests. PostgreSQL's backends report their commits
  // to pg_stat_database within 10 s of going idle: past that, the count holds every commit before.
  await sleep(STATS_SETTLE_MS);
  const before = await commits();
  log(`history loaded; counting commits for ${SECONDS} s`);
  await sleep(SECONDS * 1000);
  const after = await commits();
  // The two counting queries run on the `postgres` database: they are not in this count.
  const perSecond = (after - before) / SECONDS;
  const result = {
    ...runFacts('an idle node: commits a second', started),
    seconds: SECONDS,
    commits: after - before,
    commits_per_second: round(perSecond),
    target_per_second: TARGET_PER_SECOND,
    met: perSecond <= TARGET_PER_SECOND,
    service_warnings: svc.warnings.count,
  };
  const file = writeResult('idle', started, result);
  log(`wrote ${path.relative(process.cwd(), file)}`);
  console.log(
    `${result.commits} commits in ${SECONDS} s: ${result.commits_per_second}/s (target ≤ ${TARGET_PER_SECOND}/s: ${result.met ? 'met' : 'not met'})`,
  );
}

runBench(main, cleanup);
