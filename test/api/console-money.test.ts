// The holder's money on the console over HTTP (CONTRACT.md "The holder's money", "Web form
// posts", "Test cards"): top-ups, payouts, Gold Coin packs, stored cards, holder-made agent keys and
// the timeline, each with its refusals, as a JSON client and as a browser (303, pages). The clock is
// the test's: pay_at is exact, and sessions close when the test says so.
import t from 'tap';
import { payoutsRef } from '../../actors/payouts/messages.js';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send } from '../helpers/agents.js';
import { getPage, postForm, registerHolder } from '../helpers/web.js';
import { T0 } from '../helpers/clock-rig.js';
import { Clock } from '../../src/supervisor/clock.js';
import { payoutPayAt } from '../../src/payments/payout-schedule.js';
import { instantSql } from '../../actors/runtime/sql.js';

const CARD = {
  method: 'new_card',
  number: '4242 4242 4242 4242',
  exp: '12/39',
  cvc: '123',
  holder: 'Ada L',
};
const DAY = 86_400;

let nowMs = (T0 + 100) * 1000;
const svc = await startTestService(t, {}, { realMs: () => nowMs });
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;

const deskOf = async (holderId: number) =>
  (
    await q(`select id::float8 as id from account where holder_id = ? and kind = 'manual'`, [
      holderId,
    ])
  )[0].id as number;
const balanceOf = async (accountId: number) =>
  (await q('select balance_cents::float8 as b from account where id = ?', [accountId]))[0]
    .b as number;
const ledgerOf = (accountId: number) =>
  q(
    'select kind, amount_cents::float8 as cents, ref from ledger where account_id = ? order by id',
    [accountId],
  );
const gcOf = async (holderId: number) =>
  (await q('select gc_balance_hundredths::float8 as gc from holder where id = ?', [holderId]))[0]
    .gc as number;
const feesOf = (holderId: number) =>
  q('select month, amount_cents::float8 as cents from monthly_fee where holder_id = ?', [holderId]);

/** Balance = the sum of its ledger, and nothing else moved: what every refusal must leave. */
async function unmoved(t: Tap.Test, accountId: number, balance: number, entries: number) {
  t.equal(await balanceOf(accountId), balance, 'the balance did not move');
  t.equal((await ledgerOf(accountId)).length, entries, 'no ledger entry was written');
}

t.test('the payout date: 3 days of service time, as real seconds', async (t) => {
  const at = (scale: number) =>
    payoutPayAt(new Clock({ real: 1000, service: 5000, scale }, () => 2000 * 1000));
  t.equal(at(1), 2000 + 3 * DAY);
  t.equal(at(300), 2000 + (3 * DAY) / 300, 'a faster service clock pays sooner in real time');
});

t.test("the holder's money on the console", async (t) => {
  const ada = await registerHolder(svc, 'ada@example.com');
  const bob = await registerHolder(svc, 'bob@example.com');
  const asAda = { cookie: ada.cookie, json: true };
  const asBob = { cookie: bob.cookie, json: true };
  const desk = await deskOf(ada.holderId);
  const bobsDesk = await deskOf(bob.holderId);

  await t.test(
    'the money tab shows the Manual desk and 5.00 Gold Coins from registration',
    async (t) => {
      const page = await getPage(svc, '/console/money', { cookie: ada.cookie });
      t.equal(page.status, 200);
      t.match(
        page.text,
        new RegExp(
          `<th scope="row">Manual desk</th><td class="num">${desk}</td><td class="num">0.00</td>`,
        ),
      );
      t.match(page.text, '5.00 GC');
      t.match(page.text, 'action="/console/topup"');
      t.match(
        page.text,
        'Crypto <span class="muted">(not available yet)</span>',
        'crypto is offered as not available',
      );
    },
  );

  await t.test(
    'a top-up by a new card credits the account: card_charge +, no monthly fee',
    async (t) => {
      const r = await postForm(
        svc,
        '/console/topup',
        { account_id: desk, amount: '25.50', ...CARD, save_card: 'on' },
        asAda,
      );
      t.equal(r.status, 200);
      t.same(r.body, { ok: true, account_id: desk, amount: 25.5, balance: 25.5 });
      const ledger = await ledgerOf(desk);
      t.match(ledger, [{ kind: 'card_charge', cents: 2550, ref: /^topup/ }]);
      t.equal(ledger.length, 1, 'one entry: the charge, no fee');
      t.same(await feesOf(ada.holderId), [], 'a top-up never charges the participation fee');

      const browser = await postForm(
        svc,
        '/console/topup',
        { account_id: desk, amount: '4.50', ...CARD },
        { cookie: ada.cookie },
      );
      t.equal(browser.status, 303, 'a browser is sent on');
      t.equal(browser.location, '/console/money', 'to the money tab');
      const [card] = await q('select id::float8 as id from card where holder_id = ?', [
        ada.holderId,
      ]);
      const stored = await postForm(
        svc,
        '/console/topup',
        { account_id: desk, amount: '10', card_id: card.id },
        asAda,
      );
      t.same(
        stored.body,
        { ok: true, account_id: desk, amount: 10, balance: 40 },
        'a stored card by card_id alone',
      );
      t.equal(await balanceOf(desk), 4000);
    },
  );

  await t.test('a top-up refused charges nothing', async (t) => {
    const cases: [string, Record<string, string | number>, number, RegExp][] = [
      ['declined card', { number: '4000 0000 0000 0002' }, 402, /card declined/],
      ['Luhn failure', { number: '4242 4242 4242 4241' }, 400, /check digit/],
      ['expired card', { exp: '01/21' }, 400, /expired/],
      ['crypto', { method: 'crypto' }, 400, /crypto payments are not ready/],
      ['more than 2 decimals', { amount: '1.005' }, 422, /./],
      ['zero', { amount: '0' }, 422, /./],
    ];
    for (const [what, change, status, detail] of cases) {
      const r = await postForm(
        svc,
        '/console/topup',
        { account_id: desk, amount: '10', ...CARD, ...change },
        asAda,
      );
      t.equal(r.status, status, what);
      t.match(JSON.stringify(r.body.detail), detail, what);
      await unmoved(t, desk, 4000, 3);
    }
    const other = await postForm(
      svc,
      '/console/topup',
      { account_id: desk, amount: '10', ...CARD },
      asBob,
    );
    t.equal(other.status, 404, "another holder's account is not found");
    await unmoved(t, desk, 4000, 3);
    const page = await postForm(
      svc,
      '/console/topup',
      { account_id: desk, amount: '10', ...CARD, number: '4000 0000 0000 0002' },
      { cookie: ada.cookie },
    );
    t.equal(page.status, 402, 'a browser sees the console again with the refusal');
    t.match(page.text, /role="alert">card declined/);
  });

  await t.test(
    'a payout leaves the balance at once and is scheduled 3 days later, minus 6 %',
    async (t) => {
      const r = await postForm(svc, '/console/payout', { account_id: desk, amount: '20' }, asAda);
      t.equal(r.status, 200);
      t.same(r.body, {
        ok: true,
        payout_id: r.body.payout_id,
        amount: 20,
        commission: 1.2,
        net: 18.8,
        pay_at: nowMs / 1000 + 3 * DAY,
        status: 'scheduled',
      });
      t.match(await ledgerOf(desk), [
        {},
        {},
        {},
        { kind: 'payout', cents: -2000, ref: `payout:${r.body.payout_id}` },
      ]);
      t.equal(await balanceOf(desk), 2000);
      const page = await getPage(svc, '/console/money', { cookie: ada.cookie });
      t.match(
        page.text,
        new RegExp(
          `<td class="num">${r.body.payout_id}</td><td class="num">${desk}</td><td class="num">20.00</td><td class="num">1.20</td><td class="num">18.80</td><td>scheduled</td>`,
        ),
      );
    },
  );

  await t.test(
    "a payout below 10.00, above the balance or from another holder's account moves nothing",
    async (t) => {
      const below = await postForm(
        svc,
        '/console/payout',
        { account_id: desk, amount: '9.99' },
        asAda,
      );
      t.equal(below.status, 400);
      t.match(below.body.detail, /at least 10\.00/);
      await unmoved(t, desk, 2000, 4);
      const above = await postForm(
        svc,
        '/console/payout',
        { account_id: desk, amount: '20.01' },
        asAda,
      );
      t.equal(above.status, 400);
      t.match(above.body.detail, /more than the balance/);
      await unmoved(t, desk, 2000, 4);
      const bobs = await postForm(
        svc,
        '/console/payout',
        { account_id: desk, amount: '10' },
        asBob,
      );
      t.equal(bobs.status, 404);
      await unmoved(t, desk, 2000, 4);
      t.equal(
        (await q('select count(*)::int as n from payout where account_id = ?', [desk]))[0].n,
        1,
        'no payout row either',
      );
    },
  );

  await t.test(
    "a coin pack: coins x 5.00 by card, with the month's fee on the first checkout",
    async (t) => {
      const bad = await postForm(svc, '/console/coins', { pack: 7, ...CARD }, asAda);
      t.equal(bad.status, 422, 'not a pack');
      const crypto = await postForm(
        svc,
        '/console/coins',
        { pack: 10, ...CARD, method: 'crypto' },
        asAda,
      );
      t.equal(crypto.status, 400);
      t.match(crypto.body.detail, /crypto payments are not ready/);
      const declined = await postForm(
        svc,
        '/console/coins',
        { pack: 10, ...CARD, number: '4000 0000 0000 0002' },
        asAda,
      );
      t.equal(declined.status, 402);
      t.equal(await gcOf(ada.holderId), 500, 'no coins');
      await unmoved(t, desk, 2000, 4);

      const first = await postForm(svc, '/console/coins', { pack: 10, ...CARD }, asAda);
      t.equal(first.status, 200);
      t.same(
        first.body,
        { ok: true, coins: 10, gc_balance: 15, charged: 65, fee: 15 },
        '50.00 for the pack + 15.00 fee of the month',
      );
      t.match(
        (await ledgerOf(desk)).slice(4),
        [
          { kind: 'card_charge', cents: 6500 },
          { kind: 'order_debit', cents: -5000 },
          { kind: 'monthly_fee', cents: -1500 },
        ],
        'booked on the Manual desk, which nets to zero',
      );
      t.equal(await balanceOf(desk), 2000);
      t.equal((await feesOf(ada.holderId)).length, 1);
      const second = await postForm(svc, '/console/coins', { pack: 5, ...CARD }, asAda);
      t.same(
        second.body,
        { ok: true, coins: 5, gc_balance: 20, charged: 25, fee: 0 },
        'the fee once a month',
      );
      t.match(
        await q(
          'select kind, amount_hundredths::float8 as h from gc_ledger where holder_id = ? order by id',
          [ada.holderId],
        ),
        [
          { kind: 'gc_grant', h: 500 },
          { kind: 'gc_purchase', h: 1000 },
          { kind: 'gc_purchase', h: 500 },
        ],
      );
      t.match((await getPage(svc, '/console/money', { cookie: ada.cookie })).text, '20.00 GC');
    },
  );

  await t.test('stored cards are listed and removed', async (t) => {
    const [card] = await q('select id::float8 as id from card where holder_id = ?', [ada.holderId]);
    t.match(
      (await getPage(svc, '/console/money', { cookie: ada.cookie })).text,
      'visa •••• 4242, 12/39',
    );
    t.equal(
      (await postForm(svc, '/console/cards/remove', { card_id: card.id }, asBob)).status,
      404,
      "not bob's card",
    );
    const removed = await postForm(svc, '/console/cards/remove', { card_id: card.id }, asAda);
    t.same(removed.body, { ok: true, card_id: card.id, removed: true });
    t.notMatch(
      (await getPage(svc, '/console/money', { cookie: ada.cookie })).text,
      'visa •••• 4242',
    );
    const gone = await postForm(
      svc,
      '/console/topup',
      { account_id: desk, amount: '10', card_id: card.id },
      asAda,
    );
    t.equal(gone.status, 404, 'a removed card charges nothing');
    await unmoved(t, desk, 2000, 9);
  });

  await t.test(
    "POST /console/agents makes a key of the holder's: shown once, it works on the API",
    async (t) => {
      const r = await postForm(
        svc,
        '/console/agents',
        { name: 'Console Kestrel', purpose: 'watch m15' },
        asAda,
      );
      t.equal(r.status, 200);
      t.equal(r.headers.get('cache-control'), 'no-store');
      const {
        agent_id: agentId,
        account_id: accountId,
        key,
        key_id: keyId,
        recall_phrase: phrase,
      } = r.body;
      t.same(Object.keys(r.body).sort(), [
        'account_id',
        'agent_id',
        'key',
        'key_id',
        'ok',
        'recall_phrase',
      ]);
      t.match(key, /^[A-Za-z0-9]{80}$/);
      t.equal(keyId, key.slice(0, 20));
      t.match(phrase, /^[a-z]+(-[a-z]+){3}$/, 'a suggested recall phrase');
      t.not(accountId, desk, 'a new trading account');

      const me = await send(svc, 'GET', '/api/v1/agents/me', undefined, {
        authorization: `Bearer ${key}`,
      });
      t.equal(me.status, 200, 'the key works on the API');
      t.match(me.body, {
        agent_id: agentId,
        account_id: accountId,
        paired: true,
        holder: { connected: true },
        profile: { name: 'Console Kestrel', purpose: 'watch m15', recall_phrase: phrase },
      });
      t.match((await send(svc, 'POST', '/api/v1/agents/recall', { key_id: keyId })).body, {
        known: true,
        recall_phrase: phrase,
        connected_to_holder: true,
      });
      const topped = await postForm(
        svc,
        '/console/topup',
        { account_id: accountId, amount: '5', ...CARD },
        asAda,
      );
      t.same(
        topped.body,
        { ok: true, account_id: accountId, amount: 5, balance: 5 },
        "its account is the holder's",
      );
      t.match(
        (await getPage(svc, '/console/money', { cookie: ada.cookie })).text,
        `Console Kestrel (${keyId})`,
      );

      const browser = await postForm(
        svc,
        '/console/agents',
        { name: 'Page Heron', recall_phrase: 'grey heron' },
        { cookie: ada.cookie },
      );
      t.equal(browser.status, 200, 'a browser sees the key on the answer itself');
      t.equal(browser.headers.get('cache-control'), 'no-store');
      t.match(browser.text, /<code id="agent-key">[A-Za-z0-9]{80}<\/code>/);
      t.match(browser.text, 'never again');
      t.match(browser.text, 'grey heron');

      t.equal(
        (await postForm(svc, '/console/agents', { name: 'Nope', account_id: bobsDesk }, asAda))
          .status,
        404,
        "not on another holder's account",
      );
      t.equal(
        (await postForm(svc, '/console/agents', { name: 'Twice', account_id: accountId }, asAda))
          .status,
        409,
        'one agent per account',
      );
      t.equal(
        (await postForm(svc, '/console/agents', { name: '' }, asAda)).status,
        422,
        'a name is required',
      );
    },
  );

  await t.test(
    'a retried POST /console/agents makes one agent and never shows its key again',
    async (t) => {
      const headers = { 'idempotency-key': 'make-one-agent' };
      const first = await postForm(
        svc,
        '/console/agents',
        { name: 'Retried' },
        { ...asAda, headers },
      );
      const again = await postForm(
        svc,
        '/console/agents',
        { name: 'Retried' },
        { ...asAda, headers },
      );
      t.equal(first.status, 200);
      t.equal(again.headers.get('idempotent-replayed'), 'true');
      t.same(again.body, { ...first.body, key: null }, 'the same agent, without its key');
      t.equal((await q(`select count(*)::int as n from agent where name = 'Retried'`))[0].n, 1);
      const page = await postForm(
        svc,
        '/console/agents',
        { name: 'Retried' },
        { cookie: ada.cookie, headers },
      );
      t.equal(page.status, 200);
      t.match(page.text, 'is never shown again');
      t.notMatch(page.text, first.body.key);
    },
  );

  await t.test(
    'parallel POST /console/agents on one account: one agent, the others told the account has one',
    async (t) => {
      const running = (await send(svc, 'GET', '/api/v1/competitions')).body.competitions.filter(
        (c: any) => c.status === 'running',
      );
      for (const c of running) {
        const joined = await postForm(svc, `/competitions/${c.id}/join`, {}, asAda);
        t.equal(joined.status, 200);
        const account = joined.body.account_id as number;
        const all = await Promise.all(
          [1, 2, 3, 4].map((i) =>
            postForm(
              svc,
              '/console/agents',
              { name: `Racer ${c.id} ${i}`, account_id: account },
              asAda,
            ),
          ),
        );
        t.same(all.map((r) => r.status).sort(), [200, 409, 409, 409], `${c.id}: one agent is made`);
        for (const r of all.filter((a) => a.status === 409))
          t.match(r.body.detail, `account ${account} already has an agent`, `${c.id}: the truth`);
        t.equal(
          (await q('select count(*)::int as n from agent where account_id = ?', [account]))[0].n,
          1,
        );
      }
    },
  );

  await t.test('no key a holder made is ever logged', async (t) => {
    const made = await postForm(svc, '/console/agents', { name: 'Quiet' }, asAda);
    t.equal(made.status, 200);
    const logged = JSON.stringify(svc.logs);
    t.ok(logged.includes('/console/agents'), 'the request was logged');
    t.notOk(
      logged.includes(made.body.key.slice(20)),
      'its key (the secret part) is in no log line',
    );
  });
});

t.test(
  "a top-up takes SPEC.md's fields: a new card is number, exp and holder (no cvc), a stored one card_id",
  async (t) => {
    const gus = await registerHolder(svc, 'gus@example.com');
    const asGus = { cookie: gus.cookie, json: true };
    const desk = await deskOf(gus.holderId);
    const spec = {
      account_id: desk,
      amount: '12.50',
      number: '4242 4242 4242 4242',
      exp: '12/39',
      holder: 'Gus G',
    };
    const r = await postForm(svc, '/console/topup', spec, asGus);
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.same(r.body, { ok: true, account_id: desk, amount: 12.5, balance: 12.5 });
    const browser = await postForm(
      svc,
      '/console/topup',
      { ...spec, amount: '2.50' },
      { cookie: gus.cookie },
    );
    t.equal(browser.status, 303, 'a browser posting the same fields is sent on');
    t.equal(await balanceOf(desk), 1500);
    const declined = await postForm(
      svc,
      '/console/topup',
      { ...spec, number: '4000 0000 0000 0002' },
      asGus,
    );
    t.equal(declined.status, 402, 'the card is still judged: the declined test number');
    await unmoved(t, desk, 1500, 2);
    // A stored card, then a top-up naming it alone.
    await q(
      `insert into card (holder_id, brand, last4, exp_month, exp_year, created_at) values (?, 'visa', '4242', 12, 2039, ${instantSql()}) on conflict do nothing`,
      [gus.holderId, svc.services.clock.realNow()],
    );
    const [card] = await q('select id::float8 as id from card where holder_id = ?', [gus.holderId]);
    const stored = await postForm(
      svc,
      '/console/topup',
      { account_id: desk, amount: '5', card_id: card.id },
      asGus,
    );
    t.same(
      stored.body,
      { ok: true, account_id: desk, amount: 5, balance: 20 },
      'a stored card by card_id alone',
    );
    const page = await getPage(svc, '/console/money', { cookie: gus.cookie });
    const form = /<form[^>]*action="\/console\/topup"[^]*?<\/form>/.exec(page.text)?.[0] ?? '';
    t.match(form, 'name="number"');
    t.notMatch(form, 'name="cvc"', 'the top-up form asks no cvc');
  },
);

t.test(
  'crypto is listed as not ready on every pay form, and choosing it charges nothing',
  async (t) => {
    const eve = await registerHolder(svc, 'eve@example.com');
    const agent = await registerAgent(svc, { name: 'Crypto Curious' });
    const menu = (await send(svc, 'GET', '/api/v1/markets/h2/deals?limit=1')).body;
    const order = (
      await agent.post('/api/v1/orders', { market: 'h2', offer_key: menu.deals[0].key, qty: 1 })
    ).body;
    const token = new URL(order.purchase_url).pathname.split('/').pop();
    t.match(
      (await getPage(svc, `/checkout/${token}`, { cookie: eve.cookie })).text,
      'Crypto <span class="muted">(not available yet)</span>',
    );
    const checkout = await postForm(
      svc,
      `/checkout/${token}/pay`,
      { ...CARD, method: 'crypto' },
      { cookie: eve.cookie, json: true },
    );
    t.equal(checkout.status, 400);
    t.match(checkout.body.detail, /crypto payments are not ready/);
    t.equal(
      (await agent.get(`/api/v1/orders/${order.id}`)).body.status,
      'awaiting_payment',
      'the order is not paid',
    );

    const cartUrl = (await agent.get('/api/v1/cart')).body.checkout_url as string;
    t.equal(
      (
        await agent.post('/api/v1/cart/items', {
          market: 'h2',
          offer_key: menu.deals[0].key,
          qty: 1,
        })
      ).status,
      201,
    );
    const cartPath = new URL(cartUrl).pathname;
    t.match(
      (await getPage(svc, cartPath, { cookie: eve.cookie })).text,
      'Crypto <span class="muted">(not available yet)</span>',
    );
    const newcomer = {
      auth: 'register',
      email: 'frank@example.com',
      password: 'correct horse 9',
      password2: 'correct horse 9',
    };
    const cart = await postForm(
      svc,
      `${cartPath}/pay`,
      { ...newcomer, ...CARD, method: 'crypto' },
      { json: true },
    );
    t.equal(cart.status, 400);
    t.match(cart.body.detail, /crypto payments are not ready/);
    t.same(
      await q(`select id from holder where email = 'frank@example.com'`),
      [],
      'nobody registered',
    );
    t.same(
      await q('select id from ledger where account_id = ?', [agent.accountId]),
      [],
      'nothing charged',
    );
  },
);

t.test("the timeline: every event of the holder's accounts, newest first, paged", async (t) => {
  const cy = await registerHolder(svc, 'cy@example.com');
  const asCy = { cookie: cy.cookie, json: true };
  const desk = await deskOf(cy.holderId);
  const ok = async (what: string, r: Promise<{ status: number; text: string }>) => {
    const a = await r;
    if (a.status !== 200) throw new Error(`${what}: ${a.status} ${a.text}`);
    return a;
  };

  const tick = () => (nowMs += 1000); // each step a second after the one before, on the service's clock
  tick();
  await ok(
    'top-up',
    postForm(svc, '/console/topup', { account_id: desk, amount: '100', ...CARD }, asCy),
  );
  tick();
  const agent = await registerAgent(svc, { name: 'Timeline Scout' });
  const menu = (await send(svc, 'GET', '/api/v1/markets/m15/deals?limit=1')).body;
  const order = (
    await agent.post('/api/v1/orders', { market: 'm15', offer_key: menu.deals[0].key, qty: 1 })
  ).body;
  tick();
  await ok(
    'pay',
    postForm(
      svc,
      `/checkout/${new URL(order.purchase_url).pathname.split('/').pop()}/pay`,
      CARD,
      asCy,
    ),
  );
  nowMs = (menu.closes_at + 1) * 1000;
  await svc.services.supervisor.runDue();
  tick();
  await ok('coins', postForm(svc, '/console/coins', { pack: 5, ...CARD }, asCy));
  tick();
  const payout = (await ok(
    'payout',
    postForm(svc, '/console/payout', { account_id: desk, amount: '20' }, asCy),
  )) as any;
  nowMs = payout.body.pay_at * 1000;
  const paid = await svc.services.runtime.ask(payoutsRef, {
    kind: 'payDue',
    at: payout.body.pay_at,
  });
  t.ok(paid.paid.includes(payout.body.payout_id), 'the payout is paid when due');
  tick();
  const grant = (await ok('grant', postForm(svc, '/cart/grant', { level: 'write' }, asCy))) as any;
  tick();
  await ok('revoke', postForm(svc, '/cart/grant/revoke', { grant_id: grant.body.grant_id }, asCy));

  const all = await getPage(svc, '/console/timeline?limit=200', asCy);
  t.equal(all.status, 200);
  const events = all.body.events as any[];
  t.equal(all.body.next_before, null, 'one page holds them all');
  // Every event is dated by the service clock (ARCHITECTURE rule 7), never the database's: each
  // step above ran a second after the one before, so the steps read newest first in their order.
  const milestones = [
    'grant_revoked',
    'grant_made',
    'payout_paid',
    'payout_scheduled',
    'gc_purchase',
    'order_filled',
    'order_paid',
    'top_up',
    'gc_grant',
  ];
  t.same(
    events.map((e) => e.kind).filter((k) => milestones.includes(k)),
    milestones,
    'each step once, newest first',
  );
  t.same(
    events.filter((e) => e.kind === 'order_placed').map((e) => e.at),
    [order.created_at],
    'order_placed once, when it was accepted',
  );
  for (let i = 1; i < events.length; i++)
    t.ok(events[i - 1].at >= events[i].at, `event ${i} is not newer than the one before`);
  const byKind = (k: string) => events.find((e) => e.kind === k);
  t.match(byKind('top_up'), {
    account_id: desk,
    amount: 100,
    coins: null,
    ref: /^topup/,
    text: /^Top-up by card on account \d+: \+100\.00 USD$/,
  });
  t.match(byKind('payout_scheduled'), {
    account_id: desk,
    amount: -20,
    ref: `payout:${payout.body.payout_id}`,
  });
  t.match(byKind('payout_paid'), {
    account_id: desk,
    amount: null,
    text: 'paid: 18.80 USD (20.00 USD minus 1.20 USD commission)',
  });
  t.match(byKind('gc_purchase'), { account_id: null, amount: null, coins: 5 });
  t.match(byKind('gc_grant'), { coins: 5, ref: 'registration' });
  t.match(byKind('order_placed'), {
    account_id: agent.accountId,
    ref: `order:${order.id}`,
    text: `Order ${order.id} placed by Timeline Scout: 1 × `,
  });
  t.match(byKind('order_filled'), {
    ref: `order:${order.id}`,
    text: /filled at the close of m15 session \d+: position \d+/,
  });
  t.match(
    byKind('monthly_fee'),
    { amount: -15 },
    'the fee came with the order, the first checkout of the month',
  );
  t.equal(events.filter((e) => e.kind === 'monthly_fee').length, 1, 'and only then');
  t.match(byKind('grant_made'), {
    text: 'You granted write on every cart of yours to every agent of yours',
  });

  // Pages of 3 walk the same events in the same order, each once.
  const walked: any[] = [];
  let before: string | null = null;
  let pages = 0;
  do {
    const r = await getPage(
      svc,
      `/console/timeline?limit=3${before ? `&before=${before}` : ''}`,
      asCy,
    );
    t.ok(r.body.events.length <= 3);
    walked.push(...r.body.events);
    before = r.body.next_before;
    pages++;
  } while (before !== null && pages < 100);
  t.same(walked, events, 'paging neither repeats nor skips');
  t.equal(pages, Math.ceil(events.length / 3));

  const html = await getPage(svc, '/console/timeline?limit=3', { cookie: cy.cookie });
  t.equal(html.status, 200);
  t.match(html.text, 'You revoked the write grant');
  t.match(html.text, /rel="next"/, 'a link to the older events');
  // A browser's Accept lists JSON below HTML: the page. JSON only when it is preferred.
  const browserAccept = await getPage(svc, '/console/timeline?limit=3', {
    cookie: cy.cookie,
    headers: { accept: 'text/html,application/json;q=0.9,*/*;q=0.8' },
  });
  t.equal(browserAccept.status, 200);
  t.match(
    browserAccept.headers.get('content-type'),
    /^text\/html/,
    'HTML preferred by q-value: the page',
  );
  const jsonFirst = await getPage(svc, '/console/timeline?limit=3', {
    cookie: cy.cookie,
    headers: { accept: 'text/html;q=0.5,application/json' },
  });
  t.match(
    jsonFirst.headers.get('content-type'),
    /^application\/json/,
    'JSON preferred by q-value: JSON',
  );
  t.equal(jsonFirst.body.events.length, 3);
  const refused = await getPage(svc, '/console/timeline?before=nope', {
    cookie: cy.cookie,
    headers: { accept: 'text/html;q=0.5,application/json' },
  });
  t.equal(refused.status, 422);
  t.match(
    refused.body.detail,
    [{ loc: ['query', 'before'] }],
    'its refusal is JSON too, not the error page',
  );
  t.equal(
    (await getPage(svc, '/console/timeline?before=nope', asCy)).status,
    422,
    'a cursor is a cursor',
  );
  const others = await getPage(svc, '/console/timeline', {
    cookie: (await registerHolder(svc, 'dee@example.com')).cookie,
    json: true,
  });
  t.same(
    others.body.events.map((e: any) => e.kind),
    ['gc_grant'],
    'another holder sees only their own',
  );
});
