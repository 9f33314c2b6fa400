// Retries and idempotency (CONTRACT.md) on the real service: a repeated request with the same
// Idempotency-Key gets the first answer again (Idempotent-Replayed: true) and has no second effect;
// the same key with another body is a 400; a repeat while the first still runs is a 409; a 503
// says whether the request may have taken effect; a client retrying after random time-outs ends
// with exactly one effect per key. The clock is the test's.
import t from 'tap';
import { answersRef } from '../../actors/answers/messages.js';
import pg from 'pg';
import { MARKETS } from '../../src/engine/index.js';
import { sessionLockKey } from '../../actors/market/session-lock.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { sharedDatabaseConfig, startTestService, type TestService } from '../helpers/service.js';
import { registerAgent, send, type TestAgent } from '../helpers/agents.js';
import { APPROVED_CARD, registerHolder, submit } from '../helpers/holders.js';
import { T0 } from '../helpers/clock-rig.js';
import { eventually } from '../helpers/wait.js';

const MARKET = 'h10';
const INTERVAL = MARKETS[MARKET].interval_seconds;
let nowMs = (T0 + 100) * 1000;
const svc = await startTestService(t, {}, { realMs: () => nowMs }, await sharedDatabaseConfig(t));
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;

const keyed = (agent: TestAgent, key: string, body: unknown, s: TestService = svc) =>
  send(s, 'POST', '/api/v1/orders', body, {
    authorization: `Bearer ${agent.key}`,
    'idempotency-key': key,
  });

async function aDeal(s: TestService = svc) {
  const menu = (await send(s, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  return menu.deals[0] as { key: string; max_qty: number };
}

/** Funds an agent's account with `cents` through a ledger row and lets it pay from its balance (stamped with the service clock's now). */
async function fundAgent(s: TestService, agent: TestAgent, cents: number) {
  const em = s.orm.em.fork();
  const at = s.services.clock.realNow();
  const [h] = await em.execute(
    `insert into holder (email, password_hash, created_at) values (?, 'x', ${instantSql()}) returning id::float8 as id`,
    [`h${agent.agentId}-${Date.now()}@example.org`, at],
  );
  await em.execute('update agent set holder_id = ?, autonomous_funding = true where id = ?', [
    h.id,
    agent.agentId,
  ]);
  await em.execute(
    'update account set holder_id = ?, balance_cents = balance_cents + ? where id = ?',
    [h.id, cents, agent.accountId],
  );
  await em.execute(
    `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) select id, 'topup', ?, balance_cents, 'test:fixture', ${instantSql()} from account where id = ?`,
    [cents, at, agent.accountId],
  );
}

t.test('an order retried with its key is placed once and answered the same', async (t) => {
  const agent = await registerAgent(svc);
  const deal = await aDeal();
  const body = { market: MARKET, offer_key: deal.key, qty: 1 };
  const first = await keyed(agent, 'order-1', body);
  t.equal(first.status, 201);
  t.equal(first.headers.get('idempotent-replayed'), null, 'a first answer is not a replay');
  const again = await keyed(agent, 'order-1', body);
  t.equal(again.status, 201);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.same(again.body, first.body, 'the stored answer, byte for byte the same object');
  const other = await keyed(agent, 'order-1', { ...body, qty: 2 });
  t.equal(other.status, 400, 'the same key with another body');
  t.match(other.body.detail, /Idempotency-Key/);
  const [{ n }] = await q('select count(*)::int as n from orders where account_id = ?', [
    agent.accountId,
  ]);
  t.equal(n, 1, 'one order');
  const bad = await keyed(agent, 'x'.repeat(256), body);
  t.equal(bad.status, 400, 'a key over 255 characters');

  // Another caller's identical key is another request.
  const other2 = await registerAgent(svc);
  t.equal(
    (await keyed(other2, 'order-1', body)).headers.get('idempotent-replayed'),
    null,
    'keys are scoped to the caller',
  );

  // After the session's close the deal is gone, but the retry still gets its answer.
  nowMs = (svc.services.clock.closesAt(first.body.tick, INTERVAL) + 1) * 1000;
  const late = await keyed(agent, 'order-1', body);
  t.equal(late.status, 201, 'answered from the stored answer after the session closed');
  t.same(late.body, first.body);
  const fresh = await keyed(agent, 'order-2', body);
  t.equal(
    fresh.status,
    404,
    "a new order on the closed session's deal is refused by the clock, before the record closed",
  );
  await svc.services.supervisor.runDue();
});

t.test('a refusal is stored too, and a registration and a payment are answered once', async (t) => {
  const agent = await registerAgent(svc);
  const deal = await aDeal();
  const poor = { market: MARKET, offer_key: deal.key, qty: 1, pay_from_balance: true };
  const r1 = await keyed(agent, 'poor-1', poor);
  t.equal(r1.status, 403, 'no autonomous funding');
  const r2 = await keyed(agent, 'poor-1', poor);
  t.equal(r2.status, 403);
  t.equal(r2.headers.get('idempotent-replayed'), 'true', 'the refusal is answered again');

  const token = (await send(svc, 'POST', '/api/v1/agents/token')).body.token;
  const reg = { token, name: 'Once', recall_phrase: 'blue heron' };
  const a1 = await send(svc, 'POST', '/api/v1/agents/register', reg, {
    'idempotency-key': `reg-${token.slice(0, 8)}`,
  });
  const a2 = await send(svc, 'POST', '/api/v1/agents/register', reg, {
    'idempotency-key': `reg-${token.slice(0, 8)}`,
  });
  t.equal(a1.status, 201);
  t.equal(a2.status, 201, 'a retried registration is not a 409 "key taken"');
  t.equal(a2.headers.get('idempotent-replayed'), 'true');
  t.same(a2.body, a1.body);

  const holder = await registerHolder(svc);
  const o = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty: 1 });
  const path = `${new URL(o.body.purchase_url).pathname}/pay`;
  const payOnce = () =>
    svc.get(path, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        cookie: holder.cookie,
        'idempotency-key': 'pay-1',
      },
      body: new URLSearchParams(APPROVED_CARD).toString(),
    });
  const p1 = await payOnce();
  const p2 = await payOnce();
  t.equal(p1.status, 200);
  t.equal(p2.status, 200);
  t.equal(p2.headers.get('idempotent-replayed'), 'true');
  const b1 = await p1.json();
  t.same(await p2.json(), b1, 'the payment\'s answer again (not "already paid, charged 0")');
  t.ok(b1.charged > 0);
  const charges = await q(
    `select count(*)::int as n from ledger where account_id = ? and kind = 'card_charge'`,
    [agent.accountId],
  );
  t.equal(charges[0].n, 1, 'charged once');
  // A holder's form without the key keeps working as before.
  t.equal((await submit(svc, path, APPROVED_CARD, holder.cookie)).body.already_paid, true);
});

t.test(
  "a holder's registration and login retried with a key: one account, a working session each time, no token stored",
  async (t) => {
    const form = (path: string, fields: Record<string, string>, key: string) =>
      svc.get(path, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'idempotency-key': key,
        },
        body: new URLSearchParams(fields).toString(),
      });
    const email = `retry-${process.pid}@example.org`;
    const fields = {
      email,
      password: 'correct horse battery',
      password2: 'correct horse battery',
      display_name: 'Retry',
    };
    const r1 = await form('/register', fields, 'hreg-1');
    const r2 = await form('/register', fields, 'hreg-1');
    t.equal(r1.status, 200);
    t.equal(r2.status, 200, 'not "e-mail already registered"');
    t.equal(r2.headers.get('idempotent-replayed'), 'true');
    const b1 = await r1.json();
    t.same(await r2.json(), b1);
    const cookie = (r2.headers.get('set-cookie') ?? '').split(';')[0];
    t.match(cookie, /^holder_session=.+/, 'the replay signs in too');
    t.not(cookie, (r1.headers.get('set-cookie') ?? '').split(';')[0], 'with a session of its own');
    t.equal(
      (await svc.get('/console', { headers: { cookie }, redirect: 'manual' })).status,
      200,
      'and the session works',
    );
    t.same(
      await q('select count(*)::int as n from holder where email = ?', [email]),
      [{ n: 1 }],
      'one account',
    );
    const stored = await q(`select reply::text as reply from idempotency where key = 'hreg-1'`);
    t.equal(stored.length, 1);
    t.notMatch(stored[0].reply, /token/, 'the stored answer holds no session token');

    const wrong = { email, password: 'not the password' };
    const w1 = await form('/login', wrong, 'hlog-1');
    const w2 = await form('/login', wrong, 'hlog-1');
    t.equal(w1.status, 401);
    t.equal(w2.status, 401);
    t.equal(
      w2.headers.get('idempotent-replayed'),
      'true',
      'a refused login is answered again, not checked again',
    );
  },
);

t.test('a stored answer is kept 24 hours, then swept', async (t) => {
  const agent = await registerAgent(svc);
  const deal = await aDeal();
  const body = { market: MARKET, offer_key: deal.key, qty: 1 };
  t.equal((await keyed(agent, 'old-1', body)).status, 201);
  // Aged 25 hours on the service's clock (the sweep compares with it, never with the database's).
  await q(
    `update idempotency set created_at = ${instantSql()} - interval '25 hours' where key = 'old-1'`,
    [svc.services.clock.realNow()],
  );
  const swept = await svc.services.runtime.ask(answersRef, {
    kind: 'sweep',
    at: svc.services.clock.realNow(),
  });
  t.ok(swept.deleted >= 1, 'the expired answer was swept');
  t.same(await q(`select key from idempotency where key = 'old-1'`), []);
});

t.test(
  'while the first request runs, a repeat is a 409; a time-out 503 says to retry with the key',
  async (t) => {
    // The service starts and the set-up runs with the default ask time-out; only the order below,
    // which waits behind a lock the test holds, must time out: the time-out is shortened then. Held
    // lock ⇒ the first ask cannot answer before it times out, whatever the machine's speed.
    const slow = await startTestService(
      t,
      {},
      { realMs: () => nowMs },
      await sharedDatabaseConfig(t),
    );
    const agent = await registerAgent(slow);
    const deal = await aDeal(slow);
    const body = { market: MARKET, offer_key: deal.key, qty: 1 };
    const runtimeOpts = (slow.services.runtime as unknown as { opts: { askTimeoutMs: number } })
      .opts;
    const askTimeoutMs = runtimeOpts.askTimeoutMs;
    runtimeOpts.askTimeoutMs = 300;
    // A close in progress holds the market's session lock: the order waits behind it.
    const blocker = new pg.Client({ connectionString: slow.config.databaseUrl });
    await blocker.connect();
    t.teardown(() => blocker.end());
    await blocker.query('begin');
    await blocker.query('select pg_advisory_xact_lock(hashtext($1))', [sessionLockKey(MARKET)]);
    const first = await keyed(agent, 'slow-1', body, slow);
    t.equal(first.status, 503);
    t.match(first.body.detail, /may still take effect.*same Idempotency-Key/);
    runtimeOpts.askTimeoutMs = askTimeoutMs;
    const during = await keyed(agent, 'slow-1', body, slow);
    t.equal(during.status, 409, 'the first is still running (the lock is still held)');
    await blocker.query('commit');
    // Released: the first order goes through; until it has, a repeat is a 409 (never a second order).
    const after = await eventually(async () => {
      const r = await keyed(agent, 'slow-1', body, slow);
      return r.status === 409 || r.status === 503 ? undefined : r;
    }, 'the first order to go through');
    t.equal(after.status, 201, 'the retry gets the answer of the order that went through');
    t.equal(after.headers.get('idempotent-replayed'), 'true');
    const rows = await slow.orm.em
      .fork()
      .execute('select count(*)::int as n from orders where account_id = ?', [agent.accountId]);
    t.equal(rows[0].n, 1, 'one order');
  },
);

t.test(
  'a client that gives up after random time-outs and retries with its key gets one effect per key',
  async (t) => {
    const agent = await registerAgent(svc);
    const deal = await aDeal();
    const orderCents = 100_000;
    await fundAgent(svc, agent, orderCents * 100);
    const body = { market: MARKET, offer_key: deal.key, qty: 1, pay_from_balance: true };
    const KEYS = 30;
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const post = (k: number, signal?: AbortSignal) =>
      svc.get('/api/v1/orders', {
        method: 'POST',
        signal,
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${agent.key}`,
          'idempotency-key': `rnd-${k}`,
        },
        body: JSON.stringify(body),
      });
    // While a close holds the market's session lock no order can finish: every impatient attempt
    // below gives up on a request that is (if it reached the service at all) still running, whatever
    // the machine's speed. The client's random patience (1..15 ms, 1 to 3 attempts per key) decides
    // only how far each request got before it was abandoned; every outcome is fine.
    const blocker = new pg.Client({ connectionString: svc.config.databaseUrl });
    await blocker.connect();
    t.teardown(() => blocker.end());
    await blocker.query('begin');
    await blocker.query('select pg_advisory_xact_lock(hashtext($1))', [sessionLockKey(MARKET)]);
    const early: Record<number, number> = {};
    await Promise.all(
      Array.from({ length: KEYS }, async (_, k) => {
        const attempts = 1 + Math.floor(random() * 3);
        for (let attempt = 0; attempt < attempts; attempt++) {
          const ctl = new AbortController();
          const timer = setTimeout(() => ctl.abort(), 1 + Math.floor(random() * 15)); // the client's random patience; any outcome is checked
          try {
            const res = await post(k, ctl.signal);
            await res.text();
            early[res.status] = (early[res.status] ?? 0) + 1; // a 409 (a repeat of a running key) or a 503
          } catch {
            // gave up waiting: retries with the same key
          } finally {
            clearTimeout(timer);
          }
        }
      }),
    );
    t.ok(
      Object.keys(early).every((s) => s === '409' || s === '503'),
      `no order finished behind the lock (answers ${JSON.stringify(early)})`,
    );
    await blocker.query('commit');
    // Then a patient client: it retries each key until the key's order has an answer.
    const answers = await Promise.all(
      Array.from({ length: KEYS }, (_, k) =>
        eventually(async () => {
          const res = await post(k);
          const text = await res.text();
          return res.status === 409 || res.status === 503
            ? undefined
            : { status: res.status, body: JSON.parse(text) };
        }, `an answer for key rnd-${k}`),
      ),
    );
    t.ok(
      answers.every((a) => a.status === 201),
      'every key ended with its order',
    );
    t.equal(new Set(answers.map((a) => a.body.id)).size, KEYS, 'one distinct order per key');
    const [{ n }] = await q(`select count(*)::int as n from orders where account_id = ?`, [
      agent.accountId,
    ]);
    t.equal(n, KEYS, 'exactly one order per key in the database');
    const debits = await q(
      `select count(*)::int as n, count(distinct ref)::int as refs from ledger where account_id = ? and kind = 'order_debit'`,
      [agent.accountId],
    );
    t.same(debits, [{ n: KEYS, refs: KEYS }], 'each funded once');
    const [bal] = await q(
      `select balance_cents::float8 as b, (select sum(amount_cents)::float8 from ledger where account_id = a.id) as s from account a where id = ?`,
      [agent.accountId],
    );
    t.equal(bal.b, bal.s, 'balance = Σ ledger');
  },
);

t.test(
  'two processes on one database running one key at once: one effect, the other answers it again',
  async (t) => {
    const twin = await startTestService(t, {}, { realMs: () => nowMs }, svc.config);
    const agent = await registerAgent(svc);
    const holder = await registerHolder(svc);
    const deal = await aDeal();
    const o = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty: 1 });
    t.equal(o.status, 201);
    const path = `${new URL(o.body.purchase_url).pathname}/pay`;
    const pay = (s: TestService) =>
      s.get(path, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          cookie: holder.cookie,
          'idempotency-key': 'twin-pay',
        },
        body: new URLSearchParams(APPROVED_CARD).toString(),
      });
    const [a, b] = await Promise.all([pay(svc), pay(twin)]);
    t.same([a.status, b.status], [200, 200]);
    const replays = [a, b].filter((r) => r.headers.get('idempotent-replayed') === 'true').length;
    t.equal(replays, 1, 'exactly one answer is a replay');
    const [ba, bb] = [await a.json(), await b.json()];
    t.same(ba, bb, 'both callers get the same answer');
    t.equal(ba.already_paid, false, 'the answer of the payment that happened');
    const charges = await q(
      `select count(*)::int as n from ledger where account_id = ? and kind = 'card_charge'`,
      [agent.accountId],
    );
    t.equal(charges[0].n, 1, 'charged once');
  },
);
