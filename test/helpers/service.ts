// Starts the real service (uWS front end, worker shards, supervisor) on a fresh database and
// speaks HTTP to it.
import pino from 'pino';
import { Agent } from 'undici';
import { Writable } from 'node:stream';
import { loadConfig, type Config } from '../../src/config.js';
import { startService, type RunningService, type StartOptions } from '../../src/service.js';
import { embeddedDataDir, freshDatabase, usingPostgres } from './db.js';

type T = { teardown: (fn: () => unknown) => void };


export type TestService = RunningService & {
  config: Config;
  /** Every log line the service wrote, parsed. */
  logs: Record<string, unknown>[];
  get: (path: string, init?: RequestInit) => Promise<Response>;
  getJson: (path: string) => Promise<{ status: number; body: any; headers: Headers }>;
};

/** Config for a test: port 0, 2 shards, a fresh database; `env` overrides any setting. */
export async function testConfig(t: T, env: Record<string, string> = {}): Promise<Config> {
  // A loaded CI machine can take seconds to start a worker: tests wait longer than the default.
  const base: Record<string, string> = { PORT: '0', SVC_SHARDS: '2', LOG_LEVEL: 'info', SVC_ASK_TIMEOUT_MS: '60000', SVC_BACKFILL_DAYS: '0' };
  if (usingPostgres) base.DATABASE_URL = await freshDatabase(t);
  else base.DATA_DIR = await embeddedDataDir(t);
  return loadConfig({ ...base, ...env });
}

export async function startTestService(t: T, env: Record<string, string> = {}, opts: StartOptions = {}, config?: Config): Promise<TestService> {
  const cfg = config ?? (await testConfig(t, env));
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n')) if (line) logs.push(JSON.parse(line));
      cb();
    },
  });
  const svc = await startService(cfg, { log: pino({ level: cfg.logLevel }, sink), ...opts });
  t.teardown(() => svc.stop());
  await svc.ready;
  // The test's own connection pool, destroyed after the service stops: the server keeps its
  // keep-alive connections when it stops listening, and fetch's pooled sockets to it would hold
  // the test process open for minutes (undici's 300 s timeouts).
  const agent = new Agent({ keepAliveTimeout: 1000 });
  t.teardown(() => agent.destroy());
  const get = (p: string, init?: RequestInit) => fetch(`${svc.url}${p}`, { ...init, dispatcher: agent } as RequestInit);
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
