// Scenario 2: how long the first start takes to record the history (SVC_BACKFILL_DAYS of all
// four markets), measured over HTTP only: start the built service on a fresh PostgreSQL database
// (or --embedded), then poll GET /api/v1/markets/{id}/coverage until every market's history_load
// is complete. Target: 30 days in under 60 s on PostgreSQL on this machine.
//
//   npm run build && node bench/backfill.mjs [--days 30] [--embedded] [--timeout 600]
//
// Bounded in time; only 127.0.0.1; the database (or data folder) is removed at the end.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: o } = parseArgs({
  options: {
    days: { type: 'string', default: '30' },
    embedded: { type: 'boolean', default: false },
    timeout: { type: 'string', default: '600' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
  },
});
const MARKETS = ['m15', 'm45', 'h2', 'h10'];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});

const env = {
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  SVC_BACKFILL_DAYS: o.days,
};
let cleanup = () => {};
if (o.embedded) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-backfill-'));
  fs.chmodSync(dir, 0o711); // reachable by the embedded server's user when run as root
  env.DATA_DIR = dir;
  delete env.DATABASE_URL;
  cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
} else {
  const name = `bench_backfill_${Date.now()}`;
  const admin = new URL(o.pg);
  if (!['127.0.0.1', 'localhost'].includes(admin.hostname))
    throw new Error('--pg must point at this machine');
  const psql = (sql) =>
    execFileSync('psql', [
      '-h',
      admin.hostname,
      '-p',
      admin.port || '5432',
      '-U',
      admin.username || 'postgres',
      '-d',
      'postgres',
      '-qc',
      sql,
    ]);
  psql(`create database ${name}`);
  env.DATABASE_URL = new URL(`/${name}`, admin).href;
  cleanup = () => psql(`drop database if exists ${name} with (force)`);
}

const t0 = Date.now();
const { SERVICE_NODE_FLAGS } = await import('./lib/process.mjs');
const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, 'dist/src/main.js'], {
  cwd: ROOT,
  env,
  stdio: ['ignore', 'ignore', 'inherit'],
});
const stop = async () => {
  child.kill('SIGTERM');
  await Promise.race([
    new Promise((r) => child.on('exit', r)),
    sleep(20_000).then(() => child.kill('SIGKILL')),
  ]);
  cleanup();
};
process.on('SIGINT', () => stop().then(() => process.exit(130)));

try {
  const deadline = t0 + Number(o.timeout) * 1000;
  let readyAt = null;
  let done = null;
  while (Date.now() < deadline && !done) {
    await sleep(250);
    if (!readyAt) {
      if (
        await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        readyAt = Date.now();
      continue;
    }
    const cov = await Promise.all(
      MARKETS.map((m) =>
        fetch(`http://127.0.0.1:${port}/api/v1/markets/${m}/coverage`).then((r) => r.json()),
      ),
    );
    if (cov.every((c) => c.history_load?.complete)) done = { at: Date.now(), cov };
  }
  if (!done) throw new Error(`history not loaded within ${o.timeout} s`);
  const sessions = done.cov.reduce((s, c) => s + c.history_load.sessions_loaded, 0);
  const trades = done.cov.reduce((s, c) => s + c.trade_count, 0);
  const result = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
    database: o.embedded ? 'embedded PostgreSQL' : 'PostgreSQL',
    days: Number(o.days),
    ready_s: (readyAt - t0) / 1000,
    recorded_s: (done.at - readyAt) / 1000,
    sessions,
    trades,
  };
  console.log(JSON.stringify(result, null, 2));
  fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(
    path.join(ROOT, 'bench', 'results', `${result.date.replace(/[:.]/g, '-')}-backfill.json`),
    JSON.stringify(result, null, 2),
  );
} finally {
  await stop();
}
