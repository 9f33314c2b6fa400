// The uWS front end over real HTTP with a small route table: validation answers, body limits,
// malformed JSON, unknown routes, aborted clients, one log line per request without secrets,
// and no 5xx for any malformed request.
import t from 'tap';
import net from 'node:net';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import Type from 'typebox';
import fc from 'fast-check';
import { createApp, listen } from '../../src/http/server.js';
import { HttpError, json, route } from '../../src/http/route.js';
import { ActorError } from '../../actors/runtime/actor.js';
import { eventually } from '../helpers/wait.js';

const logs: any[] = [];
const sink = new Writable({
  write(chunk, _e, cb) {
    for (const l of String(chunk).split('\n')) if (l) logs.push(JSON.parse(l));
    cb();
  },
});

const slowRunning: ((v: unknown) => void)[] = [];

const routes = [
  route({
    method: 'GET',
    path: '/api/v1/items/{item_id}',
    auth: 'none',
    summary: 'one item',
    params: Type.Object({ item_id: Type.Integer({ minimum: 1 }) }),
    query: Type.Object({
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
      flag: Type.Optional(Type.Boolean()),
    }),
    handler: ({ params, query }) =>
      json({ id: params.item_id, limit: query.limit, flag: query.flag ?? null }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/items',
    auth: 'none',
    summary: 'create',
    body: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 5 }),
      qty: Type.Integer({ minimum: 1 }),
    }),
    handler: ({ body }) => json({ created: body }, 201),
  }),
  route({
    method: 'GET',
    path: '/api/v1/secret',
    auth: 'key',
    summary: 'needs a key',
    handler: ({ principal }) => json({ who: principal }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/slow',
    auth: 'none',
    summary: 'answers late',
    handler: async () => {
      // Answers when the test releases it (slowRunning tells the test it has started).
      await new Promise((r) => slowRunning.push(r));
      return json({ late: true });
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/busy',
    auth: 'none',
    summary: 'actor refusal',
    handler: () => {
      throw new ActorError(503, 'busy', 2);
    },
  }),
];

const { app, inflight, dispatch } = createApp({
  routes,
  log: pino({ level: 'info' }, sink),
  bodyLimitBytes: 1024,
  authenticators: {
    key: async (req) => {
      const key = req.headers['authorization']?.replace(/^Bearer /, '');
      if (key !== 'k'.repeat(80)) throw new HttpError(401, 'missing or invalid API key');
      return 'agent-1';
    },
  },
});
const server = await listen(app, '127.0.0.1', 0);
t.teardown(() => server.close());
const base = `http://127.0.0.1:${server.port}`;
const call = async (path: string, init?: RequestInit) => {
  const res = await fetch(base + path, init);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
};
const post = (
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) => call('/api/v1/items', { method: 'POST', body, headers });

t.test('valid requests are coerced and answered', async (t) => {
  t.same((await call('/api/v1/items/7?limit=3&flag=true')).body, { id: 7, limit: 3, flag: true });
  t.same(
    (await call('/api/v1/items/7')).body,
    { id: 7, limit: 10, flag: null },
    'query default applied',
  );
  const created = await post('{"name":"ab","qty":2}');
  t.equal(created.status, 201);
  t.same(created.body, { created: { name: 'ab', qty: 2 } });
});

t.test('422 answers are shaped as SPEC.md Errors', async (t) => {
  const r = await call('/api/v1/items/abc?limit=abc');
  t.equal(r.status, 422);
  t.same(
    r.body.detail.map((d: any) => [d.loc, d.type]),
    [
      [['path', 'item_id'], 'int_parsing'],
      [['query', 'limit'], 'int_parsing'],
    ],
  );
  // A well-formed id that can name nothing (0) is an unknown id: 404 (CONTRACT.md "Strict requests").
  t.equal((await call('/api/v1/items/0')).status, 404);
  for (const d of r.body.detail) t.type(d.msg, 'string');
  const b = await post('{"name":"toolong"}');
  t.equal(b.status, 422);
  t.same(
    b.body.detail.map((d: any) => [d.loc, d.type]),
    [
      [['body', 'name'], 'string_too_long'],
      [['body', 'qty'], 'missing'],
    ],
  );
  t.same(b.body.detail[0].ctx, { max_length: 5 });
  t.equal(b.body.detail[0].input, 'toolong');
});

t.test('malformed JSON and empty bodies are 422, not 500', async (t) => {
  const bad = await post('{"name": "a",');
  t.equal(bad.status, 422);
  t.same(bad.body.detail[0].loc, ['body']);
  t.equal(bad.body.detail[0].type, 'json_invalid');
  const empty = await post('');
  t.equal(empty.status, 422);
  t.equal(empty.body.detail[0].type, 'missing');
  const notObject = await post('[1,2]');
  t.equal(notObject.status, 422);
});

t.test('bodies above the limit are refused with 413', async (t) => {
  const big = JSON.stringify({ name: 'x'.repeat(5000), qty: 1 });
  const r = await post(big);
  t.equal(r.status, 413);
  t.same(r.body, { detail: 'request body too large' });
  // Streamed without a content-length (chunked): the limit still holds.
  const chunked = await fetch(base + '/api/v1/items', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode('x'.repeat(500)));
        c.close();
      },
    }),
    duplex: 'half',
  } as RequestInit).catch((e) => e);
  if (chunked instanceof Response) t.equal(chunked.status, 413, 'chunked upload refused');
  else t.pass('connection closed by the server while streaming');
});

t.test('unknown routes answer JSON 404, known paths with another method 405', async (t) => {
  const r = await call('/api/v1/nothing-here');
  t.equal(r.status, 404);
  t.same(r.body, { detail: 'Not Found' });
  t.match(r.headers.get('content-type'), /application\/json/);
  const m = await call('/api/v1/items', { method: 'DELETE' });
  t.equal(m.status, 405);
});

t.test('key routes answer 401 with a detail; errors carry their headers', async (t) => {
  const r = await call('/api/v1/secret');
  t.equal(r.status, 401);
  t.same(r.body, { detail: 'missing or invalid API key' });
  const ok = await call('/api/v1/secret', {
    headers: { authorization: `Bearer ${'k'.repeat(80)}` },
  });
  t.same(ok.body, { who: 'agent-1' });
  const busy = await call('/api/v1/busy');
  t.equal(busy.status, 503);
  t.equal(busy.headers.get('retry-after'), '2');
});

t.test('a client that goes away mid-request does not break the server', async (t) => {
  const logged = (route: string, status: number) =>
    logs.some((l) => l.msg === 'request' && l.route === route && l.status === status);
  // Gone while its handler runs: the handler is released after the client left, and its answer is accounted for.
  const slow = net.connect(server.port, '127.0.0.1', () =>
    slow.write('GET /api/v1/slow HTTP/1.1\r\nHost: x\r\n\r\n'),
  );
  await eventually(() => slowRunning.length === 1, 'the slow handler to start');
  slow.destroy();
  await once(slow, 'close');
  slowRunning.splice(0).forEach((answer) => answer(undefined));
  await eventually(() => logged('/api/v1/slow', 200), 'the slow request to be accounted for');
  // A body that never finishes: gone mid-body, no handler runs.
  const partial = net.connect(server.port, '127.0.0.1', () =>
    partial.write(
      'POST /api/v1/items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"na',
    ),
  );
  await eventually(() => inflight() === 1, 'the server to be reading the body');
  partial.destroy();
  await eventually(
    () => logged('/api/v1/items', 499),
    'the abandoned upload to be accounted for (499)',
  );
  t.equal(inflight(), 0, 'nothing left in flight');
  t.equal((await call('/api/v1/items/1')).status, 200, 'still serving');
});

t.test('one log line per request with route, status and duration, never the key', async (t) => {
  logs.length = 0;
  await call('/api/v1/secret', {
    headers: { authorization: `Bearer ${'k'.repeat(80)}`, 'x-api-token': 'k'.repeat(80) },
  });
  const lines = logs.filter((l) => l.msg === 'request');
  t.equal(lines.length, 1);
  t.match(lines[0], { route: '/api/v1/secret', method: 'GET', status: 200 });
  t.type(lines[0].ms, 'number');
  t.notOk(JSON.stringify(logs).includes('k'.repeat(20)), 'no key material in any log line');
});

t.test('no malformed request gets a 5xx', async (t) => {
  const paths = [
    '/api/v1/items/',
    '/api/v1/items/%ZZ',
    '/api/v1/items/1?limit=',
    '/api/v1/items/1?limit=1&limit=2',
    '/api/v1/items/99999999999999999999',
    '/api/v1/items/-1',
    '/api/v1/items/1.5',
    '/api/v1/items/1?flag=maybe',
    '/%',
    '/api/v1/items/%00',
  ];
  for (const p of paths) {
    const r = await call(p);
    t.ok(r.status < 500, `${p} → ${r.status}`);
  }
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.json(),
        fc.string(),
        fc.jsonValue().map((v) => JSON.stringify(v)),
      ),
      async (body) => {
        const r = await post(body);
        return r.status < 500;
      },
    ),
    { numRuns: 200 },
  );
  await fc.assert(
    fc.asyncProperty(fc.webSegment(), fc.webQueryParameters(), async (seg, q) => {
      const r = await call(`/api/v1/items/${seg}?${q}`);
      return r.status < 500;
    }),
    { numRuns: 200 },
  );
});

t.test(
  "dispatch: a request run inside the process goes through the route's own pipeline",
  async (t) => {
    const one = await dispatch({
      method: 'GET',
      path: '/api/v1/items/7',
      query: 'limit=3',
      headers: {},
    });
    t.same(
      [one.status ?? 200, one.json],
      [200, { id: 7, limit: 3, flag: null }],
      'params and query coerced',
    );
    const bad = await dispatch({
      method: 'GET',
      path: '/api/v1/items/7',
      query: 'limit=99',
      headers: {},
    });
    t.equal(bad.status, 422, 'the 422 of the route');
    t.same((bad.json as any).detail[0].loc, ['query', 'limit']);
    const made = await dispatch({
      method: 'POST',
      path: '/api/v1/items',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"name":"ab","qty":2}'),
    });
    t.same([made.status, made.json], [201, { created: { name: 'ab', qty: 2 } }]);
    const notJson = await dispatch({
      method: 'POST',
      path: '/api/v1/items',
      headers: {},
      body: Buffer.from('{}'),
    });
    t.equal(notJson.status, 415, 'JSON only, as over HTTP');
    t.equal(
      (await dispatch({ method: 'GET', path: '/api/v1/secret', headers: {} })).status,
      401,
      'its authentication',
    );
    t.same(
      (
        await dispatch({
          method: 'GET',
          path: '/api/v1/secret',
          headers: { authorization: `Bearer ${'k'.repeat(80)}` },
        })
      ).json,
      { who: 'agent-1' },
    );
    t.equal((await dispatch({ method: 'GET', path: '/api/v1/nothing', headers: {} })).status, 404);
    t.equal(
      (await dispatch({ method: 'GET', path: '/api/v1/busy', headers: {} })).status,
      503,
      'an actor refusal answers as over HTTP',
    );
  },
);
