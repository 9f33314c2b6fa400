// GET /markets/{id}/history and /coverage over HTTP on a started service with one day of history:
// row fields per market kind against the engine, observed/rejected/unrecorded status, revealed
// trades, censored profit curves, caching, the oracle switch, and the history-load progress.
import t from 'tap';
import {
  dealOutcomeInputs,
  dealProfitCurve,
  dealToJson,
  engineIdentity,
  menu,
  MARKETS,
  type MarketId,
} from '../../../src/engine/index.js';
import { RECORDED_DAY_MS, sharedRecordedService } from '../../helpers/service.js';

// The shared service's clock stands at RECORDED_DAY_MS: no session closes while the tests read.
const svc = await sharedRecordedService();
const seed = svc.config.seed;

const cents = (x: number) => Math.round(x * 100);
const twoDecimals = (x: number) => Number.isFinite(x) && cents(x) / 100 === x;
const history = (m: string, qs: string) => svc.getJson(`/api/v1/markets/${m}/history?${qs}`);
const coverage = async (m: string) => (await svc.getJson(`/api/v1/markets/${m}/coverage`)).body;
const engineCurve = (m: MarketId, tick: number, idx: number, qty: number) =>
  dealProfitCurve(m, menu(seed, m, tick)[idx], dealOutcomeInputs(seed, m, tick, idx), qty);
const dollars = (xs: (number | null)[]) => xs.map((x) => (x === null ? null : x / 100));

const DEAL = [
  'key',
  'tick',
  'sku_family',
  'cluster',
  'title',
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
const ROW = ['recorded', 'settled', 'status', 'trades'];
const OUTCOME = ['profit_curve', 'known_up_to_qty'];
const HOUSE = ['house_profit', 'house_units_sold'];
const TRADE = [
  'id',
  'market',
  'tick',
  'offer_key',
  'cluster',
  'actor',
  'position_id',
  'qty',
  'unit_cost',
  'list_price',
  'cost_basis',
  'revealed_ticks',
  'horizon',
  'settled',
  'sales_by_tick',
  'units_sold_so_far',
  'qty_left',
  'revenue_so_far',
  'holding_cost_so_far',
];
const SETTLED_TRADE = ['units_sold', 'sold_out', 'regime', 'surcharge', 'writeoff', 'realized_pnl'];
const sorted = (...xs: string[][]) => xs.flat().sort();

/** Checks a trade's arithmetic: SPEC's cash formulas to the cent, and its revealed slices. */
function checkTrade(t: Tap.Test, m: MarketId, tr: any, lastClosed: number) {
  const velocity = MARKETS[m].quotes_velocity;
  const settled = tr.tick <= lastClosed - 8;
  t.same(
    Object.keys(tr).sort(),
    sorted(
      TRADE,
      velocity ? ['sales_velocity'] : [...RANKING, 'price_by_tick', 'nsellers_by_tick'],
      settled ? SETTLED_TRADE : [],
    ),
    `${tr.offer_key}: trade fields`,
  );
  t.equal(tr.actor, 'house');
  t.equal(tr.horizon, 8);
  t.equal(tr.settled, settled);
  t.equal(tr.revealed_ticks, Math.min(8, lastClosed - tr.tick), 'revealed as far as time allows');
  t.equal(tr.sales_by_tick.length, tr.revealed_ticks);
  const sold = tr.sales_by_tick.reduce((a: number, b: number) => a + b, 0);
  t.equal(tr.units_sold_so_far, sold);
  t.equal(tr.units_sold_so_far + tr.qty_left, tr.qty);
  const fee = cents(MARKETS[m].fees.fulfilment_per_unit_cents / 100);
  t.equal(cents(tr.cost_basis), tr.qty * (cents(tr.unit_cost) + fee), 'cost_basis = q*c + q*f');
  t.equal(
    cents(tr.revenue_so_far),
    sold * cents(tr.list_price),
    'revenue = units sold x list price',
  );
  for (const f of [
    'unit_cost',
    'list_price',
    'cost_basis',
    'revenue_so_far',
    'holding_cost_so_far',
  ])
    t.ok(twoDecimals(tr[f]), `${f} 2 decimals`);
  if (!velocity) {
    t.equal(tr.price_by_tick.length, tr.revealed_ticks, 'price_by_tick cut to revealed sessions');
    t.equal(tr.nsellers_by_tick.length, tr.revealed_ticks);
  }
  if (settled) {
    t.equal(tr.units_sold, sold);
    t.equal(tr.sold_out, tr.qty_left === 0);
    t.equal(cents(tr.writeoff), tr.qty_left * cents(tr.unit_cost), 'writeoff = left x c');
    t.equal(
      cents(tr.realized_pnl),
      cents(tr.revenue_so_far) -
        cents(tr.cost_basis) -
        cents(tr.holding_cost_so_far) -
        cents(tr.surcharge),
      'realized_pnl = revenue - cost_basis - holding - surcharge',
    );
    if (!tr.regime) t.equal(tr.surcharge, 0);
  }
}

for (const m of ['m15', 'h2'] as MarketId[]) {
  t.test(`${m}: rows of closed sessions, every field, against the engine`, async (t) => {
    const open = (await coverage(m)).open_tick;
    // Settled and unsettled closed sessions, and the open session (which is not history).
    const from = m === 'm15' ? open - 12 : open - 11;
    const { status, body } = await history(m, `from_tick=${from}&to_tick=${open + 2}`);
    t.equal(status, 200);
    t.same(Object.keys(body).sort(), [
      'from_tick',
      'include_bundle',
      'last_closed',
      'last_settled',
      'market',
      'open_tick',
      'recorded_sessions',
      'reveal',
      'rows',
      'sessions',
      'to_tick',
    ]);
    t.same(
      [body.market, body.from_tick, body.to_tick, body.reveal, body.include_bundle],
      [m, from, open + 2, 'house', false],
      'defaults',
    );
    const last = body.last_closed;
    t.equal(last, body.open_tick - 1);
    t.equal(body.last_settled, last - 8);
    t.equal(body.sessions, last - from + 1);
    t.equal(body.recorded_sessions, last - from + 1);
    const ticks = [...new Set(body.rows.map((r: any) => r.tick))];
    t.same(
      ticks,
      Array.from({ length: last - from + 1 }, (_, i) => from + i),
      'every closed session, none of the open one',
    );
    const velocity = MARKETS[m].quotes_velocity;
    let observed = 0,
      rejected = 0,
      settledObserved = 0;
    for (const tick of ticks as number[]) {
      const engine = menu(seed, m, tick).map((d) => dealToJson(d) as any);
      const rows = body.rows.filter((r: any) => r.tick === tick);
      t.equal(rows.length, engine.length, `session ${tick}: one row per menu row`);
      rows.forEach((r: any, idx: number) => {
        const { bundle, ...deal } = engine[idx];
        const settled = tick <= body.last_settled;
        const expected =
          r.status === 'observed' && settled
            ? sorted(DEAL, velocity ? VELOCITY : RANKING, ROW, OUTCOME, HOUSE)
            : sorted(DEAL, velocity ? VELOCITY : RANKING, ROW);
        t.same(Object.keys(r).sort(), expected, `${r.key}: exactly the row fields`);
        t.same(
          {
            ...r,
            title: undefined,
            recorded: undefined,
            settled: undefined,
            status: undefined,
            trades: undefined,
            profit_curve: undefined,
            known_up_to_qty: undefined,
            house_profit: undefined,
            house_units_sold: undefined,
          },
          {
            ...deal,
            title: undefined,
            recorded: undefined,
            settled: undefined,
            status: undefined,
            trades: undefined,
            profit_curve: undefined,
            known_up_to_qty: undefined,
            house_profit: undefined,
            house_units_sold: undefined,
          },
          'deal fields as served',
        );
        t.equal(r.title, bundle.title, 'title in place of bundle');
        t.equal(r.recorded, true);
        t.equal(r.settled, settled);
        t.equal(
          r.status,
          r.house_accepted ? 'observed' : 'rejected',
          'observed exactly when executed (only the desk trades here)',
        );
        t.notOk(
          Object.keys(r).some((k) => /demand/.test(k)),
          'no demand',
        );
        if (r.status === 'rejected') {
          t.same(r.trades, []);
          rejected++;
          return;
        }
        observed++;
        t.equal(r.trades.length, 1);
        const tr = r.trades[0];
        t.same(
          [tr.offer_key, tr.tick, tr.qty, tr.unit_cost, tr.list_price, tr.cluster],
          [r.key, tick, r.house_qty, r.unit_cost, r.list_price, r.cluster],
        );
        if (velocity) t.equal(tr.sales_velocity, r.sales_velocity);
        else for (const f of RANKING) t.equal(tr[f], r[f], `trade carries the deal's ${f}`);
        checkTrade(t, m, tr, last);
        if (!settled) return;
        settledObserved++;
        const c = engineCurve(m, tick, idx, tr.qty);
        t.same(
          r.profit_curve,
          dollars(c.profit_curve_cents),
          'profit curve of the engine at the executed volume',
        );
        t.equal(r.profit_curve.length, r.max_qty);
        t.equal(r.known_up_to_qty, c.known_up_to_qty);
        t.equal(
          r.profit_curve[tr.qty - 1],
          tr.realized_pnl,
          'curve at the executed volume = realized_pnl',
        );
        t.equal(r.house_profit, tr.realized_pnl);
        t.equal(r.house_units_sold, tr.units_sold);
      });
    }
    t.ok(
      observed > 0 && rejected > 0 && settledObserved > 0,
      `${observed} observed, ${rejected} rejected, ${settledObserved} settled observed`,
    );
  });
}

t.test(
  'profit_curve censoring: null above the executed volume after a sell-out, fully known otherwise',
  async (t) => {
    const open = (await coverage('m15')).open_tick;
    const rows: any[] = [];
    for (let to = open - 9; to > open - 90; to -= 20)
      rows.push(...(await history('m15', `from_tick=${to - 19}&to_tick=${to}`)).body.rows);
    const settled = rows.filter((r) => r.status === 'observed' && r.settled);
    const soldOut = settled.filter((r) => r.trades[0].sold_out && r.trades[0].qty < r.max_qty);
    const kept = settled.filter((r) => !r.trades[0].sold_out);
    t.ok(
      soldOut.length > 0 && kept.length > 0,
      `${soldOut.length} sold out below max_qty, ${kept.length} not sold out`,
    );
    for (const r of soldOut) {
      const q = r.trades[0].qty;
      t.equal(r.known_up_to_qty, q, 'known up to the executed volume');
      t.ok(
        r.profit_curve.slice(0, q).every((x: any) => typeof x === 'number' && twoDecimals(x)),
        'known below',
      );
      t.ok(
        r.profit_curve.slice(q).every((x: any) => x === null),
        'null above the executed volume',
      );
      t.equal(r.profit_curve[q - 1], r.trades[0].realized_pnl);
    }
    for (const r of kept) {
      t.equal(r.known_up_to_qty, r.max_qty, 'every volume known');
      t.ok(r.profit_curve.every((x: any) => typeof x === 'number'));
      t.equal(
        r.profit_curve[r.trades[0].qty - 1],
        r.trades[0].realized_pnl,
        'value at the executed volume = realized_pnl',
      );
    }
  },
);

t.test(
  'sessions not recorded (before the history window) come from the engine as unrecorded',
  async (t) => {
    const cov = await coverage('m15');
    const from = cov.live_start_tick - 200;
    const { status, body } = await history('m15', `from_tick=${from}&to_tick=${from + 19}`);
    t.equal(status, 200);
    t.equal(body.recorded_sessions, 0);
    t.equal(body.sessions, 20);
    let n = 0;
    for (let tick = from; tick < from + 20; tick++) n += menu(seed, 'm15', tick).length;
    t.equal(body.rows.length, n, 'every menu row of the engine');
    for (const r of body.rows) {
      t.same([r.status, r.recorded, r.settled, r.trades], ['unrecorded', false, true, []]);
      t.notOk('profit_curve' in r || 'known_up_to_qty' in r || 'house_profit' in r, 'no outcomes');
    }
    const first = menu(seed, 'm15', from)[0];
    t.equal(body.rows[0].key, first.key);
    t.equal(body.rows[0].unit_cost, first.unit_cost_cents / 100);
  },
);

t.test('include_bundle, empty and clipped ranges', async (t) => {
  const open = (await coverage('h2')).open_tick;
  const { body } = await history(
    'h2',
    `from_tick=${open - 10}&to_tick=${open - 10}&include_bundle=true`,
  );
  const engine = menu(seed, 'h2', open - 10);
  t.equal(body.rows.length, engine.length);
  body.rows.forEach((r: any, i: number) => {
    t.same(r.bundle, engine[i].bundle, 'the whole bundle');
    t.notOk('title' in r);
    t.same(
      Object.keys(r).slice(0, 5),
      ['key', 'tick', 'sku_family', 'cluster', 'bundle'],
      'SPEC field order',
    );
  });
  const ahead = await history('h2', `from_tick=${open}&to_tick=${open + 3}`);
  t.equal(ahead.status, 200);
  t.same(
    [ahead.body.rows, ahead.body.sessions],
    [[], 0],
    'the open session and later are not history',
  );
});

t.test('caps, validation and errors', async (t) => {
  const wide = await history('m15', 'from_tick=100&to_tick=120');
  t.equal(wide.status, 422);
  t.same(wide.body.detail[0].loc, ['query', 'to_tick']);
  t.equal((await history('m15', 'from_tick=100&to_tick=119')).status, 200, '20 sessions allowed');
  const reversed = await history('m15', 'from_tick=100&to_tick=99');
  t.equal(reversed.status, 422);
  t.same(reversed.body.detail[0].loc, ['query', 'to_tick']);
  const missing = await history('m15', 'to_tick=99');
  t.equal(missing.status, 422);
  t.same(missing.body.detail[0].loc, ['query', 'from_tick']);
  const bad = await history('m15', 'from_tick=1&to_tick=2&reveal=everything');
  t.equal(bad.status, 422);
  t.same(bad.body.detail[0].loc, ['query', 'reveal']);
  t.equal((await history('m15', 'from_tick=-1&to_tick=2')).status, 422);
  t.equal((await history('m15', 'from_tick=1&to_tick=2&include_bundle=maybe')).status, 422);
  const oracle = await history('m15', 'from_tick=1&to_tick=2&reveal=full');
  t.equal(oracle.status, 403, 'reveal=full without the oracle switch');
  t.type(oracle.body.detail, 'string');
  const unknown = await history('x1', 'from_tick=1&to_tick=2');
  t.equal(unknown.status, 404);
  t.type(unknown.body.detail, 'string');
});

t.test('ETag and 304 on a settled range; no-cache on an unsettled one', async (t) => {
  const open = (await coverage('m15')).open_tick;
  const qs = `/api/v1/markets/m15/history?from_tick=${open - 30}&to_tick=${open - 20}`;
  const first = await svc.get(qs);
  const etag = first.headers.get('etag');
  t.equal(first.status, 200);
  t.match(etag, /^W\/".+"$/);
  t.match(first.headers.get('cache-control'), /immutable/);
  const again = await svc.get(qs, { headers: { 'if-none-match': etag! } });
  t.equal(again.status, 304);
  t.equal(await again.text(), '');
  const other = await svc.get(`${qs}&include_bundle=true`, { headers: { 'if-none-match': etag! } });
  t.equal(other.status, 200, 'another answer, another tag');
  const live = await svc.get(
    `/api/v1/markets/m15/history?from_tick=${open - 3}&to_tick=${open - 1}`,
  );
  t.equal(live.headers.get('cache-control'), 'no-cache');
});

t.test('coverage: recorded range, finished history load, trade count, frozen engine', async (t) => {
  const sessionsPerDay: Record<MarketId, number> = { m15: 96, m45: 32, h2: 12, h10: 2 };
  const em = svc.orm.em.fork();
  for (const m of ['m15', 'm45', 'h2', 'h10'] as MarketId[]) {
    const c = await coverage(m);
    t.same(Object.keys(c).sort(), [
      'engine',
      'first_recorded_tick',
      'history_load',
      'last_closed_tick',
      'last_recorded_tick',
      'last_settled_tick',
      'live_start_tick',
      'market',
      'open_tick',
      'recorded_sessions',
      'trade_count',
      'trades',
    ]);
    const total = sessionsPerDay[m];
    const h = c.history_load;
    t.same(
      [h.sessions_total, h.sessions_loaded, h.fraction, h.complete],
      [total, total, 1, true],
      `${m}: the whole day loaded`,
    );
    t.equal(h.to_tick - h.from_tick + 1, total);
    t.equal(h.to_tick, c.live_start_tick - 1);
    t.equal(c.first_recorded_tick, h.from_tick);
    t.equal(c.last_recorded_tick, c.last_closed_tick);
    t.equal(c.last_closed_tick, c.open_tick - 1);
    t.equal(c.last_settled_tick, c.open_tick - 9);
    t.equal(c.recorded_sessions, c.last_recorded_tick - c.first_recorded_tick + 1);
    // The load ran when the recorded day was recorded (RECORDED_DAY_MS, the run's template), and is
    // over: both instants are the recording service's clock's, which stood still, not the database's.
    t.same(
      [h.started_at, h.finished_at],
      [RECORDED_DAY_MS / 1000, RECORDED_DAY_MS / 1000],
      'unix seconds of the service clock',
    );
    const [sql] = await em.execute('select count(*)::int as n from trade where market = ?', [m]);
    t.equal(c.trade_count, sql.n);
    t.ok(c.trade_count > 0);
    t.same(c.trades, { house: sql.n, user: 0 });
    t.same(c.engine, engineIdentity(seed));
  }
  t.equal((await svc.getJson('/api/v1/markets/x1/coverage')).status, 404);
});

t.test(
  'reveal=full with the oracle switch: rejected rows of settled sessions carry counterfactual curves',
  async (t) => {
    const oracle = await sharedRecordedService({ SVC_ORACLE: '1' });
    const open = oracle.services.supervisor.openTick('m45')!;
    const { status, body } = await oracle.getJson(
      `/api/v1/markets/m45/history?from_tick=${open - 12}&to_tick=${open - 1}&reveal=full`,
    );
    t.equal(status, 200);
    t.equal(body.reveal, 'full');
    const plain = (
      await oracle.getJson(`/api/v1/markets/m45/history?from_tick=${open - 12}&to_tick=${open - 1}`)
    ).body;
    let revealed = 0;
    body.rows.forEach((r: any, i: number) => {
      if (r.status === 'rejected' && r.settled) {
        revealed++;
        const c = engineCurve('m45', r.tick, r.key.split('-')[2] * 1, 0);
        t.equal(r.oracle, true);
        t.equal(r.known_up_to_qty, r.max_qty, 'every volume');
        t.same(
          r.profit_curve,
          dollars(c.profit_curve_cents),
          'the counterfactual curve on the same demand',
        );
        t.notOk('profit_curve' in plain.rows[i], 'reveal=house keeps it hidden');
      } else {
        t.same(r, plain.rows[i], 'other rows as with reveal=house');
        t.notOk('oracle' in r);
      }
    });
    t.ok(revealed > 0, `${revealed} rejected rows revealed`);
  },
);
