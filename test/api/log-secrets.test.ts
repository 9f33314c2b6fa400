// Secrets never reach the logs: database errors inside turns (worker threads) and on the
// front end are provoked with statements whose parameters carry an API key's sha256, a recall
// phrase, a holder's scrypt hash and a session token's hash. The built service runs as a child
// process so the workers' log lines (written straight to fd 1) are captured with the main thread's.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { freshDatabase } from '../helpers/db.js';
import { freePort } from '../helpers/web.js';
import { eventually } from '../helpers/wait.js';
import { productionEnv } from '../helpers/child-env.js';

const MAIN = path.resolve('dist/src/main.js');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const newKey = () =>
  randomBytes(60)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .padEnd(80, 'x')
    .slice(0, 80);

t.test(
  'database errors in turns and read tasks log the statement and cause, no values',
  async (t) => {
    const url = await freshDatabase(t);
    const port = await freePort();
    const env = productionEnv(
      {
        DATABASE_URL: url,
        PORT: String(port),
        HOST: '127.0.0.1',
        SVC_SHARDS: '1',
        LOG_LEVEL: 'info',
        SVC_BACKFILL_DAYS: '0',
      },
      ['BASE_URL'],
    );
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const exited = new Promise((r) => child.once('exit', r));
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });

    const base = `http://127.0.0.1:${port}`;
    const call = async (
      method: string,
      p: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const res = await fetch(`${base}${p}`, {
        method,
        redirect: 'manual',
        headers: {
          accept: 'application/json',
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, text: await res.text(), cookie: res.headers.get('set-cookie') };
    };
    await eventually(async () => {
      if (child.exitCode !== null)
        throw new Error(`service exited before it was ready:\n${output}`);
      return (await call('GET', '/readyz').catch(() => ({ status: 0 }))).status === 200;
    }, 'the service to be ready');

    // A holder with a live session, before the schema is broken.
    const ada = await call('POST', '/register', {
      email: 'ada@example.com',
      password: 'correct horse 1',
    });
    t.equal(ada.status, 200);
    const token = /holder_session=([^;]+)/.exec(ada.cookie ?? '')![1];
    const asAda = { cookie: `holder_session=${token}` };
    // A key the holder makes on the console is in its answer only.
    const made = await call('POST', '/console/agents', { name: 'Console-made' }, asAda);
    t.equal(made.status, 200);
    const madeKey = JSON.parse(made.text).key as string;

    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      `alter table holder add constraint t_refuse check (display_name <> 'refuse me')`,
    );
    await admin.query(
      `alter table agent add constraint t_refuse check (coalesce(purpose, '') <> 'refuse me')`,
    );

    const key = newKey();
    const phrase = `secret phrase ${randomBytes(6).toString('hex')}`;
    const holderTurn = await call('POST', '/register', {
      email: 'eve@example.com',
      password: 'correct horse 2',
      display_name: 'refuse me',
    });
    const agentTurn = await call('POST', '/api/v1/agents/register', {
      token: key,
      name: 'Leaky',
      recall_phrase: phrase,
      purpose: 'refuse me',
    });
    t.equal(holderTurn.status, 500, 'the holder turn failed in the database');
    t.equal(agentTurn.status, 500, 'the agent turn failed in the database');
    const consoleTurn = await call(
      'POST',
      '/console/agents',
      { name: 'Leaky too', purpose: 'refuse me' },
      asAda,
    );
    t.equal(consoleTurn.status, 500, "so did the console's agent turn (its key was never shown)");

    // The session look-up (a read task of the holder's folder, with the token's hash) fails too.
    await admin.query('alter table holder_session rename to holder_session_gone');
    const page = await call('GET', '/console', undefined, { cookie: `holder_session=${token}` });
    t.equal(page.status, 500);
    await admin.query('alter table holder_session_gone rename to holder_session');
    await admin.end();
    // A worker's log line reaches the process's stdout through the main thread: wait for it before
    // stopping, so the check below reads what was logged, not what was flushed in time.
    await eventually(() => output.includes('"read task failed"'), "the read task's log line");

    child.kill('SIGTERM');
    await exited;
    const logs = output
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const errorsOf = (msg: string) => logs.filter((l) => l.msg === msg).map((l) => l.err);
    t.match(
      errorsOf('turn failed'),
      [
        { code: '23514', statement: 'insert into holder', constraint: 't_refuse' },
        { code: '23514', statement: 'insert into agent', constraint: 't_refuse' },
        { code: '23514', statement: 'insert into agent', constraint: 't_refuse' },
      ],
      'each failed turn names its statement and cause',
    );
    t.match(
      errorsOf('read task failed'),
      [{ code: '42P01', statement: 'select from holder_session' }],
      'so does the read task',
    );

    for (const [what, secret] of [
      ['API key', key],
      ['API key sha256', sha256(key)],
      ['recall phrase', phrase],
      ['scrypt hash', 'scrypt$'],
      ['console-made key', madeKey],
      ['console-made key sha256', sha256(madeKey)],
      ['session token', token],
      ['session token sha256', sha256(token)],
      ['password', 'correct horse'],
    ]) {
      t.notOk(output.includes(secret), `no ${what} in the logs`);
    }
    // The key of the failed console turn was never seen by the test: no key-shaped or hash-shaped value is logged at all.
    t.notMatch(
      output,
      /(^|[^A-Za-z0-9])[A-Za-z0-9]{80}([^A-Za-z0-9]|$)/,
      'no 80-character key in the logs',
    );
    t.notMatch(output, /(^|[^0-9a-f])[0-9a-f]{64}([^0-9a-f]|$)/, 'no sha256 in the logs');
  },
);
