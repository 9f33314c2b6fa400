// Child processes and bounded waits shared by the bench drivers: every wait has a limit, every
// process started is stopped (SIGTERM, then SIGKILL after a grace period).
import net from 'node:net';
import readline from 'node:readline';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Races `p` against a timer; rejects with `what` when the timer wins. */
export function within(ms, p, what) {
  let t;
  return Promise.race([
    p,
    new Promise(
      (_, rej) => (t = setTimeout(() => rej(new Error(`${what}: no answer within ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(t));
}

/** A TCP port free on `host` right now. */
export function freePort(host) {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Waits (bounded) for a child process to exit; returns true when it did. */
export function waitExit(child, ms) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** SIGTERM, then SIGKILL if `child` is still there after `graceMs`. */
export async function stopChild(child, name, graceMs, log = console.error) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (await waitExit(child, graceMs)) return;
  log(`${name} did not stop within ${graceMs} ms of SIGTERM: SIGKILL`);
  child.kill('SIGKILL');
  await waitExit(child, 5000);
}

/**
 * Follows a service's pino JSON lines on stdout: every record at warn (40) and above, and any line
 * that is not JSON (counted as a warning), goes to `onWarning`; every record to `onRecord`; stderr
 * lines to `onStderr`.
 */
export function followServiceLog(child, { onWarning, onRecord = () => {}, onStderr = () => {} }) {
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let rec;
    try {
      rec = JSON.parse(line);
    } catch {
      rec = { level: 40, msg: line };
    }
    if ((rec.level ?? 40) >= 40) onWarning(rec);
    onRecord(rec);
  });
  readline.createInterface({ input: child.stderr }).on('line', (line) => onStderr(line));
}

/**
 * The service's Node.js flags (src/node-flags.ts, as built): every bench starts the service as `npm
 * start` does, whichever build `--service` names.
 */
export const { SERVICE_NODE_FLAGS } = await import(
  new URL('../../dist/src/node-flags.js', import.meta.url).href
);
