// Spending limits (CONTRACT.md "Spending limits"): the holder bounds what an agent funds without
// them — one order's total, a UTC day's total, the markets — on the console; GET /agents/me serves
// them with what was spent today; an order over a limit is a 403 naming it, and a concurrent burst
// of pay_from_balance orders never passes max_day; setting them is a limits.changed event.
import t from 'tap';
import { CLOCKED_START_MS, startClockedService } from '../helpers/clocked.js';
import { startTestService } from '../helpers/service.js';
import { send, type Menu } from '../helpers/agents.js';
import { registerHolder, submit } from '../helpers/holders.js';
import { fundedAgent } from '../helpers/funded.js';

const MARKET = 'm15';
const cents = (x: number) => Math.round(x * 100);

t.test('spending limits bound what an agent funds without its holder', async (t) => {
  // A fixed instant at midday UTC: the closes below never cross into the next UTC day (a new day of
  // spending), whatever the day and hour the test runs.
  const c = await startClockedService(t, {}, { startMs: Date.UTC(2026, 10, 26, 12) + 50 });
  const svc = c.svc;
  const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
  const holder = await registerHolder(svc);
  const agent = await fundedAgent(svc, holder);

  const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  const cheapest = [...m.deals].sort((a, b) => a.unit_cost - b.unit_cost)[0];
  const unit = cents(
    (await agent.post('/api/v1/orders', { market: MARKET, offer_key: cheapest.key, qty: 1 })).body
      .total_amount,
  );
  const order = (qty = 1, market = MARKET, key = cheapest.key) =>
    agent.post('/api/v1/orders', { market, offer_key: key, qty, pay_from_balance: true });
  const limits = (fields: Record<string, string> | [string, string][]) =>
    submit(svc, `/console/agents/${agent.agentId}/limits`, fields, holder.cookie);

  t.same(
    (await agent.get('/api/v1/agents/me')).body.limits,
    {
      max_order: null,
      max_day: null,
      max_week: null,
      markets: null,
      expires_at: null,
      spent_today: 0,
      spent_week: 0,
    },
    'no limits until the holder sets some',
  );

  const maxDay = (unit * 5) / 100;
  const set = await limits({
    max_order: String((unit * 2) / 100),
    max_day: String(maxDay),
    markets: `${MARKET}, h2`,
  });
  t.equal(set.status, 200, JSON.stringify(set.body));
  t.same(set.body.limits, {
    max_order: (unit * 2) / 100,
    max_day: maxDay,
    max_week: null,
    markets: [MARKET, 'h2'],
    expires_at: null,
  });
  const changed = (await agent.get('/api/v1/events?types=limits.changed')).body.events;
  t.same(
    changed.map((e: any) => e.data),
    [{ agent_id: agent.agentId, limits: set.body.limits }],
    'a limits.changed event',
  );

  await t.test(
    'over max_order and outside the markets: 403 naming the limit, nothing charged',
    async (t) => {
      const big = await order(3);
      t.equal(big.status, 403);
      t.match(big.body.detail, /max_order/);
      t.same(
        big.body,
        {
          detail: big.body.detail,
          limit: 'max_order',
          limit_value: (unit * 2) / 100,
          spent: null,
          remaining: (unit * 2) / 100,
          order_total: (unit * 3) / 100,
        },
        'a program reads the limit and the figures, not the sentence',
      );
      const h10 = (await send(svc, 'GET', '/api/v1/markets/h10/deals')).body.deals[0];
      const elsewhere = await order(1, 'h10', h10.key);
      t.equal(elsewhere.status, 403);
      t.match(elsewhere.body.detail, /markets is m15, h2, not h10/);
      t.same(elsewhere.body.limit_value, [MARKET, 'h2']);
      t.equal(elsewhere.body.limit, 'markets');
      t.equal((await agent.get('/api/v1/agents/me')).body.limits.spent_today, 0);
    },
  );

  await t.test(
    'a quote says what an order would be and what POST /orders would answer, and changes nothing',
    async (t) => {
      const quote = (qty: number, pay = true, key = cheapest.key) =>
        agent.post('/api/v1/orders/quote', {
          market: MARKET,
          offer_key: key,
          qty,
          pay_from_balance: pay,
        });
      const ordersBefore = (await agent.get('/api/v1/orders?limit=1000')).body.orders.length;
      const ok = await quote(1);
      t.equal(ok.status, 200, JSON.stringify(ok.body));
      t.match(ok.body, {
        market: MARKET,
        offer_key: cheapest.key,
        qty: 1,
        unit_cost: cheapest.unit_cost,
        total_amount: unit / 100,
        would_answer: { status: 201 },
        limits: { allowed: true },
        funding: { pay_from_balance_allowed: true, balance: 10_000 },
        session: { tick: m.tick, closes_at: m.closes_at },
      });
      t.same(
        ok.body.limits.checks.map((c: any) => [c.limit, c.ok]),
        [
          ['markets', true],
          ['max_order', true],
          ['max_day', true],
        ],
      );
      t.same(ok.body.holder_pays, {
        goods: unit / 100,
        participation_fee: 15,
        total: unit / 100 + 15,
      });
      t.ok(ok.body.risk.max_loss > ok.body.total_amount, 'max_loss adds the holding fees');
      t.ok(
        ok.body.risk.max_loss_with_surcharge >=
          ok.body.risk.max_loss + ok.body.risk.surcharge.this_order_high - 0.001,
      );
      t.ok(ok.body.risk.surcharge.this_order_low <= ok.body.risk.surcharge.this_order_high);
      t.type(ok.body.risk.similar.n, 'number');

      const big = await quote(3);
      t.equal(big.status, 200);
      t.match(big.body.would_answer, { status: 403, limit: 'max_order' });
      t.equal(big.body.limits.allowed, false);
      t.equal(big.body.funding.pay_from_balance_allowed, false);
      t.equal((await order(3)).status, big.body.would_answer.status, 'the order answers as quoted');
      const unpaid = await quote(3, false);
      t.same(unpaid.body.would_answer, { status: 201 }, 'left for the holder, no limit applies');
      const tooMany = await quote(cheapest.max_qty + 1);
      t.equal(tooMany.body.would_answer.status, 422);
      t.same((await quote(1)).body, ok.body, 'the same answer for the same state');
      t.equal(
        (await agent.get('/api/v1/orders?limit=1000')).body.orders.length,
        ordersBefore,
        'nothing was placed',
      );
      t.equal((await agent.get('/api/v1/agents/me')).body.limits.spent_today, 0);
      t.equal(
        (await quote(1, true, 'no-such-deal')).status,
        404,
        'a deal not on the menu has nothing to quote',
      );
    },
  );

  await t.test('a concurrent burst cannot pass max_day', async (t) => {
    const burst = await Promise.all(Array.from({ length: 20 }, () => order(1)));
    const ok = burst.filter((r) => r.status === 201);
    t.equal(ok.length, 5, 'exactly what max_day holds');
    const spent = ok.reduce((s, r) => s + cents(r.body.total_amount), 0);
    for (const r of burst.filter((r) => r.status !== 201)) {
      t.equal(r.status, 403);
      t.match(r.body.detail, /max_day/);
      t.match(r.body, { limit: 'max_day', limit_value: maxDay, order_total: unit / 100 });
      t.equal(
        cents(r.body.spent) + cents(r.body.remaining),
        cents(maxDay),
        'spent + remaining = max_day',
      );
    }
    // The refusal stored under a key answers again with its figures.
    const keyed = (k: string) =>
      send(
        svc,
        'POST',
        '/api/v1/orders',
        { market: MARKET, offer_key: cheapest.key, qty: 1, pay_from_balance: true },
        { authorization: `Bearer ${agent.key}`, 'idempotency-key': k },
      );
    const first = await keyed('limits-burst-over');
    const again = await keyed('limits-burst-over');
    t.equal(again.status, 403);
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    t.same(again.body, first.body, 'the replay carries the same limit and figures');
    t.match(again.body, {
      limit: 'max_day',
      spent: spent / 100,
      remaining: (cents(maxDay) - spent) / 100,
    });
    t.ok(spent <= cents(maxDay), 'within max_day');
    t.equal(
      cents((await agent.get('/api/v1/agents/me')).body.limits.spent_today),
      spent,
      'spent_today counts them',
    );
    t.equal((await order(1)).status, 403, 'and the next one too');
    // An execute checkout (the agent paying its own cart from its balance, no holder present) is bounded alike.
    const line = await agent.post('/api/v1/cart/items', {
      market: MARKET,
      offer_key: cheapest.key,
      qty: 1,
    });
    t.equal(line.status, 201);
    const cart = (await agent.get('/api/v1/cart')).body;
    const checkout = await agent.post(`/api/v1/carts/${cart.id}/checkout`, { pay_with: 'balance' });
    t.equal(checkout.status, 403, JSON.stringify(checkout.body));
    t.match(
      checkout.body.detail,
      new RegExp(`line ${line.body.item_id}: over the spending limits your holder set: max_day`),
      'the execute checkout names the limit and the line',
    );
    t.equal(
      cents((await agent.get('/api/v1/agents/me')).body.limits.spent_today),
      spent,
      'nothing more was spent',
    );
  });

  await t.test(
    'an order the close refunds no longer counts toward the day, and its room can be spent again',
    async (t) => {
      const before = cents((await agent.get('/api/v1/agents/me')).body.limits.spent_today);
      const [o] = await q(
        `select id::float8 as id, total_cents::float8 as total from orders where standing_agent_id = ? and status = 'paid' order by id limit 1`,
        [agent.agentId],
      );
      // A paid order whose terms no longer match its menu row is refunded by the close (close-quarantine.test).
      await q('update orders set unit_cost_cents = unit_cost_cents + 1 where id = ?', [o.id]);
      await c.closeSession(MARKET);
      t.equal((await q('select status from orders where id = ?', [o.id]))[0].status, 'refunded');
      t.equal(
        cents((await agent.get('/api/v1/agents/me')).body.limits.spent_today),
        before - o.total,
        'spent_today leaves the refunded order out',
      );
      const menu: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
      const next = [...menu.deals].sort((a, b) => a.unit_cost - b.unit_cost)[0];
      // Its total, from an order left for the holder to pay (it spends nothing).
      const price = cents(
        (await agent.post('/api/v1/orders', { market: MARKET, offer_key: next.key, qty: 1 })).body
          .total_amount,
      );
      const room = cents(maxDay) - (before - o.total);
      t.ok(room >= o.total, 'the refund freed its total');
      t.equal(
        (await order(1, MARKET, next.key)).status,
        price <= room ? 201 : 403,
        'the freed room is spent again, within max_day',
      );
    },
  );

  await t.test('a new UTC day starts from nothing; empty fields lift the limits', async (t) => {
    c.advanceTo(Math.ceil(c.now() / 86_400_000) * 86_400_000 + 1000);
    await c.runDue();
    const menu: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    const next = [...menu.deals].sort((a, b) => a.unit_cost - b.unit_cost)[0];
    const total = (
      await agent.post('/api/v1/orders', { market: MARKET, offer_key: next.key, qty: 1 })
    ).body.total_amount;
    t.equal((await agent.get('/api/v1/agents/me')).body.limits.spent_today, 0);
    // Exactly one order's worth a day: yesterday's spending would refuse it if it still counted.
    t.equal((await limits({ max_order: '', max_day: String(total), markets: MARKET })).status, 200);
    t.equal((await order(1, MARKET, next.key)).status, 201, 'a new day');
    t.match(
      (await order(1, MARKET, next.key)).body.detail,
      /max_day/,
      'and its max_day counts from it',
    );
    const lifted = await limits({ max_order: '', max_day: '', markets: '' });
    t.same(lifted.body.limits, {
      max_order: null,
      max_day: null,
      max_week: null,
      markets: null,
      expires_at: null,
    });
    t.equal((await order(3, MARKET, next.key)).status, 201, 'no limit');
    // The console's list sends one field per market ticked.
    const ticked = await limits([
      ['markets', 'h10'],
      ['markets', MARKET],
      ['markets', 'h10'],
    ]);
    t.equal(ticked.status, 200, JSON.stringify(ticked.body));
    t.same(ticked.body.limits.markets, ['h10', MARKET], 'each market once, as ticked');
    t.same((await agent.get('/api/v1/agents/me')).body.limits.markets, ['h10', MARKET]);
    const page = await (
      await svc.get('/console/agents', { headers: { cookie: holder.cookie } })
    ).text();
    for (const id of ['h10', MARKET])
      t.match(page, `name="markets" value="${id}" checked`, `${id} shown ticked`);
    t.notMatch(page, 'name="markets" value="h2" checked', 'h2 not');
    t.equal((await limits({ markets: '' })).status, 200);
    const bad = await limits({ markets: 'm15,zz' });
    t.equal(bad.status, 422);
    t.same(bad.body.detail[0].loc, ['body', 'markets']);
    // Cut-off and hostile fields: a 422 at the field, nothing set, the service still up.
    for (const fields of [
      { markets: 'm15,'.repeat(100) },
      { max_order: '1.234' },
      { max_day: '-1' },
      { max_order: '1e400' },
      { markets: 'm15\u0000' },
      Array.from({ length: 20 }, (): [string, string] => ['markets', 'm15']),
      [
        ['markets', 'm15'],
        ['markets', 'zz'],
      ],
    ]) {
      const r = await limits(fields);
      t.equal(r.status, 422, JSON.stringify(fields).slice(0, 40));
    }
    t.same((await agent.get('/api/v1/agents/me')).body.limits.max_order, null, 'nothing was set');
    t.equal((await svc.get('/healthz')).status, 200, 'still up');
  });

  await t.test(
    'max_week counts the ISO week and starts again on Monday; after expires_at nothing is funded until limits are set again',
    async (t) => {
      const cheapestNow = async () => {
        const menu: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
        return [...menu.deals].sort((a, b) => a.unit_cost - b.unit_cost)[0];
      };
      let deal = await cheapestNow();
      const price = cents(
        (await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty: 1 })).body
          .total_amount,
      );
      const me = async () => (await agent.get('/api/v1/agents/me')).body.limits;
      const week = cents((await me()).spent_week);
      t.ok(week >= cents((await me()).spent_today), 'the week holds the day');
      t.equal((await limits({ max_week: String((week + price) / 100) })).status, 200);
      t.equal((await order(1, MARKET, deal.key)).status, 201, 'room for one more this week');
      const over = await order(1, MARKET, deal.key);
      t.equal(over.status, 403);
      t.match(over.body, {
        limit: 'max_week',
        limit_value: (week + price) / 100,
        spent: (week + price) / 100,
        remaining: 0,
      });
      t.match(over.body.detail, /max_week is .* already spent this week \(from Monday 00:00 UTC\)/);
      // The next Monday, 00:00 UTC on the service clock.
      const day = Math.floor(c.now() / 86_400_000);
      c.advanceTo((day + 7 - ((day + 3) % 7)) * 86_400_000 + 1000);
      await c.runDue();
      t.equal(new Date(c.now()).getUTCDay(), 1, 'a Monday');
      t.equal((await me()).spent_week, 0, 'a new week starts from nothing');
      deal = await cheapestNow();
      t.equal((await order(1, MARKET, deal.key)).status, 201, 'a new week');

      const ends = Math.floor(c.now() / 1000) + 120;
      const set = await limits({ expires_at: String(ends) });
      t.equal(set.body.limits.expires_at, ends);
      t.equal((await me()).expires_at, ends);
      t.equal((await order(1, MARKET, deal.key)).status, 201, 'before expires_at');
      c.advanceTo(ends * 1000);
      await c.runDue();
      deal = await cheapestNow();
      const expired = await order(1, MARKET, deal.key);
      t.equal(expired.status, 403);
      t.match(expired.body, {
        limit: 'expires_at',
        limit_value: ends,
        spent: null,
        remaining: null,
      });
      const quote = await agent.post('/api/v1/orders/quote', {
        market: MARKET,
        offer_key: deal.key,
        qty: 1,
        pay_from_balance: true,
      });
      t.match(quote.body.limits, { allowed: false, checks: [{ limit: 'expires_at', ok: false }] });
      t.equal(quote.body.would_answer.status, 403);
      t.equal((await limits({ expires_at: '' })).status, 200, 'the holder sets the limits again');
      t.equal((await order(1, MARKET, deal.key)).status, 201, 'and funding works again');
      t.equal((await limits({ expires_at: 'soon' })).status, 422, 'a whole number of seconds');
    },
  );

  await t.test("another holder's agent is not found", async (t) => {
    const other = await registerHolder(svc);
    const r = await submit(
      svc,
      `/console/agents/${agent.agentId}/limits`,
      { max_order: '1' },
      other.cookie,
    );
    t.equal(r.status, 404);
  });
});

t.test("max_day holds when two processes take one agent's orders at once", async (t) => {
  // Two services on one database (as two front ends of the cluster would be): each has its own
  // account actor for the agent, so their order batches run at the same time and meet only at the
  // account's row lock. The day's spending must be read after that lock.
  const c = await startClockedService(t, {}, { startMs: CLOCKED_START_MS });
  const a = c.svc;
  const b = await startTestService(t, {}, { realMs: c.now }, a.config);
  const holder = await registerHolder(a);
  const m: Menu = (await send(a, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  const cheapest = [...m.deals].sort((x, y) => x.unit_cost - y.unit_cost)[0];
  const ROUNDS = 8;
  const FIT = 10;
  for (let round = 0; round < ROUNDS; round++) {
    const agent = await fundedAgent(a, holder);
    const unit = cents(
      (await agent.post('/api/v1/orders', { market: MARKET, offer_key: cheapest.key, qty: 1 })).body
        .total_amount,
    );
    const set = await submit(
      a,
      `/console/agents/${agent.agentId}/limits`,
      { max_day: String((unit * FIT) / 100) },
      holder.cookie,
    );
    t.equal(set.status, 200, JSON.stringify(set.body));
    const auth = { authorization: `Bearer ${agent.key}` };
    const body = { market: MARKET, offer_key: cheapest.key, qty: 1, pay_from_balance: true };
    const burst = await Promise.all(
      Array.from({ length: 3 * FIT }, (_, i) =>
        send(i % 2 ? b : a, 'POST', '/api/v1/orders', body, auth),
      ),
    );
    const ok = burst.filter((r) => r.status === 201).length;
    t.equal(ok, FIT, `round ${round + 1}: exactly what max_day holds`);
    t.same(
      burst.filter((r) => r.status !== 201).map((r) => r.status),
      Array(3 * FIT - ok).fill(403),
      'the others refused by the limit',
    );
    t.equal(
      cents((await agent.get('/api/v1/agents/me')).body.limits.spent_today),
      unit * FIT,
      'spent_today is max_day, not more',
    );
  }
});
