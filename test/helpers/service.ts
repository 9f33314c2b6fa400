// Starts the real service (uWS front end, worker shards, supervisor) on a fresh database and
// speaks HTTP to it.
import pino from 'pino';
import tap from 'tap';
import { Agent } from 'undici';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.js';
import { startService, type RunningService, type StartOptions } from '../../src/service.js';
import { embeddedDataDir, freshDatabase } from './db.js';
import { timed } from './timing.js';
import { ROOT } from './root.js';
import { sourcePath } from '../loader/compile.mjs';

type T = { teardown: (fn: () => unknown) => void };

export type TestService = RunningService & {
  config: Config;
  /** Every log line the service wrote, parsed. */
  logs: Record<string, unknown>[];
  get: (path: string, init?: RequestInit) => Promise<Response>;
  getJson: (path: string) => Promise<{ status: number; body: any; headers: Headers }>;
};

/**
 * The files whose services run two shards: where a rule must hold across shards (money and orders
 * under concurrency, an actor on each side of a message, the shards shown to operators). Every other
 * service runs one: a shard is a worker thread that loads the ORM and the actors, CPU spent on every
 * start, and a run starts many services.
 */
const TWO_SHARD_FILES = [
  'orders-concurrency',
  'holder-money',
  'limits',
  'idempotency',
  'checkout',
  'carts',
  'console-money',
  'exchange',
  'events',
  'ops',
  'record-cache',
  'embedded',
].map((name) => `test/api/${name}.test.ts`);
// The file under test by its source name (tap runs its compiled copy, dist/test/...js).
const thisFile = process.argv[1] ? sourcePath(path.relative(ROOT, process.argv[1])) : '';
export const TEST_SHARDS = TWO_SHARD_FILES.includes(thisFile) ? '2' : '1';

// A loaded CI machine can take seconds to start a worker: tests wait longer than the default.
/** The settings every test service starts with unless told otherwise. */
export const BASE: Record<string, string> = {
  PORT: '0',
  SVC_SHARDS: TEST_SHARDS,
  LOG_LEVEL: 'info',
  SVC_ASK_TIMEOUT_MS: '60000',
  SVC_BACKFILL_DAYS: '0',
  // Tests drive one key at machine speed; the per-key limit is tested where a file sets it (login-throttle).
  SVC_RATE_LIMIT: '1000000',
};

/**
 * Config for a test: port 0, TEST_SHARDS shards, a fresh database on DATABASE_URL's server (under npm test,
 * the run's: CI's PostgreSQL or one embedded server) or, without DATABASE_URL, on the test
 * process's own embedded server; `env` overrides any setting. Several services may share it (several
 * processes on one database). The service's own embedded start in a DATA_DIR is embeddedTestConfig.
 */
export async function testConfig(t: T, env: Record<string, string> = {}): Promise<Config> {
  return loadConfig({ ...BASE, DATABASE_URL: await freshDatabase(t), ...env });
}

/** Config for services that share one database: testConfig's, named for what the test relies on. */
export const sharedDatabaseConfig = testConfig;

/** Config for a test of the embedded default whatever DATABASE_URL says: no DATABASE_URL, a temporary DATA_DIR. */
export async function embeddedTestConfig(t: T, env: Record<string, string> = {}): Promise<Config> {
  return loadConfig({ ...BASE, DATA_DIR: await embeddedDataDir(t), ...env });
}

/**
 * The instant of the run's recorded day: test/run.mjs records one day of history
 * (SVC_BACKFILL_DAYS=1) at this fixed instant, once, into a template database (SVC_TEST_DAY_TEMPLATE).
 * Without it (a file run by tap alone) each service records its own day, at the same instant.
 */
export const RECORDED_DAY_MS =
  Number(process.env.SVC_TEST_DAY_MS) || Date.UTC(2026, 10, 26, 12, 7, 30, 250);

/**
 * A service on a day of recorded history (SVC_BACKFILL_DAYS=1) whose clock stands at
 * RECORDED_DAY_MS unless `opts.realMs` moves it: a copy of the run's recorded day, so the day is
 * computed once per run instead of once per file. Resolves once the history is loaded.
 */
export async function startRecordedService(
  t: T,
  env: Record<string, string> = {},
  opts: StartOptions = {},
): Promise<TestService> {
  const cfg = loadConfig({
    ...BASE,
    SVC_BACKFILL_DAYS: '1',
    ...env,
    DATABASE_URL: await freshDatabase(t, process.env.SVC_TEST_DAY_TEMPLATE),
  });
  const svc = await startTestService(t, {}, { realMs: () => RECORDED_DAY_MS, ...opts }, cfg);
  await timed('history load', () => svc.services.supervisor.backfilled());
  return svc;
}

const shared = new Map<string, Promise<unknown>>();

/**
 * The service named `key` of this test process, started by `start` on first use and stopped when
 * the process's tests end: one start for the subtests, or the test modules of one process
 * (runModules), that can share it, instead of one each.
 */
export function sharedService<S>(key: string, start: (t: T) => Promise<S>): Promise<S> {
  let svc = shared.get(key) as Promise<S> | undefined;
  if (!svc) shared.set(key, (svc = start(tap)));
  return svc;
}

/**
 * A shared service (sharedService) on the recorded day, its clock at RECORDED_DAY_MS
 * (startRecordedService), one per `env`: for the modules that only read the record.
 */
export const sharedRecordedService = (env: Record<string, string> = {}) =>
  sharedService(`recorded ${JSON.stringify(env)}`, (t) => startRecordedService(t, env));

/**
 * Runs the test modules `names` (of the folder `folder`, a URL) in this process, one after
 * another: each queues its top-level subtests on this file's root as it is evaluated.
 */
export async function runModules(folder: URL, names: string[]): Promise<void> {
  for (const name of names) await import(new URL(`${name}.js`, folder).href);
}

export async function startTestService(
  t: T,
  env: Record<string, string> = {},
  opts: StartOptions = {},
  config?: Config,
): Promise<TestService> {
  const cfg = config ?? (await testConfig(t, env));
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      cb();
    },
  });
  const svc = await timed(
    cfg.databaseUrl ? 'service start' : 'service start (own embedded server)',
    async () => {
      const started = await startService(cfg, {
        log: pino({ level: cfg.logLevel }, sink),
        ...opts,
      });
      t.teardown(() => started.stop());
      await started.ready;
      return started;
    },
  );
  // The test's own connection pool, destroyed after the service stops: the server keeps its
  // keep-alive connections when it stops listening, and fetch's pooled sockets to it would hold
  // the test process open for minutes (undici's 300 s timeouts).
  const agent = new Agent({ keepAliveTimeout: 1000 });
  t.teardown(() => agent.destroy());
  const get = (p: string, init?: RequestInit) =>
    fetch(`${svc.url}${p}`, { ...init, dispatcher: agent } as RequestInit);
  return Object.assign(svc, {
    config: cfg,
    logs,
    get,
    getJson: async (p: string) => {
      const res = await get(p);
      return { status: res.status, body: await res.json(), headers: res.headers };
    },
  });
}
