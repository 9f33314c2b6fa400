// The service's life: data and clock survive a restart, time scaling closes sessions, readiness
// waits for open sessions, bad settings stop start-up, and SIGTERM/SIGINT exit 0.
import t from 'tap';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { startTestService, testConfig } from '../helpers/service.js';
import { eventually } from '../helpers/wait.js';
import { startClockedService } from '../helpers/clocked.js';
import { opsRoutes } from '../../src/ops/routes/probes.js';
import type { Services } from '../../src/http/services.js';
import { fileTimeout } from '../helpers/file-timeout.js';
import { productionEnv } from '../helpers/child-env.js';

fileTimeout(250); // 3 services and `node dist/src/main.js` children

t.test('data, schema and the clock anchor survive a restart', async (t) => {
  const config = await testConfig(t);
  const first = await startTestService(t, {}, {}, config);
  const manifest1 = (await first.getJson('/api/v1/manifest')).body;
  const anchor1 = first.services.clock.anchor;
  const open1 = first.services.supervisor.openTick('m15');
  await first.stop();
  const second = await startTestService(t, {}, {}, config);
  const manifest2 = (await second.getJson('/api/v1/manifest')).body;
  t.same(manifest2.schema, manifest1.schema, 'no migration ran again');
  t.same(second.services.clock.anchor, anchor1, 'same clock anchor');
  t.ok(second.services.supervisor.openTick('m15')! >= open1!, 'sessions continue');
  const rows = await second.orm.em.fork().execute('select count(*)::int as n from market_session');
  t.ok(rows[0].n >= 4, 'sessions of the first run are still there');
});

t.test('SVC_TIME_SCALE=900 closes an m15 session every second', async (t) => {
  // Real time is the test's (injected): it advances 3.0 s at once and the closes it made due are
  // performed at runDue, so the counts are exact whatever the machine's speed. The supervisor's own
  // timers stay armed (each from the injected clock's distance to the next close, <= 1 s of real
  // time here): one that fires finds nothing due, or asks for a close runDue asks for too, which
  // the market actor performs once per (market, tick) - counted once as performed.
  const c = await startClockedService(t, { SVC_TIME_SCALE: '900' });
  const svc = c.svc;
  const m15 = (await svc.getJson('/api/v1/markets/m15')).body;
  t.ok(
    m15.seconds_to_close > 0 && m15.seconds_to_close <= 1,
    `seconds_to_close ${m15.seconds_to_close}`,
  );
  const clock = svc.services.clock;
  const sup = svc.services.supervisor;
  const before = sup.openTick('m15')!;
  t.equal(before, clock.tick(900), "the open session is the clock's");
  const closedCount = async () =>
    (
      await svc.orm.em
        .fork()
        .execute(
          "select count(*)::int as n from market_session where market = 'm15' and closed_at is not null",
        )
    )[0].n;
  t.equal(await closedCount(), 0, 'no m15 session closed at start-up');
  c.advanceBy(3000);
  const due = clock.tick(900);
  t.equal(due - before, 3, '3.0 s of real time: the service clock passed exactly 3 m15 boundaries');
  await c.runDue();
  const after = sup.openTick('m15')!;
  t.equal(after, due, `the supervisor's open session is the clock's (${after})`);
  const sessions = await svc.orm.em
    .fork()
    .execute(
      "select tick::float8 as tick, closed_at is not null as closed from market_session where market = 'm15' and tick >= ? order by tick",
      [before],
    );
  t.same(
    sessions,
    [0, 1, 2, 3].map((k) => ({ tick: before + k, closed: k < 3 })),
    'the 3 sessions are recorded closed, the next one open',
  );
  t.equal(await closedCount(), 3, '3 m15 closes recorded');
  const metrics = await (await svc.get('/metrics')).text();
  const counted = Number(
    /session_closes_total\{market="m15",performed="true"\} (\d+)/.exec(metrics)?.[1],
  );
  t.equal(counted, 3, 'each close counted once as performed');
});

t.test('/readyz answers 503 until every market has an open session', async (t) => {
  const supervisor = { ready: false, holdsCloses: true };
  let draining = false;
  const ready = opsRoutes({
    supervisor,
    schema: { last: 'x' },
    node: () => 'n1',
    draining: () => draining,
  } as unknown as Services).find((r) => r.path === '/readyz')!;
  const before = await ready.handler({} as never);
  t.equal(before.status, 503);
  t.equal(before.headers?.['retry-after'], '1');
  supervisor.ready = true;
  const after = await ready.handler({} as never);
  t.equal(after.status ?? 200, 200);
  t.same(
    after.json,
    { status: 'ready', schema: 'x', node: 'n1', closes: true },
    'it names the node and says it runs the closes',
  );
  supervisor.holdsCloses = false;
  t.same(
    (await ready.handler({} as never)).json,
    { status: 'ready', schema: 'x', node: 'n1', closes: false },
    'a node following the closes',
  );
  draining = true;
  const stopping = await ready.handler({} as never);
  t.equal(stopping.status, 503, 'a stopping node answers 503 so a balancer takes it out');
  t.equal((stopping.json as { status: string }).status, 'stopping');
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function runMain(t: Tap.Test, env: Record<string, string>) {
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: productionEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.teardown(() => void child.kill('SIGKILL'));
  return { child, exited, output: () => out };
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} stops accepting, drains and exits 0`, async (t) => {
    const config = await testConfig(t);
    const port = await freePort();
    const env: Record<string, string> = { PORT: String(port), SVC_SHARDS: '2', LOG_LEVEL: 'info' };
    if (config.databaseUrl) env.DATABASE_URL = config.databaseUrl;
    else env.DATA_DIR = config.dataDir;
    const run = await runMain(t, env);
    // Ready as long as it takes; a child that exits instead fails at once.
    let early: number | null | undefined;
    void run.exited.then((code) => (early = code));
    await eventually(
      async () => {
        if (early !== undefined)
          throw new Error(`exited (${early}) before it was ready:\n${run.output()}`);
        return fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      'GET /readyz to answer 200',
      100,
    );
    run.child.kill(signal);
    t.equal(await run.exited, 0, 'exit code 0');
    t.match(run.output(), /"msg":"stopped"/, 'logged a clean stop');
    const refused = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      () => false,
      () => true,
    );
    t.ok(refused, 'no longer accepting');
  });
}

t.test('a bad setting stops start-up with a clear message and exit 2', async (t) => {
  const run = await runMain(t, { SVC_TIME_SCALE: 'fast', PORT: '0' });
  t.equal(await run.exited, 2);
  t.match(run.output(), /configuration error: SVC_TIME_SCALE must be a number/);
});
