// Runs a bench on the embedded PostgreSQL server: starts the server the service's
// embedded default runs (dist/orm/embedded.js: the same binaries, settings and port handling) in a
// temporary DATA_DIR, runs the given bench command with `--pg <that server's admin URL>` appended,
// then stops the server and removes the folder. The bench creates its databases there as it does on
// the machine's PostgreSQL, so both figures come from one script.
//
//   npm run build && node bench/embedded-pg.mjs node bench/orders.mjs [--rounds 2 ...]
//   npm run build && node bench/embedded-pg.mjs node bench/close.mjs [--positions 10000 ...]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const command = process.argv.slice(2);
if (command.length === 0) {
  console.error(
    'usage: node bench/embedded-pg.mjs <bench command...>   (e.g. node bench/orders.mjs --rounds 2)',
  );
  process.exit(2);
}
const { startEmbedded } = await import(path.join(ROOT, 'dist', 'orm', 'embedded.js'));

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-embedded-pg-'));
fs.chmodSync(dataDir, 0o711); // reachable by the server's user when this runs as root
// Room for the bench's service (2 shards), its peer's pool, pgbench's connections and the fixtures.
const db = await startEmbedded(dataDir, { maxConnections: 200 });
const admin = new URL(db.url);
admin.pathname = '/';
console.error(`embedded PostgreSQL on ${db.host}:${db.port} (${db.clusterDir})`);

const child = spawn(command[0], [...command.slice(1), '--pg', admin.href], {
  cwd: ROOT,
  stdio: 'inherit',
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
await db.stop();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
