// The cluster command's arguments and the balancer's configuration: every refusal of the command
// line, and a configuration HAProxy itself accepts that places by API key, then holder session.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parseClusterArgs, type UsageError } from '../../src/cluster/args.js';
import { haproxyConfig, NODE_DRAIN_MS, CHECK_INTERVAL_MS } from '../../src/cluster/haproxy.js';
import { ROOT } from '../helpers/root.js';

t.test('arguments: defaults, bounds, DATABASE_URL without replicas', async (t) => {
  t.same(parseClusterArgs([], {}), { nodes: 3, port: 8080, replicas: 1 });
  t.same(parseClusterArgs(['--nodes', '8', '--port=9000', '--replicas', '0'], {}), {
    nodes: 8,
    port: 9000,
    replicas: 0,
  });
  t.same(
    parseClusterArgs([], { DATABASE_URL: 'postgres://x@h/db' }),
    { nodes: 3, port: 8080, replicas: 0 },
    'an outside server: no replicas by default',
  );
  for (const bad of [
    ['--nodes', '0'],
    ['--nodes', '9'],
    ['--replicas', '3'],
    ['--port', '0'],
    ['--port', '70000'],
    ['--nodes', '2.5'],
    ['--nodes'],
    ['--bogus'],
    ['3'],
  ]) {
    t.throws(
      () => parseClusterArgs(bad, {}),
      /must be an integer|needs a value|unknown argument/,
      bad.join(' '),
    );
  }
  t.throws(
    () => parseClusterArgs(['--replicas', '1'], { DATABASE_URL: 'postgres://x@h/db' }),
    /embedded primary/,
  );
  t.ok(
    (() => {
      try {
        parseClusterArgs(['--help'], {});
      } catch (e) {
        return (e as UsageError).help;
      }
    })(),
    '--help asks for the usage',
  );
});

t.test("the balancer's configuration", async (t) => {
  const cfg = haproxyConfig({
    bind: { host: '127.0.0.1', port: 8080 },
    nodes: [
      { name: 'node-1', host: '127.0.0.1', port: 9001 },
      { name: 'node-2', host: '127.0.0.1', port: 9002 },
    ],
  });
  t.match(
    cfg,
    /balance hash var\(txn.placement\)\n\s+hash-type consistent/,
    'a consistent hash of the placement',
  );
  const order = [
    'req.hdr(authorization)',
    'req.hdr(x-api-token)',
    'req.cook(holder_session)',
    'set-var(txn.placement) src',
  ].map((s) => cfg.indexOf(s));
  t.ok(
    order.every((i, k) => i > 0 && (k === 0 || i > order[k - 1])),
    'the key, then the token header, then the holder session, then the address',
  );
  t.match(
    cfg,
    /http-request set-header X-Forwarded-For %\[src\]/,
    "the client's address replaces any X-Forwarded-For it sent",
  );
  t.match(cfg, /server node-2 127\.0\.0\.1:9002 check/);
  t.notMatch(cfg, /retry-on/, 'only connections never made are retried (the default)');
  t.ok(
    NODE_DRAIN_MS >= 2 * CHECK_INTERVAL_MS,
    'a stopping node answers 503 for at least the checks that take it out',
  );
  t.throws(() => haproxyConfig({ bind: { host: '127.0.0.1', port: 1 }, nodes: [] }));
  t.throws(
    () =>
      haproxyConfig({
        bind: { host: '127.0.0.1', port: 1 },
        nodes: [{ name: 'a b', host: '127.0.0.1', port: 1 }],
      }),
    /node name/,
  );
  const which = spawnSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' });
  if (which.status !== 0) return t.fail('haproxy is not installed (.ci/run installs it)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-haproxy-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'h.cfg'), cfg);
  const check = spawnSync('haproxy', ['-c', '-f', path.join(dir, 'h.cfg')], { encoding: 'utf8' });
  t.equal(check.status, 0, `HAProxy accepts it: ${check.stdout}${check.stderr}`);
});

t.test(
  'ops/haproxy.cfg, the template for real machines, is what the command generates',
  async (t) => {
    const template = fs.readFileSync(path.join(ROOT, 'ops', 'haproxy.cfg'), 'utf8');
    const generated = haproxyConfig({
      bind: { host: '0.0.0.0', port: 80 },
      nodes: [1, 2, 3].map((i) => ({ name: `node-${i}`, host: `10.0.0.1${i}`, port: 8080 })),
      adminSocket: '/run/haproxy/admin.sock',
    });
    const body = (s: string) =>
      s
        .split('\n')
        .filter((l) => !l.startsWith('#'))
        .join('\n');
    t.equal(body(template), body(generated), 'the same configuration below its comments');
  },
);
