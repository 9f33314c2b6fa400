// Start-up smoke test: `npm start` on the embedded database (no DATABASE_URL), /readyz, a read,
// SIGTERM, exit 0. Bounded in time; talks only to 127.0.0.1.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-smoke-'));
fs.chmodSync(dataDir, 0o711); // reachable by the server's user when CI runs as root
const env = { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info' };
delete env.DATABASE_URL;
// Its own process group: a stop signals the group, as systemd or a terminal's Ctrl-C does (npm
// itself does not forward SIGTERM to the script it runs).
const child = spawn('npm', ['start'], {
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
  detached: true,
});
let stdout = '';
child.stdout.on('data', (d) => (stdout += d));
const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
const base = `http://127.0.0.1:${port}`;
const fail = (msg) => {
  console.error(`smoke: FAIL ${msg}`);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {}
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(1);
};

let ready = false;
const deadline = Date.now() + 120_000;
while (!ready && Date.now() < deadline) {
  ready = await fetch(`${base}/readyz`).then(
    (r) => r.status === 200,
    () => false,
  );
  if (!ready) await new Promise((r) => setTimeout(r, 500));
}
if (!ready) fail('/readyz did not answer 200 within 120 s');
console.log('smoke: /readyz 200');
const markets = await fetch(`${base}/api/v1/markets`).then(
  (r) => r.json(),
  () => null,
);
if (!markets || markets.markets?.length !== 4)
  fail(`GET /api/v1/markets: ${JSON.stringify(markets)}`);
console.log(`smoke: ${markets.markets.map((m) => `${m.id}@${m.current_tick}`).join(' ')}`);
process.kill(-child.pid, 'SIGTERM');
const code = await Promise.race([
  exited,
  new Promise((r) => setTimeout(() => r('timeout'), 30_000)),
]);
if (code === 'timeout') fail('still running 30 s after SIGTERM');
for (let i = 0; i < 40 && !/"msg":"stopped"/.test(stdout); i++)
  await new Promise((r) => setTimeout(r, 250));
if (!/"msg":"stopped"/.test(stdout))
  fail(`no clean stop logged:\n${stdout.split('\n').slice(-10).join('\n')}`);
const closed = await fetch(`${base}/healthz`).then(
  () => false,
  () => true,
);
if (!closed) fail('still accepting after SIGTERM');
console.log('smoke: stopped cleanly on SIGTERM');
// The embedded PostgreSQL server stopped with it (its lock file goes when it shuts down).
if (fs.existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')))
  fail('the embedded PostgreSQL server is still running after the service stopped');
console.log('smoke: the embedded PostgreSQL server stopped with it');
fs.rmSync(dataDir, { recursive: true, force: true });
