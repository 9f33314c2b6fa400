// Replies checked against the route's declared answer (responseChecks, SVC_RESPONSE_CHECKS=1 in the
// API tests): a field no schema describes, a wrong type, an undeclared status or media type is a
// logged 500, never shipped; errors must have the Problem body. Off, replies go out unchecked.
import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Agent } from 'undici';
import Type from 'typebox';
import { createApp, listen } from '../../src/http/server.js';
import { HttpError, htmlPage, json, media, route, text, type Route } from '../../src/http/route.js';
import { obj, int, str } from '../../src/schemas/index.js';

const Item = obj({ id: int('item id'), name: str('item name') }, 'an item');

const routes: Route[] = [
  route({
    method: 'GET',
    path: '/ok',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => json({ id: 1, name: 'a' }),
  }),
  route({
    method: 'GET',
    path: '/extra',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => json({ id: 1, name: 'a', secret: 'x' }),
  }),
  route({
    method: 'GET',
    path: '/wrong-type',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => json({ id: '1', name: 'a' }),
  }),
  // Pre-serialised JSON bytes are parsed and checked too.
  route({
    method: 'GET',
    path: '/bytes',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => ({ body: Buffer.from('{"id":1}'), contentType: 'application/json' }),
  }),
  route({
    method: 'GET',
    path: '/undeclared',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => json({ id: 1, name: 'a' }, 201),
  }),
  route({
    method: 'GET',
    path: '/page',
    auth: 'none',
    summary: 's',
    response: { 200: htmlPage('a page') },
    handler: () => text('<p>hi</p>', 'text/html; charset=utf-8'),
  }),
  route({
    method: 'GET',
    path: '/csv-as-json',
    auth: 'none',
    summary: 's',
    response: { 200: media('text/csv', 'a frame') },
    handler: () => json({ id: 1 }),
  }),
  route({
    method: 'GET',
    path: '/refused',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => {
      throw new HttpError(404, 'no such item');
    },
  }),
  route({
    method: 'GET',
    path: '/bad-error',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => json({ error: 'nope' }, 404),
  }),
  route({
    method: 'GET',
    path: '/not-modified',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => ({ status: 304 }),
  }),
  route({
    method: 'GET',
    path: '/login-first',
    auth: 'none',
    summary: 's',
    response: { 200: Item },
    handler: () => {
      throw new HttpError(303, 'login required', { location: '/login' });
    },
  }),
  route({
    method: 'GET',
    path: '/starting',
    auth: 'none',
    summary: 's',
    response: { 200: Item, 503: obj({ status: str('starting') }, 'not ready') },
    handler: () => json({ status: 'starting' }, 503),
  }),
];

async function serve(t: { teardown: (f: () => void) => void }, responseChecks: boolean) {
  const logs: any[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      for (const l of String(chunk).split('\n')) if (l) logs.push(JSON.parse(l));
      cb();
    },
  });
  const { app } = createApp({
    routes,
    log: pino({ level: 'info' }, sink),
    bodyLimitBytes: 1024,
    authenticators: {},
    responseChecks,
  });
  const server = await listen(app, '127.0.0.1', 0);
  // Its own connection pool, destroyed at the end: pooled keep-alive sockets would hold the process open.
  const agent = new Agent({ keepAliveTimeout: 1000 });
  t.teardown(() => {
    server.close();
    return agent.destroy();
  });
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
      dispatcher: agent,
      redirect: 'manual',
    } as RequestInit);
    return { status: res.status, text: await res.text() };
  };
  return { get, logs };
}

t.test('with checks: only what the schemas declare ships', async (t) => {
  const { get, logs } = await serve(t, true);
  t.same(await get('/ok'), { status: 200, text: '{"id":1,"name":"a"}' });
  t.equal((await get('/page')).status, 200);
  t.same(await get('/refused'), { status: 404, text: '{"detail":"no such item"}' });
  t.equal((await get('/not-modified')).status, 304);
  t.equal((await get('/login-first')).status, 303, 'a redirect is not checked');
  t.same(
    await get('/starting'),
    { status: 503, text: '{"status":"starting"}' },
    'a declared non-2xx answer has its own schema',
  );

  for (const path of [
    '/extra',
    '/wrong-type',
    '/bytes',
    '/undeclared',
    '/csv-as-json',
    '/bad-error',
  ]) {
    const r = await get(path);
    t.same(r, { status: 500, text: '{"detail":"internal error"}' }, `${path}: 500`);
  }
  const mismatches = logs.filter((l) => l.msg === 'answer does not match its declared schema');
  t.same(
    mismatches.map((l) => l.route),
    ['/extra', '/wrong-type', '/bytes', '/undeclared', '/csv-as-json', '/bad-error'].map(
      (p) => `GET ${p}`,
    ),
  );
  t.match(mismatches[0].mismatch, /secret/, 'the log names the unknown field');
  t.ok(
    mismatches.every((l) => l.level === 50),
    'logged as errors',
  );
});

t.test('without checks: replies go out as the handler made them', async (t) => {
  const { get, logs } = await serve(t, false);
  t.same(await get('/extra'), { status: 200, text: '{"id":1,"name":"a","secret":"x"}' });
  t.equal((await get('/undeclared')).status, 201);
  t.notOk(logs.some((l) => l.msg === 'answer does not match its declared schema'));
});

t.test('every schema object of a served answer is closed', async (t) => {
  // A representative sample: unknown fields fail rather than pass.
  const Checked = Type.Object({ a: Type.Integer() });
  t.equal(
    (Checked as { additionalProperties?: boolean }).additionalProperties,
    undefined,
    'plain TypeBox objects are open',
  );
  t.equal(
    (Item as { additionalProperties?: boolean }).additionalProperties,
    false,
    'obj() makes them closed',
  );
});
