// The built service as a child process for the bench drivers, on a PostgreSQL database of their
// own: create and drop the database, start the service and wait (bounded) for /readyz, collect its
// warn/error lines, stop it (SIGTERM, SIGKILL after a grace period). Only 127.0.0.1 is targeted.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  followServiceLog,
  freePort,
  SERVICE_NODE_FLAGS,
  sleep,
  stopChild,
  within,
} from './process.mjs';

export const HOST = '127.0.0.1';

/** Runs one statement on the server's `postgres` database (CREATE / DROP DATABASE). */
export async function pgAdmin(pgBase, sql) {
  const { default: pg } = await import('pg');
  const url = new URL(pgBase);
  url.pathname = '/postgres';
  const client = new pg.Client({
    connectionString: url.toString(),
    connectionTimeoutMillis: 5000,
    statement_timeout: 60_000,
  });
  await within(10_000, client.connect(), 'connect to PostgreSQL');
  try {
    return await within(65_000, client.query(sql), sql);
  } finally {
    await client.end().catch(() => {});
  }
}

export function checkLocalPg(pgBase) {
  const u = new URL(pgBase);
  if (!['127.0.0.1', 'localhost'].includes(u.hostname))
    throw new Error(`--pg must point at 127.0.0.1, got ${u.hostname}`);
}

/**
 * Starts `main` (dist/src/main.js) on database `dbName` with `env` added, waits for GET /readyz = 200.
 * Returns { base, pid, child, warnings, stop }.
 */
export async function startService({
  main,
  pgBase,
  dbName,
  env: extra = {},
  nodeArgs = [],
  readyTimeoutS = 300,
  log,
}) {
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  const port = await freePort(HOST);
  const env = {
    ...process.env,
    PORT: String(port),
    HOST,
    LOG_LEVEL: 'warn',
    BASE_URL: `http://${HOST}:${port}`,
    ...extra,
  };
  delete env.DATA_DIR;
  if (!('SVC_TIME_SCALE' in extra)) delete env.SVC_TIME_SCALE; // the caller's own scale only, never the shell's
  const url = new URL(pgBase);
  url.pathname = `/${dbName}`;
  env.DATABASE_URL = url.toString();
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, main], {
    cwd: path.resolve(path.dirname(main), '..', '..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const warnings = { count: 0, first: [], stderr: [] };
  followServiceLog(child, {
    onWarning: (rec) => {
      warnings.count++;
      if (warnings.first.length < 20) warnings.first.push(rec);
    },
    onStderr: (line) => warnings.stderr.length < 200 && warnings.stderr.push(line),
  });
  const stop = () => stopChild(child, 'service', 30_000, log);
  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + readyTimeoutS * 1000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `service exited before ready (code ${child.exitCode}, signal ${child.signalCode}):\n${warnings.stderr.slice(-20).join('\n')}`,
      );
    }
    try {
      const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
      await r.arrayBuffer();
      if (r.status === 200) return { base, pid: child.pid, child, warnings, stop };
      last = `HTTP ${r.status}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    await sleep(250);
  }
  await stop();
  throw new Error(`service not ready within ${readyTimeoutS} s (last /readyz: ${last})`);
}

export async function getJson(url) {
  const r = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Resident memory of a process from /proc: current and peak, in MB. */
export function rssOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const n = (k) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return {
    rss_mb: Math.round(n('VmRSS') / 1024),
    peak_mb: Math.round(n('VmHWM') / 1024),
    threads: n('Threads'),
  };
}

/** Resets the process's peak RSS (VmHWM) to its current RSS (Linux: clear_refs 5); false if not allowed. */
export function resetPeak(pid) {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts the built service on a new database `dbName` with `days` of history and waits (at most
 * `historyWaitS`, 300 s unless given) until every market's history is loaded. Returns what startService returns.
 */
export async function startWithHistory({ main, pgBase, dbName, days, log, historyWaitS = 300 }) {
  await pgAdmin(pgBase, `CREATE DATABASE "${dbName}"`);
  const svc = await startService({
    main,
    pgBase,
    dbName,
    env: { SVC_BACKFILL_DAYS: String(days) },
    log,
  });
  for (const t0 = Date.now(); ; await sleep(500)) {
    const markets = ['m15', 'm45', 'h2', 'h10'];
    const cov = await Promise.all(
      markets.map((m) => getJson(`${svc.base}/api/v1/markets/${m}/coverage`)),
    );
    if (cov.every((c) => c.history_load?.complete)) return svc;
    if (Date.now() - t0 > historyWaitS * 1000) {
      await svc.stop();
      throw new Error(`history not loaded within ${historyWaitS} s`);
    }
  }
}
