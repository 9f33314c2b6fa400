// Purchase links over HTTP (SPEC.md "Web routes" checkout, CONTRACT.md "Test cards", "Money"): the
// page shows who asks and for what; paying needs a holder; bad cards charge nothing; a good card
// pays with the monthly fee once; stored cards, balance, another holder's agent, an expired order.
import t from 'tap';
import { registerAgent, ledgerSumCents, send, type TestAgent } from '../helpers/agents.js';
import { getPage, postForm, registerHolder, startWebService } from '../helpers/web.js';
import type { TestService } from '../helpers/service.js';
import { instantSql } from '../../actors/runtime/sql.js';

const CARD = {
  method: 'new_card',
  number: '4242 4242 4242 4242',
  exp: '12/39',
  cvc: '123',
  holder: 'Ada L',
};

async function order(
  svc: TestService,
  agent: TestAgent,
  qty = 1,
): Promise<{ id: number; token: string; total: number; body: any }> {
  const deals = (await svc.getJson('/api/v1/markets/m15/deals?limit=5')).body.deals;
  const r = await agent.post('/api/v1/orders', { market: 'm15', offer_key: deals[0].key, qty });
  if (r.status !== 201) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
  return {
    id: r.body.id,
    token: r.body.purchase_url.split('/checkout/')[1],
    total: r.body.total_amount,
    body: r.body,
  };
}

t.test('checkout: purchase links', async (t) => {
  const svc = await startWebService(t);
  const db = (sql: string, params: unknown[] = []) => svc.orm.em.fork().execute(sql, params);
  const agent = await registerAgent(svc, {
    name: 'Quartz Scout',
    agent: { model: 'gpt-test-1' },
    operator: { name: 'Acme Research', contact: 'ops@acme.example' },
    purpose: 'buy cheap bundles',
  });
  const ada = await registerHolder(svc, 'ada@example.com');
  const bob = await registerHolder(svc, 'bob@example.com');
  const first = await order(svc, agent);
  const path = `/checkout/${first.token}`;

  await t.test(
    "the page shows the agent's declared identity and the deal; logged out it links to login and register",
    async (t) => {
      const r = await getPage(svc, path);
      t.equal(r.status, 200);
      for (const s of [
        'Quartz Scout',
        'gpt-test-1',
        'Acme Research',
        'ops@acme.example',
        'buy cheap bundles',
        first.body.deal_title,
        first.body.offer_key,
        'm15',
      ]) {
        t.match(r.text, s, `shows ${s}`);
      }
      t.match(r.text, `${first.body.total_amount.toFixed(2)} USD`, 'money with 2 decimals');
      t.match(r.text, `/login?next=${encodeURIComponent(path)}`);
      t.match(r.text, `/register?next=${encodeURIComponent(path)}`);
      t.notMatch(r.text, 'name="number"', 'no payment form without a holder');
      const logged = await getPage(svc, path, { cookie: ada.cookie });
      t.match(logged.text, `action="${path}/pay"`);
      // The month's fee is its own line of the summary, and the button carries the one total.
      t.match(
        logged.text,
        /Monthly participation fee <span class="muted">\(once for \d{4}-\d{2}\)<\/span><\/th><td class="num">15\.00 USD/,
      );
      t.match(logged.text, `>Pay ${(first.body.total_amount + 15).toFixed(2)} USD</button>`);
    },
  );

  await t.test('an unknown link is a 404 page ({detail} for JSON clients)', async (t) => {
    const r = await getPage(svc, '/checkout/nosuchtoken');
    t.equal(r.status, 404);
    t.match(r.text, 'Order not found');
    const j = await getPage(svc, '/checkout/nosuchtoken', { json: true });
    t.equal(j.status, 404);
    t.type(j.body.detail, 'string');
    t.equal(
      (await getPage(svc, '/checkout/bad%20token!')).status,
      404,
      'a malformed token is not found either',
    );
    // CONTRACT.md "Retries and idempotency": a NUL answers 422 at its field; a form refused for it shows the link as not found.
    t.equal(
      (await getPage(svc, '/checkout/%00')).status,
      422,
      'a NUL in a token is refused at its field',
    );
    t.equal(
      (await postForm(svc, '/checkout/%00/pay', {}, { cookie: ada.cookie })).status,
      404,
      'a refused form with a NUL token: the link is not found, never a 500',
    );
    t.equal(
      (await postForm(svc, '/carts/%00/pay', {}, { cookie: ada.cookie })).status,
      404,
      'nor on a cart link',
    );
    t.equal(
      (await postForm(svc, '/checkout/nosuchtoken/pay', CARD, { cookie: ada.cookie, json: true }))
        .status,
      404,
    );
  });

  await t.test('paying needs a holder: 401 for a post without a session', async (t) => {
    const r = await postForm(svc, `${path}/pay`, CARD, { json: true });
    t.equal(r.status, 401);
    t.same(r.body, { detail: 'log in first' });
  });

  await t.test('declined and mistyped cards charge nothing', async (t) => {
    const cases: [Record<string, string>, number, RegExp][] = [
      [
        { number: '4000 0000 0000 0002' },
        402,
        /^card declined: .*approved test card 4242 4242 4242 4242$/,
      ],
      [{ number: '4242 4242 4242 4241' }, 400, /not valid/],
      [{ exp: '01/20' }, 400, /expired/],
      [{ exp: 'soon' }, 400, /MM\/YY/],
      [{ cvc: '12' }, 400, /cvc/],
    ];
    for (const [change, status, detail] of cases) {
      const r = await postForm(
        svc,
        `${path}/pay`,
        { ...CARD, ...change },
        { cookie: ada.cookie, json: true },
      );
      t.equal(r.status, status, JSON.stringify(change));
      t.match(r.body.detail, detail);
    }
    const page = await postForm(
      svc,
      `${path}/pay`,
      { ...CARD, number: '4000000000000002' },
      { cookie: ada.cookie },
    );
    t.equal(page.status, 402, 'a browser gets the page again with the status');
    t.match(page.text, 'card declined');
    t.match(page.text, 'Quartz Scout');
    t.equal((await agent.get(`/api/v1/orders/${first.id}`)).body.status, 'awaiting_payment');
    t.same((await agent.get('/api/v1/account')).body.ledger, [], 'no ledger entry');
    t.equal((await db('select count(*)::int as n from card'))[0].n, 0, 'no card stored');
  });

  await t.test(
    "a good card pays the order with the month's fee; the agent's ledger balances",
    async (t) => {
      // CONTRACT.md "Strict requests": the card is kept only because the form says save_card=on.
      const r = await postForm(
        svc,
        `${path}/pay`,
        { ...CARD, save_card: 'on' },
        { cookie: ada.cookie, json: true },
      );
      t.equal(r.status, 200);
      t.match(r.body, { ok: true, order_ids: [first.id], already_paid: false, fee: 15 });
      t.type(r.body.round_id, 'number');
      t.equal(
        Math.round(r.body.charged * 100),
        Math.round(first.total * 100) + 1500,
        'charged = total + 15.00 fee',
      );
      const o = (await agent.get(`/api/v1/orders/${first.id}`)).body;
      t.match(o, { status: 'paid', payment_source: 'card' });
      const acct = (await agent.get('/api/v1/account')).body;
      t.same(acct.ledger.map((e: any) => e.kind).sort(), [
        'card_charge',
        'monthly_fee',
        'order_debit',
      ]);
      t.equal(ledgerSumCents(acct.ledger), 0, 'charged onto the account and debited at once');
      const [card] = await db('select brand, last4, exp_month, exp_year from card');
      t.same(
        card,
        { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2039 },
        'only brand, last 4 and expiry are kept',
      );
      const again = await postForm(svc, `${path}/pay`, CARD, { cookie: ada.cookie, json: true });
      t.match(
        again.body,
        { ok: true, already_paid: true, charged: 0 },
        'paying twice charges once',
      );
      const page = await getPage(svc, path, { cookie: ada.cookie });
      t.match(page.text, 'This order is paid');
      t.notMatch(page.text, 'name="number"');
    },
  );

  await t.test(
    'a browser pays the next order with its stored card: 303 to the confirmation, no second fee',
    async (t) => {
      const next = await order(svc, agent, 2);
      const page = await getPage(svc, `/checkout/${next.token}`, { cookie: ada.cookie });
      const cardId = /<option value="(\d+)">visa •••• 4242, 12\/39<\/option>/.exec(page.text)?.[1];
      t.ok(cardId, 'the stored card is offered');
      t.notMatch(page.text, 'Monthly participation fee', 'the fee was paid this month');
      t.match(
        page.text,
        `>Pay ${next.body.total_amount.toFixed(2)} USD</button>`,
        'the total without a fee',
      );
      const r = await postForm(
        svc,
        `/checkout/${next.token}/pay`,
        { method: 'card', card_id: cardId! },
        { cookie: ada.cookie },
      );
      t.equal(r.status, 303);
      t.equal(
        r.location,
        `/checkout/${next.token}/done?card_id=${cardId}`,
        'on to the confirmation, naming the stored card',
      );
      const done = await getPage(svc, r.location!, { cookie: ada.cookie });
      t.equal(done.status, 200);
      t.match(done.text, `Payment received: order ${next.id} is paid`);
      t.match(done.text, 'visa •••• 4242', 'the stored card it was paid with');
      t.match(
        done.text,
        `${next.body.total_amount.toFixed(2)} USD`,
        'what was charged: the order, no fee this time',
      );
      t.notMatch(done.text, 'Monthly participation fee');
      const nosy = await getPage(svc, r.location!, { cookie: bob.cookie });
      t.equal(nosy.status, 404, 'another holder is not shown the confirmation');
      const orders = await getPage(svc, '/console/orders', { cookie: ada.cookie });
      t.match(orders.text, next.body.deal_title);
      t.equal((await agent.get(`/api/v1/orders/${next.id}`)).body.status, 'paid');
      const third = await order(svc, agent);
      const bal = await postForm(
        svc,
        `/checkout/${third.token}/pay`,
        { method: 'balance' },
        { cookie: ada.cookie, json: true },
      );
      t.equal(bal.status, 400, "the agent's balance is empty");
      const noCard = await postForm(
        svc,
        `/checkout/${third.token}/pay`,
        { method: 'card' },
        { cookie: ada.cookie, json: true },
      );
      t.equal(noCard.status, 400);
      const notHers = await postForm(
        svc,
        `/checkout/${third.token}/pay`,
        { method: 'card', card_id: '999999' },
        { cookie: ada.cookie, json: true },
      );
      t.equal(notHers.status, 404);
      // The money kernel judges a stored card in the paying turn (the front end sends its id only).
      // Stored cards, dated by the service's clock.
      const [bobs] = await db(
        `insert into card (holder_id, brand, last4, exp_month, exp_year, created_at)
      select id, 'visa', '1881', 12, 2039, ${instantSql()} from holder where email = 'bob@example.com' returning id::float8 as id`,
        [svc.services.clock.realNow()],
      );
      const other = await postForm(
        svc,
        `/checkout/${third.token}/pay`,
        { method: 'card', card_id: String(bobs.id) },
        { cookie: ada.cookie, json: true },
      );
      t.match(
        other,
        { status: 404, body: { detail: `no stored card ${bobs.id} of yours` } },
        "another holder's stored card is not found",
      );
      const [old] = await db(
        `insert into card (holder_id, brand, last4, exp_month, exp_year, created_at)
      select id, 'visa', '0005', 1, 2021, ${instantSql()} from holder where email = 'ada@example.com' returning id::float8 as id`,
        [svc.services.clock.realNow()],
      );
      const expired = await postForm(
        svc,
        `/checkout/${third.token}/pay`,
        { method: 'card', card_id: String(old.id) },
        { cookie: ada.cookie, json: true },
      );
      t.match(
        expired,
        { status: 400, body: { detail: /stored card \d+ has expired.*nothing was charged/ } },
        'an expired stored card is refused',
      );
      t.equal(
        (await agent.get(`/api/v1/orders/${third.id}`)).body.status,
        'awaiting_payment',
        'nothing was paid',
      );
      t.notOk(
        (await agent.get('/api/v1/account')).body.ledger.some(
          (e: any) => e.ref === `order:${third.id}`,
        ),
        'nothing was booked',
      );
    },
  );

  await t.test('another holder cannot pay for an agent connected to someone else', async (t) => {
    const o = await order(svc, agent);
    const page = await getPage(svc, `/checkout/${o.token}`, { cookie: bob.cookie });
    t.match(page.text, 'connected to another account holder');
    const r = await postForm(svc, `/checkout/${o.token}/pay`, CARD, {
      cookie: bob.cookie,
      json: true,
    });
    t.equal(r.status, 403);
    t.equal((await agent.get(`/api/v1/orders/${o.id}`)).body.status, 'awaiting_payment');
  });

  await t.test(
    'an expired order: the page says so and paying is 409 with nothing charged',
    async (t) => {
      const o = await order(svc, agent);
      await db(`update orders set status = 'expired' where id = ?`, [o.id]);
      const page = await getPage(svc, `/checkout/${o.token}`, { cookie: ada.cookie });
      t.match(page.text, 'This purchase link expired');
      t.notMatch(page.text, 'name="number"');
      const before = (await agent.get('/api/v1/account')).body.ledger.length;
      const r = await postForm(svc, `/checkout/${o.token}/pay`, CARD, {
        cookie: ada.cookie,
        json: true,
      });
      t.equal(r.status, 409);
      t.match(r.body.detail, /expired/);
      t.equal((await agent.get('/api/v1/account')).body.ledger.length, before);
      const late = await order(svc, agent);
      await db('update orders set closes_at = ? where id = ?', [Date.now() / 1000 - 1, late.id]);
      t.match(
        (await getPage(svc, `/checkout/${late.token}`, { cookie: ada.cookie })).text,
        'This purchase link expired',
        'a passed closes_at reads as expired',
      );
    },
  );

  await t.test(
    'withdrawing: the agent cancels an order awaiting payment; its link takes no payment; a second DELETE answers it again',
    async (t) => {
      const o = await order(svc, agent);
      const auth = { authorization: `Bearer ${agent.key}` };
      const gone = await send(svc, 'DELETE', `/api/v1/orders/${o.id}`, undefined, auth);
      t.equal(gone.status, 200);
      t.equal(gone.body.status, 'cancelled');
      t.equal(gone.body.id, o.id);
      t.equal(gone.body.holder_pays, null, 'nothing left to pay');
      t.match(gone.body.instructions, /withdrawn unfunded/);
      t.equal((await agent.get(`/api/v1/orders/${o.id}`)).body.status, 'cancelled');
      const again = await send(svc, 'DELETE', `/api/v1/orders/${o.id}`, undefined, auth);
      t.equal(again.status, 200);
      t.equal(again.body.status, 'cancelled');
      const events = (await agent.get('/api/v1/events?types=order.cancelled&limit=1000')).body
        .events;
      const mine = events.filter((e: any) => e.data.id === o.id);
      t.equal(mine.length, 1, 'one order.cancelled, however often it is withdrawn');
      t.equal(mine[0].data.by, 'agent');
      t.equal(mine[0].data.status, 'cancelled');

      const page = await getPage(svc, `/checkout/${o.token}`, { cookie: ada.cookie });
      t.match(page.text, 'Quartz Scout withdrew this order');
      t.notMatch(page.text, 'name="number"', 'no payment form');
      t.notMatch(page.text, '/decline"', 'nothing to decline');
      const before = (await agent.get('/api/v1/account')).body.ledger.length;
      const pay = await postForm(svc, `/checkout/${o.token}/pay`, CARD, {
        cookie: ada.cookie,
        json: true,
      });
      t.equal(pay.status, 409);
      t.match(pay.body.detail, /withdrawn by its agent.*nothing was charged/);
      t.equal((await agent.get('/api/v1/account')).body.ledger.length, before, 'nothing charged');
      const [round] = await db('select status from trade_round where id = ?', [gone.body.round_id]);
      t.equal(round.status, 'cancelled', 'its round goes with it');
    },
  );

  await t.test(
    'withdrawing is refused once paid, filled or past the close (409), and another agent gets 404',
    async (t) => {
      const auth = { authorization: `Bearer ${agent.key}` };
      const paid = await order(svc, agent);
      t.equal(
        (
          await postForm(svc, `/checkout/${paid.token}/pay`, CARD, {
            cookie: ada.cookie,
            json: true,
          })
        ).status,
        200,
      );
      const r = await send(svc, 'DELETE', `/api/v1/orders/${paid.id}`, undefined, auth);
      t.equal(r.status, 409);
      t.match(r.body.detail, /paid.*can no longer be withdrawn/);
      t.equal((await agent.get(`/api/v1/orders/${paid.id}`)).body.status, 'paid');
      for (const [status, words] of [
        ['filled', /filled into a position/],
        ['expired', /expired unfunded/],
      ] as const) {
        const o = await order(svc, agent);
        await db(`update orders set status = ? where id = ?`, [status, o.id]);
        const refused = await send(svc, 'DELETE', `/api/v1/orders/${o.id}`, undefined, auth);
        t.equal(refused.status, 409, status);
        t.match(refused.body.detail, words);
      }
      const late = await order(svc, agent);
      await db('update orders set closes_at = ? where id = ?', [Date.now() / 1000 - 1, late.id]);
      const tooLate = await send(svc, 'DELETE', `/api/v1/orders/${late.id}`, undefined, auth);
      t.equal(tooLate.status, 409, 'the clock decides, before the close has run');
      t.equal((await agent.get(`/api/v1/orders/${late.id}`)).body.status, 'awaiting_payment');

      const stranger = await registerAgent(svc, { name: 'Stranger' });
      const mine = await order(svc, agent);
      const other = await send(svc, 'DELETE', `/api/v1/orders/${mine.id}`, undefined, {
        authorization: `Bearer ${stranger.key}`,
      });
      t.equal(other.status, 404);
      t.equal((await agent.get(`/api/v1/orders/${mine.id}`)).body.status, 'awaiting_payment');
      t.equal((await send(svc, 'DELETE', '/api/v1/orders/999999999', undefined, auth)).status, 404);
    },
  );

  await t.test(
    'declining: the holder cancels on the purchase page instead of paying; the agent hears by: holder',
    async (t) => {
      const o = await order(svc, agent);
      const open = await getPage(svc, `/checkout/${o.token}`, { cookie: ada.cookie });
      t.match(open.text, `action="/checkout/${o.token}/decline"`);
      t.equal(
        (
          await postForm(
            svc,
            `/checkout/${o.token}/decline`,
            {},
            { cookie: bob.cookie, json: true },
          )
        ).status,
        403,
        "another holder cannot decline Ada's agent's order",
      );
      t.equal(
        (await postForm(svc, `/checkout/${o.token}/decline`, {}, { json: true })).status,
        401,
        'declining needs a holder',
      );
      const browser = await postForm(
        svc,
        `/checkout/${o.token}/decline`,
        {},
        { cookie: ada.cookie },
      );
      t.equal(browser.status, 303);
      t.equal(browser.location, `/checkout/${o.token}`);
      const page = await getPage(svc, `/checkout/${o.token}`, { cookie: ada.cookie });
      t.match(page.text, 'This order was declined on this page');
      t.notMatch(page.text, 'name="number"');
      t.equal((await agent.get(`/api/v1/orders/${o.id}`)).body.status, 'cancelled');
      const json = await postForm(
        svc,
        `/checkout/${o.token}/decline`,
        {},
        {
          cookie: ada.cookie,
          json: true,
        },
      );
      t.same(
        json.body,
        { ok: true, order_id: o.id, status: 'cancelled' },
        'declining again answers it',
      );
      const events = (
        await agent.get('/api/v1/events?types=order.cancelled&limit=1000')
      ).body.events.filter((e: any) => e.data.id === o.id);
      t.equal(events.length, 1);
      t.equal(events[0].data.by, 'holder');
      const pay = await postForm(svc, `/checkout/${o.token}/pay`, CARD, {
        cookie: ada.cookie,
        json: true,
      });
      t.equal(pay.status, 409);
      t.match(pay.body.detail, /declined.*nothing was charged/);
    },
  );

  await t.test(
    "the console shows the holder's agents, orders, ledger; the funding switch answers 403 before 3 wins",
    async (t) => {
      const overview = await getPage(svc, '/console', { cookie: ada.cookie });
      t.equal(overview.status, 200);
      t.match(overview.text, 'Quartz Scout');
      t.match(overview.text, /fee for \d{4}-\d{2} is paid/);
      const ledger = await getPage(svc, '/console/ledger', { cookie: ada.cookie });
      // Kinds and refs in words.
      t.match(ledger.text, 'Card payment in');
      t.match(ledger.text, `order ${first.id}`);
      t.notMatch(ledger.text, /card_charge|order_debit|monthly_fee/, 'no ledger codes shown');
      const agents = await getPage(svc, '/console/agents', { cookie: ada.cookie });
      t.match(agents.text, 'gpt-test-1');
      t.match(agents.text, `/console/agents/${agent.agentId}/funding`);
      const on = await postForm(
        svc,
        `/console/agents/${agent.agentId}/funding`,
        { enabled: 'on' },
        { cookie: ada.cookie, json: true },
      );
      t.equal(on.status, 403);
      t.match(on.body.detail, /3 settled trades/);
      const onPage = await postForm(
        svc,
        `/console/agents/${agent.agentId}/funding`,
        { enabled: 'on' },
        { cookie: ada.cookie },
      );
      t.equal(onPage.status, 403);
      t.match(onPage.text, /3 settled trades/);
      const off = await postForm(
        svc,
        `/console/agents/${agent.agentId}/funding`,
        { enabled: 'off' },
        { cookie: ada.cookie },
      );
      t.equal(off.status, 303);
      t.equal(off.location, '/console/agents');
      const bobs = await postForm(
        svc,
        `/console/agents/${agent.agentId}/funding`,
        { enabled: 'off' },
        { cookie: bob.cookie, json: true },
      );
      t.equal(bobs.status, 404, 'not his agent');
      const bad = await postForm(
        svc,
        `/console/agents/${agent.agentId}/funding`,
        { enabled: 'maybe' },
        { cookie: ada.cookie, json: true },
      );
      t.equal(bad.status, 422);
      const bobConsole = await getPage(svc, '/console/orders', { cookie: bob.cookie });
      t.notMatch(bobConsole.text, first.body.deal_title, 'another holder sees none of it');
      for (const p of [
        '/console/positions',
        '/console/positions?status=open',
        '/console/positions?status=settled',
      ]) {
        t.equal((await getPage(svc, p, { cookie: ada.cookie })).status, 200, p);
      }
      t.equal(
        (await getPage(svc, '/console/positions?status=bogus', { cookie: ada.cookie })).status,
        422,
      );
    },
  );
});
