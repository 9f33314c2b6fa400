// Holders on the web over HTTP (SPEC.md "Authentication" item 8, CONTRACT.md "Web form posts"):
// register, log in and log out as a JSON client and as a browser; the session cookie and what is
// stored of it; validation and refusals; cross-site refusal; the login redirect; no open redirect.
import t from 'tap';
import { createHash } from 'node:crypto';
import {
  getPage,
  postForm,
  registerHolder,
  sessionCookieOf,
  sharedWebService,
} from '../../helpers/web.js';
import { sessionCookie } from '../../../src/http/authenticators/holder-session.js';
import type { Services } from '../../../src/http/services.js';
import { instantSql } from '../../../actors/runtime/sql.js';

const PASSWORD = 'correct horse 1';

t.test('holders: register, login, logout', async (t) => {
  const svc = await sharedWebService();
  const db = (sql: string, params: unknown[] = []) => svc.orm.em.fork().execute(sql, params);

  await t.test(
    'a JSON client registers: 200 {ok}, a session cookie, the e-mail lowercased',
    async (t) => {
      const r = await postForm(
        svc,
        '/register',
        {
          email: 'Ada@Example.com',
          password: PASSWORD,
          password2: PASSWORD,
          display_name: ' Ada ',
        },
        { json: true },
      );
      t.equal(r.status, 200);
      t.match(r.body, {
        ok: true,
        email: 'ada@example.com',
        display_name: 'Ada',
        next: '/console',
      });
      t.type(r.body.holder_id, 'number');
      const cookie = r.setCookie!;
      t.match(cookie, /^holder_session=[A-Za-z0-9_-]{43};/);
      for (const flag of [/; HttpOnly/i, /; SameSite=Lax/i, /; Path=\//, /; Max-Age=2592000/])
        t.match(cookie, flag);
      t.notMatch(cookie, /Secure/i, 'not Secure over http');
      const token = sessionCookieOf(r).split('=')[1];
      // Compared with the service clock's now, as the service compares it (never the database's clock).
      const [row] = await db(
        `select token_hash, expires_at > ${instantSql()} + interval '29 days' as long from holder_session where holder_id = ?`,
        [svc.services.clock.realNow(), r.body.holder_id],
      );
      t.equal(
        row.token_hash,
        createHash('sha256').update(token).digest('hex'),
        "only the token's sha256 is stored",
      );
      t.ok(row.long, 'the session lasts 30 days');
      const [h] = await db('select email, password_hash from holder where id = ?', [
        r.body.holder_id,
      ]);
      t.equal(h.email, 'ada@example.com');
      t.match(h.password_hash, /^scrypt\$/);
      t.notOk(h.password_hash.includes(PASSWORD));
      const page = await getPage(svc, '/console', { cookie: sessionCookieOf(r) });
      t.equal(page.status, 200);
      t.match(page.text, 'ada@example.com');
    },
  );

  await t.test('the cookie is Secure when BASE_URL is https', async (t) => {
    const fake = { config: { baseUrl: 'https://market.example' } } as Services;
    t.match(sessionCookie(fake, 'x'.repeat(43)), /; Secure/);
    t.match(
      sessionCookie(fake, null),
      /^holder_session=; Max-Age=0; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
  });

  await t.test('a browser registers: 303 to next with the cookie', async (t) => {
    const r = await postForm(svc, '/register', {
      email: 'bob@example.com',
      password: PASSWORD,
      next: '/console/orders',
    });
    t.equal(r.status, 303);
    t.equal(r.location, '/console/orders');
    const page = await getPage(svc, '/console/orders', { cookie: sessionCookieOf(r) });
    t.equal(page.status, 200);
    t.match(page.text, /<h1>Orders<\/h1>/);
    const form = await getPage(svc, '/register?next=%2Fcheckout%2Fabc');
    t.equal(form.status, 200);
    t.match(form.text, 'name="next" value="/checkout/abc"');
  });

  await t.test('a registered e-mail (any case) is 409', async (t) => {
    const r = await postForm(
      svc,
      '/register',
      { email: 'ADA@example.com', password: PASSWORD },
      { json: true },
    );
    t.equal(r.status, 409);
    t.same(r.body, { detail: 'e-mail already registered' });
    const page = await postForm(svc, '/register', { email: 'ada@example.com', password: PASSWORD });
    t.equal(page.status, 409, 'a browser gets the form again under the same status');
    t.match(page.text, 'e-mail already registered');
    t.match(page.text, 'value="ada@example.com"', 'with what was typed');
    t.notMatch(page.text, PASSWORD, 'never the password');
    t.equal(page.setCookie, null);
  });

  await t.test(
    'form validation: 422 JSON for JSON clients, the form with a message for browsers',
    async (t) => {
      const cases: [Record<string, string>, string, RegExp][] = [
        [{ email: 'c@example.com', password: 'short' }, 'password', /at least 8 characters/],
        [{ email: 'no-at-sign', password: PASSWORD }, 'email', /e-mail address/],
        [{ password: PASSWORD }, 'email', /e-mail address/],
        [
          { email: 'c@example.com', password: PASSWORD, password2: 'something else' },
          'password2',
          /passwords differ/,
        ],
        [
          { email: 'c@example.com', password: PASSWORD, display_name: 'x'.repeat(121) },
          'display_name',
          /at most 120/,
        ],
      ];
      for (const [fields, field, message] of cases) {
        const r = await postForm(svc, '/register', fields, { json: true });
        t.equal(r.status, 422, `${field}: 422`);
        t.ok(
          r.body.detail.some((d: any) => d.loc[0] === 'body' && d.loc[1] === field),
          `${field}: loc in ${JSON.stringify(r.body.detail)}`,
        );
        const page = await postForm(svc, '/register', fields);
        t.equal(page.status, 422);
        t.match(page.headers.get('content-type'), /text\/html/);
        t.match(page.text, message);
      }
      t.equal(
        (await db('select count(*)::int as n from holder where email = ?', ['c@example.com']))[0].n,
        0,
        'nothing registered',
      );
    },
  );

  await t.test(
    'login: wrong password or unknown e-mail 401; right one a new session',
    async (t) => {
      const wrong = await postForm(
        svc,
        '/login',
        { email: 'ada@example.com', password: 'wrong password' },
        { json: true },
      );
      t.equal(wrong.status, 401);
      t.same(wrong.body, { detail: 'wrong e-mail or password' });
      const unknown = await postForm(
        svc,
        '/login',
        { email: 'nobody@example.com', password: PASSWORD },
        { json: true },
      );
      t.equal(unknown.status, 401);
      t.same(unknown.body, wrong.body, 'the same answer: no hint which e-mails exist');
      const page = await postForm(svc, '/login', {
        email: 'ada@example.com',
        password: 'wrong password',
        next: '/console/ledger',
      });
      t.equal(page.status, 401);
      t.match(page.text, 'wrong e-mail or password');
      t.match(page.text, 'name="next" value="/console/ledger"');
      const ok = await postForm(
        svc,
        '/login',
        { email: 'Ada@Example.COM', password: PASSWORD },
        { json: true },
      );
      t.equal(ok.status, 200);
      t.match(ok.body, { ok: true, email: 'ada@example.com' });
      const browser = await postForm(svc, '/login', {
        email: 'ada@example.com',
        password: PASSWORD,
        next: '/console/agents',
      });
      t.equal(browser.status, 303);
      t.equal(browser.location, '/console/agents');
      t.not(sessionCookieOf(browser), sessionCookieOf(ok), 'each login is its own session');
    },
  );

  await t.test('logout ends the session and clears the cookie', async (t) => {
    const { cookie } = await registerHolder(svc, 'dora@example.com');
    const other = sessionCookieOf(
      await postForm(
        svc,
        '/login',
        { email: 'dora@example.com', password: 'correct horse 1' },
        { json: true },
      ),
    );
    t.equal((await getPage(svc, '/console', { cookie })).status, 200);
    const out = await getPage(svc, '/logout', { cookie });
    t.equal(out.status, 303);
    t.equal(out.location, '/');
    t.match(out.setCookie, /^holder_session=; Max-Age=0;/);
    const after = await getPage(svc, '/console', { cookie });
    t.equal(after.status, 303, 'the old cookie no longer opens the console');
    t.equal(
      (await getPage(svc, '/console', { cookie: other })).status,
      200,
      'the other session lives on',
    );
    t.equal(
      (await getPage(svc, '/logout')).status,
      303,
      'logging out without a session is harmless',
    );
    t.same((await getPage(svc, '/logout', { json: true })).body, { ok: true });
  });

  await t.test(
    'console pages redirect to the login form when logged out; posts answer 401',
    async (t) => {
      const r = await getPage(svc, '/console');
      t.equal(r.status, 303);
      t.equal(r.location, '/login?next=%2Fconsole');
      const q = await getPage(svc, '/console/positions?status=open');
      t.equal(
        q.location,
        '/login?next=%2Fconsole%2Fpositions%3Fstatus%3Dopen',
        'the query comes back too',
      );
      for (const bad of ['holder_session=garbage', 'holder_session=' + 'A'.repeat(43), 'other=1']) {
        t.equal((await getPage(svc, '/console', { cookie: bad })).status, 303, bad);
      }
      const post = await postForm(
        svc,
        '/console/agents/1/funding',
        { enabled: 'on' },
        { json: true },
      );
      t.equal(post.status, 401);
      t.same(post.body, { detail: 'log in first' });
    },
  );

  await t.test('an expired session is no session', async (t) => {
    const { cookie } = await registerHolder(svc, 'eve@example.com');
    await db(
      `update holder_session set expires_at = ${instantSql()} - interval '1 second' where holder_id = (select id from holder where email = 'eve@example.com')`,
      [svc.services.clock.realNow()],
    );
    t.equal((await getPage(svc, '/console', { cookie })).status, 303);
  });

  await t.test('cross-site form posts are refused with 403', async (t) => {
    const fields = { email: 'ada@example.com', password: PASSWORD };
    const evil = await postForm(svc, '/login', fields, {
      json: true,
      headers: { origin: 'http://evil.example' },
    });
    t.equal(evil.status, 403);
    t.same(evil.body, { detail: 'cross-site request refused' });
    const fetchSite = await postForm(
      svc,
      '/register',
      { email: 'mallory@example.com', password: PASSWORD },
      { headers: { 'sec-fetch-site': 'cross-site' } },
    );
    t.equal(fetchSite.status, 403);
    t.equal(fetchSite.setCookie, null);
    t.equal(
      (
        await db('select count(*)::int as n from holder where email = ?', ['mallory@example.com'])
      )[0].n,
      0,
    );
    const same = await postForm(svc, '/login', fields, {
      json: true,
      headers: { origin: svc.config.baseUrl, 'sec-fetch-site': 'same-origin' },
    });
    t.equal(same.status, 200, 'our own origin passes');
  });

  await t.test('next never leaves the site', async (t) => {
    for (const next of [
      '//evil.example',
      '/\\evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
    ]) {
      const r = await postForm(svc, '/login', {
        email: 'ada@example.com',
        password: PASSWORD,
        next,
      });
      t.equal(r.status, 303);
      t.equal(r.location, '/console', `next=${next}`);
      const form = await getPage(svc, `/login?next=${encodeURIComponent(next)}`);
      t.match(form.text, 'name="next" value="/console"');
    }
  });

  await t.test('no malformed form gets a 5xx', async (t) => {
    const bodies = [
      '%',
      'email',
      'email=%ZZ&password=x',
      'email=a@b&email=c@d&password=12345678',
      '&&&=',
      'password=' + 'x'.repeat(5000),
    ];
    for (const body of bodies) {
      for (const path of [
        '/register',
        '/login',
        '/checkout/abc/pay',
        '/console/agents/1/funding',
      ]) {
        const res = await svc.get(path, {
          method: 'POST',
          body,
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        t.ok(res.status < 500, `${path} ${body.slice(0, 20)} → ${res.status}`);
      }
    }
  });
});
