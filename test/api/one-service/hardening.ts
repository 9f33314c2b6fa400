// Hardening on the real service: security headers and no inline script or style on the
// pages, GET /logout refused cross-site, API bodies JSON-only (415), NUL and lone surrogates
// answered 422 at their field before anything reaches the database.
import t from 'tap';
import { registerAgent, send } from '../../helpers/agents.js';
import { getPage, postForm, registerHolder, sharedWebService } from '../../helpers/web.js';

const svc = await sharedWebService();

t.test('every page carries the security headers and nothing inline', async (t) => {
  const { cookie } = await registerHolder(svc, 'headers@example.org');
  for (const path of [
    '/',
    '/markets',
    '/login',
    '/register',
    '/api/docs',
    '/console',
    '/console/ledger',
    '/checkout/nope',
    '/carts/nope',
  ]) {
    const p = await getPage(svc, path, { cookie });
    t.match(p.headers.get('content-type'), /^text\/html/, path);
    const csp = p.headers.get('content-security-policy') ?? '';
    t.match(csp, /default-src 'self'/, `${path} CSP`);
    t.match(csp, /script-src 'self'(;|$)/, `${path} no inline script allowed`);
    t.match(csp, /frame-ancestors 'none'/, `${path} not framed`);
    t.notMatch(csp, /unsafe-inline|unsafe-eval/, path);
    t.equal(p.headers.get('x-content-type-options'), 'nosniff', path);
    t.equal(p.headers.get('x-frame-options'), 'DENY', path);
    t.equal(p.headers.get('referrer-policy'), 'same-origin', path);
    t.notMatch(p.text, /<script(?![^>]*\bsrc=)[^>]*>/i, `${path}: no inline <script>`);
    t.notMatch(
      p.text,
      /<style\b|\sstyle=|\son[a-z]+=/i,
      `${path}: no inline style or event handler`,
    );
  }
  const css = await svc.get('/static/site.css');
  t.equal(css.status, 200);
  t.match(css.headers.get('content-type'), /^text\/css/);
  t.match(await css.text(), /font:/);
  const js = await svc.get('/static/api-docs.js');
  t.match(js.headers.get('content-type'), /^text\/javascript/);
  t.match(await js.text(), /SwaggerUIBundle\(/);
  t.equal((await svc.get('/static/../package.json')).status, 404);
  t.equal((await svc.get('/static/other.js')).status, 422);
});

t.test('GET /logout from another site is refused and the session lives on', async (t) => {
  const { cookie } = await registerHolder(svc, 'logout@example.org');
  for (const headers of [
    { 'sec-fetch-site': 'cross-site' },
    { origin: 'https://evil.example' },
    { origin: 'null' },
  ]) {
    const r = await getPage(svc, '/logout', { cookie, headers });
    t.equal(r.status, 403, JSON.stringify(headers));
    t.match(r.body, /cross-site request refused/, 'a browser reads why on the error page');
    t.equal(r.setCookie, null, 'the cookie is not cleared');
    t.equal((await getPage(svc, '/console', { cookie })).status, 200, 'still logged in');
  }
  const own = await getPage(svc, '/logout', {
    cookie,
    headers: { 'sec-fetch-site': 'same-origin', origin: svc.config.baseUrl },
  });
  t.equal(own.status, 303);
  t.equal(
    (await getPage(svc, '/console', { cookie })).status,
    303,
    'logged out from the site itself',
  );
});

t.test('API bodies are JSON or 415', async (t) => {
  const agent = await registerAgent(svc);
  const order = JSON.stringify({ market: 'h2', offer_key: 'x', qty: 1 });
  const kinds: [string | undefined, string][] = [
    [undefined, order],
    ['text/plain', order],
    ['application/xml', '<order><qty>1</qty></order>'],
    [
      'multipart/form-data; boundary=b',
      '--b\r\nContent-Disposition: form-data; name="qty"\r\n\r\n1\r\n--b--\r\n',
    ],
    ['application/x-www-form-urlencoded', 'market=h2&qty=1'],
  ];
  for (const [type, body] of kinds) {
    const r = await svc.get('/api/v1/orders', {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${agent.key}`, ...(type ? { 'content-type': type } : {}) },
    });
    t.equal(r.status, 415, String(type));
    t.type((await r.json()).detail, 'string');
  }
  const json = await svc.get('/api/v1/orders', {
    method: 'POST',
    body: order,
    headers: {
      authorization: `Bearer ${agent.key}`,
      'content-type': 'application/json; charset=utf-8',
    },
  });
  t.not(json.status, 415, 'JSON with a charset is JSON');
  const reg = await svc.get('/api/v1/agents/register', {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(reg.status, 415, 'unauthenticated routes too');
  const huge = await agent.post('/api/v1/orders', {
    market: 'h2',
    offer_key: 'k'.repeat(500_000),
    qty: 1,
  });
  t.equal(huge.status, 404);
  t.ok(huge.body.detail.length <= 1001, 'a refusal quoting the request is cut');
});

t.test('NUL and lone surrogates are 422 at their field, nothing written', async (t) => {
  const token = (await send(svc, 'POST', '/api/v1/agents/token')).body.token as string;
  const good = {
    token,
    name: 'Scout',
    recall_phrase: 'blue heron',
    purpose: 'p',
    contact: 'c',
    operator: { name: 'Op' },
    agent: { model: 'm' },
  };
  const cases: [string[], unknown][] = [
    [['name'], 'a\u0000b'],
    [['recall_phrase'], 'abc\u0000'],
    [['purpose'], '\u0000'],
    [['contact'], 'x\ud800'],
    [['operator', 'name'], 'Op\udc00'],
    [['agent', 'model'], '\u0000'],
  ];
  for (const [path, bad] of cases) {
    const body: any = structuredClone(good);
    if (path.length === 1) body[path[0]] = bad;
    else body[path[0]][path[1]] = bad;
    const r = await send(svc, 'POST', '/api/v1/agents/register', body);
    t.equal(r.status, 422, path.join('.'));
    t.same(
      r.body.detail.map((d: any) => [d.loc, d.type]),
      [[['body', ...path], 'string_invalid_characters']],
    );
  }
  t.equal(
    (await send(svc, 'POST', '/api/v1/agents/register', good)).status,
    201,
    'the same key registers afterwards: nothing was written',
  );
  const form = await postForm(
    svc,
    '/register',
    { email: 'nul@example.org', password: 'long enough 1', display_name: 'Gr\u0000ace' },
    { json: true },
  );
  t.equal(form.status, 422);
  t.same(
    form.body.detail.map((d: any) => d.loc),
    [['body', 'display_name']],
  );
  const page = await postForm(svc, '/register', {
    email: 'nul@example.org',
    password: 'long enough 1',
    display_name: 'Gr\u0000ace',
  });
  t.equal(page.status, 422, 'a browser gets the form again');
  t.match(page.text, /display name/);
  const q = await svc.get('/api/v1/markets/h2/deals?family=%00');
  t.equal(q.status, 422);
  t.same((await q.json()).detail[0].loc, ['query', 'family']);
  const p = await svc.get('/api/v1/markets/h2%00/deals');
  t.equal(p.status, 422);
  t.same((await p.json()).detail[0].loc, ['path', 'market_id']);
});
