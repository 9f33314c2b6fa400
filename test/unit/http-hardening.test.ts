// The front end against hostile input: bodies nested too deep, NUL and lone surrogates,
// API bodies that are not JSON, too many form fields, clients that go away (the in-flight count),
// bounded echoes in 422 answers and the security headers of HTML pages.
import t from 'tap';
import net from 'node:net';
import { once } from 'node:events';
import pino from 'pino';
import Type from 'typebox';
import { createApp, listen } from '../../src/http/server.js';
import { eventually } from '../helpers/wait.js';
import { json, route } from '../../src/http/route.js';
import { compileValidator, parseJson, MAX_JSON_DEPTH } from '../../src/http/validation.js';

const Body = Type.Object({
  name: Type.String({ maxLength: 5 }),
  operator: Type.Optional(Type.Object({ name: Type.String() })),
  tags: Type.Optional(Type.Array(Type.String())),
});

const holds: (() => void)[] = [];
const routes = [
  route({
    method: 'POST',
    path: '/api/v1/things',
    auth: 'none',
    summary: 'api body',
    body: Body,
    handler: ({ body }) => json({ got: body }, 201),
  }),
  route({
    method: 'PUT',
    path: '/api/v1/things',
    auth: 'none',
    summary: 'api put',
    body: Body,
    handler: ({ body }) => json({ got: body }),
  }),
  route({
    method: 'POST',
    path: '/api/v1/nobody',
    auth: 'none',
    summary: 'no body schema',
    handler: () => json({ ok: true }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/things/{name}',
    auth: 'none',
    summary: 'path and query',
    params: Type.Object({ name: Type.String() }),
    query: Type.Object({ q: Type.Optional(Type.String()) }),
    handler: ({ params, query }) => json({ name: params.name, q: query.q ?? null }),
  }),
  route({
    method: 'POST',
    path: '/form',
    auth: 'none',
    summary: 'web form',
    body: Body,
    handler: ({ body }) => json({ got: body }),
  }),
  route({
    method: 'GET',
    path: '/page',
    auth: 'none',
    summary: 'html',
    handler: () => ({ body: '<p>hi</p>', contentType: 'text/html; charset=utf-8' }),
  }),
  route({
    method: 'GET',
    path: '/api/v1/hold',
    auth: 'none',
    summary: 'answers when released',
    handler: () => new Promise((r) => holds.push(() => r(json({ late: true })))),
  }),
  route({
    method: 'GET',
    path: '/api/v1/huge',
    auth: 'none',
    summary: 'unserialisable answer',
    handler: () => json({ n: 1n }),
  }),
];

const front = createApp({
  routes,
  log: pino({ level: 'silent' }),
  bodyLimitBytes: 64 * 1024,
  authenticators: {},
});
const server = await listen(front.app, '127.0.0.1', 0);
t.teardown(() => server.close());
const base = `http://127.0.0.1:${server.port}`;

async function call(path: string, init?: RequestInit) {
  const res = await fetch(base + path, init);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, headers: res.headers };
}
const send = (path: string, body: string, type?: string, method = 'POST') =>
  call(path, { method, body, headers: type === undefined ? {} : { 'content-type': type } });
const deep = (n: number) => `{"name":${'['.repeat(n)}${']'.repeat(n)}}`;
const locs = (r: { body: any }) => r.body.detail.map((d: any) => [d.loc, d.type]);

t.test('bodies nested deeper than the limit are a 422, and the server stays up', async (t) => {
  for (const path of ['/api/v1/things', '/form']) {
    const r = await send(path, deep(5000), 'application/json');
    t.equal(r.status, 422, path);
    t.same(locs(r), [[['body'], 'json_invalid']]);
    t.match(r.body.detail[0].ctx.error, /nesting deeper than 64/);
  }
  t.equal(
    (await send('/api/v1/things', deep(MAX_JSON_DEPTH - 1), 'application/json')).status,
    422,
    'allowed depth: an ordinary type error',
  );
  t.same(locs(await send('/api/v1/things', deep(MAX_JSON_DEPTH - 1), 'application/json')), [
    [['body', 'name'], 'string_type'],
  ]);
  t.equal((await call('/api/v1/things/x')).status, 200, 'still serving');
});

t.test('parseJson: depth is measured outside strings, without recursion', async (t) => {
  t.same(
    parseJson(`{"a":"${'['.repeat(90)}"}`),
    { value: { a: '['.repeat(90) } },
    'brackets inside strings do not count',
  );
  t.same(
    parseJson(`"\\"${'['.repeat(100)}"`),
    { value: `"${'['.repeat(100)}` },
    'escaped quote does not end the string',
  );
  t.ok('value' in parseJson('['.repeat(64) + ']'.repeat(64)));
  t.ok('issue' in parseJson('['.repeat(65) + ']'.repeat(65)));
  t.ok('issue' in parseJson('['.repeat(1e6)), 'a megabyte of brackets');
});

t.test('422 answers echo bounded input', async (t) => {
  const long = await send(
    '/api/v1/things',
    JSON.stringify({ name: 'x'.repeat(10_000) }),
    'application/json',
  );
  t.equal(long.status, 422);
  t.ok(long.body.detail[0].input.length <= 101, 'long strings are cut');
  const v = compileValidator('body', Type.Object({ a: Type.String() }));
  const r = v({ a: { b: { c: [1, 2, 3] } } });
  t.notOk(r.ok);
  if (!r.ok) t.notOk('input' in r.issues[0], 'nested objects are not echoed');
  const flat = v({ a: [1, 'two'] });
  if (!flat.ok) t.same(flat.issues[0].input, [1, 'two'], 'small flat values still are');
  const cut = compileValidator('body', Type.Object({ a: Type.Integer() }))({ a: '😀'.repeat(100) });
  if (!cut.ok)
    t.notOk(/\p{Cs}/u.test(cut.issues[0].input as string), 'a cut never splits a surrogate pair');
});

t.test('NUL and lone surrogates are 422 at their field, anywhere', async (t) => {
  const nul = await send(
    '/api/v1/things',
    JSON.stringify({ name: 'a\u0000', operator: { name: 'ok' } }),
    'application/json',
  );
  t.equal(nul.status, 422);
  t.same(locs(nul), [[['body', 'name'], 'string_invalid_characters']]);
  const lone = await send(
    '/api/v1/things',
    '{"name":"ok","operator":{"name":"x\\ud800"},"tags":["a","\\udc00b"]}',
    'application/json',
  );
  t.same(locs(lone), [
    [['body', 'operator', 'name'], 'string_invalid_characters'],
    [['body', 'tags', 1], 'string_invalid_characters'],
  ]);
  const key = await send('/api/v1/things', '{"name":"ok","x\\u0000":1}', 'application/json');
  t.same(locs(key), [[['body', 'x\u0000'], 'string_invalid_characters']], 'keys too');
  const both = await send(
    '/api/v1/things',
    JSON.stringify({ name: 'toolong\u0000', tags: [1] }),
    'application/json',
  );
  t.same(
    locs(both),
    [
      [['body', 'name'], 'string_invalid_characters'],
      [['body', 'tags', 0], 'string_type'],
    ],
    'schema issues elsewhere still reported',
  );
  const pair = await send('/api/v1/things', JSON.stringify({ name: '😀' }), 'application/json');
  t.equal(pair.status, 201, 'a surrogate pair is fine');
  t.same(locs(await call('/api/v1/things/a%00b')), [
    [['path', 'name'], 'string_invalid_characters'],
  ]);
  t.same(locs(await call('/api/v1/things/a?q=%00')), [
    [['query', 'q'], 'string_invalid_characters'],
  ]);
  const form = await send('/form', 'name=a%00', 'application/x-www-form-urlencoded');
  t.same(locs(form), [[['body', 'name'], 'string_invalid_characters']]);
});

t.test('API bodies must be JSON: anything else is 415', async (t) => {
  const good = JSON.stringify({ name: 'ab' });
  for (const type of [
    undefined,
    'text/plain',
    'application/xml',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    'application/jsonp',
  ]) {
    const r = await send('/api/v1/things', good, type);
    t.equal(r.status, 415, String(type));
    t.type(r.body.detail, 'string');
  }
  t.equal((await send('/api/v1/things', good, 'text/plain', 'PUT')).status, 415, 'PUT too');
  for (const type of [
    'application/json',
    'Application/JSON; charset=utf-8',
    'application/merge-patch+json',
  ]) {
    t.equal((await send('/api/v1/things', good, type)).status, 201, type);
  }
  t.equal(
    (await send('/api/v1/nobody', 'x', 'text/plain')).status,
    200,
    'a route without a body schema ignores the body',
  );
  t.equal(
    (await send('/form', 'name=ab', 'application/x-www-form-urlencoded')).status,
    200,
    'web forms: urlencoded',
  );
  t.equal((await send('/form', good, 'application/json')).status, 200, 'web forms: JSON');
});

t.test('too many fields in a form or query string are refused', async (t) => {
  const form = await send(
    '/form',
    'name=a' + '&x='.repeat(5000),
    'application/x-www-form-urlencoded',
  );
  t.same(locs(form), [[['body'], 'too_many_fields']]);
  const q = await call(`/api/v1/things/a?${'q=1&'.repeat(1200)}`);
  t.equal(q.status, 422);
  t.same(q.body.detail[0].loc, ['query']);
  const many = await send(
    '/form',
    'name=a' + '&tags=x'.repeat(900),
    'application/x-www-form-urlencoded',
  );
  t.equal(many.status, 200, 'repeated fields below the limit are fine');
});

t.test('an answer that cannot be serialised is a 500, not a crash', async (t) => {
  const r = await call('/api/v1/huge');
  t.equal(r.status, 500);
  t.same(r.body, { detail: 'internal error' });
});

t.test('security headers', async (t) => {
  const page = await call('/page');
  t.match(page.headers.get('content-security-policy'), /script-src 'self'/);
  t.match(page.headers.get('content-security-policy'), /frame-ancestors 'none'/);
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.equal(page.headers.get('referrer-policy'), 'same-origin');
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  const api = await call('/api/v1/things/x');
  t.equal(api.headers.get('x-content-type-options'), 'nosniff');
});

/** Writes raw HTTP on a new connection; `drop()` closes it from the client's side. */
function rawClient(raw: string): { answered: () => boolean; drop: () => Promise<void> } {
  const s = net.connect(server.port, '127.0.0.1', () => s.write(raw));
  const closed = once(s, 'close');
  let answered = false;
  s.on('data', () => (answered = true));
  s.on('close', () => (answered = true));
  s.on('error', () => (answered = true));
  return { answered: () => answered, drop: async () => void (s.destroy(), await closed) };
}

/** Sends `count` raw requests, waits until `ready()` holds (polled), then every client goes away. */
async function abortWhen(
  raw: string,
  count: number,
  ready: (answered: boolean) => boolean,
): Promise<void> {
  const clients = Array.from({ length: count }, () => rawClient(raw));
  await eventually(
    () => ready(clients.every((c) => c.answered())),
    'the requests to reach the server',
  );
  await Promise.all(clients.map((c) => c.drop()));
}

/** Until nothing is in flight (polled without a deadline: a leak hangs the test until tap's time-out). */
const settle = () => eventually(() => front.inflight() === 0, 'no request in flight');

t.test('the in-flight count returns to 0 when clients go away', async (t) => {
  await settle();
  t.equal(front.inflight(), 0, 'idle');
  // Mid-body: the body never finishes, so no handler runs. Each client leaves once all 20 are counted in flight.
  await abortWhen(
    'POST /api/v1/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"na',
    20,
    () => front.inflight() === 20,
  );
  await settle();
  t.equal(front.inflight(), 0, 'after aborts mid-body');
  // Mid-handler: counted until the handler returns, then released.
  await abortWhen('GET /api/v1/hold HTTP/1.1\r\nHost: x\r\n\r\n', 5, () => holds.length === 5);
  t.equal(front.inflight(), 5, 'handlers still running');
  holds.splice(0).forEach((answer) => answer());
  await settle();
  t.equal(front.inflight(), 0, 'after aborts mid-handler');
  // Mid-body of an oversized upload (counted in flight, or already refused): still 0.
  await abortWhen(
    `POST /api/v1/things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${1 << 20}\r\n\r\n{`,
    1,
    (answered) => answered || front.inflight() === 1,
  );
  await settle();
  t.equal(front.inflight(), 0, 'after an oversized upload');
  t.equal((await call('/api/v1/things/x')).status, 200, 'still serving');
  t.equal(front.inflight(), 0);
});
