#!/usr/bin/env node
// `npm test`: runs tap once, every file once, on database servers kept for the whole run.
// - DATABASE_URL set: that server (CI's PostgreSQL), but for the files of ON_EMBEDDED (money,
//   orders, carts, the close), which run on one embedded PostgreSQL server (orm/embedded.ts, the
//   service's own default) started here for the run: one run covers both servers, each file once.
//   Unset: every file on the embedded server.
// - The schema is migrated once, into a template database; every test's fresh database is a copy
//   of it (CREATE DATABASE ... TEMPLATE), instead of each service start migrating its own.
// - One day of history is recorded once, at the run's first instant, into a second template: the
//   files that read the record start on a copy of it (test/helpers/service.ts startRecordedService).
// - Each test process records where its time went (test/loader/register.mjs); the slowest files
//   are printed at the end, and appended to SVC_TEST_TIMINGS_FILE when set (.ci/run sums passes).
// - The tests' TypeScript is compiled here into dist/test (test/loader/compile.mjs): the test
//   processes run it as they run the service, without module hooks.
// - The slowest files start first (SLOWEST_FIRST, test/loader/order.mjs), the others follow in name order.
// Arguments are tap's (files, --grep...). Needs dist/ (npm test builds it first).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbedded } from '../dist/orm/embedded.js';
import { migrate, openOrm } from '../dist/orm/database.js';
import { loadConfig } from '../dist/src/config.js';
import { startService } from '../dist/src/service.js';
import { readRecords, summary } from './timings.mjs';
import { compileTests, compiledPath } from './loader/compile.mjs';

// The files that start first, slowest first; the others follow in name order
// (test/loader/order.mjs). With 2 jobs, a long file started last runs alone at the end of the run
// (test/web/ sorts last): started first, it overlaps the short ones.
const SLOWEST_FIRST = [
  'test/web/site.test.ts', // a crawl of every page, then Chromium on 30 pages
  'test/api/embedded.test.ts', // child processes with their own servers (little CPU of its own)
  'test/api/calibration.test.ts', // CPU-bound: 30 days of 4 markets
  'test/api/crash.test.ts', // child services killed and restarted
  'test/api/one-service.test.ts', // eleven modules on one service
  'test/api/lifecycle.test.ts',
  'test/api/ops.test.ts',
  'test/api/competitions.test.ts',
  'test/api/actor-runtime.test.ts',
  'test/api/events-processes.test.ts',
  'test/api/ws-processes.test.ts',
  'test/api/holder-money.test.ts',
  'test/api/cluster.test.ts', // HAProxy, two nodes and a replica, each a process of its own
  'test/api/cli.test.ts',
  'test/web/ops.test.ts',
];
// The files run on the embedded default's server when DATABASE_URL names another
// (test/loader/register.mjs moves them there).
const ON_EMBEDDED = [
  'trading',
  'order-batch',
  'orders-concurrency',
  'idempotency',
  'ledger',
  'holder-money',
  'checkout',
  'carts',
  'close-retry',
].map((name) => `test/api/${name}.test.ts`);
// How far the test processes' date is moved from the machine's ('0': not moved; see dateMoved).
const DATE_MOVE = process.env.SVC_TEST_DATE_MOVE ?? '+400d';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const started = performance.now();
const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-run-'));
fs.chmodSync(temp, 0o711); // the embedded server's user (root runs it as postgres) must reach it
const timingDir = path.join(temp, 'timings');
fs.mkdirSync(timingDir);

// tap's Test class is built with the plugins package.json names ("tap".plugin: its TypeScript plugin
// off, test/loader/compile.mjs instead). tap rebuilds it when they differ, but only after it has
// started the run's files with the old plugins' loaders (a fresh `npm ci` ran the whole first pass
// under ts-node): it is built here first, once per install (the stamp is in node_modules).
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const tapVersion = JSON.parse(
  fs.readFileSync(path.join(root, 'node_modules/tap/package.json'), 'utf8'),
).version;
const stamp = path.join(root, 'node_modules/.cache/svc-tap-plugins.json');
const wanted = JSON.stringify({ tap: tapVersion, plugin: pkg.tap?.plugin ?? [] });
if ((fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8') : '') !== wanted) {
  const built = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/tap/dist/esm/run.mjs'), 'build'],
    { cwd: root, stdio: 'inherit' },
  );
  if (built.status !== 0) {
    console.error('tap build failed: the tests cannot run with the configured plugins');
    process.exit(1);
  }
  fs.mkdirSync(path.dirname(stamp), { recursive: true });
  fs.writeFileSync(stamp, wanted);
}

const tapFiles = tapArguments(process.argv.slice(2));
// The embedded server: the only one without DATABASE_URL, else the ON_EMBEDDED files' when the run has any.
const movedFiles = process.env.DATABASE_URL
  ? ON_EMBEDDED.filter((f) => tapFiles.includes(compiledPath(f)))
  : [];
let embedded;
if (!process.env.DATABASE_URL || movedFiles.length)
  embedded = await startEmbedded(temp, { maxConnections: 400 });
const adminUrl = process.env.DATABASE_URL ?? embedded.url;
const passName = process.env.DATABASE_URL ? 'postgresql' : 'embedded';
// The instant the recorded day ends (RECORDED_DAY_MS in the tests): fixed, so the recorded menus,
// trades and tape are the same whatever the date of the run (ARCHITECTURE rule 7). Mid-session of m15.
const dayMs = Date.UTC(2026, 10, 26, 12, 7, 30, 250);
const template = `svc_tpl_${process.pid}_${Date.now().toString(36)}`;
const dayTemplate = `${template}_day`;
const urlOf = (db, server = adminUrl) =>
  Object.assign(new URL(server), { pathname: `/${db}` }).href;

/**
 * The arguments for tap: a test file named by its source (test/x.test.ts) becomes its compiled file
 * (dist/test/x.test.js), a folder its compiled test files; flags and the rest pass as they are.
 * A flag's value given as its own argument (`--grep x`) must be written `--grep=x`.
 */
function tapArguments(args) {
  // No file named: every test file, listed here (tap's own search skips git-ignored dist/).
  if (args.every((arg) => arg.startsWith('-'))) args = [...args, 'test'];
  return args.flatMap((arg) => {
    if (arg.startsWith('-') || !fs.existsSync(arg)) return [arg];
    const rel = path.relative(root, path.resolve(arg));
    if (!fs.statSync(arg).isDirectory()) return [rel.endsWith('.ts') ? compiledPath(rel) : arg];
    return fs
      .readdirSync(arg, { recursive: true })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => compiledPath(path.join(rel, f)))
      .sort();
  });
}

/**
 * The tap command run with the machine's date moved (libfaketime's `faketime`), the database server
 * left on the real date: a service instant taken from the database instead of the injected Clock
 * (ARCHITECTURE rule 7) is then DATE_MOVE off, and some test sees it. The monotonic clock (timers,
 * bounds of waits) is left alone; Chromium runs on the real date (test/helpers/browser.ts).
 */
function dateMoved(command, env) {
  if (DATE_MOVE === '0') return command;
  env.FAKETIME_DONT_FAKE_MONOTONIC = '1';
  env.SVC_TEST_DATE_MOVE = DATE_MOVE;
  return ['faketime', '-f', DATE_MOVE, ...command];
}

async function admin(sql, server = adminUrl) {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates `template` on `server`, migrated: the database every test database there copies. */
async function migratedTemplate(server) {
  await admin(`create database ${template}`, server);
  const orm = await openOrm(urlOf(template, server), 1);
  await migrate(orm);
  await orm.close(); // a template must have no connection while it is copied
}

async function cleanUp() {
  // The embedded server goes with its databases; the other server keeps none of this run's.
  if (process.env.DATABASE_URL)
    for (const db of [dayTemplate, template])
      await admin(`drop database if exists ${db} with (force)`).catch((err) =>
        console.error(`could not drop ${db}: ${err.message}`),
      );
  await embedded
    ?.stop()
    .catch((err) => console.error(`the embedded server did not stop: ${err.message}`));
  fs.rmSync(temp, { recursive: true, force: true });
}

let code = 1;
try {
  await compileTests();
  await migratedTemplate(adminUrl);
  if (movedFiles.length) await migratedTemplate(embedded.url);
  // The recorded day: the service itself records it, on a copy of the migrated template, at dayMs.
  await admin(`create database ${dayTemplate} template ${template}`);
  const recorder = await startService(
    loadConfig({
      PORT: '0',
      SVC_SHARDS: '2',
      LOG_LEVEL: 'silent',
      SVC_BACKFILL_DAYS: '1',
      DATABASE_URL: urlOf(dayTemplate),
    }),
    { realMs: () => dayMs },
  );
  try {
    await recorder.ready;
    await recorder.services.supervisor.backfilled();
  } finally {
    await recorder.stop();
  }

  const env = {
    ...process.env,
    SVC_TEST_FIRST: JSON.stringify(SLOWEST_FIRST.map(compiledPath)),
    DATABASE_URL: adminUrl,
    SVC_TEST_TEMPLATE: template,
    SVC_TEST_DAY_TEMPLATE: dayTemplate,
    SVC_TEST_DAY_MS: String(dayMs),
    SVC_TEST_TIMINGS: timingDir,
    SVC_TEST_ON_EMBEDDED: JSON.stringify(movedFiles),
    SVC_TEST_EMBEDDED_URL: movedFiles.length ? embedded.url : '',
  };
  const tapCommand = [
    process.execPath,
    '--import',
    path.join(root, 'test/loader/order.mjs'),
    path.join(root, 'node_modules/tap/dist/esm/run.mjs'),
    ...tapFiles,
  ];
  const [command, ...args] = dateMoved(tapCommand, env);
  const tap = spawn(command, args, { env, stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => tap.kill(signal));
  code = await new Promise((resolve) => tap.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));

  const records = readRecords(timingDir, passName);
  records.push({ pass: passName, run: true, wallMs: performance.now() - started }); // wall-clock: reported, not asserted
  if (process.env.SVC_TEST_TIMINGS_FILE)
    fs.appendFileSync(
      process.env.SVC_TEST_TIMINGS_FILE,
      records.map((r) => `${JSON.stringify(r)}\n`).join(''),
    );
  console.log(summary(records, 10));
} catch (err) {
  console.error(`test run could not start: ${err.stack ?? err}`);
} finally {
  await cleanUp();
}
process.exit(code);
