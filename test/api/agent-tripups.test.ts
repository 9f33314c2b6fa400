// What an agent trying the service can trip on, on the real service: an order paid
// from the balance is not sent to the holder; a 403 after the holder switched funding off says so
// and when; a gone deal's 404 links to the current menu (at the front end and in the order batch);
// a declined card names the approved test card; /llms.txt points to the test cards.
import t from 'tap';
import { accountRef } from '../../actors/account/messages.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { FUNDING_PROFITABLE_TRADES, menuUrl, orderAmounts } from '../../src/rules.js';
import { TEST_CARDS } from '../../src/payments/cards.js';
import type { TestService } from '../helpers/service.js';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent, send, type Menu, type TestAgent } from '../helpers/agents.js';
import { APPROVED_CARD, registerHolder } from '../helpers/holders.js';
import { getPage } from '../helpers/web.js';

const MARKET = 'm15';
const cents = (x: number) => Math.round(x * 100);

/** The menu of the open m15 session (the test's clock stands still: it stays open until the test closes it). */
async function currentMenu(svc: TestService): Promise<Menu> {
  const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  if (m.tick !== svc.services.supervisor.openTick(MARKET))
    throw new Error(
      `the menu's session ${m.tick} is not the open one ${svc.services.supervisor.openTick(MARKET)}`,
    );
  return m;
}

/** Places an order on a deal `pick` chooses from the open session's menu. */
async function order(
  svc: TestService,
  agent: TestAgent,
  body: Record<string, unknown>,
  pick: (m: Menu) => any = (m) => m.deals[0],
) {
  const m = await currentMenu(svc);
  const deal = pick(m);
  const r = await agent.post('/api/v1/orders', {
    market: MARKET,
    offer_key: deal.key,
    qty: 1,
    ...body,
  });
  return { r, deal, menu: m };
}

t.test('what an agent tripped on', async (t) => {
  const c = await startClockedService(t);
  const svc = c.svc;
  const base = svc.config.baseUrl;
  const fee = cents(
    (await send(svc, 'GET', `/api/v1/markets/${MARKET}`)).body.fees.fulfilment_per_unit,
  );
  const agent = await registerAgent(svc);
  const holder = await registerHolder(svc);
  const em = () => svc.orm.em.fork();
  const [{ id: holderId }] = await em().execute(
    'select id::float8 as id from holder where email = ?',
    [holder.email],
  );

  // Fixture: the agent connected to the holder with autonomous funding on and money on its account
  // (reaching the threshold takes settled trades in profit: test/api/trading.test.ts does it for real).
  // Stamped with the service clock's now (never the database's clock).
  const at = svc.services.clock.realNow();
  await em().execute(
    `update agent set holder_id = ?, paired_at = ${instantSql()}, autonomous_funding = true, funding_changed_at = ${instantSql()} where id = ?`,
    [holderId, at, at, agent.agentId],
  );
  await em().execute('update account set holder_id = ? where id = ?', [holderId, agent.accountId]);
  await em().execute('update account set balance_cents = balance_cents + 500000 where id = ?', [
    agent.accountId,
  ]);
  await em().execute(
    `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) select id, 'topup', 500000, balance_cents, 'test:topup', ${instantSql()} from account where id = ?`,
    [at, agent.accountId],
  );

  await t.test(
    'an order paid from the balance is not sent to the holder: it says what happens next',
    async (t) => {
      const cheap = (m: Menu) => m.deals.reduce((a, d) => (d.unit_cost < a.unit_cost ? d : a));
      const { r, deal } = await order(svc, agent, { pay_from_balance: true }, cheap);
      t.equal(r.status, 201, JSON.stringify(r.body));
      const o = r.body;
      t.equal(o.status, 'paid');
      t.equal(o.payment_source, 'balance');
      t.notMatch(
        o.instructions,
        /purchase_url/,
        'no "hand purchase_url to your holder" on a paid order',
      );
      t.match(o.instructions, 'paid from your account balance');
      t.match(o.instructions, 'order.filled event', 'the next step is told by an event');
      t.match(o.instructions, 'GET /api/v1/events/stream');
      t.match(o.instructions, `no need to poll GET /api/v1/orders/${o.id}`);
      t.match(o.instructions, 'closes_at');
      t.match(o.instructions, 'settlement surcharge', 'the loss told before it happens');
      const amounts = orderAmounts(1, cents(deal.unit_cost), fee);
      t.same(
        [cents(o.gross_amount), cents(o.fee_amount), cents(o.total_amount)],
        [amounts.grossCents, amounts.feeAmountCents, amounts.totalCents],
        'the amounts of orderAmounts',
      );

      // The confirmation page tells what happened to this order, whatever its address claims.
      const token = new URL(o.purchase_url).pathname.split('/')[2];
      const done = await getPage(svc, `/checkout/${token}/done?card=4242&saved=1`, {
        cookie: holder.cookie,
      });
      t.equal(done.status, 200);
      t.match(done.text, 'paid its order for 1 ×', 'the agent paid it, from its balance');
      t.match(done.text, "the agent's account balance");
      t.notMatch(done.text, 'You approved', 'the holder approved nothing on this page');
      t.notMatch(done.text, /Card stored|•••• 4242/, 'and no card was used');

      const waiting = (await order(svc, agent, {})).r;
      t.equal(waiting.status, 201);
      t.equal(waiting.body.status, 'awaiting_payment');
      t.match(
        waiting.body.instructions,
        /^Hand purchase_url to your account holder/,
        'an unpaid order still goes to the holder',
      );
    },
  );

  await t.test(
    'a 403 after the holder switched autonomous funding off says so, and when',
    async (t) => {
      const off = await holder.form(`/console/agents/${agent.agentId}/funding`, { enabled: 'off' });
      t.equal(off.status, 200, JSON.stringify(off.body));
      const [{ at }] = await em().execute(
        'select funding_changed_at as at from agent where id = ?',
        [agent.agentId],
      );
      const { r } = await order(svc, agent, { pay_from_balance: true });
      t.equal(r.status, 403);
      t.match(
        r.body.detail,
        `your holder switched autonomous funding off at ${new Date(at).toISOString()}`,
      );
      t.match(r.body.detail, 'order without pay_from_balance and hand them purchase_url');

      const fresh = await registerAgent(svc);
      const never = (await order(svc, fresh, { pay_from_balance: true })).r;
      t.equal(never.status, 403);
      t.notMatch(
        never.body.detail,
        /switched autonomous funding off/,
        'never switched on: not "switched off"',
      );
      t.match(
        never.body.detail,
        `after ${FUNDING_PROFITABLE_TRADES} settled trades of this agent in profit`,
      );
    },
  );

  await t.test(
    "a deal of a closed session answers 404 with the current menu's address",
    async (t) => {
      const m = await currentMenu(svc);
      const key = m.deals[0].key;
      const menuLink = menuUrl(base, MARKET);
      t.equal(
        (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals/${key}`)).status,
        200,
        'listed while its session is open',
      );
      // Past the session's close by the clock: gone at once, before the record closed the session,
      // and still gone after.
      c.advanceTo(m.closes_at * 1000 + 200);
      for (const when of ['before the record closed it', 'after the close']) {
        if (when === 'after the close') {
          await c.runDue();
          t.equal(
            svc.services.supervisor.openTick(MARKET),
            m.tick + 1,
            'the record closed the session',
          );
        } else
          t.equal(
            svc.services.supervisor.openTick(MARKET),
            m.tick,
            'the record has not closed it yet',
          );
        const read = await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals/${key}`);
        t.equal(read.status, 404, when);
        t.match(read.body.detail, menuLink);
        const placed = await agent.post('/api/v1/orders', {
          market: MARKET,
          offer_key: key,
          qty: 1,
        });
        t.equal(placed.status, 404, when);
        t.match(placed.body.detail, menuLink);
      }
      t.equal(
        (await send(svc, 'GET', new URL(menuLink).pathname)).status,
        200,
        'the link is the menu',
      );

      // The order batch's own check (a session that closed after the front end let the order through).
      const refused = await svc.services.runtime
        .ask(accountRef(agent.accountId), {
          kind: 'order',
          agentId: agent.agentId,
          market: MARKET,
          tick: m.tick,
          idx: 0,
          offerKey: key,
          qty: 1,
          closesAt: m.closes_at,
          at: svc.services.clock.realNow(),
          payFromBalance: false,
          baseUrl: base,
        })
        .then(
          () => null,
          (err: { status: number; detail: string }) => err,
        );
      t.equal(refused?.status, 404);
      t.match(refused?.detail, menuLink);
    },
  );

  await t.test('a declined card suggests the approved test card', async (t) => {
    const { r } = await order(svc, agent, {});
    t.equal(r.status, 201);
    const paid = await holder.pay(r.body.purchase_url, {
      ...APPROVED_CARD,
      number: TEST_CARDS.declined,
    });
    t.equal(paid.status, 402);
    t.match(paid.body.detail, /^card declined/);
    t.match(paid.body.detail, TEST_CARDS.approved);
  });

  await t.test('/llms.txt points to GET /api/v1/payments/methods for the test cards', async (t) => {
    const llms = await (await svc.get('/llms.txt')).text();
    t.match(llms, `GET ${base}/api/v1/payments/methods`);
    const methods = (await send(svc, 'GET', '/api/v1/payments/methods')).body;
    const card = methods.methods.find((x: { id: string }) => x.id === 'card');
    t.ok(card.test_cards.some((c: { number: string }) => c.number === TEST_CARDS.approved));
  });
});
