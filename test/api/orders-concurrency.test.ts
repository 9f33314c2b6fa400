// Nothing lost, nothing doubled: two service processes on one database take pay_from_balance orders
// of the same accounts at once. Exactly as many orders are funded as the balances cover, every 201
// is a paid order, every refusal is a 400 that wrote nothing, and each balance equals its ledger.
import t from 'tap';
import { sharedDatabaseConfig, startTestService } from '../helpers/service.js';
import { ledgerSumCents, registerAgent, send, type TestAgent } from '../helpers/agents.js';
import { instantSql } from '../../actors/runtime/sql.js';

t.test('two processes, one database, concurrent pay_from_balance orders', async (t) => {
  const config = await sharedDatabaseConfig(t);
  const a = await startTestService(t, {}, {}, config);
  const b = await startTestService(t, {}, {}, { ...config });
  const agents: TestAgent[] = [];
  for (let i = 0; i < 4; i++) agents.push(await registerAgent(a));
  // Fixture: a holder who switched funding on and topped each account up to fund exactly 5 orders of
  // the chosen deal (the switch is earned by 3 profitable trades, which trading.test.ts covers).
  // An order dearer than the participation fee: the 15.00 kept for it can never fund a sixth order.
  const fee = (await send(a, 'GET', '/api/v1/markets/h10')).body.fees.fulfilment_per_unit;
  const deal = (await send(a, 'GET', '/api/v1/markets/h10/deals')).body.deals.find(
    (d: { unit_cost: number }) => d.unit_cost + fee > 15.5,
  );
  const orderCents = Math.round(deal.unit_cost * 100) + Math.round(fee * 100);
  const topup = 5 * orderCents + 1500; // five orders and the month's participation fee
  const em = a.orm.em.fork();
  const at = a.services.clock.realNow(); // the fixture's instant: the services' clock (the machine's: none is injected)
  const [holder] = await em.execute(
    `insert into holder (email, password_hash, created_at) values ('fleet@example.org', 'unused', ${instantSql()}) returning id::float8 as id`,
    [at],
  );
  for (const ag of agents) {
    await em.execute('update agent set holder_id = ?, autonomous_funding = true where id = ?', [
      holder.id,
      ag.agentId,
    ]);
    await em.execute('update account set holder_id = ?, balance_cents = ? where id = ?', [
      holder.id,
      topup,
      ag.accountId,
    ]);
    await em.execute(
      `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) values (?, 'topup', ?, ?, 'test:fixture', ${instantSql()})`,
      [ag.accountId, topup, topup, at],
    );
  }
  const body = { market: 'h10', offer_key: deal.key, qty: 1, pay_from_balance: true };
  const attempts = agents.flatMap((ag) =>
    Array.from({ length: 8 }, (_, i) =>
      send(i % 2 ? a : b, 'POST', '/api/v1/orders', body, { authorization: `Bearer ${ag.key}` }),
    ),
  );
  const answers = await Promise.all(attempts);
  const statuses = answers.map((r) => r.status);
  t.equal(
    statuses.filter((s) => s === 201).length,
    4 * 5,
    'each account funded exactly the five orders it could pay',
  );
  t.equal(statuses.filter((s) => s === 400).length, 4 * 3, 'the rest were refused for the balance');
  t.ok(answers.filter((r) => r.status === 201).every((r) => r.body.status === 'paid'));
  const fees = await em.execute(`select count(*)::int as n from monthly_fee where holder_id = ?`, [
    holder.id,
  ]);
  t.equal(
    fees[0].n,
    1,
    'the participation fee was charged once for the holder, across both processes',
  );
  for (const ag of agents) {
    const account = (await ag.get('/api/v1/account?limit=500')).body;
    t.equal(
      Math.round(account.balance * 100),
      ledgerSumCents(account.ledger),
      'balance = sum of ledger',
    );
    t.ok(account.balance >= 0);
    const paid = (await ag.get('/api/v1/orders?status=paid')).body.orders.length;
    const debits = account.ledger.filter((e: { kind: string }) => e.kind === 'order_debit').length;
    t.equal(paid, debits, 'one debit per paid order');
  }
  const total = 4 * topup - 4 * 5 * orderCents - 1500;
  const sum = await em.execute(
    `select sum(balance_cents)::float8 as s from account where holder_id = ?`,
    [holder.id],
  );
  t.equal(sum[0].s, total, 'no cent lost or doubled across the fleet');
});
