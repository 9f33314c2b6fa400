// Throttles of holder login and web registration (issue 8): consecutive failed logins per e-mail
// and per client address, registrations per address, answered 429 with Retry-After. The counters
// live in PostgreSQL, so two service processes on one database share them. Agent registration is
// never throttled. Requests come from distinct loopback addresses (127.0.0.x) to tell clients apart.
import t from 'tap';
import { Agent } from 'undici';
import { HOLDER_LIMITS } from '../../actors/holder/throttle.js';
import { freshDatabase } from '../helpers/db.js';
import { startTestService, type TestService } from '../helpers/service.js';

const PASSWORD = 'correct horse 1';
const LOGIN = HOLDER_LIMITS.loginFailsPerEmail;
const ADDRESS = HOLDER_LIMITS.loginFailsPerAddress;
const REGISTER = HOLDER_LIMITS.registerPerAddress;

type Answer = { status: number; body: any; text: string; retryAfter: string | null };

const agents = new Map<string, Agent>();
/** An HTTP pool whose connections leave from `from` (a loopback address). */
function from(address: string): Agent {
  let a = agents.get(address);
  if (!a) agents.set(address, (a = new Agent({ keepAliveTimeout: 1000, localAddress: address })));
  return a;
}
t.teardown(() => Promise.all([...agents.values()].map((a) => a.destroy())));

async function post(svc: TestService, path: string, fields: Record<string, string>, address = '127.0.0.1', json = true): Promise<Answer> {
  const res = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: json ? 'application/json' : 'text/html' },
    body: new URLSearchParams(fields).toString(),
    dispatcher: from(address),
  } as RequestInit);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, text, retryAfter: res.headers.get('retry-after') };
}

const login = (svc: TestService, email: string, password: string, address?: string) => post(svc, '/login', { email, password }, address);

t.test('login and registration throttles, shared by two processes on one database', async (t) => {
  const url = await freshDatabase(t);
  // One after the other: the first runs the migrations.
  const a = await startTestService(t, { DATABASE_URL: url, SVC_SHARDS: '1' });
  const b = await startTestService(t, { DATABASE_URL: url, SVC_SHARDS: '1' });
  const db = (sql: string, params: unknown[] = []) => a.orm.em.fork().execute(sql, params);
  for (const email of ['ada@example.com', 'bob@example.com']) {
    t.equal((await post(a, '/register', { email, password: PASSWORD })).status, 200, `${email} registered`);
  }

  await t.test('200 wrong passwords: 401 up to the bound, then 429 with Retry-After, counted across both processes', async (t) => {
    const statuses: number[] = [];
    const oddAnswers: string[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await login(i % 2 ? a : b, 'ada@example.com', `wrong password ${i}`);
      statuses.push(r.status);
      const seconds = Number(r.retryAfter);
      const ok429 = /^too many failed logins for this account; try again in \d+ minutes$/.test(r.body?.detail) && Number.isInteger(seconds) && seconds >= 1 && seconds <= LOGIN.seconds;
      if (r.status === 429 && !ok429) oddAnswers.push(`${r.retryAfter} ${r.text}`);
    }
    t.same(oddAnswers, [], 'every 429 has {detail} and Retry-After within the window');
    t.same(statuses.slice(0, LOGIN.points), Array(LOGIN.points).fill(401), `the first ${LOGIN.points} are checked`);
    t.same(statuses.slice(LOGIN.points), Array(200 - LOGIN.points).fill(429), 'every later one is refused unchecked');
    const [row] = await db(`select points from rate_limit where key = 'loginFailsPerEmail:ada@example.com'`);
    t.equal(row.points, LOGIN.points, 'refused attempts are not counted as failures');
  });

  await t.test('the right password is refused too while the account is throttled, on either process', async (t) => {
    for (const svc of [a, b]) {
      const r = await login(svc, 'ada@example.com', PASSWORD);
      t.equal(r.status, 429);
      t.ok(Number(r.retryAfter) > 0);
    }
  });

  await t.test('another account from the same address is unaffected', async (t) => {
    t.equal((await login(a, 'bob@example.com', PASSWORD)).status, 200);
  });

  await t.test('a browser gets the login form again under 429, with the message and Retry-After', async (t) => {
    const r = await post(b, '/login', { email: 'ada@example.com', password: PASSWORD }, '127.0.0.1', false);
    t.equal(r.status, 429);
    t.match(r.text, 'too many failed logins for this account');
    t.match(r.text, 'value="ada@example.com"');
    t.ok(Number(r.retryAfter) > 0);
  });

  await t.test('once the window has passed the right password works, and success clears the count', async (t) => {
    await db(`update rate_limit set expire = ? where key = 'loginFailsPerEmail:ada@example.com'`, [Date.now() - 1]);
    t.equal((await login(b, 'ada@example.com', PASSWORD)).status, 200);
    t.same(await db(`select key from rate_limit where key = 'loginFailsPerEmail:ada@example.com'`), [], 'the e-mail counter is gone');
  });

  await t.test('failed logins per address: beyond the bound the address is refused, whatever the account; other addresses are not', async (t) => {
    for (let i = 0; i < ADDRESS.points; i++) {
      const r = await login(i % 2 ? a : b, `nobody${i}@example.com`, 'wrong password', '127.0.0.2');
      if (r.status !== 401) t.fail(`attempt ${i}: ${r.status} ${r.text}`);
    }
    const refused = await login(a, 'bob@example.com', PASSWORD, '127.0.0.2');
    t.equal(refused.status, 429);
    t.match(refused.body, { detail: /too many failed logins from your address/ });
    t.equal((await login(b, 'bob@example.com', PASSWORD, '127.0.0.3')).status, 200, 'another address logs in');
  });

  await t.test('registrations per address: beyond the bound 429; another address registers', async (t) => {
    for (let i = 0; i < REGISTER.points; i++) {
      const r = await post(i % 2 ? a : b, '/register', { email: `new${i}@example.com`, password: PASSWORD }, '127.0.0.4');
      if (r.status !== 200) t.fail(`registration ${i}: ${r.status} ${r.text}`);
    }
    const refused = await post(a, '/register', { email: 'late@example.com', password: PASSWORD }, '127.0.0.4');
    t.equal(refused.status, 429);
    t.match(refused.body, { detail: /too many registrations from your address/ });
    const seconds = Number(refused.retryAfter);
    t.ok(seconds >= 1 && seconds <= REGISTER.seconds, `Retry-After ${refused.retryAfter}`);
    t.same(await db(`select 1 from holder where email = 'late@example.com'`), [], 'nothing registered');
    t.equal((await post(b, '/register', { email: 'late@example.com', password: PASSWORD }, '127.0.0.5')).status, 200);
  });

  await t.test('agent registration is not throttled', async (t) => {
    const statuses = new Set<number>();
    for (let i = 0; i < 3 * REGISTER.points; i++) {
      const svc = i % 2 ? a : b;
      const key = ((await (await svc.get('/api/v1/agents/token', { method: 'POST' })).json()) as { token: string }).token;
      const res = await svc.get('/api/v1/agents/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token: key, name: `fleet ${i}`, recall_phrase: 'blue heron' }),
      });
      await res.arrayBuffer();
      statuses.add(res.status);
    }
    t.same([...statuses], [201]);
  });
});
