// The compiled WebSocket subscribers (bench/subscribers/main.go) for bench/ws.mjs: built with
// Debian's Go and its packaged Gorilla WebSocket, started, driven over stdin/stdout, and read back
// in the shape ws.mjs's own Node subscribers have ({ i, got: [arrival ms, id, type, ...], frames,
// closed }).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const SOURCE = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'subscribers',
  'main.go',
);
/** Where Debian's golang-github-gorilla-websocket-dev puts the library's source. */
const GOPATH = '/usr/share/gocode';
const INSTALL = 'apt-get install -y golang-go golang-github-gorilla-websocket-dev';

/** Builds the subscribers into a temporary directory; a clear error when Go or the library is missing. */
export function buildGoSubscribers(dir) {
  const bin = path.join(dir, 'subscribers');
  try {
    execFileSync('go', ['build', '-o', bin, SOURCE], {
      env: { ...process.env, GO111MODULE: 'off', GOPATH, GOCACHE: path.join(dir, 'gocache') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    throw new Error(
      `building bench/subscribers/main.go failed (${INSTALL}; or --subscriber-client node): ${err.stderr?.toString() || err.message}`,
      { cause: err },
    );
  }
  return bin;
}

/**
 * Starts the subscribers for these keys; every command answers one JSON line. `bin`: a build from
 * buildGoSubscribers (built now when absent); `name` keeps a second set's files apart in `dir`.
 */
export function startGoSubscribers({
  url,
  keys,
  concurrency,
  dir,
  bin = buildGoSubscribers(dir),
  name = 'subscribers',
}) {
  const keysFile = path.join(dir, `${name}-keys.txt`);
  fs.writeFileSync(keysFile, keys.join('\n') + '\n', { mode: 0o600 });
  const child = spawn(bin, ['-url', url, '-keys', keysFile, '-concurrency', String(concurrency)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const answers = [];
  const waiting = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    const a = JSON.parse(line);
    const w = waiting.findIndex((x) => x.match(a));
    if (w >= 0) waiting.splice(w, 1)[0].resolve(a);
    else answers.push(a);
  });
  const ask = (command, match, ms) =>
    new Promise((resolve, reject) => {
      const early = answers.findIndex(match);
      if (early >= 0) return resolve(answers.splice(early, 1)[0]);
      const timer = setTimeout(
        () => reject(new Error(`subscribers: no answer to "${command}" within ${ms / 1000} s`)),
        ms,
      );
      waiting.push({
        match,
        resolve: (a) => (
          clearTimeout(timer),
          a.error ? reject(new Error(`subscribers: ${a.error}`)) : resolve(a)
        ),
      });
      child.stdin.write(`${command}\n`);
    });
  return {
    pid: child.pid,
    child,
    bin,
    open: (ms) => ask('open', (a) => 'open' in a, ms),
    subscribe: (ms) => ask('subscribe', (a) => 'subscribed' in a, ms),
    wait: (type, ms) => ask(`wait ${type}`, (a) => a.has === type, ms),
    /** Every held subscriber's arrivals, frames and close. */
    async report(ms) {
      const file = path.join(dir, `${name}-report.jsonl`);
      await ask(`report ${file}`, (a) => 'reported' in a, ms);
      return fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const r = JSON.parse(l);
          return {
            i: r.i,
            got: r.got,
            frames: r.frames ?? undefined,
            closed: r.closed ? { code: 0, reason: r.closed } : undefined,
          };
        });
    },
    stop() {
      if (child.exitCode === null) {
        child.stdin.write('quit\n');
        setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 5000).unref();
      }
    },
  };
}

/** A scratch directory for the build, the keys and the report (removed by the caller). */
export const scratchDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ws-'));
