// Crash tests on a real database. The built service runs as a child process
// (test/helpers/child-service.ts) and takes pay_from_balance orders from many concurrent clients:
//  (a) it is killed with SIGKILL mid-load three times and restarted on the same database;
//  (b) two service processes take the orders of the same accounts at once: first with balances that
//      cover an exact number of orders, then one of them is killed mid-load while the other goes on.
// After every crash the books are read straight from PostgreSQL: every order a client saw
// acknowledged (201) exists and is paid exactly once, no order appeared that no request could have
// placed, no ledger row is doubled, every balance equals the sum of its ledger (and every
// balance_after its running sum), every order has its funded trade round, the participation fee is
// charged at most once per holder and month. Then every request whose answer the crash lost is
// retried with its Idempotency-Key (CONTRACT.md "Retries and idempotency"): the ones that had
// committed must be answered from their stored answer, the others placed now, so that in the end
// each request has exactly one order and each order one request. (The children inherit
// SVC_LEDGER_CHECKS=1 from test/helpers/db.ts: each posting also asserts its own postcondition.)
//
// Time: SVC_TIME_SCALE=0.001 makes service time run 1000 times slower than real time from the first
// start, so the open h10 session (10 service hours) stays open for the whole test; the books check
// asserts that no session closed, so every order must still be `paid` (never `filled`/`expired`).
import t, { type Test } from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { freshDatabase } from '../helpers/db.js';
import { startChild, type ChildService } from '../helpers/child-service.js';
import { T0 } from '../helpers/clock-rig.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(260); // 6 child services started, killed and restarted

const MARKET = 'h10';
const MONTHLY_FEE = 1500;
const cents = (x: number) => Math.round(x * 100);
const rand = (n: number) => Math.floor(Math.random() * n);
/** Milliseconds since it was made: for t.comment timings only, never for an assertion. */
const stopwatch = () => {
  const t0 = Date.now();
  return () => Date.now() - t0; // wall-clock: t.comment timings only
};

const serviceEnv = (url: string) => ({
  DATABASE_URL: url,
  SVC_SHARDS: '2',
  SVC_BACKFILL_DAYS: '0',
  SVC_TIME_SCALE: '0.001',
});

/**
 * The instant the fixture's rows are stamped with (unix seconds): a fixed one, never the database's
 * clock. The children run on the machine's clock (no injected one to read); no check here reads
 * the fixture's instants (the month checks group only the fee rows, which the children stamp).
 */
const FIXTURE_AT = T0;

type Deal = { key: string; unit_cost: number; max_qty: number };
type FleetAgent = { key: string; agentId: number; accountId: number; holderId: number };

async function dbClient(
  t: { teardown: (fn: () => unknown) => void },
  url: string,
): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: url, statement_timeout: 30_000 });
  await db.connect();
  t.teardown(() => db.end().catch(() => {}));
  return db;
}

const rows = async (db: pg.Client, sql: string, params: unknown[] = []) =>
  (await db.query(sql, params)).rows;

/**
 * Registers `n` agents over HTTP, then the fixture in the database (as orders-concurrency.test.ts
 * and bench/orders.mjs do: earning the switch takes 3 settled profitable trades, which
 * trading.test.ts covers): `holders` new holders share the agents round-robin, every agent has
 * autonomous funding on, and every account is topped up with `topupCents` through a ledger row, so
 * balance = Σ ledger holds from the start.
 */
async function fleet(
  svc: ChildService,
  db: pg.Client,
  n: number,
  holders: number,
  topupCents: number,
  tag: string,
): Promise<FleetAgent[]> {
  const holderIds: number[] = [];
  for (let h = 0; h < holders; h++) {
    const [row] = await rows(
      db,
      `insert into holder (email, password_hash, created_at) values ($1, 'unused', ${instantSql('$2')}) returning id::float8 as id`,
      [`${tag}-${h}@example.org`, FIXTURE_AT],
    );
    holderIds.push(row.id);
  }
  const agents = await Promise.all(
    Array.from({ length: n }, async (_, i): Promise<FleetAgent> => {
      const token = await svc.send('POST', '/api/v1/agents/token');
      if (token.status !== 201 && token.status !== 200)
        throw new Error(`token: ${token.status} ${JSON.stringify(token.body)}`);
      const key = token.body.token as string;
      const reg = await svc.send('POST', '/api/v1/agents/register', {
        token: key,
        name: `crash ${tag} ${i}`,
        recall_phrase: 'blue heron',
      });
      if (reg.status !== 201)
        throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`);
      return {
        key,
        agentId: reg.body.agent_id,
        accountId: reg.body.account_id,
        holderId: holderIds[i % holders],
      };
    }),
  );
  for (const ag of agents) {
    await rows(db, 'update agent set holder_id = $1, autonomous_funding = true where id = $2', [
      ag.holderId,
      ag.agentId,
    ]);
    await rows(
      db,
      'update account set holder_id = $1, balance_cents = balance_cents + $2 where id = $3',
      [ag.holderId, topupCents, ag.accountId],
    );
    await rows(
      db,
      `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) values ($1, 'topup', $2, $2, $3, ${instantSql('$4')})`,
      [ag.accountId, topupCents, `test:fixture:${ag.accountId}`, FIXTURE_AT],
    );
  }
  return agents;
}

async function currentDeals(svc: ChildService): Promise<{ tick: number; deals: Deal[] }> {
  const r = await svc.send('GET', `/api/v1/markets/${MARKET}/deals?limit=50`);
  if (r.status !== 200 || !r.body.deals.length)
    throw new Error(`deals: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return r.body;
}

/** What the clients saw, per account and per process. */
class Tally {
  /** order id → what its 201 said. */
  acked = new Map<number, { account: number; total: number; by: string }>();
  /** Requests per account whose outcome the client cannot know (the connection broke after sending). */
  unknown = new Map<number, number>();
  unknownBy = new Map<string, number>();
  ackedBy = new Map<string, number>();
  /** Connections refused: the request never reached a process. */
  refused = 0;
  /** The requests whose answer was lost, to retry with their key. */
  lost: { agent: FleetAgent; key: string; body: unknown; by: string }[] = [];
  /** Every answer that was not the one expected, with its process, status and body. */
  unexpected: string[] = [];
  /** 400 answers per account (balance-limited runs only). */
  refusedForBalance = new Map<number, number>();

  static bump<K>(m: Map<K, number>, k: K) {
    m.set(k, (m.get(k) ?? 0) + 1);
  }
}

type Expect = 'paid' | 'paid-or-insufficient';

/**
 * One `POST /api/v1/orders` with `pay_from_balance` and its own Idempotency-Key. `expect` says
 * which answers are right: 'paid' only a 201 paid order; 'paid-or-insufficient' also the 400 of a
 * balance that cannot fund it (asserted by count afterwards).
 */
async function placeOrder(
  svc: ChildService,
  agent: FleetAgent,
  deal: Deal,
  qty: number,
  tally: Tally,
  expect: Expect,
): Promise<'acked' | 'refused' | 'unknown' | 'other'> {
  const key = randomUUID();
  const body = { market: MARKET, offer_key: deal.key, qty, pay_from_balance: true };
  let r;
  try {
    r = await svc.send('POST', '/api/v1/orders', body, {
      authorization: `Bearer ${agent.key}`,
      'idempotency-key': key,
    });
  } catch (err) {
    if ((err as { code?: string }).code === 'ECONNREFUSED') {
      tally.refused++;
      return 'refused';
    }
    Tally.bump(tally.unknown, agent.accountId);
    Tally.bump(tally.unknownBy, svc.name);
    tally.lost.push({ agent, key, body, by: svc.name });
    return 'unknown';
  }
  if (r.headers['idempotent-replayed'] !== undefined)
    tally.unexpected.push(
      `${svc.name}: a first request answered as a replay: ${JSON.stringify(r.body).slice(0, 200)}`,
    );
  if (
    r.status === 201 &&
    r.body?.status === 'paid' &&
    Number.isSafeInteger(r.body.id) &&
    r.body.account_id === agent.accountId
  ) {
    if (tally.acked.has(r.body.id)) tally.unexpected.push(`order ${r.body.id} acknowledged twice`);
    tally.acked.set(r.body.id, {
      account: agent.accountId,
      total: cents(r.body.total_amount),
      by: svc.name,
    });
    Tally.bump(tally.ackedBy, svc.name);
    return 'acked';
  }
  if (
    expect === 'paid-or-insufficient' &&
    r.status === 400 &&
    /^insufficient balance/.test(r.body?.detail ?? '')
  ) {
    Tally.bump(tally.refusedForBalance, agent.accountId);
    return 'other';
  }
  tally.unexpected.push(`${svc.name}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  return 'other';
}

/**
 * `concurrency` clients, each placing orders one after another on the process `target(w)` names,
 * round-robin over the agents, a random deal of `deals` and qty 1..3, until `stop()`; a client
 * whose connection breaks stops (its process is gone).
 */
async function load(opts: {
  concurrency: number;
  target: (w: number) => ChildService;
  agents: FleetAgent[];
  deals: Deal[];
  tally: Tally;
  stop: () => boolean;
  onAck?: (svc: ChildService) => void;
}): Promise<void> {
  const { agents, deals, tally } = opts;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async (_, w) => {
      for (let i = 0; !opts.stop(); i++) {
        const svc = opts.target(w);
        const agent = agents[(w + i * opts.concurrency) % agents.length];
        const deal = deals[rand(deals.length)];
        const outcome = await placeOrder(
          svc,
          agent,
          deal,
          1 + rand(Math.min(3, deal.max_qty)),
          tally,
          'paid',
        );
        if (outcome === 'acked') opts.onAck?.(svc);
        if (outcome === 'unknown' || outcome === 'refused') return;
      }
    }),
  );
}

/**
 * The clients whose answers were lost retry each request on `svc` with its Idempotency-Key and the
 * same body (CONTRACT.md "Retries and idempotency"). A request that committed before the crash has
 * its answer stored with it: the retry must get that answer again (`Idempotent-Replayed: true`, the
 * same order); one that did not must be placed now (a first answer). Afterwards every request has
 * exactly one answer and every order exactly one request. Returns how many were replays.
 */
async function retryLost(
  t: Test,
  svc: ChildService,
  db: pg.Client,
  tally: Tally,
  label: string,
): Promise<number> {
  const lost = tally.lost.splice(0);
  const stored = new Map(
    (
      await rows(
        db,
        `select scope, key, status, (reply->>'id')::float8 as id from idempotency where key = any($1::text[])`,
        [lost.map((l) => l.key)],
      )
    ).map((r) => [r.key, r]),
  );
  const wrong: string[] = [];
  let replays = 0;
  await Promise.all(
    lost.map(async (l) => {
      const prior = stored.get(l.key);
      if (
        prior &&
        (prior.scope !== `agent:${l.agent.agentId} POST /api/v1/orders` ||
          prior.status >= 300 ||
          !prior.id)
      ) {
        wrong.push(`stored answer of ${l.key}: ${JSON.stringify(prior)}`);
      }
      let r;
      try {
        r = await svc.send('POST', '/api/v1/orders', l.body, {
          authorization: `Bearer ${l.agent.key}`,
          'idempotency-key': l.key,
        });
      } catch (err) {
        wrong.push(`retry of ${l.key} on ${svc.name}: ${(err as Error).message}`);
        return;
      }
      const replayed = r.headers['idempotent-replayed'] === 'true';
      if (
        r.status !== 201 ||
        r.body?.status !== 'paid' ||
        r.body.account_id !== l.agent.accountId ||
        !Number.isSafeInteger(r.body.id)
      ) {
        wrong.push(
          `retry of ${l.key} on ${svc.name}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`,
        );
        return;
      }
      if (prior ? !replayed || r.body.id !== prior.id : replayed) {
        wrong.push(
          `retry of ${l.key} (${prior ? `stored with order ${prior.id}` : 'nothing stored'}): replayed ${replayed}, order ${r.body.id}`,
        );
      }
      if (tally.acked.has(r.body.id))
        wrong.push(
          `retry of ${l.key}: order ${r.body.id} was already acknowledged to another request`,
        );
      tally.acked.set(r.body.id, {
        account: l.agent.accountId,
        total: cents(r.body.total_amount),
        by: `${svc.name} (retry)`,
      });
      tally.unknown.set(l.agent.accountId, tally.unknown.get(l.agent.accountId)! - 1);
      if (replayed) replays++;
    }),
  );
  t.same(
    wrong,
    [],
    `${label}: each of the ${lost.length} requests whose answer was lost, retried with its key, got exactly one paid order (${replays} from the stored answer)`,
  );
  return replays;
}

/**
 * The books, read from PostgreSQL. `accounts`: every fixture account (each got one topup row).
 * Returns how many orders committed without their client seeing the 201.
 */
async function checkBooks(
  t: Test,
  db: pg.Client,
  tally: Tally,
  accounts: number[],
  label: string,
): Promise<number> {
  // No session closed: the premise that every order is still `paid`.
  t.same(
    await rows(
      db,
      `select market, tick::float8 as tick from market_session where closed_at is not null`,
    ),
    [],
    `${label}: no session closed during the test`,
  );

  // Every acknowledged order exists, on its account, paid from the balance, with the acknowledged total.
  const ackedIds = [...tally.acked.keys()];
  const found = new Map(
    (
      await rows(
        db,
        `select id::float8 as id, account_id::float8 as account, status, payment_source, total_cents::float8 as total
                       from orders where id = any($1::bigint[])`,
        [ackedIds],
      )
    ).map((r) => [r.id, r]),
  );
  const wrong: string[] = [];
  for (const [id, ack] of tally.acked) {
    const o = found.get(id);
    if (!o) wrong.push(`order ${id} (acknowledged by ${ack.by}) is missing`);
    else if (
      o.account !== ack.account ||
      o.status !== 'paid' ||
      o.payment_source !== 'balance' ||
      o.total !== ack.total
    ) {
      wrong.push(`order ${id}: ${JSON.stringify(o)} vs acknowledged ${JSON.stringify(ack)}`);
    }
  }
  t.same(
    wrong,
    [],
    `${label}: all ${ackedIds.length} acknowledged orders exist, paid from the balance, as acknowledged`,
  );

  // Nothing placed that no request could have placed: per account, the orders beyond the
  // acknowledged ones are at most the requests whose answer was lost.
  const perAccount = new Map(
    (
      await rows(db, `select account_id::float8 as a, count(*)::int as n from orders group by 1`)
    ).map((r) => [r.a, r.n]),
  );
  const ackedPer = new Map<number, number>();
  for (const ack of tally.acked.values()) Tally.bump(ackedPer, ack.account);
  const phantom: string[] = [];
  let unacked = 0;
  for (const [a, n] of perAccount) {
    const extra = n - (ackedPer.get(a) ?? 0);
    unacked += Math.max(extra, 0);
    if (!accounts.includes(a) || extra < 0 || extra > (tally.unknown.get(a) ?? 0)) {
      phantom.push(
        `account ${a}: ${n} orders, ${ackedPer.get(a) ?? 0} acknowledged, ${tally.unknown.get(a) ?? 0} answers lost`,
      );
    }
  }
  t.same(
    phantom,
    [],
    `${label}: no account has more orders than acknowledged + requests whose answer was lost`,
  );
  t.same(
    await rows(
      db,
      `select status, payment_source, count(*)::int as n from orders where status <> 'paid' or payment_source is distinct from 'balance' group by 1, 2`,
    ),
    [],
    `${label}: every order in the database is paid from the balance`,
  );

  // Exactly one order_debit per order, of its total, on its account.
  t.same(
    await rows(
      db,
      `select o.id::float8 as id, o.total_cents::float8 as total, count(l.id)::int as debits, sum(l.amount_cents)::float8 as amount
                      from orders o left join ledger l on l.ref = 'order:' || o.id and l.kind = 'order_debit' and l.account_id = o.account_id
                     group by o.id having count(l.id) <> 1 or sum(l.amount_cents) <> -o.total_cents order by o.id limit 20`,
    ),
    [],
    `${label}: exactly one order_debit of the order's total per order`,
  );
  t.same(
    await rows(
      db,
      `select l.id::float8 as id, l.kind, l.ref from ledger l
                     where l.kind <> 'topup' and not exists (select 1 from orders o where 'order:' || o.id = l.ref and o.account_id = l.account_id)
                     order by l.id limit 20`,
    ),
    [],
    `${label}: no debit without its order on the same account`,
  );
  t.same(
    await rows(
      db,
      `select kind, count(*)::int as n from ledger where kind not in ('order_debit', 'monthly_fee') group by kind`,
    ),
    [{ kind: 'topup', n: accounts.length }],
    `${label}: the ledger holds only the fixture's topups besides order debits and fees`,
  );
  t.same(
    await rows(
      db,
      `select account_id::float8 as account, kind, ref, tick, count(*)::int as n from ledger group by 1, 2, 3, 4 having count(*) > 1 limit 20`,
    ),
    [],
    `${label}: no ledger row doubled`,
  );

  // Balances.
  t.same(
    await rows(
      db,
      `select a.id::float8 as id, a.balance_cents::float8 as balance, coalesce(s.sum, 0)::float8 as ledger
                      from account a left join (select account_id, sum(amount_cents) as sum from ledger group by 1) s on s.account_id = a.id
                     where a.balance_cents <> coalesce(s.sum, 0) or a.balance_cents < 0`,
    ),
    [],
    `${label}: every balance = Σ its ledger, none below zero`,
  );
  t.same(
    await rows(
      db,
      `select id::float8 as id, account_id::float8 as account, balance_after_cents::float8 as after, run::float8 as run from
                      (select id, account_id, balance_after_cents, sum(amount_cents) over (partition by account_id order by id) as run from ledger) x
                     where balance_after_cents <> run order by id limit 20`,
    ),
    [],
    `${label}: every ledger row's balance_after = the running sum of its account's ledger`,
  );

  // Trade rounds: one funded round per order, charged the order's total plus the fee it carried.
  t.same(
    await rows(
      db,
      `select o.id::float8 as order_id, r.id::float8 as round_id, r.status, r.source from orders o left join trade_round r on r.id = o.round_id
                     where r.id is null or r.account_id <> o.account_id or r.status <> 'funded' or r.source <> 'balance'
                        or r.amount_cents <> o.total_cents or r.charged_cents <> o.total_cents + r.fee_amount_cents
                        or r.fee_amount_cents <> coalesce((select -sum(amount_cents) from ledger l where l.kind = 'monthly_fee' and l.ref = 'order:' || o.id), 0)
                     order by o.id limit 20`,
    ),
    [],
    `${label}: every order has its funded trade round, charged its total and the fee it carried`,
  );
  t.same(
    await rows(
      db,
      `select r.id::float8 as id, count(o.id)::int as orders from trade_round r left join orders o on o.round_id = r.id group by r.id having count(o.id) <> 1 limit 20`,
    ),
    [],
    `${label}: every trade round belongs to exactly one order`,
  );

  // The participation fee: at most one per holder and month, each matching its monthly_fee row.
  t.same(
    await rows(
      db,
      `select a.holder_id::float8 as holder, to_char(l.created_at at time zone 'UTC', 'YYYY-MM') as month, count(*)::int as n
                      from ledger l join account a on a.id = l.account_id where l.kind = 'monthly_fee' group by 1, 2 having count(*) > 1`,
    ),
    [],
    `${label}: at most one monthly_fee ledger row per holder and month`,
  );
  t.same(
    await rows(
      db,
      `select f.holder_id::float8 as holder, f.month, count(l.id)::int as n from monthly_fee f
                      left join orders o on o.round_id = f.round_id
                      left join ledger l on l.kind = 'monthly_fee' and l.ref = 'order:' || o.id and l.account_id = f.account_id and l.amount_cents = -f.amount_cents
                     group by 1, 2 having count(l.id) <> 1
                     union all
                    select a.holder_id::float8, to_char(l.created_at at time zone 'UTC', 'YYYY-MM'), 0 from ledger l join account a on a.id = l.account_id
                     where l.kind = 'monthly_fee' and not exists (select 1 from monthly_fee f join orders o on o.round_id = f.round_id
                       where f.holder_id = a.holder_id and f.account_id = l.account_id and 'order:' || o.id = l.ref
                         and f.month = to_char(l.created_at at time zone 'UTC', 'YYYY-MM'))`,
    ),
    [],
    `${label}: each monthly_fee row has exactly its one ledger row, and each fee ledger row its monthly_fee row`,
  );
  t.same(
    await rows(
      db,
      `select distinct a.holder_id::float8 as holder from orders o join account a on a.id = o.account_id
                     where not exists (select 1 from monthly_fee f where f.holder_id = a.holder_id and f.amount_cents = ${MONTHLY_FEE})`,
    ),
    [],
    `${label}: every holder whose agents were funded paid the participation fee`,
  );

  // Every order was placed by one keyed request whose stored answer names it, and every stored
  // answer of an order names an order that exists.
  t.same(
    await rows(
      db,
      `select o.id::float8 as id, count(i.key)::int as answers from orders o
                      left join idempotency i on i.status < 300 and (i.reply->>'id')::bigint = o.id and i.scope = 'agent:' || o.agent_id || ' POST /api/v1/orders'
                     group by o.id having count(i.key) <> 1
                     union all
                    select (i.reply->>'id')::float8, -1 from idempotency i where i.status < 300 and i.scope like '% POST /api/v1/orders'
                       and not exists (select 1 from orders o where o.id = (i.reply->>'id')::bigint)
                     limit 20`,
    ),
    [],
    `${label}: every order has exactly one stored answer, and every stored answer its order`,
  );

  // Conservation over the whole database.
  const [sum] = await rows(
    db,
    `select (select coalesce(sum(balance_cents), 0) from account)::float8 as balances,
                                       (select coalesce(sum(amount_cents), 0) from ledger where kind = 'topup')::float8 as topups,
                                       (select coalesce(sum(total_cents), 0) from orders)::float8 as orders,
                                       (select coalesce(sum(amount_cents), 0) from monthly_fee)::float8 as fees`,
  );
  t.equal(
    sum.balances,
    sum.topups - sum.orders - sum.fees,
    `${label}: Σ balances = Σ topups - Σ orders - Σ fees`,
  );
  return unacked;
}

t.test(
  'kill -9 under pay_from_balance order load, three times, then restart on the same database',
  async (t) => {
    const elapsed = stopwatch();
    const url = await freshDatabase(t);
    const env = serviceEnv(url);
    let svc = await startChild(t, 'service#1', env);
    const db = await dbClient(t, url);
    const agents = await fleet(svc, db, 12, 3, 1e9, 'crash');
    const accounts = agents.map((a) => a.accountId);
    const menu = await currentDeals(svc);
    const deals = menu.deals.slice(0, 8);
    const tally = new Tally();
    t.comment(`set-up: ${elapsed()} ms`);

    for (let round = 1; round <= 3; round++) {
      // The kill lands at a random moment of the load: in a batch's read, write or commit, or between
      // answers. The moment is a random number of acknowledged orders, not a time, so a slow machine
      // only makes the round longer; the kill also stops the clients, whose requests are then cut.
      const killAt = 10 + rand(150);
      let acks = 0;
      let stopped = false;
      let killed: Promise<NodeJS.Signals | null> | undefined;
      const victim = svc;
      const unknownBefore = [...tally.unknown.values()].reduce((s, n) => s + n, 0);
      await load({
        concurrency: 32,
        target: () => victim,
        agents,
        deals,
        tally,
        stop: () => stopped,
        onAck: () => {
          if (++acks !== killAt) return;
          stopped = true;
          killed = victim.kill9();
        },
      });
      t.equal(
        await killed,
        'SIGKILL',
        `round ${round}: the service died of SIGKILL after ${killAt} acknowledged orders`,
      );
      const lost = [...tally.unknown.values()].reduce((s, n) => s + n, 0) - unknownBefore;
      t.ok(acks >= 10, `round ${round}: the service acknowledged orders before the kill (${acks})`);
      t.ok(lost >= 1, `round ${round}: the kill cut requests in flight (${lost} answers lost)`);
      t.same(
        tally.unexpected,
        [],
        `round ${round}: every answer before the kill was a 201 paid order`,
      );

      const restart = stopwatch();
      svc = await startChild(t, `service#${round + 1}`, env);
      const restartMs = restart();
      t.same(
        (await currentDeals(svc)).tick,
        menu.tick,
        `round ${round}: the restarted service serves the same session`,
      );
      const books = stopwatch();
      const unacked = await checkBooks(t, db, tally, accounts, `after kill ${round}`);
      const booksMs = books();
      const retries = stopwatch();
      const replays = await retryLost(t, svc, db, tally, `after kill ${round}`);
      t.equal(
        replays,
        unacked,
        `after kill ${round}: exactly the ${unacked} orders that committed without their answer were answered from the stored answer`,
      );
      t.equal(
        await checkBooks(t, db, tally, accounts, `after kill ${round}, retries`),
        0,
        `after kill ${round}, retries: every order is acknowledged`,
      );
      t.comment(
        `round ${round}: ${acks} acknowledged (the kill at the ${killAt}th), ${lost} answers lost, of which ${unacked} had committed; ` +
          `restart ${restartMs} ms, books ${booksMs} ms, retries and books ${retries()} ms`,
      );
    }

    // The restarted service takes orders again, and serves the balances the database holds.
    const before = tally.acked.size;
    await Promise.all(agents.map((ag) => placeOrder(svc, ag, deals[0], 1, tally, 'paid')));
    t.same(tally.unexpected, [], 'after the last restart every order is a 201 paid order');
    t.equal(tally.acked.size - before, agents.length, 'one new order per agent');
    t.equal(
      await checkBooks(t, db, tally, accounts, 'final'),
      0,
      'final: every order is acknowledged',
    );
    const api: string[] = [];
    for (const ag of agents) {
      const acct = await svc.send('GET', '/api/v1/account', undefined, {
        authorization: `Bearer ${ag.key}`,
      });
      const [row] = await rows(db, 'select balance_cents::float8 as b from account where id = $1', [
        ag.accountId,
      ]);
      if (acct.status !== 200 || cents(acct.body.balance) !== row.b)
        api.push(`account ${ag.accountId}: ${acct.status} ${acct.body?.balance} vs ${row.b / 100}`);
    }
    t.same(api, [], 'GET /api/v1/account serves each balance the database holds');
    t.same(svc.errors(), [], 'the last service logged no error');
    t.comment(`kill test: ${(elapsed() / 1000).toFixed(1)} s`);
  },
);

t.test(
  "two service processes on one database take the same accounts' orders; one is killed mid-load",
  async (t) => {
    const elapsed = stopwatch();
    const url = await freshDatabase(t);
    const env = serviceEnv(url);
    let a = await startChild(t, 'A', env);
    const b = await startChild(t, 'B', env);
    const db = await dbClient(t, url);
    const menu = await currentDeals(a);
    t.same((await currentDeals(b)).tick, menu.tick, 'both processes serve the same session');

    // Phase 1: each account can fund exactly K orders (the fee of its holder's first checkout is kept
    // aside on every account, and an order dearer than 15.00 cannot use it); 2 holders, so both
    // processes race to charge each holder's fee.
    const K = 6;
    const PER_AGENT = 10;
    const fee = (await a.send('GET', `/api/v1/markets/${MARKET}`)).body.fees
      .fulfilment_per_unit as number;
    const dear = menu.deals.find((d) => d.unit_cost + fee > 15.5);
    if (!dear) throw new Error('no deal dearer than the participation fee on the menu');
    const orderCents = cents(dear.unit_cost) + cents(fee);
    const limited = await fleet(a, db, 8, 2, K * orderCents + MONTHLY_FEE, 'limited');
    const tally = new Tally();
    await Promise.all(
      limited.flatMap((ag) =>
        Array.from({ length: PER_AGENT }, (_, i) =>
          placeOrder(i % 2 ? a : b, ag, dear, 1, tally, 'paid-or-insufficient'),
        ),
      ),
    );
    t.same(
      tally.unexpected,
      [],
      'phase 1: every answer is a 201 paid order or a 400 insufficient balance',
    );
    const perAgent = limited.map(
      (ag) => [...tally.acked.values()].filter((x) => x.account === ag.accountId).length,
    );
    t.same(
      perAgent,
      limited.map(() => K),
      `phase 1: each account funded exactly its ${K} orders, across both processes`,
    );
    t.same(
      limited.map((ag) => tally.refusedForBalance.get(ag.accountId) ?? 0),
      limited.map(() => PER_AGENT - K),
      'phase 1: the rest were refused for the balance',
    );
    t.ok(
      (tally.ackedBy.get('A') ?? 0) > 0 && (tally.ackedBy.get('B') ?? 0) > 0,
      'phase 1: both processes placed orders',
    );
    const balances = await rows(
      db,
      `select holder_id::float8 as holder, balance_cents::float8 as b, count(*)::int as n from account
                                    where id = any($1::bigint[]) group by 1, 2 order by 1, 2`,
      [limited.map((x) => x.accountId)],
    );
    const holders = [...new Set(limited.map((x) => x.holderId))].sort((x, y) => x - y);
    t.same(
      balances,
      holders.flatMap((h) => [
        { holder: h, b: 0, n: 1 },
        { holder: h, b: MONTHLY_FEE, n: 3 },
      ]),
      'phase 1: per holder, one account paid the fee and is empty, the others keep exactly the 15.00',
    );
    let accounts = limited.map((x) => x.accountId);
    await checkBooks(t, db, tally, accounts, 'phase 1');

    // Phase 2: ample balances; 32 clients, half on each process; A is killed mid-load while B goes on,
    // and every one of B's answers must still be a 201 paid order.
    const ample = await fleet(b, db, 8, 2, 1e9, 'ample');
    accounts = [...accounts, ...ample.map((x) => x.accountId)];
    const deals = menu.deals.slice(0, 8);
    // A is killed after a random number of acknowledged orders (of either process); the load stops
    // once B has acknowledged AFTER_KILL orders after A was dead. Counts, not times: a slow machine
    // only makes the phase longer.
    const killAt = 10 + rand(150);
    const AFTER_KILL = 20;
    let acks = 0;
    let afterKill = 0;
    let dead = false;
    let killed: Promise<NodeJS.Signals | null> | undefined;
    let stopped = false;
    const victim = a;
    await load({
      concurrency: 32,
      target: (w) => (w % 2 ? b : victim),
      agents: ample,
      deals,
      tally,
      stop: () => stopped,
      onAck: (svc) => {
        if (++acks === killAt) killed = victim.kill9().then((sig) => ((dead = true), sig));
        if (dead && svc === b && ++afterKill >= AFTER_KILL) stopped = true;
      },
    });
    t.equal(
      await killed,
      'SIGKILL',
      `phase 2: A died of SIGKILL after ${killAt} acknowledged orders`,
    );
    t.ok(
      (tally.unknownBy.get('A') ?? 0) >= 1,
      `phase 2: the kill cut requests to A in flight (${tally.unknownBy.get('A')} answers lost)`,
    );
    t.ok(
      afterKill >= AFTER_KILL,
      `phase 2: B went on acknowledging orders after A died (${afterKill})`,
    );
    t.same(tally.unexpected, [], 'phase 2: every answer of either process was a 201 paid order');
    t.equal(tally.unknownBy.get('B') ?? 0, 0, 'phase 2: no request to B lost its answer');
    const unacked = await checkBooks(t, db, tally, accounts, 'phase 2, A killed, B running');
    // The clients of A retry on B while A is down: B answers what A committed from the stored answer.
    const replays = await retryLost(t, b, db, tally, 'phase 2, retried on B');
    t.equal(
      replays,
      unacked,
      `phase 2: exactly the ${unacked} orders A committed without their answer were answered by B from the stored answer`,
    );
    t.equal(
      await checkBooks(t, db, tally, accounts, 'phase 2, retries'),
      0,
      'phase 2, retries: every order is acknowledged',
    );

    // A restarts on the same database; both take a last burst together.
    a = await startChild(t, 'A2', env);
    const before = tally.acked.size;
    await Promise.all(
      ample.flatMap((ag) =>
        Array.from({ length: 10 }, (_, i) =>
          placeOrder(i % 2 ? a : b, ag, deals[i % deals.length], 1, tally, 'paid'),
        ),
      ),
    );
    t.same(
      tally.unexpected,
      [],
      'after the restart, every answer of either process is a 201 paid order',
    );
    t.equal(
      tally.acked.size - before,
      ample.length * 10,
      'after the restart, all 80 orders placed',
    );
    t.equal(
      await checkBooks(t, db, tally, accounts, 'final'),
      0,
      'final: every order is acknowledged',
    );
    t.comment(
      `phase 2: A acknowledged ${tally.ackedBy.get('A')}, B ${tally.ackedBy.get('B')} (phase 1 included), ` +
        `B ${afterKill} of them after the kill; ${tally.unknownBy.get('A') ?? 0} answers of A lost, of which ${unacked} had committed`,
    );
    t.same([...a.errors(), ...b.errors()], [], 'neither running process logged an error');
    t.comment(`two-process test: ${(elapsed() / 1000).toFixed(1)} s`);
  },
);
