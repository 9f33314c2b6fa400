// CONTRACT.md "Strict requests" on the real service: undeclared JSON properties
// and a missing qty are 422s, amounts with more than 2 decimals are 422s at their field, ids that
// name nothing are 404s whatever their shape, Idempotency-Key is printable ASCII and a JSON body
// is the value it parses to, every instant is real unix seconds under SVC_TIME_SCALE (which the
// manifest and GET /markets serve), and a card is stored only when the form says save_card=on.
// The clock is the test's.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send } from '../helpers/agents.js';
import { APPROVED_CARD, registerHolder } from '../helpers/holders.js';

const SCALE = 300;
let nowMs = Date.now();
const svc = await startTestService(t, { SVC_TIME_SCALE: String(SCALE) }, { realMs: () => nowMs });
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
const agent = await registerAgent(svc);
const holder = await registerHolder(svc);
const [{ id: hid }] = await q('select id::float8 as id from holder where email = ?', [
  holder.email,
]);
const [{ id: desk }] = await q(
  `select id::float8 as id from account where holder_id = ? and kind = 'manual'`,
  [hid],
);
const asHolder = { cookie: holder.cookie, accept: 'application/json' };
const auth = { authorization: `Bearer ${agent.key}` };
// The clock stands still unless the test moves it: the current menu stays current.
const deal = async () => (await send(svc, 'GET', '/api/v1/markets/m15/deals')).body.deals[0];
const cardsStored = async () =>
  (await q('select count(*)::int as n from card where holder_id = ?', [hid]))[0].n as number;

t.test(
  'an undeclared JSON property is a 422 extra_forbidden at its name; POST /orders requires qty',
  async (t) => {
    const d = await deal();
    const r = await agent.post('/api/v1/orders', { market: 'm15', offer_key: d.key, quantity: 3 });
    t.equal(r.status, 422, JSON.stringify(r.body));
    t.match(r.body.detail, [
      { loc: ['body', 'qty'], type: 'missing' },
      { loc: ['body', 'quantity'], type: 'extra_forbidden' },
    ]);
    const extra = await agent.post('/api/v1/orders', {
      market: 'm15',
      offer_key: d.key,
      qty: 1,
      quantity: 3,
    });
    t.equal(extra.status, 422);
    t.same(
      extra.body.detail.map((i: any) => [i.loc, i.type]),
      [[['body', 'quantity'], 'extra_forbidden']],
    );
    t.same((await agent.get('/api/v1/orders')).body.orders, [], 'nothing placed');
    const line = await agent.post('/api/v1/cart/items', {
      market: 'm15',
      offer_key: d.key,
      qty: 1,
      reason: 'cheap',
    });
    t.equal(line.status, 422, 'a cart line too');
    t.match(line.body.detail, [{ loc: ['body', 'reason'], type: 'extra_forbidden' }]);
    t.equal(
      (await agent.post('/api/v1/orders', { market: 'm15', offer_key: d.key, qty: 1 })).status,
      201,
      'the declared body is placed',
    );
  },
);

t.test(
  'an amount with more than 2 decimals is a 422 at its field (forms and JSON), nothing moves',
  async (t) => {
    const card = { number: '4242 4242 4242 4242', exp: '12/39', cvc: '123', holder: 'Ada' };
    const form = await holder.form('/console/topup', {
      account_id: String(desk),
      amount: '10.0000000001',
      ...card,
    });
    t.equal(form.status, 422, JSON.stringify(form.body));
    t.match(form.body.detail, [{ loc: ['body', 'amount'], type: 'decimal_max_places' }]);
    const long = await holder.form('/console/topup', {
      account_id: String(desk),
      amount: '10.000000000000000001',
      ...card,
    });
    t.equal(long.status, 422, 'the typed text counts, even where the number rounds to 10');
    const json = await send(
      svc,
      'POST',
      '/console/topup',
      { account_id: desk, amount: 10.0000000001, ...card },
      asHolder,
    );
    t.equal(json.status, 422, 'a JSON body too');
    t.match(json.body.detail, [{ loc: ['body', 'amount'], type: 'decimal_max_places' }]);
    t.equal(
      (await q('select count(*)::int as n from ledger where account_id = ?', [desk]))[0].n,
      0,
      'nothing topped up',
    );
    const ok = await holder.form('/console/topup', {
      account_id: String(desk),
      amount: '20.10',
      ...card,
    });
    t.equal(ok.status, 200, JSON.stringify(ok.body));
    t.equal(ok.body.amount, 20.1);

    const payout = await send(
      svc,
      'POST',
      '/console/payout',
      { account_id: desk, amount: 10.0000000001 },
      asHolder,
    );
    t.equal(payout.status, 422, 'a payout of 10.0000000001 is refused, not paid as 10.00');
    t.match(payout.body.detail, [{ loc: ['body', 'amount'], type: 'decimal_max_places' }]);
    t.equal((await q('select count(*)::int as n from payout'))[0].n, 0, 'no payout');
    const price = await holder.form('/exchange/list', {
      item_id: '1',
      price: '1.001',
      currency: 'USD',
    });
    t.equal(price.status, 422, 'an exchange price too');
    t.match(price.body.detail, [{ loc: ['body', 'price'], type: 'decimal_max_places' }]);
  },
);

t.test(
  'an id that names nothing is a 404 whatever its shape; a non-integer stays 422 at the path',
  async (t) => {
    for (const id of ['0', '-1', '99999999999999999999', '424242']) {
      const r = await agent.get(`/api/v1/orders/${id}`);
      t.equal(r.status, 404, `order ${id}`);
      t.type(r.body.detail, 'string');
    }
    t.equal((await agent.get('/api/v1/positions/0')).status, 404, 'position 0');
    const d = await deal();
    t.equal(
      (await agent.post('/api/v1/carts/0/items', { market: 'm15', offer_key: d.key, qty: 1 }))
        .status,
      404,
      'cart 0',
    );
    const bad = await agent.get('/api/v1/orders/abc');
    t.equal(bad.status, 422);
    t.match(bad.body.detail, [{ loc: ['path', 'order_id'] }]);
    for (const id of ['nope', 'M15-1', 'a%20b', 'x'.repeat(300), 'm15-99999']) {
      const r = await send(svc, 'GET', `/api/v1/competitions/${id}`);
      t.equal(r.status, 404, `competition ${id.slice(0, 20)}`);
      t.type(r.body.detail, 'string');
    }
    t.equal(
      (await holder.form('/competitions/not-a-competition!/join', {})).status,
      404,
      'joining one too',
    );
  },
);

t.test(
  'Idempotency-Key is printable ASCII; JSON bodies are the same request when they parse the same',
  async (t) => {
    const d = await deal();
    // (A byte beyond ASCII never reaches the route: uWebSockets.js drops it from the header value; test/unit/idempotency-body.test.ts checks the rule.)
    for (const key of ['two words', 'tab\there', '{"a": 1}']) {
      const r = await send(
        svc,
        'POST',
        '/api/v1/orders',
        { market: 'm15', offer_key: d.key, qty: 1 },
        { ...auth, 'idempotency-key': key },
      );
      t.equal(r.status, 400, `${JSON.stringify(key)}: ${r.status} ${JSON.stringify(r.body)}`);
    }
    const key = { ...auth, 'idempotency-key': 'strict-order-1' };
    const first = await send(
      svc,
      'POST',
      '/api/v1/orders',
      { market: 'm15', offer_key: d.key, qty: 2 },
      key,
    );
    t.equal(first.status, 201, JSON.stringify(first.body));
    const res = await svc.get('/api/v1/orders', {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: `{ "qty": 2,\n  "offer_key": ${JSON.stringify(d.key)}, "market": "m15" }`,
    });
    t.equal(res.status, 201, 'key order and whitespace: the same request');
    t.equal(res.headers.get('idempotent-replayed'), 'true');
    t.equal((await res.json()).id, first.body.id, 'answered again, not placed twice');
    const other = await send(
      svc,
      'POST',
      '/api/v1/orders',
      { market: 'm15', offer_key: d.key, qty: 3 },
      key,
    );
    t.equal(other.status, 400, 'another value is another body');
  },
);

t.test('a card is stored only when the form says save_card=on', async (t) => {
  const d = await deal();
  const placed = await agent.post('/api/v1/orders', { market: 'm15', offer_key: d.key, qty: 1 });
  t.equal(placed.status, 201);
  const paid = await holder.pay(placed.body.purchase_url);
  t.equal(paid.status, 200, JSON.stringify(paid.body));
  t.equal(await cardsStored(), 0, 'paying a purchase link by card stores nothing unasked');
  const topup = await holder.form('/console/topup', {
    account_id: String(desk),
    amount: '5',
    number: APPROVED_CARD.number,
    exp: APPROVED_CARD.exp,
    cvc: '123',
    holder: 'Ada',
  });
  t.equal(topup.status, 200);
  t.equal(await cardsStored(), 0, 'nor a top-up');
  const saved = await holder.form('/console/topup', {
    account_id: String(desk),
    amount: '5',
    number: APPROVED_CARD.number,
    exp: APPROVED_CARD.exp,
    cvc: '123',
    holder: 'Ada',
    save_card: 'on',
  });
  t.equal(saved.status, 200);
  t.same(
    await q('select brand, last4 from card where holder_id = ?', [hid]),
    [{ brand: 'visa', last4: '4242' }],
    'stored when asked',
  );
});

t.test(
  'instants are real unix seconds under SVC_TIME_SCALE, which the manifest and GET /markets serve',
  async (t) => {
    t.equal((await send(svc, 'GET', '/api/v1/manifest')).body.time_scale, SCALE);
    const markets = await send(svc, 'GET', '/api/v1/markets');
    t.equal(markets.body.time_scale, SCALE);
    // A minute of real time is 5 hours of service time: the service clock is far ahead of the real one.
    nowMs += 60_000;
    await svc.services.supervisor.runDue();
    const now = nowMs / 1000;
    t.ok(svc.services.clock.serviceNow() - now > 4 * 3600, 'service time ran ahead');
    const pulse = await send(svc, 'GET', '/api/v1/pulse');
    t.equal(pulse.status, 200);
    t.ok(
      pulse.body.as_of <= now && pulse.body.as_of > now - 900 / SCALE - 1,
      `as_of ${pulse.body.as_of} is the last close in real seconds (now ${now})`,
    );
    for (const r of pulse.body.recent) t.ok(r.settled_at <= now + 1, 'settled_at in real seconds');
    for (const m of (await send(svc, 'GET', '/api/v1/markets')).body.markets) {
      t.ok(
        m.tick_closes_at > now && m.tick_closes_at <= now + 36_000 / SCALE + 1,
        `${m.market}: tick_closes_at in real seconds`,
      );
    }
  },
);

t.test(
  'hostile Accept and Idempotency-Key headers answer 2xx or 4xx, and the service lives on',
  async (t) => {
    const d = await deal();
    const accepts = [
      '',
      ';;;,,,',
      'text/html;q=abc, application/json;q=2',
      `${'*/*;q=0.5,'.repeat(2000)}`,
      'application/json;q=0.' + '9'.repeat(500),
      'text/*;q=1.000;q=0',
    ];
    const keys = [
      ' leading space',
      'tab\tkey',
      'k'.repeat(256),
      'x'.repeat(255),
      '%00',
      '"quoted"',
    ];
    for (const accept of accepts) {
      const page = await svc.get('/console/timeline', {
        headers: { accept, cookie: holder.cookie },
        redirect: 'manual',
      });
      t.ok(page.status < 500, `Accept ${JSON.stringify(accept.slice(0, 40))}: ${page.status}`);
      await page.arrayBuffer();
    }
    for (const key of keys) {
      const r = await send(
        svc,
        'POST',
        '/api/v1/orders',
        { market: 'm15', offer_key: d.key, qty: 1 },
        { ...auth, 'idempotency-key': key },
      );
      t.ok(
        r.status === 201 || r.status === 400,
        `Idempotency-Key ${JSON.stringify(key.slice(0, 20))}: ${r.status}`,
      );
      if (/^[\x21-\x7e]{1,255}$/.test(key))
        t.equal(r.status, 201, 'a printable key places the order');
      else t.equal(r.status, 400, 'any other key is refused');
    }
    t.equal((await svc.get('/healthz')).status, 200, 'the service still answers');
  },
);
