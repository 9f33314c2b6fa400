// A supervisor that cannot start makes the process exit non-zero after bounded retries, so a
// process manager restarts it, instead of answering /readyz 503 for ever. The built
// service runs as a child with SVC_ASK_TIMEOUT_MS at its floor (10 ms); a trigger makes every
// market's first turn take 200 ms, so each start attempt outlasts the ask timeout however warm the
// workers are.
import t from 'tap';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { openOrm, migrate } from '../../orm/database.js';
import { startEmbedded } from '../../orm/embedded.js';
import { embeddedDataDir, freshDatabase, usingPostgres } from '../helpers/db.js';
import { productionEnv } from '../helpers/child-env.js';
import { ROOT } from '../helpers/root.js';

const MAIN = path.join(ROOT, 'dist', 'src', 'main.js');

type Run = { code: number | null; lines: Record<string, any>[]; stderr: string; readyz: number[] };

/** Runs the service with `env` until it exits (a child still running after `ms` is killed as hung), probing /readyz once it listens. */
function run(env: Record<string, string>, ms = 120_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], {
      env: productionEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Run = { code: null, lines: [], stderr: '', readyz: [] };
    let buf = '';
    const probe = (url: string) =>
      fetch(`${url}/readyz`).then(
        (r) => out.readyz.push(r.status),
        () => {},
      );
    child.stdout.on('data', (c) => {
      buf += c;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const l = JSON.parse(line);
          out.lines.push(l);
          if (l.msg === 'listening') void probe(l.url);
        } catch {
          out.stderr += line + '\n';
        }
      }
    });
    child.stderr.on('data', (c) => (out.stderr += c));
    // A guard only: a child that has not exited after `ms` (minutes; the runs take about a second)
    // hangs, and is killed so the test can report it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `still running after ${ms} ms:\n${out.stderr}\n${JSON.stringify(out.lines.slice(-5))}`,
        ),
      );
    }, ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      out.code = code;
      resolve(out);
    });
  });
}

/** A migrated database whose market start turns each take 200 ms. */
async function slowStartDatabase(tt: Tap.Test): Promise<Record<string, string>> {
  const dir = usingPostgres ? undefined : await embeddedDataDir(tt);
  const emb = dir ? await startEmbedded(dir) : undefined;
  const url = emb?.url ?? (await freshDatabase(tt));
  const orm = await openOrm(url, 1);
  try {
    await migrate(orm);
    const q = (sql: string) => orm.em.getConnection().execute(sql);
    await q(
      `create function slow_start() returns trigger language plpgsql as $$ begin perform pg_sleep(0.2); return new; end $$`,
    );
    await q(
      `create trigger slow_start before insert on history_load for each row execute function slow_start()`,
    );
  } finally {
    await orm.close();
    await emb?.stop();
  }
  return dir ? { DATA_DIR: dir } : { DATABASE_URL: url };
}

t.test(
  'a supervisor that cannot start retries with backoff, then the process exits 1',
  async (tt) => {
    const db = await slowStartDatabase(tt);
    const r = await run({
      ...db,
      PORT: '0',
      HOST: '127.0.0.1',
      SVC_SHARDS: '1',
      SVC_BACKFILL_DAYS: '0',
      LOG_LEVEL: 'info',
      SVC_ASK_TIMEOUT_MS: '10',
      SVC_START_ATTEMPTS: '3',
      SVC_START_RETRY_MS: '200',
    });
    tt.equal(r.code, 1, 'exits non-zero');
    const starts = r.lines.filter((l) => /^supervisor failed to start/.test(l.msg));
    tt.same(
      starts.map((l) => l.attempt),
      [1, 2, 3],
      'three attempts',
    );
    tt.match(
      starts[0].msg,
      /^supervisor failed to start: market:\w+ did not answer within 10 ms.*; retrying$/,
    );
    tt.ok(starts[0].retryInMs >= 100 && starts[1].retryInMs >= 200, 'with growing delays');
    tt.ok(starts[1].time - starts[0].time >= starts[0].retryInMs, 'waited between attempts');
    tt.match(starts[2].msg, /^supervisor failed to start after 3 attempts/);
    const fatal = r.lines.find((l) => l.level === 60);
    tt.match(fatal, {
      msg: 'supervisor could not start; exiting so a process manager restarts the service',
      attempts: 3,
    });
    tt.ok(
      r.readyz.length > 0 && r.readyz.every((s) => s === 503),
      'not ready meanwhile: /readyz 503',
    );
  },
);

t.test('a bad start-retry setting is a configuration error (exit 2)', async (tt) => {
  const r = await run({ SVC_START_ATTEMPTS: '0', DATA_DIR: '/nonexistent' }, 30_000);
  tt.equal(r.code, 2);
  tt.match(
    r.stderr,
    /configuration error: SVC_START_ATTEMPTS must be an integer in 1\.\.100, got "0"/,
  );
});
