// The front end's web side over real HTTP with a small route table: urlencoded forms coerced like
// query strings, cross-site refusal of state-changing web requests (CONTRACT.md "Web form posts"),
// the form's own page on a validation failure for browsers, and the 303/JSON answers of web.ts.
import t from 'tap';
import pino from 'pino';
import Type from 'typebox';
import fc from 'fast-check';
import { createApp, crossSite, listen } from '../../src/http/server.js';
import { HttpError, json, route, text, type RequestInfo } from '../../src/http/route.js';
import { compileFormValidator } from '../../src/http/validation.js';
import {
  acceptQ,
  webAction,
  formReply,
  invalidForm,
  issuesMessage,
  safeNext,
  wantsJson,
} from '../../src/web/answers.js';
import { ActorError } from '../../actors/runtime/actor.js';

const SITE = 'http://shop.example:8080';

const Form = Type.Object({
  account_id: Type.Integer({ minimum: 1 }),
  amount: Type.Number({ exclusiveMinimum: 0 }),
  card_id: Type.Union([Type.Integer(), Type.Null()], { default: null }),
  note: Type.String({ default: '' }),
  next: Type.String({ default: '/console' }),
});

const routes = [
  route({
    method: 'POST',
    path: '/console/payout',
    auth: 'none',
    summary: 'a form',
    body: Form,
    onInvalid: invalidForm({ amount: 'enter an amount above 0' }, (_req, p) =>
      text(`<p>${p.message}</p>`, 'text/html', p.status),
    ),
    handler: ({ req, body }) =>
      webAction(
        req,
        async () => {
          if (body.amount > 1000) throw new ActorError(400, 'balance insufficient');
          return formReply(req, body.next, {
            account_id: body.account_id,
            amount: body.amount,
            card_id: body.card_id,
            note: body.note,
          });
        },
        (p) => text(`<p>${p.message}</p>`, 'text/html', p.status),
      ),
  }),
  route({
    method: 'POST',
    path: '/api/v1/things',
    auth: 'none',
    summary: 'an API post',
    body: Type.Object({ n: Type.Integer() }),
    handler: ({ body }) => json({ n: body.n }, 201),
  }),
  route({
    method: 'GET',
    path: '/page',
    auth: 'none',
    summary: 'a page',
    handler: () => text('<p>page</p>', 'text/html'),
  }),
  route({
    method: 'DELETE',
    path: '/thing',
    auth: 'none',
    summary: 'a web delete',
    handler: () => json({ ok: true }),
  }),
];

const { app } = createApp({
  routes,
  log: pino({ level: 'silent' }),
  bodyLimitBytes: 4096,
  authenticators: {},
  siteOrigin: SITE,
});
const server = await listen(app, '127.0.0.1', 0);
t.teardown(() => server.close());
const base = `http://127.0.0.1:${server.port}`;

async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(base + path, { redirect: 'manual', ...init });
  const body = await res.text();
  let parsed: any = body;
  try {
    parsed = JSON.parse(body);
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_ACCEPT = { ...FORM, accept: 'application/json' };
const postForm = (body: string, headers: Record<string, string> = JSON_ACCEPT) =>
  call('/console/payout', { method: 'POST', body, headers });

t.test('a urlencoded form is coerced like a query string', async (t) => {
  const r = await postForm('account_id=3&amount=12.50&note=hi&card_id=7');
  t.equal(r.status, 200);
  t.same(r.body, { ok: true, account_id: 3, amount: 12.5, card_id: 7, note: 'hi' });
  const charset = await postForm('account_id=3&amount=1', {
    'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
    accept: 'application/json',
  });
  t.same(
    charset.body,
    { ok: true, account_id: 3, amount: 1, card_id: null, note: '' },
    'defaults apply',
  );
});

t.test('an empty form field counts as not sent (default, or missing)', async (t) => {
  const r = await postForm('account_id=3&amount=2&card_id=&note=');
  t.same(r.body, { ok: true, account_id: 3, amount: 2, card_id: null, note: '' });
  const missing = await postForm('account_id=&amount=2');
  t.equal(missing.status, 422);
  t.same(
    missing.body.detail.map((d: any) => [d.loc, d.type]),
    [[['body', 'account_id'], 'missing']],
  );
  const empty = await postForm('');
  t.equal(empty.status, 422, 'an empty form has no fields');
  t.same(
    empty.body.detail.map((d: any) => d.loc),
    [
      ['body', 'account_id'],
      ['body', 'amount'],
    ],
  );
});

t.test(
  'form values that do not parse are 422 at their field; JSON bodies stay strict',
  async (t) => {
    const r = await postForm('account_id=three&amount=-1');
    t.equal(r.status, 422);
    t.same(
      r.body.detail.map((d: any) => [d.loc, d.type]),
      [
        [['body', 'account_id'], 'int_parsing'],
        [['body', 'amount'], 'greater_than'],
      ],
    );
    const strict = await call('/console/payout', {
      method: 'POST',
      body: JSON.stringify({ account_id: '3', amount: 1 }),
      headers: { 'content-type': 'application/json' },
    });
    t.equal(strict.status, 422, 'a JSON string is not an integer');
    t.same(strict.body.detail[0].loc, ['body', 'account_id']);
  },
);

t.test('browsers get the form page with the message instead of a 422 JSON', async (t) => {
  const r = await postForm('account_id=3&amount=0', FORM);
  t.equal(r.status, 422);
  t.equal(r.body, '<p>enter an amount above 0</p>');
});

t.test('success: 303 to next for browsers, JSON for JSON clients; refusals likewise', async (t) => {
  const r = await postForm('account_id=3&amount=1&next=/console/ledger', FORM);
  t.equal(r.status, 303);
  t.equal(r.headers.get('location'), '/console/ledger');
  const evil = await postForm('account_id=3&amount=1&next=//evil.example/x', FORM);
  t.equal(evil.headers.get('location'), '/console', 'never off-site');
  const refusedPage = await postForm('account_id=3&amount=5000', FORM);
  t.equal(refusedPage.status, 400);
  t.equal(refusedPage.body, '<p>balance insufficient</p>');
  const refusedJson = await postForm('account_id=3&amount=5000');
  t.equal(refusedJson.status, 400);
  t.same(refusedJson.body, { detail: 'balance insufficient' });
});

t.test('cross-site web posts are refused with 403; the API and GETs are not guarded', async (t) => {
  const ok = 'account_id=3&amount=1';
  const refused = [
    { 'sec-fetch-site': 'cross-site' },
    { origin: 'http://evil.example' },
    { origin: 'http://shop.example:8081' },
    { origin: 'https://shop.example:8080' },
    { origin: 'null' },
    { origin: SITE, 'sec-fetch-site': 'cross-site' },
  ];
  for (const h of refused) {
    const r = await postForm(ok, { ...JSON_ACCEPT, ...h });
    t.equal(r.status, 403, JSON.stringify(h));
    t.same(r.body, { detail: 'cross-site request refused' });
  }
  for (const h of [
    {},
    { origin: SITE },
    { 'sec-fetch-site': 'same-origin', origin: SITE },
    { 'sec-fetch-site': 'none' },
  ]) {
    t.equal(
      (await postForm(ok, { ...JSON_ACCEPT, ...h })).status,
      200,
      `passes: ${JSON.stringify(h)}`,
    );
  }
  const del = await call('/thing', {
    method: 'DELETE',
    headers: { origin: 'http://evil.example' },
  });
  t.equal(del.status, 403, 'every non-GET web method is guarded');
  const api = await call('/api/v1/things', {
    method: 'POST',
    body: '{"n":1}',
    headers: {
      'content-type': 'application/json',
      origin: 'http://evil.example',
      'sec-fetch-site': 'cross-site',
    },
  });
  t.equal(api.status, 201, 'the API is for scripts: not guarded');
  const page = await call('/page', { headers: { 'sec-fetch-site': 'cross-site' } });
  t.equal(page.status, 200, 'links from other sites still open pages');
  t.equal(
    (
      await call('/console/payout?x=1', {
        method: 'POST',
        headers: { ...JSON_ACCEPT, origin: 'http://evil.example' },
        body: ok,
      })
    ).status,
    403,
  );
});

t.test('crossSite without a configured origin compares with the Host header', async (t) => {
  t.equal(crossSite({ origin: 'http://a.example', host: 'a.example' }), false);
  t.equal(crossSite({ origin: 'http://b.example', host: 'a.example' }), true);
  t.equal(crossSite({ origin: 'null', host: 'a.example' }), true);
  t.equal(crossSite({ host: 'a.example' }), false);
  t.equal(crossSite({ 'sec-fetch-site': 'same-site', origin: SITE }, SITE), false);
});

t.test('the form validator is only for Type.Object bodies', async (t) => {
  t.equal(compileFormValidator(Type.Array(Type.Integer())), undefined);
  const v = compileFormValidator(Form)!;
  t.same(
    v({ account_id: ['1', '2'], amount: '3' }),
    { ok: true, value: { account_id: 2, amount: 3, card_id: null, note: '', next: '/console' } },
    'last repeated value wins',
  );
});

t.test('safeNext keeps only paths of this site', async (t) => {
  for (const ok of ['/', '/console', '/checkout/abc?x=1&y=%2F', '/login?next=%2Fconsole'])
    t.equal(safeNext(ok), ok);
  for (const bad of [
    '//evil.example',
    '/\\evil.example',
    '/a\\b',
    'https://evil.example/',
    'console',
    '',
    ' /console',
    '/con\nsole',
    '/con\tsole',
    '/caf\u00e9',
    undefined,
    7,
  ]) {
    t.equal(safeNext(bad), '/console', JSON.stringify(bad));
  }
  fc.assert(
    fc.property(fc.string(), (s) => {
      const n = safeNext(s);
      return (
        n === '/console' ||
        (n === s &&
          n.startsWith('/') &&
          !n.startsWith('//') &&
          new URL(n, 'http://site.example').host === 'site.example')
      );
    }),
  );
});

t.test(
  'content negotiation: JSON only when the Accept header prefers it to HTML, by q-value',
  async (t) => {
    const req = (accept?: string, contentType?: string): RequestInfo => ({
      method: 'GET',
      url: '/x',
      query: '',
      headers: {
        ...(accept !== undefined ? { accept } : {}),
        ...(contentType ? { 'content-type': contentType } : {}),
      },
      remoteAddress: () => '',
    });
    const cases: [string | undefined, boolean][] = [
      [undefined, false],
      ['', false],
      ['*/*', false],
      ['text/html', false],
      ['application/json', true],
      ['Application/JSON; charset=utf-8', true],
      ['text/html,application/json;q=0.9,*/*;q=0.8', false],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
      ['application/json, text/html', false],
      ['application/json;q=1, text/html;q=0.5', true],
      ['text/html;q=0.5, application/json', true],
      ['application/json, */*;q=0.1', true],
      ['application/json;q=0.2, */*;q=0.1', true],
      ['application/json;q=0.2, */*', false],
      ['application/*', true],
      ['text/*;q=0.3, application/*;q=0.2', false],
      ['application/json;q=0', false],
      ['text/html;q=0, */*', true],
      ['application/json;q=0.900, text/html;q=0.899', true],
      ['application/json;q=2, text/html;q=0.5', false],
      ['application/json;q=bad, text/html;q=0.5', false],
      [' application/json ; q=0.7 , text/html ; q=0.6 ', true],
    ];
    for (const [accept, json] of cases) t.equal(wantsJson(req(accept)), json, String(accept));
    t.equal(
      wantsJson(req('text/html', 'application/json')),
      true,
      'a JSON body comes from no HTML form',
    );
    t.equal(
      acceptQ('text/html;q=0.4, text/*;q=0.8, */*;q=0.1', 'text/html'),
      0.4,
      'the most specific range decides',
    );
    t.equal(acceptQ('text/*;q=0.8, */*;q=0.1', 'text/html'), 0.8);
    t.equal(acceptQ('image/png', 'text/html'), 0, 'no range matches');
  },
);

t.test('formReply, wantsJson and issuesMessage', async (t) => {
  const req = (accept?: string): RequestInfo => ({
    method: 'POST',
    url: '/x',
    query: '',
    headers: accept ? { accept } : {},
    remoteAddress: () => '',
  });
  t.equal(wantsJson(req('application/json')), true);
  t.equal(wantsJson(req('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')), false);
  t.same(formReply(req(), '/console/orders', { id: 1 }, { 'set-cookie': 'c=1' }), {
    status: 303,
    headers: { 'set-cookie': 'c=1', location: '/console/orders' },
  });
  t.same(formReply(req('application/json'), '/x', { id: 1 }), {
    status: 200,
    json: { ok: true, id: 1 },
    headers: {},
  });
  t.equal(
    issuesMessage(
      [
        { loc: ['body', 'email'], msg: 'x', type: 'missing' },
        { loc: ['body', 'display_name'], msg: 'too long', type: 't' },
      ],
      {},
    ),
    'email is required; display name: too long',
  );
  const thrown = await webAction(
    req('application/json'),
    async () => {
      throw new HttpError(402, 'card declined');
    },
    () => text('page'),
  ).catch((e) => e);
  t.ok(thrown instanceof HttpError, 'JSON clients get the refusal itself');
  const page = await webAction(
    req(),
    async () => {
      throw new HttpError(402, 'card declined');
    },
    (p) => text(p.message, 'text/html', p.status),
  );
  t.same([page.status, page.body], [402, 'card declined']);
  const bug = await webAction(
    req(),
    async () => {
      throw new Error('bug');
    },
    () => text('page'),
  ).catch((e) => e);
  t.match(bug, { message: 'bug' }, 'unexpected errors are not dressed up as pages');
});
