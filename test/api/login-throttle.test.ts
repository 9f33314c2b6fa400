// Throttles of holder login and web registration: consecutive failed
// logins per (e-mail, client address) pair, which block that pair only, and failed logins per client
// address per day, which block that address for every e-mail; registrations per address; answered
// 429 with Retry-After. A stranger's wrong passwords do not lock the holder out of their own address.
// The counters live in PostgreSQL, so two service processes on one database share them. Agent
// registration is never throttled. An agent key's API requests count against its rate limit, per front end. Requests come from distinct loopback addresses (127.0.0.x: the
// service keys on the socket's peer address) to tell clients apart.
import t from 'tap';
import { Agent } from 'undici';
import { HOLDER_LIMITS } from '../../actors/holder/throttle.js';
import { freshDatabase } from '../helpers/db.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { CLOCKED_START_MS } from '../helpers/clocked.js';
import { registerAgent, send } from '../helpers/agents.js';

const PASSWORD = 'correct horse 1';
/** Service a's per-key rate limit (SVC_RATE_LIMIT): small enough to pass in a few requests. */
const RATE = 5;
const PAIR = HOLDER_LIMITS.loginFailsPerEmailAndAddress;
const DAY = HOLDER_LIMITS.loginFailsPerAddressPerDay;
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

async function post(
  svc: TestService,
  path: string,
  fields: Record<string, string>,
  address = '127.0.0.1',
  json = true,
): Promise<Answer> {
  const res = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: json ? 'application/json' : 'text/html',
    },
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

const login = (svc: TestService, email: string, password: string, address?: string) =>
  post(svc, '/login', { email, password }, address);

t.test('login and registration throttles, shared by two processes on one database', async (t) => {
  const url = await freshDatabase(t);
  // Both on one driven clock: the windows are the service's time (ARCHITECTURE rule 7), not the machine's.
  let nowMs = CLOCKED_START_MS;
  const realMs = () => nowMs;
  // One after the other: the first runs the migrations.
  const a = await startTestService(
    t,
    { DATABASE_URL: url, SVC_SHARDS: '1', SVC_RATE_LIMIT: String(RATE) },
    { realMs },
  );
  const b = await startTestService(t, { DATABASE_URL: url, SVC_SHARDS: '1' }, { realMs });
  const db = (sql: string, params: unknown[] = []) => a.orm.em.fork().execute(sql, params);
  for (const email of ['ada@example.com', 'bob@example.com']) {
    t.equal(
      (await post(a, '/register', { email, password: PASSWORD })).status,
      200,
      `${email} registered`,
    );
  }

  // The holder logs in from 127.0.0.1; a stranger guesses their password from 127.0.0.2.
  const HOME = '127.0.0.1';
  const ATTACKER = '127.0.0.2';
  const pairRow = (address: string, email: string) =>
    db(`select points from rate_limit where key = ?`, [
      `loginFailsPerEmailAndAddress:${address} ${email}`,
    ]);

  await t.test(
    '200 wrong passwords from one address: 401 up to the pair bound, then 429 with Retry-After, counted across both processes',
    async (t) => {
      const statuses: number[] = [];
      const oddAnswers: string[] = [];
      for (let i = 0; i < 200; i++) {
        const r = await login(i % 2 ? a : b, 'ada@example.com', `wrong password ${i}`, ATTACKER);
        statuses.push(r.status);
        const seconds = Number(r.retryAfter);
        // The clock stands still: the window ends exactly PAIR.seconds after the first failure.
        const ok429 =
          r.body?.detail ===
            `too many failed logins for this account from your address; try again in ${PAIR.seconds / 60} minutes` &&
          seconds === PAIR.seconds;
        if (r.status === 429 && !ok429) oddAnswers.push(`${r.retryAfter} ${r.text}`);
      }
      t.same(
        oddAnswers,
        [],
        "every 429 has {detail} and Retry-After: the rest of the pair's window",
      );
      t.same(
        statuses.slice(0, PAIR.points),
        Array(PAIR.points).fill(401),
        `the first ${PAIR.points} are checked`,
      );
      t.same(
        statuses.slice(PAIR.points),
        Array(200 - PAIR.points).fill(429),
        'every later one is refused unchecked',
      );
      t.same(
        await pairRow(ATTACKER, 'ada@example.com'),
        [{ points: PAIR.points }],
        'refused attempts are not counted as failures',
      );
      const [day] = await db(`select points from rate_limit where key = ?`, [
        `loginFailsPerAddressPerDay:${ATTACKER}`,
      ]);
      t.equal(day.points, PAIR.points, "the address's day counts the same failures");
    },
  );

  await t.test(
    "the right password is refused too on the attacker's own pair, on either process",
    async (t) => {
      for (const svc of [a, b]) {
        const r = await login(svc, 'ada@example.com', PASSWORD, ATTACKER);
        t.equal(r.status, 429);
        t.match(r.body, { detail: /^too many failed logins for this account from your address/ });
        t.ok(Number(r.retryAfter) > 0);
      }
    },
  );

  await t.test(
    'the holder logs in from another address while their e-mail is attacked, on either process',
    async (t) => {
      for (const svc of [a, b]) {
        const r = await login(svc, 'ada@example.com', PASSWORD, HOME);
        t.equal(r.status, 200, r.text);
        t.equal(r.body?.email, 'ada@example.com');
      }
      t.same(
        await pairRow(ATTACKER, 'ada@example.com'),
        [{ points: PAIR.points }],
        "the holder's success leaves the attacker's pair blocked",
      );
      t.equal((await login(a, 'ada@example.com', PASSWORD, ATTACKER)).status, 429);
    },
  );

  await t.test(
    "another account from the attacker's address is checked (the pair blocks only itself)",
    async (t) => {
      t.equal((await login(a, 'bob@example.com', 'wrong password', ATTACKER)).status, 401);
      t.equal((await login(b, 'bob@example.com', PASSWORD, ATTACKER)).status, 200);
    },
  );

  await t.test(
    'a browser gets the login form again under 429, with the message and Retry-After',
    async (t) => {
      const r = await post(
        b,
        '/login',
        { email: 'ada@example.com', password: PASSWORD },
        ATTACKER,
        false,
      );
      t.equal(r.status, 429);
      t.match(r.text, 'too many failed logins for this account from your address');
      t.match(r.text, 'value="ada@example.com"');
      t.ok(Number(r.retryAfter) > 0);
    },
  );

  await t.test(
    "once the pair's window has passed the right password works from there, and success clears the pair's count",
    async (t) => {
      // A millisecond before the pair's window ends (it began at the first failure): still refused, for a second.
      nowMs += PAIR.seconds * 1000 - 1;
      const last = await login(a, 'ada@example.com', PASSWORD, ATTACKER);
      t.same([last.status, last.retryAfter], [429, '1'], 'refused until the window ends');
      nowMs += 1;
      t.equal(
        (await login(b, 'ada@example.com', PASSWORD, ATTACKER)).status,
        200,
        'the window ended: the right password works',
      );
      t.same(await pairRow(ATTACKER, 'ada@example.com'), [], 'the pair counter is gone');
      // Consecutive: failures short of the bound, a success, and the count starts again.
      for (let i = 0; i < PAIR.points - 1; i++)
        t.equal(
          (await login(i % 2 ? a : b, 'bob@example.com', 'wrong password', '127.0.0.3')).status,
          401,
        );
      t.equal((await login(a, 'bob@example.com', PASSWORD, '127.0.0.3')).status, 200);
      t.same(
        await pairRow('127.0.0.3', 'bob@example.com'),
        [],
        "bob's pair counter is cleared by his success",
      );
      t.equal(
        (await login(b, 'bob@example.com', 'wrong password', '127.0.0.3')).status,
        401,
        'checked again, not refused',
      );
    },
  );

  await t.test(
    'failed logins per address per day: beyond the bound the address is refused, whatever the account; other addresses are not',
    async (t) => {
      const SPRAYER = '127.0.0.6';
      // One wrong password for each of many e-mails: no pair comes near its bound.
      for (let i = 0; i < DAY.points; i++) {
        const r = await login(i % 2 ? a : b, `nobody${i}@example.com`, 'wrong password', SPRAYER);
        if (r.status !== 401) t.fail(`attempt ${i}: ${r.status} ${r.text}`);
      }
      for (const svc of [a, b]) {
        for (const email of ['bob@example.com', 'someone-new@example.com']) {
          const refused = await login(svc, email, PASSWORD, SPRAYER);
          t.equal(refused.status, 429, `${email} from the address`);
          t.match(refused.body, {
            detail: /^too many failed logins from your address; try again in \d+ (minutes|hours)$/,
          });
          const seconds = Number(refused.retryAfter);
          t.ok(
            Number.isInteger(seconds) && seconds >= 1 && seconds <= DAY.seconds,
            `Retry-After ${refused.retryAfter}`,
          );
        }
      }
      const [day] = await db(`select points from rate_limit where key = ?`, [
        `loginFailsPerAddressPerDay:${SPRAYER}`,
      ]);
      t.equal(day.points, DAY.points, 'refused attempts are not counted');
      t.equal(
        (await login(b, 'bob@example.com', PASSWORD, '127.0.0.7')).status,
        200,
        'another address logs in',
      );
    },
  );

  await t.test(
    'registrations per address: beyond the bound 429; another address registers',
    async (t) => {
      for (let i = 0; i < REGISTER.points; i++) {
        const r = await post(
          i % 2 ? a : b,
          '/register',
          { email: `new${i}@example.com`, password: PASSWORD },
          '127.0.0.4',
        );
        if (r.status !== 200) t.fail(`registration ${i}: ${r.status} ${r.text}`);
      }
      const refused = await post(
        a,
        '/register',
        { email: 'late@example.com', password: PASSWORD },
        '127.0.0.4',
      );
      t.equal(refused.status, 429);
      t.match(refused.body, { detail: /too many registrations from your address/ });
      const seconds = Number(refused.retryAfter);
      t.ok(seconds >= 1 && seconds <= REGISTER.seconds, `Retry-After ${refused.retryAfter}`);
      t.same(
        await db(`select 1 from holder where email = 'late@example.com'`),
        [],
        'nothing registered',
      );
      t.equal(
        (await post(b, '/register', { email: 'late@example.com', password: PASSWORD }, '127.0.0.5'))
          .status,
        200,
      );
    },
  );

  await t.test(
    "an agent key's API requests: RateLimit headers on every answer, 429 past the quota until the window ends",
    async (t) => {
      const agent = await registerAgent(a);
      const me = () =>
        send(a, 'GET', '/api/v1/agents/me', undefined, { authorization: `Bearer ${agent.key}` });
      const manifest = (await send(a, 'GET', '/api/v1/manifest')).body;
      t.match(manifest.rate_limits, [{ name: 'per-key', quota: RATE, window_seconds: 60 }]);
      t.notOk(
        (await send(a, 'GET', '/api/v1/markets')).headers.get('ratelimit'),
        'a public request counts against nothing',
      );
      const seen: string[] = [];
      for (let i = 0; i < RATE - 1; i++) {
        const r = await me();
        t.equal(r.status, 200);
        t.equal(r.headers.get('ratelimit-policy'), `"per-key";q=${RATE};w=60`);
        seen.push(r.headers.get('ratelimit')!);
      }
      t.same(
        seen,
        Array.from({ length: RATE - 1 }, (_, i) => `"per-key";r=${RATE - 1 - i};t=60`),
        'what is left counts down; the window ends 60 s after its first request',
      );
      nowMs += 20_000;
      const missing = await send(a, 'GET', '/api/v1/orders/999999', undefined, {
        authorization: `Bearer ${agent.key}`,
      });
      t.equal(missing.status, 404);
      t.equal(
        missing.headers.get('ratelimit'),
        '"per-key";r=0;t=40',
        'an error answer counts and says so',
      );
      const over = await me();
      t.equal(over.status, 429);
      t.equal(over.headers.get('retry-after'), '40');
      t.equal(over.headers.get('ratelimit'), '"per-key";r=0;t=40');
      t.match(over.body.detail, /5 requests per 60 s are used up; retry after 40 s/);
      const other = await registerAgent(a);
      t.equal(
        (
          await send(a, 'GET', '/api/v1/agents/me', undefined, {
            authorization: `Bearer ${other.key}`,
          })
        ).status,
        200,
        'another key has its own quota',
      );
      const fromB = (
        await send(b, 'GET', '/api/v1/agents/me', undefined, {
          authorization: `Bearer ${agent.key}`,
        })
      ).headers;
      const quotaB = Number(/q=(\d+)/.exec(fromB.get('ratelimit-policy') ?? '')?.[1]);
      t.not(quotaB, RATE, 'b has its own setting');
      t.equal(fromB.get('ratelimit'), `"per-key";r=${quotaB - 1};t=60`, 'and counts its own share');
      nowMs += 40_000;
      const next = await me();
      t.equal(next.status, 200, 'a new window');
      t.equal(next.headers.get('ratelimit'), `"per-key";r=${RATE - 1};t=60`);
    },
  );

  await t.test('agent registration is not throttled', async (t) => {
    const statuses = new Set<number>();
    for (let i = 0; i < 3 * REGISTER.points; i++) {
      const svc = i % 2 ? a : b;
      const key = (
        (await (await svc.get('/api/v1/agents/token', { method: 'POST' })).json()) as {
          token: string;
        }
      ).token;
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
