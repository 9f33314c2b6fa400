// The built service (dist/src/main.js) as a child process of the test, so it can be killed with
// SIGKILL and started again on the same database: every start gets a free port, its own HTTP pool
// and a bounded wait for GET /readyz; whatever is still running at teardown is killed (SIGKILL).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Agent, request } from 'undici';
import { eventually } from './wait.js';
import { productionEnv } from './child-env.js';
import { ROOT } from './root.js';

type T = { teardown: (fn: () => unknown) => void };

export const SERVICE_MAIN = path.join(ROOT, 'dist', 'src', 'main.js');

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export type Reply = {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
};

export type ChildService = {
  name: string;
  proc: ChildProcess;
  base: string;
  /** One HTTP exchange; rejects when the connection fails (refused, reset, closed by a kill). */
  send: (
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<Reply>;
  /** SIGKILL, then waits (bounded) for the exit; resolves with the signal the process died of. */
  kill9: () => Promise<NodeJS.Signals | null>;
  /** SIGTERM (a clean shutdown); resolves when the process has exited. */
  stop: () => Promise<void>;
  /** The last lines the process wrote (stdout and stderr). */
  tail: (n?: number) => string;
  /** Log lines at level error or above. */
  errors: () => string[];
};

/** Resolves true once `proc` has exited; false if `ms` (a guard for escalating a hung process's kill) passes first. */
function exited(proc: ChildProcess, ms?: number): Promise<boolean> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = ms === undefined ? undefined : setTimeout(() => resolve(false), ms); // a guard that escalates a hung child's kill
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts `node dist/src/main.js` with `env` (DATABASE_URL at least) on a free port and waits for
 * /readyz = 200, as long as the process runs (no deadline: tap's time-out caps a hang). Throws with
 * the process's output when it exits first.
 */
export async function startChild(
  t: T,
  name: string,
  env: Record<string, string>,
): Promise<ChildService> {
  if (!fs.existsSync(SERVICE_MAIN))
    throw new Error(`${SERVICE_MAIN} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const childEnv = productionEnv(
    { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    ['BASE_URL', 'DATA_DIR'],
  );
  const proc = spawn(process.execPath, [SERVICE_MAIN], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    for (const line of String(chunk).split('\n')) if (line) lines.push(line);
    if (lines.length > 2000) lines.splice(0, lines.length - 2000);
  };
  proc.stdout!.on('data', collect);
  proc.stderr!.on('data', collect);
  const dispatcher = new Agent({
    keepAliveTimeout: 1000,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      // A clean shutdown takes as long as it takes (tests check what it leaves behind); a hung one
      // is capped by tap's time-out, and the teardown below kills it.
      proc.kill('SIGTERM');
      await exited(proc);
    }
    await dispatcher.destroy().catch(() => {});
  };
  // At teardown a still running process is killed outright: its database is dropped next.
  t.teardown(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited(proc, 5000);
    }
    await dispatcher.destroy().catch(() => {});
  });
  const base = `http://127.0.0.1:${port}`;
  const send = async (
    method: string,
    p: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const res = await request(`${base}${p}`, {
      method: method as 'GET',
      dispatcher,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: res.statusCode, body: parsed, headers: res.headers };
  };
  const tail = (n = 40) => lines.slice(-n).join('\n');
  await eventually(
    async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(
          `${name} exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${tail()}`,
        );
      }
      return (
        (await send('GET', '/readyz').then(
          (r) => r.status,
          () => 0,
        )) === 200
      );
    },
    `${name} to be ready`,
    50,
  );
  return {
    name,
    proc,
    base,
    send,
    kill9: async () => {
      proc.kill('SIGKILL');
      await exited(proc); // SIGKILL cannot be ignored: no guard
      return proc.signalCode;
    },
    stop,
    tail,
    errors: () =>
      lines.filter(
        (l) => /"level":(50|60)/.test(l) || /^\s*(Error|RangeError|TypeError)\b/.test(l),
      ),
  };
}
