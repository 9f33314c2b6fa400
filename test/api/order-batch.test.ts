// Group commit of orders, decided per order inside one batch: a closed session is refused (404),
// pay_from_balance without the switch (403) or beyond the balance (400); the rest are placed in one
// transaction, the holder's participation fee once, and every balance still equals its ledger.
import { dayStart, weekStart } from '../../actors/money/limits.js';
import t from 'tap';
import pg from 'pg';
import { batchConnectionOf, placeOrders } from '../../actors/account/order-batch.js';
import type { OrderRequest } from '../../actors/account/messages.js';
import { ActorError } from '../../actors/runtime/actor.js';
import {
  readStatements,
  writeStatement,
  type OrderColumn,
} from '../../actors/account/order-batch-sql.js';
import { feeRowsInsertSql } from '../../actors/money/charge.js';
import { feeMonth } from '../../src/payments/fee.js';
import { migratedOrm } from '../helpers/db.js';
import { eventually } from '../helpers/wait.js';
import { eventNotices } from '../helpers/notices.js';
import { NOTICES_SETTING } from '../../actors/events/log.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { T0 } from '../helpers/clock-rig.js';

/** The one instant of these tests (unix seconds): every fixture row and every order's `at` (no service clock here). */
const AT = T0;

t.test('placeOrders decides each order of a batch on its own', async (t) => {
  const { orm } = await migratedOrm(t);
  const em = orm.em.fork();
  await em.execute(
    `insert into market_session (market, tick, opened_at) values ('m15', 100, ${instantSql()})`,
    [AT],
  );
  await em.execute(
    `insert into market_session (market, tick, opened_at, closed_at) values ('m15', 99, ${instantSql()}, ${instantSql()})`,
    [AT - 900, AT],
  );
  await em.execute(`insert into menu_row (market, tick, idx, offer_key, cluster, unit_cost_cents, list_price_cents, listed_at, max_qty, house_accepted, house_qty, deal)
                    values ('m15', 100, 0, 'k100', 1, 1000, 1500, 0.1, 5, false, 0, '{"bundle": {"title": "A bundle", "items": []}, "sales_velocity": 0.5}'),
                           ('m15', 99, 0, 'k99', 1, 1000, 1500, 0.1, 5, false, 0, '{}')`);
  const [holder] = await em.execute(
    `insert into holder (email, password_hash, created_at) values ('h@example.org', 'x', ${instantSql()}) returning id::float8 as id`,
    [AT],
  );
  const agents: { id: number; account: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const [a] = await em.execute(
      `insert into account (holder_id, created_at) values (?, ${instantSql()}) returning id::float8 as id`,
      [holder.id, AT],
    );
    const [g] = await em.execute(
      `insert into agent (key_id, key_hash, name, recall_phrase, account_id, holder_id, autonomous_funding, created_at)
       values (?, 'h', 'a', 'abc', ?, ?, ?, ${instantSql()}) returning id::float8 as id`,
      [`key${i}`.padEnd(20, 'x'), a.id, holder.id, i !== 2, AT],
    );
    agents.push({ id: g.id, account: a.id });
  }
  // Agent 0 can pay 2 orders and the fee; agent 1 nothing; agent 2 has the switch off.
  await em.execute(`update account set balance_cents = 2 * 1030 + 1500 where id = ?`, [
    agents[0].account,
  ]);
  await em.execute(
    `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) values (?, 'topup', 2 * 1030 + 1500, 2 * 1030 + 1500, 'test', ${instantSql()})`,
    [agents[0].account, AT],
  );
  const req = (i: number, over: Partial<OrderRequest> = {}): OrderRequest => ({
    accountId: agents[i].account,
    agentId: agents[i].id,
    market: 'm15',
    tick: 100,
    idx: 0,
    offerKey: 'k100',
    qty: 1,
    closesAt: 2e9,
    at: AT,
    payFromBalance: true,
    baseUrl: 'http://svc.test',
    ...over,
  });
  const out = await placeOrders(orm.em, [
    req(0),
    req(0),
    req(0),
    req(1),
    req(2),
    req(0, { tick: 99, offerKey: 'k99' }),
    req(1, { payFromBalance: false }),
    req(1, { offerKey: 'not-the-recorded-key', payFromBalance: false }),
    req(1, { qty: 6, payFromBalance: false }),
  ]);
  const status = out.map((o) => (o instanceof ActorError ? o.status : o.status));
  t.same(
    status,
    ['paid', 'paid', 400, 400, 403, 404, 'awaiting_payment', 404, 409],
    'each order decided on its own, against the recorded menu row',
  );
  const first = out[0] as Record<string, unknown>;
  t.equal(first.monthly_fee_charged, 15, "the first funded order carries the month's fee");
  t.equal((out[1] as typeof first).monthly_fee_charged, 0);
  t.match(
    first,
    {
      market: 'm15',
      tick: 100,
      offer_key: 'k100',
      qty: 1,
      unit_cost: 10,
      total_amount: 10.3,
      deal_title: 'A bundle',
      status: 'paid',
      sales_velocity: 0.5,
    },
    'the answer is built from the recorded menu row',
  );
  t.match(first.purchase_url, /^http:\/\/svc\.test\/checkout\/[A-Za-z0-9_-]{32}$/);
  const rows = await em.execute(
    `select status, count(*)::int as n from orders group by status order by status`,
  );
  t.same(
    rows,
    [
      { status: 'awaiting_payment', n: 1 },
      { status: 'paid', n: 2 },
    ],
    'refused orders wrote nothing',
  );
  const bad = await em.execute(
    `select id from account a where balance_cents <> coalesce((select sum(amount_cents) from ledger l where l.account_id = a.id), 0)`,
  );
  t.same(bad, [], 'every balance equals its ledger');
  const [acc] = await em.execute(`select balance_cents::float8 as b from account where id = ?`, [
    agents[0].account,
  ]);
  t.equal(acc.b, 0, 'exactly the balance was spent');
  const rounds = await em.execute(
    `select status, source, charged_cents::float8 as charged from trade_round order by id`,
  );
  t.same(
    rounds.map((r) => r.status),
    ['funded', 'funded', 'awaiting_payment'],
  );
  t.equal(rounds[0].charged, 1030 + 1500);
});

/** A migrated database with an open m15 session 100, its menu row `k100` (max 5) and one agent on its account. */
async function oneDeal(t: Tap.Test, keyPrefix: string) {
  const { orm, url } = await migratedOrm(t);
  const em = orm.em.fork();
  await em.execute(
    `insert into market_session (market, tick, opened_at) values ('m15', 100, ${instantSql()})`,
    [AT],
  );
  await em.execute(`insert into menu_row (market, tick, idx, offer_key, cluster, unit_cost_cents, list_price_cents, listed_at, max_qty, house_accepted, house_qty, deal)
                    values ('m15', 100, 0, 'k100', 1, 1000, 1500, 0.1, 5, false, 0, '{"bundle": {"title": "A bundle", "items": []}}')`);
  const [a] = await em.execute(
    `insert into account (created_at) values (${instantSql()}) returning id::float8 as id`,
    [AT],
  );
  const [g] = await em.execute(
    `insert into agent (key_id, key_hash, name, recall_phrase, account_id, created_at) values (?, 'h', 'a', 'abc', ?, ${instantSql()}) returning id::float8 as id`,
    [keyPrefix.padEnd(20, 'x'), a.id, AT],
  );
  return { orm, em, a, g, url };
}

t.test(
  'placeOrders stores the answer of a keyed order with it and answers a retry from it',
  async (t) => {
    const { orm, em, a, g } = await oneDeal(t, 'keyidem');
    const idem = { scope: `agent:${g.id} POST /api/v1/orders`, key: 'k-1', hash: 'h1' };
    const req: OrderRequest = {
      accountId: a.id,
      agentId: g.id,
      market: 'm15',
      tick: 100,
      idx: 0,
      offerKey: 'k100',
      qty: 1,
      closesAt: 2e9,
      at: AT,
      payFromBalance: false,
      baseUrl: 'http://x',
      idem,
    };
    const [fresh] = await placeOrders(orm.em, [req]);
    const [again] = await placeOrders(orm.em, [req]);
    t.same(again, { replayed: true, reply: fresh }, 'the retry gets the first answer');
    const [other] = await placeOrders(orm.em, [{ ...req, idem: { ...idem, hash: 'h2' } }]);
    t.ok(
      other instanceof ActorError && other.status === 400,
      'the same key with another body is refused',
    );
    const [refused] = await placeOrders(orm.em, [
      { ...req, qty: 9, idem: { ...idem, key: 'k-2' } },
    ]);
    const [refusedAgain] = await placeOrders(orm.em, [
      { ...req, qty: 9, idem: { ...idem, key: 'k-2' } },
    ]);
    t.ok(refused instanceof ActorError && refused.status === 409 && !refused.replayed);
    t.ok(
      refusedAgain instanceof ActorError && refusedAgain.status === 409 && refusedAgain.replayed,
      'a refusal is stored and answered again',
    );
    const [n] = await em.execute(`select count(*)::int as n from orders`);
    t.equal(n.n, 1, 'one order for one key');
  },
);

t.test(
  "the batch's generic plans reach every table through its index, whatever the tables' sizes",
  async (t) => {
    // The plans are made on nearly empty tables, as a new service's batch connection makes them and
    // then keeps them: a sequential scan here is one that every batch would repeat on a large table.
    const { em, a, g } = await oneDeal(t, 'keyplan');
    const conn = batchConnectionOf(em);
    t.teardown(() => conn.close());
    const client = await conn.get();
    const lit = (s: string) => client.escapeLiteral(s);
    const at = 1.9e9;
    const read = readStatements(
      {
        markets: ['m15'],
        agents: [g.id],
        accounts: [a.id],
        funded: [a.id],
        months: ['2026-11'],
        menu: [{ market: 'm15', tick: 100, idx: 0 }],
        keys: [{ scope: 'agent:1 POST /api/v1/orders', key: 'k' }],
        n: 1,
        days: [dayStart(at)],
        weeks: [weekStart(at)],
        at,
      },
      lit,
    )
      .split(';\n')
      .filter((s) => !s.includes('order_batch_lock('));
    const order = {
      order_id: 1,
      round_id: 1,
      account_id: a.id,
      agent_id: g.id,
      market: 'm15',
      tick: 100,
      idx: 0,
      offer_key: 'k100',
      qty: 1,
      unit_cost_cents: 1000,
      list_price_cents: 1500,
      fee_cents: 30,
      holding_cents: 1,
      token: 't',
      closes_at: 2e9,
      paid: true,
      source: 'balance',
      holder: null,
      month: '2026-11',
      gross: 1000,
      fee_amount: 30,
      total: 1030,
      fee: 0,
      at,
      standing: g.id,
      participation: null,
    } satisfies Record<OrderColumn, string | number | boolean | null>;
    const write = writeStatement(
      [order],
      [{ scope: 's', key: 'k', request_hash: 'h', status: 201, reply: {}, at }],
      [{ account_id: a.id, kind: 'order_debit', amount_cents: -1030, ref: 'order:1' }],
      'http://svc.test',
      at,
      lit,
    );
    t.equal(read.length, 3, 'the account locks, the expiry of stored answers and the read');
    for (const statement of [...read, write]) {
      const [row] = (await client.query(`explain (format json) ${statement}`)).rows;
      const scans: string[] = [];
      const walk = (node: Record<string, unknown>) => {
        // A scan of a table or index without a condition reads all of it.
        const type = String(node['Node Type']);
        if (type === 'Seq Scan' || (/Index/.test(type) && !node['Index Cond']))
          scans.push(`${type} ${node['Relation Name'] ?? node['Index Name']}`);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? [])
          walk(child);
      };
      walk(row['QUERY PLAN'][0].Plan);
      t.same(scans, [], `no scan of a whole table in ${statement.slice(0, 26)}`);
    }
  },
);

t.test(
  'a batch names the accounts whose logs grew once, just after its commit (events/log.ts Announce)',
  async (t) => {
    const { orm, em, a, g, url } = await oneDeal(t, 'keyN');
    const [a2] = await em.execute(
      `insert into account (created_at) values (${instantSql()}) returning id::float8 as id`,
      [AT],
    );
    const [g2] = await em.execute(
      `insert into agent (key_id, key_hash, name, recall_phrase, account_id, created_at) values (?, 'h', 'b', 'abc', ?, ${instantSql()}) returning id::float8 as id`,
      ['keyN2'.padEnd(20, 'x'), a2.id, AT],
    );
    const notices = await eventNotices(t, url);
    // One connection for every batch: what one batch keeps for its notices must not leak into the next.
    const conn = batchConnectionOf(orm.em);
    t.teardown(() => conn.close());
    const req = (
      account: number,
      agent: number,
      over: Partial<OrderRequest> = {},
    ): OrderRequest => ({
      accountId: account,
      agentId: agent,
      market: 'm15',
      tick: 100,
      idx: 0,
      offerKey: 'k100',
      qty: 1,
      closesAt: 2e9,
      at: AT,
      payFromBalance: false,
      baseUrl: 'http://svc.test',
      ...over,
    });

    await placeOrders(orm.em, [req(a2.id, g2.id), req(a.id, g.id), req(a2.id, g2.id)], conn);
    await eventually(() => notices.length >= 1, "the batch's notice");
    t.same(
      notices,
      [[a.id, a2.id].sort((x, y) => x - y).join(',')],
      'one notice naming each account once, in account order',
    );
    const [[events], [kept]] = [
      await em.execute(`select count(*)::int as n from account_event where type = 'order.created'`),
      await (
        await conn.get()
      )
        .query('select current_setting($1, true) as v', [NOTICES_SETTING])
        .then((r) => r.rows),
    ];
    t.equal(events.n, 3, "the batch's three order.created events were committed");
    t.ok(kept.v, 'the notices were kept on the connection for the statement after the commit');

    // A keyed refusal writes its answer and no event: the write keeps no notice, so the previous
    // batch's is not sent again (notices arrive in commit order: the next one seen is the next batch's).
    const [refused] = await placeOrders(
      orm.em,
      [
        req(a.id, g.id, {
          qty: 9,
          idem: { scope: `agent:${g.id} POST /api/v1/orders`, key: 'n-1', hash: 'h' },
        }),
      ],
      conn,
    );
    t.ok(refused instanceof ActorError && refused.status === 409, 'refused, its answer stored');
    const [stored] = await em.execute(
      `select count(*)::int as n from idempotency where key = 'n-1'`,
    );
    t.equal(stored.n, 1, 'the refusal was written');
    await placeOrders(orm.em, [req(a2.id, g2.id)], conn);
    await eventually(() => notices.length >= 2, "the next batch's notice");
    t.same(
      notices.slice(1),
      [String(a2.id)],
      'the write without events announced nothing; the next batch names only its account',
    );

    // Notices that cannot be sent (here a payload over NOTIFY's limit) are logged, never thrown: the
    // batch's orders are committed by then, and the streams' safety net finds their events.
    const warned: string[] = [];
    const logged = batchConnectionOf(orm.em, {
      warn: ((_obj: unknown, msg: string) => void warned.push(msg)) as never,
    });
    t.teardown(() => logged.close());
    const client = await logged.get();
    await client.query(`select set_config($1, repeat('7', 9000), false)`, [NOTICES_SETTING]);
    await logged.announce(client);
    t.match(warned, [/notices were not sent/], 'the failure is logged');
    t.same(
      (await client.query('select 1 as one')).rows,
      [{ one: 1 }],
      'and the connection goes on',
    );
  },
);

// The embedded database is one backend behind its socket: no backend of one connection to end.

t.test("the batch's own connection is replaced after it is lost", async (t) => {
  const { orm, em, a, g } = await oneDeal(t, 'keyL');
  const req: OrderRequest = {
    accountId: a.id,
    agentId: g.id,
    market: 'm15',
    tick: 100,
    idx: 0,
    offerKey: 'k100',
    qty: 1,
    closesAt: 2e9,
    at: AT,
    payFromBalance: false,
    baseUrl: 'http://svc.test',
  };
  const conn = batchConnectionOf(orm.em);
  t.teardown(() => conn.close());
  const pid = async () =>
    (await conn.get()).query('select pg_backend_pid() as pid').then((r) => r.rows[0].pid as number);
  const [first] = await placeOrders(orm.em, [req], conn);
  t.equal((first as { status: string }).status, 'awaiting_payment');
  const before = await pid();
  await em.execute('select pg_terminate_backend(?)', [before]);
  // The lost connection is noticed (its error event, or the failed rollback of the next batch) and replaced.
  let placed = 0;
  for (let i = 0; i < 2 && !placed; i++) {
    const out = await placeOrders(orm.em, [req], conn).catch(() => []);
    placed = out.filter((o) => !(o instanceof ActorError)).length;
  }
  t.equal(placed, 1, 'a later batch is placed on a new connection');
  t.not(await pid(), before, 'on another backend');
  const [n] = await em.execute(`select count(*)::int as n from orders`);
  t.equal(
    n.n,
    2,
    'nothing placed twice, nothing lost beyond the batch that met the lost connection',
  );
});

t.test(
  "two batches charging the same holders' fees wait in holder order: a lost race, never a deadlock",
  async (t) => {
    const { em, a } = await oneDeal(t, 'keyfee');
    const holders: number[] = [];
    for (const email of ['f1@example.org', 'f2@example.org']) {
      const [h] = await em.execute(
        `insert into holder (email, password_hash, created_at) values (?, 'x', ${instantSql()}) returning id::float8 as id`,
        [email, AT],
      );
      holders.push(h.id);
    }
    const [h1, h2] = holders;
    const options = em.getConnection().getConnectionOptions() as pg.ClientConfig;
    const [first, second] = [new pg.Client(options), new pg.Client(options)];
    await first.connect();
    await second.connect();
    t.teardown(() => Promise.all([first.end(), second.end()]));
    // The fee rows of the month of AT, stamped AT (feeRowsInsertSql's source carries each row's instant).
    const fee = (holder: number) =>
      `(${holder}::bigint, '${feeMonth(new Date(AT * 1000))}', ${a.id}::bigint, null::bigint, 15::bigint, ${AT}::float8)`;
    // One batch holds h1's fee row uncommitted; the other charges h2 and h1, listed in that order.
    await first.query('begin');
    await first.query(
      `with x(holder, month, account_id, round_id, fee, at) as (values ${fee(h1)}) ${feeRowsInsertSql('x')}`,
    );
    await second.query('begin');
    let secondSettled = false;
    const secondDone = second
      .query(
        `with x(holder, month, account_id, round_id, fee, at) as (values ${fee(h2)}, ${fee(h1)}) ${feeRowsInsertSql('x')}`,
      )
      .then(
        () => 'inserted',
        (err: { code?: string }) => err.code,
      )
      .finally(() => (secondSettled = true));
    // Wait until the second batch waits for a lock: without that wait there is no race to test.
    const waiting = await eventually(async () => {
      if (secondSettled) throw new Error('the second batch ended without waiting for a lock');
      const r = await em.execute(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%monthly_fee%'`,
      );
      return r[0].n > 0;
    }, 'the second batch to wait for a lock');
    t.ok(waiting, "the second batch waits for the first one's uncommitted fee row of h1");
    // The first batch now charges h2 too: in holder order the second has not taken h2 yet.
    const firstH2 = await first
      .query(
        `with x(holder, month, account_id, round_id, fee, at) as (values ${fee(h2)}) ${feeRowsInsertSql('x')}`,
      )
      .then(
        () => 'inserted',
        (err: { code?: string }) => err.code,
      );
    await first.query(firstH2 === 'inserted' ? 'commit' : 'rollback');
    const secondOutcome = await secondDone;
    await second.query('rollback');
    t.equal(
      firstH2,
      'inserted',
      'the first batch charges h2 without waiting (40P01 would be a deadlock)',
    );
    t.equal(
      secondOutcome,
      '23505',
      'the second loses the race on h1 (a unique violation: the batch is decided again)',
    );
    const [n] = await em.execute(`select count(*)::int as n from monthly_fee`);
    t.equal(n.n, 2, 'both fees charged once, by the first batch');
  },
);
