// The embedded default: without DATABASE_URL the service runs a real PostgreSQL server
// from npm under DATA_DIR. Its data survives a restart and a kill -9 (the server the killed process
// left running is stopped at the next start), one DATA_DIR serves one process, Ctrl-C stops the
// service before its database, and what the server cannot use is said clearly. These tests run on
// the embedded default whatever DATABASE_URL says.
import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { MARKETS } from '../../src/engine/index.js';
import { startEmbedded, EmbeddedDatabaseError } from '../../orm/embedded.js';
import { connectionBudget } from '../../orm/connections.js';
import { embeddedTestConfig, startTestService, type TestService } from '../helpers/service.js';
import { embeddedDataDir, leftServer } from '../helpers/db.js';
import { registerAgent, send, type TestAgent } from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';
import { T0 } from '../helpers/clock-rig.js';
import { SERVICE_MAIN, startChild, freePort } from '../helpers/child-service.js';
import { eventually } from '../helpers/wait.js';
import { fileTimeout } from '../helpers/file-timeout.js';
import { productionEnv } from '../helpers/child-env.js';

fileTimeout(300); // child processes with their own servers

// The subtests below share nothing (each has its own DATA_DIR, server, port and child processes),
// and most of their time is waiting: initdb's fsyncs, servers and child services starting. They
// run 3 at a time.
t.jobs = 3;

const MARKET = 'm15';
const INTERVAL = MARKETS[MARKET].interval_seconds;
const isRoot = process.getuid?.() === 0;

/** What an agent can see of its money and trades: compared before and after a restart. */
async function books(agent: TestAgent) {
  const [orders, positions, account] = await Promise.all([
    agent.get('/api/v1/orders'),
    agent.get('/api/v1/positions'),
    agent.get('/api/v1/account?limit=500'),
  ]);
  return { orders: orders.body, positions: positions.body, account: account.body };
}

t.test(
  'stopping and starting again on one DATA_DIR keeps every balance, order and position',
  async (t) => {
    const config = await embeddedTestConfig(t);
    let nowMs = (T0 + 100) * 1000;
    const start = () => startTestService(t, {}, { realMs: () => nowMs }, config);
    const closeOne = async (svc: TestService) => {
      nowMs =
        svc.services.clock.closesAt(svc.services.supervisor.openTick(MARKET)!, INTERVAL) * 1000 +
        1000;
      await svc.services.supervisor.runDue();
    };

    const first = await start();
    const agent = await registerAgent(first);
    const holder = await registerHolder(first);
    const menu = (await send(first, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    for (const [i, deal] of menu.deals.slice(0, 3).entries()) {
      const o = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty: 1 });
      t.equal(o.status, 201, `order ${i} placed`);
      if (i < 2) t.equal((await holder.pay(o.body.purchase_url)).status, 200, `order ${i} paid`);
    }
    await closeOne(first);
    await closeOne(first);
    const before = await books(agent);
    t.equal(before.positions.positions.length, 2, 'two paid orders filled into positions');
    t.same(
      before.orders.orders.map((o: any) => o.status).sort(),
      ['expired', 'filled', 'filled'],
      'two filled, the unpaid one expired',
    );
    t.ok(before.account.ledger.length >= 2, 'the payments are in the ledger');
    await first.stop();
    t.equal(
      leftServer(path.join(config.dataDir, 'postgres')),
      undefined,
      'stopping the service stopped its server',
    );

    const second = await start();
    const after = await books({
      ...agent,
      get: (p: string) =>
        send(second, 'GET', p, undefined, { authorization: `Bearer ${agent.key}` }),
    } as TestAgent);
    t.same(after, before, 'orders, positions, balance and ledger read the same after the restart');
    await closeOne(second);
    const later = (
      await send(second, 'GET', '/api/v1/positions', undefined, {
        authorization: `Bearer ${agent.key}`,
      })
    ).body.positions;
    t.same(
      later.map((p: any) => p.ticks_done),
      before.positions.positions.map((p: any) => p.ticks_done + 1),
      'the positions sell on at the next close',
    );
  },
);

/** Env for a child service on the embedded default in `dataDir` (DATABASE_URL emptied: unset for the config). */
const childEnv = (dataDir: string) => ({
  DATABASE_URL: '',
  DATA_DIR: dataDir,
  SVC_SHARDS: '2',
  SVC_BACKFILL_DAYS: '0',
  SVC_TIME_SCALE: '0.001',
  LOG_LEVEL: 'info',
});

t.test(
  'a kill -9 leaves the server running; the next start stops it and goes on with the data',
  async (t) => {
    const dataDir = await embeddedDataDir(t);
    const cluster = path.join(dataDir, 'postgres');
    const first = await startChild(t, 'first', childEnv(dataDir));
    const token = (await first.send('POST', '/api/v1/agents/token')).body.token;
    const reg = await first.send('POST', '/api/v1/agents/register', {
      token,
      name: 'survivor',
      recall_phrase: 'blue heron',
    });
    t.equal(reg.status, 201);
    const orphan = leftServer(cluster);
    t.type(orphan, 'number', 'the server runs');
    t.equal(await first.kill9(), 'SIGKILL');
    t.equal(leftServer(cluster), orphan, 'the killed service left its server running');

    const second = await startChild(t, 'second', childEnv(dataDir));
    const now = leftServer(cluster);
    t.type(now, 'number');
    t.not(now, orphan, 'a new server serves');
    t.match(
      second.tail(2000),
      /stopped the server \(pid \d+\) a previous service process left running/,
    );
    const me = await second.send('GET', '/api/v1/agents/me', undefined, {
      authorization: `Bearer ${token}`,
    });
    t.equal(me.status, 200, 'the agent registered before the kill is known');
    t.equal(me.body.profile.name, 'survivor');
    await second.stop();
    t.equal(leftServer(cluster), undefined, 'a clean stop stops the server');
    t.notOk(fs.existsSync(path.join(dataDir, 'service.pid')), 'and releases DATA_DIR');
  },
);

t.test(
  'two processes on one DATA_DIR: the second refuses with a clear message and exit 2, the first serves on',
  async (t) => {
    const dataDir = await embeddedDataDir(t);
    const first = await startChild(t, 'first', childEnv(dataDir));
    const second = await runMain(childEnv(dataDir));
    t.equal(second.code, 2, second.out);
    t.match(
      second.out,
      new RegExp(
        `configuration error: DATA_DIR ${dataDir} is in use by another service process \\(pid ${first.proc.pid}\\)`,
      ),
    );
    t.match(second.out, /DATABASE_URL/, 'and says how several processes share a database');
    t.equal((await first.send('GET', '/readyz')).status, 200, 'the first one still serves');
  },
);

t.test(
  'Ctrl-C (SIGINT to the whole process group) drains the service before its database stops',
  async (t) => {
    const dataDir = await embeddedDataDir(t);
    const port = await freePort();
    const child = spawn(process.execPath, [SERVICE_MAIN], {
      env: productionEnv({ ...childEnv(dataDir), PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // its own process group, as a terminal gives it
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    t.teardown(() => void child.kill('SIGKILL'));
    const ready = await eventually(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`exited (${child.exitCode}) before it was ready:\n${out}`);
        return fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      'the service to be ready',
      250,
    );
    t.ok(ready, 'ready');
    const server = leftServer(path.join(dataDir, 'postgres'));
    t.type(server, 'number');
    process.kill(-child.pid!, 'SIGINT');
    const code = await exited; // no deadline: a drain that never ends hangs until tap's time-out
    t.equal(code, 0, 'exit 0');
    t.match(out, /"msg":"stopped"/, 'a clean stop logged');
    t.notMatch(
      out,
      /"level":50|terminating connection due to administrator command/,
      'no error: the database outlived the drain',
    );
    t.equal(leftServer(path.join(dataDir, 'postgres')), undefined, 'the server stopped with it');
  },
);

/** Runs the built service with `env` until it exits (bounded). */
async function runMain(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const port = await freePort();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SERVICE_MAIN], {
      env: productionEnv({ PORT: String(port), ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000); // a guard that kills a hung child (its exit code then fails the test)
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

t.test(
  'a start that fails after the server started (the HTTP port is taken) leaves no server running',
  async (t) => {
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    t.teardown(() => blocker.close());
    const dataDir = await embeddedDataDir(t);
    const r = await runMain({
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String((blocker.address() as net.AddressInfo).port),
    });
    t.not(r.code, 0, `the service refuses to run (exit ${r.code})`);
    t.match(r.out, /embedded PostgreSQL started/, 'after its database had started');
    t.equal(leftServer(path.join(dataDir, 'postgres')), undefined, 'which it stopped');
    t.notOk(fs.existsSync(path.join(dataDir, 'service.pid')), 'and DATA_DIR is released');
  },
);

t.test('what the server cannot use is said clearly', async (t) => {
  await t.test('an occupied port', async (t) => {
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    t.teardown(() => blocker.close());
    const port = (blocker.address() as net.AddressInfo).port;
    const dir = await embeddedDataDir(t);
    await t.rejects(startEmbedded(dir, { port }), {
      constructor: EmbeddedDatabaseError,
      message: new RegExp(`could not listen on 127\\.0\\.0\\.1:${port} \\(the port is in use\\)`),
    });
    t.notOk(fs.existsSync(path.join(dir, 'service.pid')), 'DATA_DIR released');
  });

  await t.test('a DATA_DIR that is a file', async (t) => {
    const dir = await embeddedDataDir(t);
    const file = path.join(dir, 'not-a-dir');
    fs.writeFileSync(file, 'x');
    const r = await runMain({ DATABASE_URL: '', DATA_DIR: file });
    t.equal(r.code, 2, r.out);
    t.match(r.out, new RegExp(`configuration error: DATA_DIR ${file} cannot be used`));
  });

  await t.test(
    'as root, a cluster in a DATA_DIR its user can no longer reach',
    { skip: !isRoot && 'only a root process runs the server as another user' },
    async (t) => {
      const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-closed-'));
      t.teardown(() => fs.rmSync(parent, { recursive: true, force: true }));
      fs.chmodSync(parent, 0o711);
      const dataDir = path.join(parent, 'data');
      await (await startEmbedded(dataDir)).stop();
      fs.chmodSync(parent, 0o700); // closed afterwards, as a home directory
      const r = await runMain({ DATABASE_URL: '', DATA_DIR: dataDir });
      t.equal(r.code, 2, r.out);
      t.match(
        r.out,
        /configuration error: the embedded PostgreSQL server runs as the system user "postgres" .* cannot reach .*: a parent directory is closed to it/,
      );
      t.match(r.out, /Set DATA_DIR to a directory it can reach/, 'and says how to fix it');
      t.ok(
        fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION')),
        'the cluster is left as it was',
      );
    },
  );

  await t.test(
    'as root, no system user to run the server as',
    { skip: !isRoot && 'only a root process needs another user' },
    async (t) => {
      const dir = await embeddedDataDir(t);
      await t.rejects(startEmbedded(dir, { serverUser: 'no-such-user-svc' }), {
        message: /there is no system user "no-such-user-svc" .*\(useradd --system/,
      });
    },
  );
});

t.test(
  "as root, a fresh DATA_DIR the server's user cannot reach: the cluster lives in a reachable place, found again at the next start",
  { skip: !isRoot && 'only a root process runs the server as another user' },
  async (t) => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-home-')); // mode 700, as /root
    const fallbackRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-fallback-'));
    fs.chmodSync(fallbackRoot, 0o755);
    t.teardown(() => {
      fs.rmSync(home, { recursive: true, force: true });
      fs.rmSync(fallbackRoot, { recursive: true, force: true });
    });
    const dataDir = path.join(home, 'clone', 'data');
    const first = await startEmbedded(dataDir, { fallbackRoot });
    t.ok(
      first.clusterDir.startsWith(`${fallbackRoot}/data-`),
      `the cluster is in ${first.clusterDir}`,
    );
    t.match(
      first.notes.join('\n'),
      /is closed to the server's user "postgres", so its cluster lives in .* set DATA_DIR to a directory that user can reach/,
    );
    t.equal(
      fs.readFileSync(path.join(dataDir, 'postgres.location'), 'utf8').trim(),
      first.clusterDir,
      'recorded in DATA_DIR',
    );
    const write = new pg.Client({ connectionString: first.url });
    await write.connect();
    await write.query("create table kept (v text); insert into kept values ('still here')");
    await write.end();
    await first.stop();

    const second = await startEmbedded(dataDir, {
      fallbackRoot: path.join(fallbackRoot, 'not-this-one'),
    });
    t.teardown(() => second.stop());
    t.equal(second.clusterDir, first.clusterDir, 'the next start finds the same cluster');
    const read = new pg.Client({ connectionString: second.url });
    await read.connect();
    t.same((await read.query('select v from kept')).rows, [{ v: 'still here' }], 'with its data');
    await read.end();
  },
);

t.test('service.pid: a dead holder is taken over, a live one refuses', async (t) => {
  const dir = await embeddedDataDir(t);
  // A process that has exited: its pid names nobody now.
  const gone = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => gone.once('exit', r));
  fs.writeFileSync(path.join(dir, 'service.pid'), `${gone.pid}\n`);
  const db = await startEmbedded(dir, { maxConnections: connectionBudget(16).total + 10 });
  t.teardown(() => db.stop());
  t.equal(
    fs.readFileSync(path.join(dir, 'service.pid'), 'utf8').trim(),
    String(process.pid),
    'taken over',
  );
  await t.rejects(
    startEmbedded(dir),
    { message: /is in use by another service process/ },
    'a second start in one process refuses too',
  );

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const { rows } = await client.query(
    "select current_setting('max_connections')::int as n, version() as v",
  );
  await client.end();
  t.ok(rows[0].n >= connectionBudget(16).total, `max_connections ${rows[0].n} fits 16 shards`);
  t.match(rows[0].v, /^PostgreSQL 15\./, "the same major version as the tests' PostgreSQL");
  t.match(fs.statSync(db.passwordFile).mode & 0o777, 0o600, 'the password file is private');
});
