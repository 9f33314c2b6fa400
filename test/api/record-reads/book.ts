// GET /markets/{id}/book over HTTP: the synthetic book drawn from the recorded tape.
import t, { type Test } from 'tap';
import { sharedRecordedService } from '../../helpers/service.js';
import { chooseSpread } from '../../../src/analytics/spread.js';

const svc = await sharedRecordedService();

const sql = (q: string, p: unknown[] = []) => svc.orm.em.fork().execute(q, p);
const open = (m: string) => svc.services.supervisor.openTick(m)!;
const book = (m: string, qs = '') => svc.getJson(`/api/v1/markets/${m}/book${qs ? `?${qs}` : ''}`);
const cents = (x: number) => Math.round(x * 100);
const KEYS = [
  'market',
  'cluster',
  'window',
  'sessions',
  'mid',
  'spread',
  'spread_method',
  'tick',
  'best_bid',
  'best_ask',
  'bids',
  'asks',
  'depth',
  'imbalance',
  'buy_volume',
  'sell_volume',
  'price_impact',
  'listed',
  'listed_low',
  'listed_high',
];

/** The tape rows the book reads: sessions open-window..open-1 of one cluster (-1 = market). */
async function tapeOf(market: string, cluster: number, window: number) {
  const o = open(market);
  const rows = await sql(
    'select row from tape where market = ? and cluster = ? and tick between ? and ? order by tick',
    [market, cluster, o - window, o - 1],
  );
  return rows.map((r) => r.row);
}

/** The window's last close: a session that only carried a family's positions has none. */
const lastClose = (rows: { price_close: number | null }[]) =>
  rows.filter((r) => r.price_close !== null).at(-1)!.price_close;

function checkInvariants(t: Test, b: any, step: number, levels: number) {
  t.same(Object.keys(b), KEYS);
  t.ok(
    b.best_bid < b.mid && b.mid < b.best_ask,
    `best_bid ${b.best_bid} < mid ${b.mid} < best_ask ${b.best_ask}`,
  );
  t.equal(cents(b.spread), cents(b.best_ask) - cents(b.best_bid), 'spread = best_ask - best_bid');
  t.ok(['roll', 'corwin_schultz', 'floor'].includes(b.spread_method));
  t.ok(b.asks.length === levels && b.bids.length <= levels && b.bids.length > 0);
  t.equal(b.bids[0].price, b.best_bid);
  t.equal(b.asks[0].price, b.best_ask);
  for (const [side, dir] of [
    [b.bids, -1],
    [b.asks, 1],
  ] as const) {
    let cum = 0;
    side.forEach((l: any, i: number) => {
      if (i > 0) {
        t.equal(
          cents(l.price) - cents(side[i - 1].price),
          dir * cents(step),
          'levels one step apart',
        );
        t.ok(l.cum >= side[i - 1].cum, 'cum non-decreasing');
        t.ok(l.size <= side[i - 1].size, 'size decays away from the mid');
      }
      t.ok(l.size >= 0 && l.price > 0);
      cum += cents(l.size);
      t.ok(Math.abs(cents(l.cum) - cum) <= i + 1, 'cum is the running total');
    });
  }
  const bidDepth = b.bids.at(-1).cum;
  const askDepth = b.asks.at(-1).cum;
  t.equal(cents(b.depth), cents(bidDepth + askDepth));
  t.ok(
    Math.abs(b.imbalance - (b.depth ? (bidDepth - askDepth) / (bidDepth + askDepth) : 0)) < 1e-3,
  );
}

t.test(
  'defaults on the whole market: drawn from the last 48 sessions of tape and the current menu',
  async (t) => {
    const { status, body: b, headers } = await book('m15');
    t.equal(status, 200);
    t.equal(headers.get('cache-control'), 'no-cache', 'the book moves with every close');
    checkInvariants(t, b, 1, 10);
    const o = open('m15');
    t.same([b.market, b.cluster, b.window, b.tick], ['m15', null, 48, o]);
    const rows = await tapeOf('m15', -1, 48);
    t.equal(b.sessions, rows.length);
    t.equal(rows.length, 48);
    t.equal(b.mid, lastClose(rows), 'mid = last price_close');
    t.equal(
      b.buy_volume,
      rows.reduce((s, r) => s + r.units, 0),
      'buy_volume = units executed',
    );
    t.equal(
      b.sell_volume,
      rows.reduce((s, r) => s + r.sold, 0),
      'sell_volume = units sold',
    );
    const spread = chooseSpread({
      prices: rows.map((r) => r.price_close),
      highs: rows.map((r) => r.price_high),
      lows: rows.map((r) => r.price_low),
      mid: b.mid,
      floorFrac: 0.005,
    });
    t.equal(b.spread_method, spread.method);
    t.ok(
      Math.abs(b.spread - Math.min(spread.spread, b.mid)) <= 0.02,
      `spread ${b.spread} ~ ${spread.spread} (at most the mid)`,
    );
    // Kyle's lambda by hand: close-to-close changes on (units - sold) of the later session.
    const dp = rows.slice(1).map((r, i) => r.price_close - rows[i].price_close);
    const q = rows.slice(1).map((r) => r.units - r.sold);
    const mq = q.reduce((s, x) => s + x, 0) / q.length;
    const mp = dp.reduce((s, x) => s + x, 0) / dp.length;
    const lambda =
      q.reduce((s, x, i) => s + (x - mq) * (dp[i] - mp), 0) /
      q.reduce((s, x) => s + (x - mq) ** 2, 0);
    t.ok(
      Math.abs(b.price_impact - lambda) <= Math.abs(lambda) * 1e-5,
      `price_impact ${b.price_impact} ~ ${lambda}`,
    );
    const [listed] = await sql(
      'select count(*)::int as n, min(list_price_cents) as lo, max(list_price_cents) as hi from menu_row where market = ? and tick = ?',
      ['m15', o],
    );
    t.same(
      [b.listed, cents(b.listed_low), cents(b.listed_high)],
      [listed.n, listed.lo, listed.hi],
      'listed figures of the open menu',
    );
    const deals = (await svc.getJson('/api/v1/markets/m15/deals')).body;
    t.equal(b.listed, deals.total, 'listed = deals on the current menu');
  },
);

t.test('cluster, step, levels and window on a ranking market', async (t) => {
  const o = open('h2');
  const [{ cluster }] = await sql(
    'select cluster from menu_row where market = ? and tick = ? group by cluster order by count(*) desc limit 1',
    ['h2', o],
  );
  const { status, body: b } = await book('h2', `cluster=${cluster}&step=0.25&levels=5&window=6`);
  t.equal(status, 200);
  checkInvariants(t, b, 0.25, 5);
  t.same([b.cluster, b.window, b.tick], [cluster, 6, o]);
  const rows = await tapeOf('h2', cluster, 6);
  t.equal(b.sessions, rows.length);
  t.equal(b.mid, lastClose(rows));
  t.equal(
    b.buy_volume,
    rows.reduce((s, r) => s + r.units, 0),
  );
  const [listed] = await sql(
    'select count(*)::int as n, min(list_price_cents) as lo, max(list_price_cents) as hi from menu_row where market = ? and tick = ? and cluster = ?',
    ['h2', o, cluster],
  );
  t.same(
    [b.listed, cents(b.listed_low), cents(b.listed_high)],
    [listed.n, listed.lo, listed.hi],
    'listings of the family',
  );
  const maxStep = await book('h2', `cluster=${cluster}&step=10&levels=50&window=500`);
  t.equal(maxStep.status, 200, 'upper bounds allowed');
  checkInvariants(t, maxStep.body, 10, 50);
  const recorded = await tapeOf('h2', cluster, 500);
  t.ok(recorded.length <= 12, 'one day of h2');
  t.equal(
    maxStep.body.sessions,
    recorded.length,
    'a window beyond the record reads what is recorded',
  );
});

t.test('parameter bounds answer 422 at the parameter; unknown market or cluster 404', async (t) => {
  const bad: [string, string][] = [
    ['step=0.05', 'step'],
    ['step=10.5', 'step'],
    ['step=0', 'step'],
    ['step=abc', 'step'],
    ['levels=0', 'levels'],
    ['levels=51', 'levels'],
    ['window=1', 'window'],
    ['window=501', 'window'],
    ['cluster=-1', 'cluster'],
  ];
  for (const [qs, field] of bad) {
    const r = await book('m15', qs);
    t.equal(r.status, 422, qs);
    t.same(r.body.detail[0].loc, ['query', field], `${qs}: loc`);
  }
  t.equal((await book('m15', 'step=0.06')).status, 200, 'just above the exclusive minimum');
  const cluster = await book('m15', 'cluster=999');
  t.same([cluster.status, typeof cluster.body.detail], [404, 'string']);
  const market = await book('q9');
  t.same([market.status, typeof market.body.detail], [404, 'string']);
  const doc = (await svc.getJson('/api/openapi.json')).body.paths[
    '/api/v1/markets/{market_id}/book'
  ].get;
  const schema = Object.fromEntries(doc.parameters.map((p: any) => [p.name, p.schema]));
  t.match(schema.step, { exclusiveMinimum: 0.05, maximum: 10, default: 1 });
  t.match(schema.levels, { minimum: 1, maximum: 50, default: 10 });
  t.match(schema.window, { minimum: 2, maximum: 500, default: 48 });
});
