// What the holder will pay (CONTRACT.md), the month's participation fee named beside an order's
// total_amount, on a real service whose clock
// starts ten minutes before a month ends (2026-11-30 23:50 UTC):
// - an order awaiting payment carries holder_pays {goods, participation_fee, total} in its answer,
//   GET /orders, GET /orders/{id} and its order.created event; the fee is 15.00 for an agent
//   without a holder or a holder who has not paid this month's, 0.00 once it is paid; a paid or
//   expired order carries null (its figures are the payment's own);
// - a cart with current lines carries holder_pays of those lines in GET /cart;
// - what holder_pays says is what the payment then charges; a new month owes the fee again.
import t from 'tap';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent, type TestAgent } from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';
import { MONTHLY_FEE } from '../../src/payments/terms.js';

const MARKET = 'm15';
const FEE = MONTHLY_FEE.amount;
const c = await startClockedService(t, {}, { startMs: Date.UTC(2026, 10, 30, 23, 50) + 50 });
const svc = c.svc;
const cents = (x: number) => Math.round(x * 100);
const expected = (goods: number, fee: number) => ({
  goods,
  participation_fee: fee,
  total: (cents(goods) + cents(fee)) / 100,
});

async function order(agent: TestAgent, nth = 0) {
  const menu = (await agent.get(`/api/v1/markets/${MARKET}/deals`)).body;
  const r = await agent.post('/api/v1/orders', {
    market: MARKET,
    offer_key: menu.deals[nth].key,
    qty: 1,
  });
  if (r.status !== 201) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
/** The order as every read of it serves it: GET /orders/{id}, GET /orders, its order.created event. */
async function everywhere(agent: TestAgent, id: number) {
  const one = (await agent.get(`/api/v1/orders/${id}`)).body;
  const listed = (await agent.get('/api/v1/orders')).body.orders.find(
    (o: { id: number }) => o.id === id,
  );
  const created = (
    await agent.get('/api/v1/events?types=order.created&limit=1000')
  ).body.events.find((e: { data: { id: number } }) => e.data.id === id);
  return { one: one.holder_pays, listed: listed.holder_pays, created: created.data.holder_pays };
}

const agent = await registerAgent(svc);
const holder = await registerHolder(svc);

t.test(
  "an agent without a holder: the order and the month's fee; what it says is what the payment charges",
  async (t) => {
    const o = await order(agent);
    const due = expected(o.total_amount, FEE);
    t.same(
      o.holder_pays,
      due,
      'the answer: goods, the participation fee (no holder yet), their total',
    );
    t.same(
      await everywhere(agent, o.id),
      { one: due, listed: due, created: due },
      'GET, the list and order.created say the same',
    );
    const paid = await holder.pay(o.purchase_url);
    t.equal(paid.status, 200);
    t.equal(paid.body.charged, due.total, 'the payment charged what holder_pays said');
    const after = await everywhere(agent, o.id);
    t.equal(
      after.one,
      null,
      "once paid, null: the payment's own figures are its receipt and the ledger",
    );
    t.same(after.created, due, 'the order.created event keeps what it said then');
  },
);

t.test("the holder has paid this month's fee: the next order and the cart owe none", async (t) => {
  const o = await order(agent, 1);
  const due = expected(o.total_amount, 0);
  t.same(o.holder_pays, due, "participation_fee 0.00: the connected holder paid this month's");
  t.same(await everywhere(agent, o.id), { one: due, listed: due, created: due });

  t.equal((await agent.get('/api/v1/cart')).body.holder_pays, null, 'a cart without lines: null');
  const menu = (await agent.get(`/api/v1/markets/${MARKET}/deals`)).body;
  for (const [i, qty] of [
    [2, 1],
    [3, 2],
  ])
    t.equal(
      (
        await agent.post('/api/v1/cart/items', {
          market: MARKET,
          offer_key: menu.deals[i].key,
          qty,
          note: 'test',
        })
      ).status,
      201,
    );
  const cart = (await agent.get('/api/v1/cart')).body;
  const goods =
    cart.items
      .filter((l: { status: string }) => l.status !== 'ordered')
      .reduce((s: number, l: { total: number }) => s + cents(l.total), 0) / 100;
  t.same(cart.holder_pays, expected(goods, 0), 'the cart: its current lines, no fee');

  const other = await registerAgent(svc);
  t.equal(
    (
      await other.post('/api/v1/cart/items', {
        market: MARKET,
        offer_key: menu.deals[2].key,
        qty: 1,
        note: 'test',
      })
    ).status,
    201,
  );
  const theirs = (await other.get('/api/v1/cart')).body;
  t.same(
    theirs.holder_pays,
    expected(theirs.items[0].total, FEE),
    'an agent without a holder: its cart owes the fee',
  );
});

t.test('a new month owes the fee again; an expired order carries null', async (t) => {
  const waiting = (await agent.get('/api/v1/orders?status=awaiting_payment')).body.orders;
  t.ok(waiting.length >= 1, 'an order still awaits payment');
  await c.closeSession(MARKET); // the session ends at 2026-12-01 00:00 UTC
  t.ok(c.now() >= Date.UTC(2026, 11, 1), 'the clock is in December');
  for (const w of waiting)
    t.equal(
      (await agent.get(`/api/v1/orders/${w.id}`)).body.holder_pays,
      null,
      `order ${w.id} expired: null`,
    );
  const o = await order(agent);
  t.same(o.holder_pays, expected(o.total_amount, FEE), "December's fee is due");
  t.same(await everywhere(agent, o.id), {
    one: o.holder_pays,
    listed: o.holder_pays,
    created: o.holder_pays,
  });
  const paid = await holder.pay(o.purchase_url);
  t.equal(paid.body.charged, o.holder_pays.total, 'and charged as said');
});
