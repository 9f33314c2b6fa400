// The event log over HTTP (CONTRACT.md "Events"), on a real database with a clock the test drives:
// every event of a real flow, in order, with gap-free ids per account, `data` as the GET serves it,
// the REST replay's paging and type filter, and the 410 of an `after` past what is kept.
import t from 'tap';
import { metricValue } from '../helpers/metrics.js';
import { answersRef } from '../../actors/answers/messages.js';
import { startClockedService } from '../helpers/clocked.js';
import { sharedService } from '../helpers/service.js';
import { registerAgent, send, type Menu } from '../helpers/agents.js';
import { APPROVED_CARD, registerHolder, submit } from '../helpers/holders.js';
import { openSse } from '../helpers/sse.js';
import { fileTimeout } from '../helpers/file-timeout.js';

/** An order as GET serves it without `instructions` (what to do next is the API's answer, not part of the event). */
const withoutNext = ({ instructions: _next, ...order }: Record<string, unknown>) => order;

fileTimeout(150); // 2 clocked services

// The subtests after the first leave the clock where it starts: they share one service, each with
// agents of its own (the first moves the clock 8 days, and has its own).
const unmoved = () => sharedService('unmoved clock', (t) => startClockedService(t));

const MARKET = 'm15';
const HORIZON = 8;

t.test('events: a real flow, gap-free, replayable', async (t) => {
  const c = await startClockedService(t);
  const svc = c.svc;
  const agent = await registerAgent(svc);
  const holder = await registerHolder(svc);
  const menu = async (): Promise<Menu> =>
    (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  const events = async (query = '') => agent.get(`/api/v1/events${query}`);

  t.same((await events()).body, { events: [], next_after: 0 }, 'a new account has no events');

  const m = await menu();
  const placed = await agent.post('/api/v1/orders', {
    market: MARKET,
    offer_key: m.deals[0].key,
    qty: 1,
  });
  t.equal(placed.status, 201);
  const unpaid = await agent.post('/api/v1/orders', {
    market: MARKET,
    offer_key: m.deals[1].key,
    qty: 1,
  });
  t.equal(unpaid.status, 201);
  t.equal((await holder.pay(placed.body.purchase_url)).status, 200);

  await t.test(
    "placing and paying: order.created ×2, the agent's cart connected, the payment's postings, order.paid",
    async (t) => {
      const r = (await events()).body;
      t.same(
        r.events.map((e: any) => e.id),
        [1, 2, 3, 4, 5, 6, 7],
        "ids are the account's own: 1, 2, 3, ...",
      );
      t.same(
        r.events.map((e: any) => e.type),
        [
          'order.created',
          'order.created',
          'cart.connected',
          'ledger.posted',
          'ledger.posted',
          'ledger.posted',
          'order.paid',
        ],
      );
      t.equal(r.next_after, 7);
      const cart = (await agent.get('/api/v1/cart')).body;
      t.match(
        r.events[2].data,
        { cart_id: cart.id, holder: { connected: true } },
        'paying connected the agent and its cart to the holder',
      );
      t.same(
        r.events.slice(3, 6).map((e: any) => e.data.kind),
        ['card_charge', 'order_debit', 'monthly_fee'],
        "the card charge, the debit, the month's fee",
      );
      const ledger = (await agent.get('/api/v1/account')).body.ledger;
      for (const e of r.events.slice(3, 6))
        t.same(
          e.data,
          ledger.find((l: any) => l.id === e.data.id),
          `ledger.posted ${e.data.kind} is the entry GET /account serves`,
        );
      t.equal(r.events[0].data.status, 'awaiting_payment');
      t.same(
        r.events[6].data,
        withoutNext((await agent.get(`/api/v1/orders/${placed.body.id}`)).body),
        'order.paid carries the order as GET serves it',
      );
      for (const e of r.events) t.type(e.created_at, 'number');
    },
  );

  await t.test('paging and types', async (t) => {
    const page = (await events('?after=1&limit=2')).body;
    t.same(
      page.events.map((e: any) => e.id),
      [2, 3],
    );
    t.equal(page.next_after, 3);
    const orders = (await events('?types=order.paid,order.created')).body;
    t.same(
      orders.events.map((e: any) => e.id),
      [1, 2, 7],
    );
    const bad = await events('?types=order.paid,order.teleported');
    t.equal(bad.status, 422);
    t.same(bad.body.detail[0].loc, ['query', 'types']);
    t.equal((await events('?limit=0')).status, 422);
    t.equal((await events('?after=-1')).status, 422);
  });

  await t.test(
    'the close: filled and expired; then every session advances the position until it settles',
    async (t) => {
      await c.closeSession(MARKET);
      const afterFill = (await events('?after=7')).body.events;
      t.same(
        afterFill.map((e: any) => [e.id, e.type, e.data.id]),
        [
          [8, 'order.filled', placed.body.id],
          [9, 'order.expired', unpaid.body.id],
        ],
      );
      const filled = (await agent.get(`/api/v1/orders/${placed.body.id}`)).body;
      t.same(afterFill[0].data, withoutNext(filled), 'order.filled carries the filled order');
      // GET after each close, and each close's event read at once and again at the end: a position
      // event is built when read from the figures its close stored (actors/events/position-events.ts),
      // so it must stay the position as it was then, whatever later closes moved.
      const served: unknown[] = [];
      const readAtOnce: unknown[] = [];
      for (let i = 0; i < HORIZON; i++) {
        await c.closeSession(MARKET);
        served.push((await agent.get(`/api/v1/positions/${filled.position_id}`)).body);
        const [event] = (await events(`?after=${9 + i}`)).body.events;
        const { session: _s, ...position } = event.data;
        readAtOnce.push(position);
      }
      t.same(
        readAtOnce,
        served,
        'each position event, read after its close, is the position GET served then',
      );
      const moves = (await events('?after=9')).body.events;
      t.same(
        moves.map((e: any) => e.type),
        [...Array(HORIZON - 1).fill('position.advanced'), 'position.settled'],
      );
      t.same(
        moves.map((e: any) => e.id),
        Array.from({ length: HORIZON }, (_, i) => 10 + i),
        'still gap-free',
      );
      t.same(
        moves.map(({ data: { session: _s, ...position } }: any) => position),
        served,
        'read after the settlement, every one is still the position as it was then',
      );
      t.same(
        new Set(served.map((p: any) => p.ticks_done)).size,
        HORIZON,
        'the position moved at every close (the comparison can fail)',
      );
      const position = (await agent.get(`/api/v1/positions/${filled.position_id}`)).body;
      const { session, ...settled } = moves.at(-1).data;
      t.same(settled, position, 'position.settled carries the position as GET serves it');
      t.equal(
        moves.reduce((s: number, e: any) => s + e.data.session.sold, 0),
        position.units_sold,
        "the sessions' sales add up to the units sold",
      );
      t.same(
        moves.map((e: any) => e.data.session.tick),
        moves.map((e: any) => e.data.session.tick).sort((a: number, b: number) => a - b),
      );
      t.same(
        moves.map((e: any) => e.data.ticks_done),
        Array.from({ length: HORIZON }, (_, i) => i + 1),
        'one session each',
      );
      t.notOk(
        (await events('?after=9&types=ledger.posted')).body.events.length,
        "the close's sales and holding fees travel inside the position events",
      );
    },
  );

  await t.test('an after past what is kept answers 410 with the first id kept', async (t) => {
    const head = (await events('?after=0&limit=1000')).body.next_after;
    // The answers actor sweeps events older than 7 days of the service clock.
    c.advanceBy(8 * 86_400_000);
    const swept = await svc.services.runtime.ask(answersRef, {
      kind: 'sweep',
      at: svc.services.clock.realNow(),
    });
    t.equal(swept.events, head, 'every event was older than 7 days');
    const old = await events('?after=3');
    t.equal(old.status, 410);
    t.match(old.body.detail, new RegExp(`before id ${head + 1} are no longer kept`));
    t.same(
      (await events(`?after=${head}`)).body,
      { events: [], next_after: head },
      'from the head on, nothing is missing',
    );
  });
});

t.test('events: ids stay gap-free under concurrent orders of one account', async (t) => {
  const c = await unmoved();
  const agent = await registerAgent(c.svc);
  const m: Menu = (await send(c.svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  const n = 40;
  const placed = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      agent.post('/api/v1/orders', {
        market: MARKET,
        offer_key: m.deals[i % m.deals.length].key,
        qty: 1,
      }),
    ),
  );
  t.same(
    placed.map((p) => p.status),
    Array(n).fill(201),
  );
  const r = (await agent.get('/api/v1/events?limit=1000')).body;
  t.same(
    r.events.map((e: any) => e.id),
    Array.from({ length: n }, (_, i) => i + 1),
  );
  t.same(
    r.events.map((e: any) => e.data.id).sort((a: number, b: number) => a - b),
    placed.map((p) => p.body.id).sort((a, b) => a - b),
    'one order.created per order',
  );
});

// The placing answer is built from the row just placed (views.ts orderJson); GET and the events
// read the row back through the one SQL definition (orderJsonSql). The two must never drift: in a
// market that quotes velocity and in one that does not (its orders have no sales_velocity).
t.test(
  'events: order.created, GET /orders/{id} and the placing answer are one object, in every kind of market',
  async (t) => {
    const c = await unmoved();
    const agent = await registerAgent(c.svc);
    for (const market of ['m15', 'h2']) {
      const m: Menu = (await send(c.svc, 'GET', `/api/v1/markets/${market}/deals`)).body;
      const placed = await agent.post('/api/v1/orders', {
        market,
        offer_key: m.deals.at(-1)!.key,
        qty: 1,
      });
      t.equal(placed.status, 201);
      const { instructions: _i, monthly_fee_charged: _f, ...answered } = placed.body;
      const created = (
        await agent.get('/api/v1/events?types=order.created&limit=1000')
      ).body.events.find((e: any) => e.data.id === placed.body.id);
      t.same(created.data, answered, `${market}: order.created carries what placing answered`);
      t.same(
        (await agent.get(`/api/v1/orders/${placed.body.id}`)).body,
        { ...answered, instructions: placed.body.instructions },
        `${market}: GET serves what placing answered`,
      );
      t.equal(
        'sales_velocity' in answered,
        market === 'm15',
        `${market}: sales_velocity only where the market quotes it`,
      );
    }
  },
);

t.test(
  'events: the stream sends what was missed, then each event as it happens, exactly once across reconnections',
  async (t) => {
    const c = await unmoved();
    const svc = c.svc;
    const agent = await registerAgent(svc);
    const auth = { authorization: `Bearer ${agent.key}` };
    const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    const order = (i: number) =>
      agent.post('/api/v1/orders', {
        market: MARKET,
        offer_key: m.deals[i % m.deals.length].key,
        qty: 1,
      });
    for (let i = 0; i < 3; i++) t.equal((await order(i)).status, 201);

    const first = await openSse(svc, '/api/v1/events/stream?after=1', auth, t);
    t.equal(first.status, 200);
    t.match(first.headers.get('content-type'), /^text\/event-stream/);
    const seen: number[] = [];
    const take = async (s: typeof first) => {
      const e = await s.nextEvent();
      t.equal(e.id, String(e.json.id), 'the SSE id is the event id');
      t.equal(e.event, e.json.type, 'the SSE event is its type');
      seen.push(e.json.id);
      return e.json;
    };
    t.same([(await take(first)).id, (await take(first)).id], [2, 3], 'what was missed after 1');
    t.equal((await order(3)).status, 201);
    t.match(
      await take(first),
      { id: 4, type: 'order.created' },
      'a new event arrives without polling',
    );
    // What operators watch (/metrics): the stream held, the events handed, the drains timed.
    const metric = async (name: string) =>
      metricValue(await (await svc.get('/metrics')).text(), name);
    t.equal(await metric('event_streams'), 1, 'event_streams: the one held');
    t.ok(
      (await metric('events_sent_total')) >= 1,
      'events_sent_total counts what streams were handed',
    );
    t.ok(
      (await metric('event_fanout_seconds_count')) >= 1,
      'event_fanout_seconds timed the drains',
    );
    const ops = await svc.getJson('/ops/feed');
    t.equal(ops.status, 200, "the operators' figures (loopback)");
    t.match(
      ops.body.events,
      { streams: 1, closed_behind: 0, closed_gone: 0 },
      '/ops shows the stream held',
    );
    t.ok(
      ops.body.events.sent >= 1 && ops.body.events.fanout_p99_ms !== null,
      `and the events sent (${ops.body.events.sent}), the fan-out timed (${ops.body.events.fanout_p99_ms} ms)`,
    );
    first.close();

    // Events while no one listens, then a reconnection from the last id it had.
    for (let i = 4; i < 6; i++) t.equal((await order(i)).status, 201);
    const again = await openSse(svc, '/api/v1/events/stream', { ...auth, 'last-event-id': '4' }, t);
    t.same([(await take(again)).id, (await take(again)).id], [5, 6]);
    t.equal((await order(6)).status, 201);
    t.equal((await take(again)).id, 7);
    again.close();
    t.same(seen, [2, 3, 4, 5, 6, 7], 'every event exactly once');

    const typed = await openSse(svc, '/api/v1/events/stream?after=0&types=order.created', auth, t);
    t.equal((await take(typed)).type, 'order.created');
    typed.close();

    t.equal(
      (await svc.get('/api/v1/events/stream', { headers: { accept: 'text/event-stream' } })).status,
      401,
      'a key is needed',
    );
    const badId = await svc.get('/api/v1/events/stream', {
      headers: { accept: 'text/event-stream', ...auth, 'last-event-id': 'x1' },
    });
    t.equal(badId.status, 422);
    // Cut-off and hostile resume points and type lists: a 422 at their field, never a stream, never a 5xx.
    for (const id of ['9'.repeat(16), '-1', '1e3', '0x10', '  7x', '1'.repeat(5000)]) {
      const r = await svc.get('/api/v1/events/stream', {
        headers: { accept: 'text/event-stream', ...auth, 'last-event-id': id },
      });
      t.equal(r.status, 422, `Last-Event-ID ${JSON.stringify(id.slice(0, 20))}`);
      await r.body?.cancel();
    }
    for (const types of [
      '%00',
      'order.paid,' + 'x'.repeat(1200),
      ',,,order.',
      'order.paid%2Corder.%ZZ',
    ]) {
      const r = await svc.get(`/api/v1/events/stream?types=${types}`, {
        headers: { accept: 'text/event-stream', ...auth },
      });
      t.ok(r.status === 422 || r.status === 400, `types ${types.slice(0, 24)} → ${r.status}`);
      await r.body?.cancel();
    }
    t.equal((await svc.get('/healthz')).status, 200, 'still up');

    await t.test('the market stream: session.closed with the closed tick as its id', async (t) => {
      const open = svc.services.supervisor.openTick(MARKET)!;
      const s = await openSse(svc, `/api/v1/markets/${MARKET}/stream`, {}, t);
      t.equal(s.status, 200);
      const next = await c.closeSession(MARKET);
      const e = await s.nextEvent();
      t.equal(e.event, 'session.closed');
      t.equal(e.id, String(open));
      t.match(e.json, { market: MARKET, tick: open, next_tick: next });
      t.equal(
        e.json.tick_closes_at,
        svc.services.clock.closesAt(next, 900),
        'when the open session closes',
      );
      s.close();
      await c.closeSession(MARKET);
      const resumed = await openSse(
        svc,
        `/api/v1/markets/${MARKET}/stream`,
        { 'last-event-id': String(open) },
        t,
      );
      t.equal(
        (await resumed.nextEvent()).json.tick,
        next,
        'a resumed market stream replays the closes it missed',
      );
      resumed.close();
      t.equal((await svc.get('/api/v1/markets/zz/stream')).status, 404);
    });
  },
);

t.test("events: a cart's lines added, removed, connected and ordered", async (t) => {
  const c = await unmoved();
  const svc = c.svc;
  const agent = await registerAgent(svc);
  const holder = await registerHolder(svc);
  const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  const a = await agent.post('/api/v1/cart/items', {
    market: MARKET,
    offer_key: m.deals[0].key,
    qty: 1,
    note: 'cheap',
  });
  const b = await agent.post('/api/v1/cart/items', {
    market: MARKET,
    offer_key: m.deals[1].key,
    qty: 1,
  });
  t.same([a.status, b.status], [201, 201]);
  t.equal(
    (
      await send(svc, 'DELETE', `/api/v1/cart/items/${b.body.item_id}`, undefined, {
        authorization: `Bearer ${agent.key}`,
      })
    ).status,
    200,
  );
  const cart = (await agent.get('/api/v1/cart')).body;
  const token = new URL(cart.checkout_url).pathname.split('/').at(-1);
  // The holder opens the link (connecting the agent and its cart), then pays it by card.
  t.equal((await svc.get(`/carts/${token}`, { headers: { cookie: holder.cookie } })).status, 200);
  const paid = await submit(svc, `/carts/${token}/pay`, APPROVED_CARD, holder.cookie);
  t.equal(paid.status, 200, JSON.stringify(paid.body));
  const r = (await agent.get('/api/v1/events?limit=1000')).body.events;
  t.same(
    r.map((e: any) => e.type).sort(),
    [
      'cart.line_added',
      'cart.line_added',
      'cart.line_removed',
      'cart.connected',
      'cart.line_ordered',
      'ledger.posted',
      'ledger.posted',
      'ledger.posted',
      'order.created',
      'order.paid',
    ].sort(),
    'every change of the cart, once',
  );
  t.same(
    r.slice(0, 4).map((e: any) => e.type),
    ['cart.line_added', 'cart.line_added', 'cart.line_removed', 'cart.connected'],
    'in the order they happened',
  );
  t.same(
    r.map((e: any) => e.id),
    Array.from({ length: r.length }, (_, i) => i + 1),
  );
  const byType = (type: string) => r.filter((e: any) => e.type === type);
  t.match(byType('cart.line_added')[0].data, {
    id: a.body.item_id,
    cart_id: cart.id,
    note: 'cheap',
    status: 'pending_pairing',
  });
  t.match(byType('cart.line_removed')[0].data, { id: b.body.item_id, cart_id: cart.id });
  t.match(byType('cart.connected')[0].data, { cart_id: cart.id, holder: { connected: true } });
  const ordered = byType('cart.line_ordered')[0].data;
  t.match(ordered, { id: a.body.item_id, status: 'ordered' });
  t.equal(
    byType('order.paid')[0].data.id,
    ordered.order_id,
    "the line's order was created and paid",
  );
  t.same(
    byType('order.paid')[0].data,
    withoutNext((await agent.get(`/api/v1/orders/${ordered.order_id}`)).body),
  );

  await t.test("the holder's standing instructions: grants and the funding switch", async (t) => {
    const head = r.length;
    const granted = await submit(
      svc,
      '/cart/grant',
      { agent_id: String(agent.agentId), level: 'write', note: 'add to my carts' },
      holder.cookie,
    );
    t.equal(granted.status, 200, JSON.stringify(granted.body));
    t.equal(
      (
        await submit(
          svc,
          '/cart/grant/revoke',
          { grant_id: String(granted.body.grant_id) },
          holder.cookie,
        )
      ).status,
      200,
    );
    t.equal(
      (
        await submit(
          svc,
          `/console/agents/${agent.agentId}/funding`,
          { enabled: 'off' },
          holder.cookie,
        )
      ).status,
      200,
      'the switch set off',
    );
    const more = (await agent.get(`/api/v1/events?after=${head}`)).body.events;
    t.same(
      more.map((e: any) => [e.id, e.type]),
      [
        [head + 1, 'grant.changed'],
        [head + 2, 'grant.changed'],
        [head + 3, 'funding.changed'],
      ],
    );
    t.match(more[0].data, {
      action: 'granted',
      grant: {
        grant_id: granted.body.grant_id,
        agent_id: agent.agentId,
        level: 'write',
        note: 'add to my carts',
      },
    });
    t.match(more[1].data, { action: 'revoked', grant: { grant_id: granted.body.grant_id } });
    t.same(more[2].data, { agent_id: agent.agentId, autonomous_funding: false });
  });
});
