// The menu flips at the clock (ARCHITECTURE rule 5, CONTRACT.md "Session boundary"):
// past a boundary the deals answer is the new session's even before the record's close ran, the old
// keys answer 404, an order on a new key waits for the record to open its session and is accepted;
// an accepted order's created_at is the clock's instant of acceptance, never after its closes_at.
import t from 'tap';
import { MARKETS } from '../../src/engine/index.js';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send } from '../helpers/agents.js';
import { T0 } from '../helpers/clock-rig.js';

const MARKET = 'm15';
const INTERVAL = MARKETS[MARKET].interval_seconds;

let nowMs = (T0 + 100) * 1000; // 100 s into a session of every market
const svc = await startTestService(t, {}, { realMs: () => nowMs });
const { clock, supervisor } = svc.services;

t.test(
  'past the boundary, before the close runs: the new menu, old keys 404, a new key orderable',
  async (t) => {
    const agent = await registerAgent(svc);
    const before = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    const tick = before.tick;
    t.equal(supervisor.openTick(MARKET), tick);
    const oldKey = before.deals[0].key;

    // 1 s past the close of `tick` on the clock; supervisor.runDue() not called: the record is behind.
    nowMs = clock.closesAt(tick, INTERVAL) * 1000 + 1000;
    t.equal(supervisor.openTick(MARKET), tick, 'the record has not closed the session yet');

    const menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    t.equal(menu.tick, tick + 1, 'the deals answer is the session the clock is in');
    t.equal(menu.closes_at, clock.closesAt(tick + 1, INTERVAL));
    t.ok(menu.closes_at > nowMs / 1000, 'never a session whose closes_at has passed');
    const status = (await send(svc, 'GET', `/api/v1/markets/${MARKET}`)).body;
    t.equal(status.current_tick, menu.tick);
    t.equal(status.menu_size, menu.total, "the status's quote is the same menu");
    const newKeys = new Set(menu.deals.map((d: any) => d.key));
    t.notOk(newKeys.has(oldKey), 'the keys are new');

    t.equal(
      (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals/${encodeURIComponent(oldKey)}`))
        .status,
      404,
      'an old key answers 404',
    );
    t.equal(
      (await agent.post('/api/v1/orders', { market: MARKET, offer_key: oldKey, qty: 1 })).status,
      404,
      'an order on it 404',
    );
    const key = menu.deals[0].key;
    t.equal(
      (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals/${encodeURIComponent(key)}`)).status,
      200,
      'a new key is served',
    );

    // The order waits for the record to open its session (the close of `tick`), then is accepted.
    const acceptedAt = nowMs / 1000;
    const ordering = agent.post('/api/v1/orders', { market: MARKET, offer_key: key, qty: 1 });
    const proposing = agent.post('/api/v1/cart/items', {
      market: MARKET,
      offer_key: key,
      qty: 1,
      note: 'new menu',
    });
    await supervisor.runDue();
    t.equal(supervisor.openTick(MARKET), tick + 1);
    const o = await ordering;
    t.equal(o.status, 201, JSON.stringify(o.body));
    t.equal(o.body.tick, tick + 1);
    t.equal(o.body.closes_at, menu.closes_at);
    t.equal(o.body.created_at, acceptedAt, 'created_at is the instant the order was accepted');
    t.ok(o.body.created_at <= o.body.closes_at);
    t.equal((await proposing).status, 201, 'a cart line on a new key is accepted too');
    const stored = (await agent.get(`/api/v1/orders/${o.body.id}`)).body;
    t.equal(stored.created_at, acceptedAt, 'as stored');
  },
);

t.test(
  "an accepted order's created_at is the clock's instant of acceptance, not the commit's",
  async (t) => {
    const agent = await registerAgent(svc);
    const menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    // The last millisecond of the session.
    nowMs = menu.closes_at * 1000 - 1;
    const o = await agent.post('/api/v1/orders', {
      market: MARKET,
      offer_key: menu.deals[1].key,
      qty: 1,
    });
    t.equal(o.status, 201, JSON.stringify(o.body));
    t.equal(o.body.created_at, nowMs / 1000);
    t.ok(o.body.created_at < o.body.closes_at, 'before closes_at');
    const listed = (await agent.get('/api/v1/orders')).body.orders.find(
      (x: any) => x.id === o.body.id,
    );
    t.equal(listed.created_at, nowMs / 1000);
    const rows = await svc.orm.em
      .fork()
      .execute(
        'select extract(epoch from created_at)::float8 as c, closes_at from orders where id = ?',
        [o.body.id],
      );
    t.ok(rows[0].c <= rows[0].closes_at, 'created_at <= closes_at in the table');
  },
);

t.test(
  'the wait for the record is bounded: the route then answers 503 with Retry-After',
  async (t) => {
    const open = supervisor.openTick(MARKET)!;
    t.equal(
      await supervisor.recordOpened(MARKET, open, 10),
      true,
      'an open session answers at once',
    );
    t.equal(
      await supervisor.recordOpened(MARKET, open + 5, 10),
      false,
      'a session the record has not opened: false after the bound',
    );
  },
);
