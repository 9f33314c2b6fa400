// Who may open /ops (CONTRACT.md "Operators") and how bench/results files are read for /ops/bench:
// the loopback rule over HOST and BASE_URL, constant-time token comparison, the login cookie, and a
// result file that cannot be read listed with its reason instead of failing the page.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  carriesToken,
  cookieValue,
  isLoopbackHost,
  LoginThrottle,
  opsAccess,
  OPS_COOKIE,
  sameSecret,
} from '../../src/ops/access.js';
import { readBenchResults, readRun } from '../../src/ops/bench.js';
import { quantile } from '../../src/ops/figures.js';
import type { RequestInfo } from '../../src/http/route.js';

t.test('loopback hosts', async (t) => {
  for (const h of [
    '127.0.0.1',
    '127.1.2.3',
    'localhost',
    'LOCALHOST',
    'app.localhost',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.1',
  ])
    t.ok(isLoopbackHost(h), `${h} is loopback`);
  for (const h of [
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '192.168.1.2',
    'market.example.org',
    '128.0.0.1',
    '::2',
    'localhost.example.org',
    '::ffff:10.0.0.1',
  ])
    t.notOk(isLoopbackHost(h), `${h} is not`);
});

t.test(
  'open only when HOST and BASE_URL are both loopback; else hidden without a token',
  async (t) => {
    const c = (host: string, baseUrl: string, opsToken?: string) =>
      opsAccess({ host, baseUrl, opsToken });
    t.equal(c('127.0.0.1', 'http://127.0.0.1:8080'), 'open');
    t.equal(
      c('localhost', 'http://[::1]:8080', 'tok'),
      'open',
      'open on loopback even with a token set',
    );
    t.equal(
      c('127.0.0.1', 'https://market.example.org'),
      'hidden',
      'a proxy in front: BASE_URL is public',
    );
    t.equal(c('0.0.0.0', 'http://127.0.0.1:8080'), 'hidden', 'bound to every address');
    t.equal(c('0.0.0.0', 'http://127.0.0.1:8080', 'tok'), 'token');
    t.equal(c('127.0.0.1', 'https://market.example.org', 'tok'), 'token');
  },
);

t.test('the token: Bearer or the login cookie, compared over hashes', async (t) => {
  const req = (headers: Record<string, string>): RequestInfo => ({
    method: 'GET',
    url: '/ops',
    query: '',
    headers,
    remoteAddress: () => '',
  });
  const token = 'the-ops-token';
  t.ok(sameSecret('a', 'a'));
  t.notOk(sameSecret('a', 'ab'), 'different lengths compare without throwing');
  t.ok(carriesToken(req({ authorization: `Bearer ${token}` }), token));
  t.ok(
    carriesToken(req({ authorization: `bearer ${token}` }), token),
    'the scheme is case-insensitive',
  );
  t.notOk(carriesToken(req({ authorization: `Bearer ${token}x` }), token));
  t.notOk(carriesToken(req({ authorization: `Basic ${token}` }), token));
  t.notOk(carriesToken(req({}), token));
  t.ok(
    carriesToken(req({ cookie: `x=1; ${OPS_COOKIE}=${cookieValue(token)}` }), token),
    'the login cookie',
  );
  t.notOk(
    carriesToken(req({ cookie: `${OPS_COOKIE}=${token}` }), token),
    'the cookie holds a value derived from the token, not the token',
  );
  t.notOk(
    carriesToken(req({ cookie: `${OPS_COOKIE}=${cookieValue('another')}` }), token),
    'a cookie of another token',
  );
});

t.test('the login throttle: ten wrong tokens a minute per address, a bounded memory', async (t) => {
  let now = 1000;
  const th = new LoginThrottle(() => now, 3, 60, 2);
  for (let i = 0; i < 3; i++) {
    t.equal(th.waitOf('a'), 0, `try ${i + 1} allowed`);
    th.failed('a');
  }
  t.equal(th.waitOf('a'), 60, 'the fourth waits for the window');
  t.equal(th.waitOf('b'), 0, 'another address is not held up');
  now += 59.5;
  t.equal(th.waitOf('a'), 1);
  now += 0.5;
  t.equal(th.waitOf('a'), 0, 'the window is over');
  th.failed('a');
  th.failed('b');
  th.failed('c');
  t.equal(th.waitOf('a'), 0, 'at most two addresses remembered: the oldest is forgotten');
});

t.test('quantiles from cumulative buckets, as histogram_quantile', async (t) => {
  const b = new Map([
    [0.1, 50],
    [0.5, 90],
    [1, 100],
    [Infinity, 100],
  ]);
  t.equal(quantile(0.5, b), 0.1);
  t.ok(Math.abs(quantile(0.7, b)! - 0.3) < 1e-9, 'interpolated inside its bucket');
  t.equal(
    quantile(
      0.5,
      new Map([
        [0.1, 0],
        [Infinity, 0],
      ]),
    ),
    null,
    'no observations',
  );
  t.equal(
    quantile(
      0.99,
      new Map([
        [0.1, 0],
        [Infinity, 5],
      ]),
    ),
    0.1,
    'in the +Inf bucket: the largest finite bound',
  );
});

t.test('bench results: every shape read, an unreadable file listed', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-bench-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const http = {
    scenario: 'http',
    date: '2026-11-22T04:12:42.000Z',
    commit: 'abc1234',
    machine: { nproc: 2, cpu: 'AMD EPYC', node: 'v20.20.2' },
    fixed_bytes: 20480,
    results: [
      { name: 'fixed-bytes', rps: 100, ratio_to_fixed: 1 },
      { name: 'deals', rps: 75, ratio_to_fixed: 0.75 },
    ],
  };
  fs.writeFileSync(path.join(dir, '2026-11-22T04-12-42Z-http.json'), JSON.stringify(http));
  fs.writeFileSync(
    path.join(dir, '2026-11-22T05-00-00Z-orders.json'),
    JSON.stringify({
      date: '2026-11-22T05:00:00Z',
      code: 'deadbee some change',
      ratios: { service_to_peer: 4.4, service_to_pgbench: 0.3 },
      targets: { service_to_peer: 2, service_to_pgbench: 0.5 },
    }),
  );
  fs.writeFileSync(
    path.join(dir, '2026-11-22T05-30-00Z-notify.json'),
    JSON.stringify({
      scenario: 'notify',
      date: '2026-11-22T05:30:00Z',
      options: { rounds: 3 },
      summary: { 8: { commits_per_s: {}, after_commit_to_in_transaction: 1.48 } },
    }),
  );
  fs.writeFileSync(
    path.join(dir, '2026-11-22T06-00-00Z-close.json'),
    '{"scenario": "close", "closes": [',
  );
  fs.writeFileSync(
    path.join(dir, '2026-11-22T07-00-00Z-memory.json'),
    JSON.stringify({ started: '2026-11-22T07:00:00Z' }),
  );
  fs.writeFileSync(path.join(dir, '2026-11-22T08-00-00Z-weird.json'), '{}');
  const r = readBenchResults(dir);
  t.same(
    r.runs.map((x) => x.scenario),
    ['http', 'orders', 'notify'],
  );
  t.same(
    r.runs[0].measures,
    [
      {
        name: 'deals',
        value: 0.75,
        unit: 'ratio',
        against: 'fixed-bytes (20480 B)',
        target: 0.9,
        better: 'higher',
      },
    ],
    'http: each target against fixed-bytes (deals: its 90 % target)',
  );
  t.equal(r.runs[0].commit, 'abc1234');
  t.equal(r.runs[0].machine, '2 CPU, AMD EPYC, node v20.20.2');
  t.equal(r.runs[1].commit, 'deadbee', 'the commit that starts `code`');
  t.same(
    r.runs[1].measures.map((m) => [m.name, m.value, m.target]),
    [
      ['service / peer', 4.4, 2],
      ['service / pgbench', 0.3, 0.5],
    ],
  );
  t.same(
    r.runs[2].measures.map((m) => [m.name, m.value]),
    [['8 clients: commits/s, NOTIFY after the commit', 1.48]],
    'notify: after against in the transaction',
  );
  t.same(
    r.unreadable.map((u) => u.file),
    [
      '2026-11-22T06-00-00Z-close.json',
      '2026-11-22T07-00-00Z-memory.json',
      '2026-11-22T08-00-00Z-weird.json',
    ],
  );
  t.match(r.unreadable[0].reason, /^not JSON/);
  t.match(r.unreadable[1].reason, /^not a memory result/);
  t.match(r.unreadable[2].reason, /unknown scenario/);
  t.same(
    readBenchResults(path.join(dir, 'missing')).unreadable[0].reason,
    'cannot list the folder: ENOENT',
    'a missing folder is said, not thrown',
  );
});

t.test(
  'issue 46: the pulse against its absolute targets, the fan-out against the bare peer',
  async (t) => {
    const http = readRun(
      '2026-11-29T02-00-00Z-http.json',
      JSON.stringify({
        results: [
          { name: 'fixed-bytes', rps: 50_000, ratio_to_fixed: 1 },
          { name: 'pulse', rps: 12_345, ratio_to_fixed: 0.25, latency_ms: { p99: 21.5 } },
        ],
      }),
    );
    t.ok('measures' in http);
    if (!('measures' in http)) return;
    t.same(
      http.measures.map((m) => [m.name, m.value, m.unit, m.target, m.better]),
      [
        ['pulse', 0.25, 'ratio', null, 'higher'],
        ['pulse req/s', 12_345, 'rps', 10_000, 'higher'],
        ['pulse p99', 21.5, 'ms', 20, 'lower'],
      ],
      'the pulse: its share of fixed-bytes without a target, its req/s and p99 against theirs',
    );
    const ws = (extra: object) =>
      readRun(
        '2026-11-29T02-00-00Z-ws.json',
        JSON.stringify({ latency_ms: { all: { p99_ms: 300 } }, ...extra }),
      );
    const alone = ws({});
    const peered = ws({
      ratios: { service_to_uws: { cpu_per_1000: 1.31, p99: 1.62, target: 1.5 } },
    });
    if (!('measures' in alone) || !('measures' in peered)) return t.fail('ws results read');
    t.same(
      alone.measures.map((m) => [m.name, m.target]),
      [['event delivery p99', 250]],
      'without the peer: the absolute p99 of issue 27',
    );
    t.same(
      peered.measures.map((m) => [m.name, m.value, m.unit, m.target, m.better]),
      [
        ['event delivery p99', 300, 'ms', null, 'lower'],
        ['CPU per 1000 events, service / uWS', 1.31, 'times', 1.5, 'lower'],
        ['delivery p99, service / uWS', 1.62, 'times', 1.5, 'lower'],
      ],
      'with the peer: both ratios against 1.5x, the absolute p99 shown without a target',
    );
    const floored = ws({
      ratios: {
        service_to_uws: { cpu_per_1000: 2.94, p99: 3.56, target: 1.5 },
        service_to_uws_reading_the_log: { cpu_per_1000: 1, p99: 1.09 },
        uws_reading_the_log_to_uws: { cpu_per_1000: 2.94, p99: 3.27 },
      },
    });
    if (!('measures' in floored)) return t.fail('ws results with the floor read');
    t.same(
      floored.measures.slice(3).map((m) => [m.name, m.value, m.target]),
      [
        ['CPU per 1000 events, uWS reading the log / uWS', 2.94, null],
        ['delivery p99, uWS reading the log / uWS', 3.27, null],
        ['CPU per 1000 events, service / uWS reading the log', 1, null],
        ['delivery p99, service / uWS reading the log', 1.09, null],
      ],
      'the floor of a fan-out that reads the log, measured apart: shown without targets',
    );
  },
);

t.test('every file in bench/results reads', async (t) => {
  const r = readBenchResults(path.resolve('bench/results'));
  t.same(r.unreadable, [], 'no unreadable file in the repository');
  t.ok(r.runs.length > 100, `${r.runs.length} runs`);
  for (const s of ['http', 'orders', 'close', 'record', 'memory', 'backfill'])
    t.ok(
      r.runs.some((x) => x.scenario === s && x.measures.length > 0),
      `${s}: runs with figures`,
    );
  t.same(readRun('2026-01-01T00-00-00Z-http.json', '[]'), {
    file: '2026-01-01T00-00-00Z-http.json',
    reason: 'not a JSON object',
  });
});
