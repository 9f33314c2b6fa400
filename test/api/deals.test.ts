// The current menu over HTTP: GET /markets/{id}/deals and /deals/{offer_key}, served from the
// in-memory snapshots, and the market status' quote of the same menu.
import t from 'tap';
import { startClockedService } from '../helpers/clocked.js';

// The clock moves only when the test says: no session closes between two reads of a menu.
const clocked = await startClockedService(t);
const svc = clocked.svc;

const COMMON = [
  'key',
  'tick',
  'sku_family',
  'cluster',
  'bundle',
  'unit_cost',
  'list_price',
  'margin',
  'listed_at',
  'max_qty',
  'house_accepted',
  'house_qty',
];
const VELOCITY = ['sales_velocity', 'inverse_sv'];
const RANKING = ['sales_rank', 'sales_rank_avg', 'rank_drops', 'rank_drops_long', 'nsellers'];
const MAX_QTY: Record<string, number> = { m15: 20, m45: 30, h2: 50, h10: 80 };

const cents = (x: number) => Math.round(x * 100);
const twoDecimals = (x: number) => cents(x) / 100 === x;
const deals = (market: string, qs = '') => svc.getJson(`/api/v1/markets/${market}/deals${qs}`);

t.test(
  'every Deal field with its type; velocity fields on m15 only, ranking fields on h2 only',
  async (t) => {
    for (const market of ['m15', 'h2']) {
      const { status, body, headers } = await deals(market);
      t.equal(status, 200);
      t.match(headers.get('content-type'), /^application\/json/);
      t.equal(body.market, market);
      t.type(body.tick, 'number');
      const left = body.closes_at - clocked.now() / 1000;
      t.ok(left > 0 && left <= (market === 'm15' ? 900 : 7200), 'closes_at is real unix seconds');
      t.same([body.limit, body.offset], [2000, 0]);
      t.equal(body.total, body.deals.length);
      t.ok(body.deals.length > 0);
      const velocity = market === 'm15';
      const expected = [...COMMON, ...(velocity ? VELOCITY : RANKING)].sort();
      let prev = -1;
      for (const d of body.deals) {
        t.same(Object.keys(d).sort(), expected, `${market} ${d.key}: exactly the Deal fields`);
        t.type(d.key, 'string');
        t.ok(d.key.startsWith(`${market}-${body.tick}-`));
        t.equal(d.tick, body.tick);
        t.type(d.sku_family, 'string');
        t.ok(Number.isInteger(d.cluster));
        t.type(d.bundle.title, 'string');
        t.type(d.bundle.unit, 'string');
        t.type(d.bundle.origin, 'string');
        t.ok(d.bundle.items.length > 0);
        for (const i of d.bundle.items)
          t.ok(
            typeof i.name === 'string' && Number.isInteger(i.qty) && typeof i.grade === 'string',
          );
        for (const f of ['unit_cost', 'list_price', 'margin'])
          t.ok(typeof d[f] === 'number' && twoDecimals(d[f]), `${f} ${d[f]} has 2 decimals`);
        t.equal(
          cents(d.margin),
          cents(d.list_price) - cents(d.unit_cost),
          'margin = list_price - unit_cost to the cent',
        );
        t.ok(
          d.listed_at >= 0 && d.listed_at <= 1 && d.listed_at >= prev,
          'listed_at ascending in 0..1',
        );
        prev = d.listed_at;
        t.ok(Number.isInteger(d.max_qty) && d.max_qty >= 1 && d.max_qty <= MAX_QTY[market]);
        t.type(d.house_accepted, 'boolean');
        t.ok(Number.isInteger(d.house_qty) && d.house_qty >= 0 && d.house_qty <= d.max_qty);
        t.equal(d.house_qty > 0, d.house_accepted, 'house_qty > 0 exactly when the desk bids');
        if (velocity) {
          t.ok(d.sales_velocity > 0);
          t.ok(
            Math.abs(d.inverse_sv - 1 / d.sales_velocity) < 1e-4,
            'inverse_sv = 1 / sales_velocity',
          );
        } else {
          for (const f of RANKING) t.type(d[f], 'number');
        }
      }
    }
  },
);

t.test('family filter, house_only filter, paging and total', async (t) => {
  const full = (await deals('h2')).body;
  const family = full.deals[0].sku_family;
  const fam = (await deals('h2', `?family=${encodeURIComponent(family)}`)).body;
  t.same(
    fam.deals,
    full.deals.filter((d: any) => d.sku_family === family),
    'the family, in listed_at order',
  );
  t.equal(fam.total, fam.deals.length);
  const none = (await deals('h2', '?family=no-such-family')).body;
  t.same([none.total, none.deals], [0, []]);

  let bids = 0;
  for (const market of ['m15', 'm45', 'h2', 'h10']) {
    const all = (await deals(market)).body;
    const house = (await deals(market, '?house_only=true')).body;
    t.equal(house.tick, all.tick);
    t.same(
      house.deals,
      all.deals.filter((d: any) => d.house_accepted),
      `${market}: the desk's bids`,
    );
    t.ok(house.deals.every((d: any) => d.house_accepted && d.house_qty > 0));
    t.equal(house.total, house.deals.length);
    bids += house.total;
    t.same((await deals(market, '?house_only=false')).body, all, 'house_only=false is the default');
  }
  t.ok(bids > 0, `the desk bids somewhere (${bids} bids)`);

  const p = (await deals('h2', '?limit=5&offset=3')).body;
  t.same([p.total, p.limit, p.offset], [full.total, 5, 3]);
  t.same(p.deals, full.deals.slice(3, 8));
  const tail = (await deals('h2', `?limit=10&offset=${full.total - 2}`)).body;
  t.same(tail.deals, full.deals.slice(-2));
  const past = (await deals('h2', `?offset=${full.total + 10}`)).body;
  t.same([past.total, past.deals], [full.total, []]);
  const famPage = (await deals('h2', `?family=${encodeURIComponent(family)}&limit=1&offset=1`))
    .body;
  t.same([famPage.total, famPage.deals], [fam.total, fam.deals.slice(1, 2)]);
  // The pre-serialised default answer and the computed one agree.
  const computed = (await deals('h2', '?limit=5000')).body;
  t.same({ ...computed, limit: 2000 }, full);
});

t.test('422 with the offending query field in loc', async (t) => {
  const cases: [string, string, string][] = [
    ['limit=0', 'limit', 'greater_than_equal'],
    ['limit=5001', 'limit', 'less_than_equal'],
    ['limit=ten', 'limit', 'int_parsing'],
    ['offset=-1', 'offset', 'greater_than_equal'],
    ['house_only=maybe', 'house_only', 'bool_parsing'],
  ];
  for (const [qs, field, type] of cases) {
    const { status, body } = await deals('m15', `?${qs}`);
    t.equal(status, 422, qs);
    t.equal(body.detail.length, 1, qs);
    t.same(body.detail[0].loc, ['query', field], qs);
    t.equal(body.detail[0].type, type, qs);
    t.type(body.detail[0].msg, 'string');
  }
  const two = await deals('m15', '?limit=0&offset=-1');
  t.same(
    two.body.detail.map((d: any) => d.loc),
    [
      ['query', 'limit'],
      ['query', 'offset'],
    ],
  );
  t.equal(
    (await deals('m15', '?limit=1&offset=0&house_only=1')).status,
    200,
    'boundaries accepted',
  );
  t.equal((await deals('m15', '?limit=5000')).status, 200);
});

t.test('unknown market 404 on every menu route', async (t) => {
  for (const path of [
    '/api/v1/markets/x99/deals',
    '/api/v1/markets/x99/deals/m15-1-0-abcdef',
    '/api/v1/markets/x99',
  ]) {
    const { status, body } = await svc.getJson(path);
    t.equal(status, 404, path);
    t.match(body.detail, /unknown market/);
  }
});

t.test(
  'a deal by key: 200 while listed, 404 for made-up keys and keys of other markets',
  async (t) => {
    const m15 = (await deals('m15')).body;
    const pick = m15.deals[Math.floor(m15.deals.length / 2)];
    const one = await svc.getJson(`/api/v1/markets/m15/deals/${encodeURIComponent(pick.key)}`);
    t.equal(one.status, 200);
    t.same(one.body, pick);
    const h2key = (await deals('h2')).body.deals[0].key;
    for (const [market, key] of [
      ['m15', 'm15-1-0-abcdef'],
      ['m15', 'nonsense'],
      ['m15', h2key],
      ['h2', pick.key],
      ['m15', `${pick.key}x`],
    ]) {
      const r = await svc.getJson(`/api/v1/markets/${market}/deals/${encodeURIComponent(key)}`);
      t.equal(r.status, 404, `${market} ${key}`);
      t.match(r.body.detail, /not on the current menu/);
    }
  },
);

t.test('ETag and 304 on the menu', async (t) => {
  const first = await svc.get('/api/v1/markets/m15/deals');
  const etag = first.headers.get('etag')!;
  const body = (await first.json()) as any;
  t.match(etag, /^W\/"m15-\d+-1-[0-9a-f]+"$/, `weak etag ${etag}`);
  t.ok(etag.includes(`-${body.tick}-`), 'derived from the tick');
  t.equal(first.headers.get('cache-control'), 'no-cache');
  const again = await svc.get('/api/v1/markets/m15/deals', { headers: { 'if-none-match': etag } });
  t.equal(again.status, 304);
  t.equal(await again.text(), '');
  t.equal(again.headers.get('etag'), etag);
  t.equal(
    (
      await svc.get('/api/v1/markets/m15/deals?house_only=true', {
        headers: { 'if-none-match': `"x", ${etag}` },
      })
    ).status,
    304,
    'in a list',
  );
  t.equal(
    (await svc.get('/api/v1/markets/m15/deals', { headers: { 'if-none-match': etag.slice(2) } }))
      .status,
    304,
    'weak comparison',
  );
  const other = await svc.get('/api/v1/markets/m15/deals', {
    headers: { 'if-none-match': 'W/"m15-1-1-00000000"' },
  });
  t.equal(other.status, 200);
  await other.arrayBuffer();
  const h2 = await svc.get('/api/v1/markets/h2/deals');
  t.not(h2.headers.get('etag'), etag, 'per market');
  await h2.arrayBuffer();
});

t.test('market status carries quote and menu_size consistent with /deals', async (t) => {
  for (const market of ['m15', 'm45', 'h2', 'h10']) {
    // The clock stands still: the status and the menu are of the same session.
    const before = (await deals(market)).body;
    const status = (await svc.getJson(`/api/v1/markets/${market}`)).body;
    t.equal(status.current_tick, before.tick, `${market}: one session`);
    const q = status.quote;
    t.equal(status.menu_size, before.total, `${market} menu_size = total`);
    t.equal(q.deals, status.menu_size);
    const costs = before.deals.map((d: any) => cents(d.unit_cost));
    const prices = before.deals.map((d: any) => cents(d.list_price));
    const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) / 100;
    t.same(
      [q.cost_low, q.cost_mean, q.cost_high, q.list_price, q.price_low, q.price_high],
      [
        Math.min(...costs) / 100,
        mean(costs),
        Math.max(...costs) / 100,
        mean(prices),
        Math.min(...prices) / 100,
        Math.max(...prices) / 100,
      ],
    );
    t.ok(q.cost_low <= q.cost_mean && q.cost_mean <= q.cost_high);
    t.ok(q.price_low <= q.list_price && q.list_price <= q.price_high);
    t.equal(q.desk_bids, before.deals.filter((d: any) => d.house_accepted).length);
    t.equal(q.families, new Set(before.deals.map((d: any) => d.sku_family)).size);
    for (const f of ['cost_low', 'cost_mean', 'cost_high', 'list_price', 'price_low', 'price_high'])
      t.ok(twoDecimals(q[f]), `${f} 2 decimals`);
  }
  const all = (await svc.getJson('/api/v1/markets')).body.markets;
  t.ok(all.every((m: any) => typeof m.menu_size === 'number' && m.quote.deals === m.menu_size));
  const fields = [
    'id',
    'label',
    'interval_seconds',
    'current_tick',
    'tick_closes_at',
    'seconds_to_close',
    'settlement_horizon_ticks',
    'fees',
    'quote',
    'menu_size',
    'max_qty',
    'pricing',
    'quotes_velocity',
  ];
  for (const m of all) t.same(Object.keys(m), fields, `${m.id}: every status field, in order`);
  t.same(Object.keys(all[0].quote), [
    'cost_low',
    'cost_mean',
    'cost_high',
    'list_price',
    'price_low',
    'price_high',
    'deals',
    'desk_bids',
    'families',
  ]);
});

t.test('OpenAPI documents the menu routes', async (t) => {
  const doc = (await svc.getJson('/api/openapi.json')).body;
  const list = doc.paths['/api/v1/markets/{market_id}/deals'].get;
  t.same(
    list.parameters.map((p: any) => [p.name, p.in, p.required]),
    [
      ['market_id', 'path', true],
      ['family', 'query', false],
      ['house_only', 'query', false],
      ['limit', 'query', false],
      ['offset', 'query', false],
    ],
  );
  const limit = list.parameters.find((p: any) => p.name === 'limit').schema;
  t.same([limit.minimum, limit.maximum, limit.default], [1, 5000, 2000]);
  t.ok(list.responses['200'].content && list.responses['404'] && list.responses['422']);
  const one = doc.paths['/api/v1/markets/{market_id}/deals/{offer_key}'].get;
  t.ok(one.responses['200'] && one.responses['404']);
});

t.test('a key stops resolving once its session closes', async (t) => {
  // SVC_TIME_SCALE=300: an m15 session lasts 3 seconds of real time. Its own database (a second
  // service), on a clock the test moves: the test decides when the session closes.
  const c = await startClockedService(t, { SVC_TIME_SCALE: '300' });
  const fast = c.svc;
  const first = await fast.get('/api/v1/markets/m15/deals');
  const menu = (await first.json()) as any;
  const key = menu.deals[0].key;
  const etag = first.headers.get('etag')!;
  const left = menu.closes_at - c.now() / 1000;
  t.ok(left > 0 && left <= 3, `closes within 3 seconds of real time (${left.toFixed(3)} s)`);
  t.equal(
    (await fast.getJson(`/api/v1/markets/m15/deals/${encodeURIComponent(key)}`)).status,
    200,
    'listed while its session is open',
  );
  // Just past its close by the clock, before runDue: the menu follows the clock, so the key is gone
  // even before the record closes the session (at this scale the supervisor's own timer, re-armed
  // every 3 s of real time, may also close it meanwhile: the key is gone either way).
  c.advanceTo(menu.closes_at * 1000 + 20);
  const gone = await fast.getJson(`/api/v1/markets/m15/deals/${encodeURIComponent(key)}`);
  t.equal(gone.status, 404);
  t.match(gone.body.detail, /not on the current menu/);
  await c.runDue();
  t.equal(fast.services.supervisor.openTick('m15'), menu.tick + 1, 'the record closed the session');
  const now = await fast.get('/api/v1/markets/m15/deals', { headers: { 'if-none-match': etag } });
  t.equal(now.status, 200, 'old ETag no longer matches');
  const next = (await now.json()) as any;
  t.equal(next.tick, menu.tick + 1, `new tick ${next.tick} = ${menu.tick} + 1`);
  t.equal(next.tick, fast.services.supervisor.openTick('m15'), "the record's open session");
  t.not(now.headers.get('etag'), etag);
  const fresh = await fast.getJson(
    `/api/v1/markets/m15/deals/${encodeURIComponent(next.deals[0].key)}`,
  );
  t.equal(fresh.status, 200);
});
