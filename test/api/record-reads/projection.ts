// GET /markets/{id}/deals/{key}/projection and GET /markets/{id}/projection over HTTP on a started
// service with one day of history: every field against the record (SQL) and a hand computation of
// the fit, the projected path and the cash curve; bounds, 404s and the hypothetical deal.
import t from 'tap';
import { sharedRecordedService } from '../../helpers/service.js';
import { FAMILIES, MARKETS } from '../../../src/engine/index.js';

// The shared service's clock stands at RECORDED_DAY_MS: no session closes while the tests read.
const svc = await sharedRecordedService();
const openOf = (m: string) => svc.services.supervisor.openTick(m)!;
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;

const KEYS = [
  'market',
  'tick',
  'offer_key',
  'cluster',
  'sku_family',
  'history',
  'fit',
  'projection',
  'scenarios',
  'qty',
  'curve',
  'best_qty',
  'realised',
  'samples',
  'params',
  'quoted_velocity',
  'calibration',
  'surcharge',
];
const cents = (x: number) => Math.round(x * 100);
const twoDecimals = (x: number) => typeof x === 'number' && cents(x) / 100 === x;
const near = (a: number, b: number, eps = 1e-5) => Math.abs(a - b) <= eps;

/** The SPEC cash rule in integer cents with the engine's holding convention (held at session start). */
function handPnl(qty: number, path: number[], c: number, p: number, f: number, h: number): number {
  let left = qty,
    rev = 0,
    hold = 0;
  for (const d of path) {
    hold += left * cents(h);
    const sold = Math.min(d, left);
    rev += sold * cents(p);
    left -= sold;
  }
  return (rev - qty * (cents(c) + cents(f)) - hold) / 100;
}

/** Least squares of y on x, as SPEC "Projection" describes it. */
function ols(pts: { x: number; y: number }[]) {
  const n = pts.length,
    mx = pts.reduce((a, p) => a + p.x, 0) / n,
    my = pts.reduce((a, p) => a + p.y, 0) / n;
  let sxx = 0,
    sxy = 0;
  for (const p of pts) {
    sxx += (p.x - mx) ** 2;
    sxy += (p.x - mx) * (p.y - my);
  }
  const slope = sxx ? sxy / sxx : 0;
  return { slope, intercept: my - slope * mx };
}

async function deals(market: string) {
  return (await svc.getJson(`/api/v1/markets/${market}/deals`)).body.deals as any[];
}

/** The current deal whose family has the most settled trades in the default window (a non-trivial answer). */
async function richDeal(market: string) {
  const open = openOf(market);
  const rows = await q(
    `select cluster, count(*)::int n from trade where market = ? and tick between ? and ? and settled group by cluster order by n desc`,
    [market, open - 48, open - 1],
  );
  const ds = await deals(market);
  for (const r of rows) {
    const d = ds.find((x) => x.cluster === r.cluster);
    if (d) return d;
  }
  throw new Error(`no deal of a traded family on ${market}`);
}

async function checkAnswer(
  t: Tap.Test,
  market: string,
  deal: any,
  body: any,
  lookback: number,
  fit: 'trend' | 'mean',
) {
  const open = openOf(market);
  const last = open - 1;
  const spec = MARKETS[market as keyof typeof MARKETS];
  t.same(Object.keys(body).sort(), [...KEYS].sort(), 'exactly the projection fields');
  t.same(
    [body.market, body.tick, body.cluster, body.sku_family],
    [market, open, deal.cluster, deal.sku_family],
  );

  // history: the family's tape rows of the window with active positions, velocity = sold / active
  const tape = await q(
    `select tick::float8 tick, (row->>'sold')::float8 sold, (row->>'active')::float8 active from tape
                         where market = ? and cluster = ? and tick between ? and ? and (row->>'active')::int > 0 order by tick`,
    [market, deal.cluster, last - lookback + 1, last],
  );
  t.same(
    body.history.map((h: any) => [h.tick, h.sold, h.active]),
    tape.map((r) => [r.tick, r.sold, r.active]),
    'history = the family tape rows of the window',
  );
  // Served rounded to 4 decimals: off by at most half of the 4th (33/32 = 1.03125 is served 1.0313), plus float error.
  for (const h of body.history)
    t.ok(
      near(h.velocity, h.sold / h.active, 5e-5 + 1e-12),
      `velocity ${h.velocity} = sold / active`,
    );
  t.ok(body.history.length > 0, `${market}: ${body.history.length} sessions of history`);

  // fit through x = sessions before the last close, extended at x = -2..-9 (the deal sells after its fill)
  const pts = tape.map((r) => ({ x: last - r.tick, y: r.sold / r.active }));
  const f =
    fit === 'trend'
      ? ols(pts)
      : { slope: 0, intercept: pts.reduce((a, p) => a + p.y, 0) / pts.length };
  t.equal(body.fit.kind, fit);
  t.equal(body.fit.points, pts.length);
  t.ok(
    near(body.fit.slope, f.slope) && near(body.fit.intercept, f.intercept),
    `fit ${JSON.stringify(body.fit)} vs ${JSON.stringify(f)}`,
  );
  t.ok(body.fit.r2 >= 0 && body.fit.r2 <= 1);
  if (fit === 'mean') t.equal(body.fit.r2, 0);
  t.equal(body.projection.length, 8);
  body.projection.forEach((v: number, k: number) =>
    t.ok(near(v, Math.max(0, f.intercept + f.slope * -(k + 2)), 2e-6), `projection[${k}] = ${v}`),
  );

  // curve by volume, under the projected path
  const maxQty = deal.max_qty ?? spec.max_qty;
  t.same(
    body.qty,
    Array.from({ length: maxQty }, (_, i) => i + 1),
  );
  for (const k of ['low', 'mid', 'high']) {
    t.equal(body.curve[k].length, maxQty, `curve.${k} has max_qty values`);
    t.ok(body.curve[k].every(twoDecimals), `curve.${k} in cents`);
  }
  const fee = spec.fees.fulfilment_per_unit_cents / 100,
    hold = spec.fees.holding_per_unit_session_cents / 100;
  const price = body.params.list_price,
    cost = body.params.unit_cost;
  t.ok(
    Math.abs(body.curve.mid[0] - handPnl(1, body.projection, cost, price, fee, hold)) <=
      0.005 + 1e-9,
    `mid[0] ${body.curve.mid[0]} hand-checked`,
  );
  t.ok(
    Math.abs(
      body.curve.mid[maxQty - 1] - handPnl(maxQty, body.projection, cost, price, fee, hold),
    ) <=
      0.005 + 1e-9,
    'mid[max_qty-1] hand-checked',
  );
  const lowPath = body.projection.map((v: number) => v * body.scenarios.low_mult);
  t.ok(
    Math.abs(body.curve.low[0] - handPnl(1, lowPath, cost, price, fee, hold)) <= 0.005 + 1e-9,
    'low[0] on the low path',
  );
  for (let i = 0; i < maxQty; i++)
    t.ok(
      body.curve.low[i] <= body.curve.mid[i] && body.curve.mid[i] <= body.curve.high[i],
      `low <= mid <= high at ${i + 1}`,
    );
  const best = Math.max(...body.curve.mid);
  t.equal(
    body.best_qty,
    body.curve.mid.indexOf(best) + 1,
    'best_qty = first argmax of the mid curve',
  );

  // realised and samples from the family's trades in the window
  const trades = await q(
    `select tick::float8 tick, qty, units_sold, sales_by_tick, fee_cents, holding_cents, horizon, settled, sold_out, regime,
                                 realized_pnl_cents::float8 pnl, coalesce(surcharge_cents, 0)::float8 surcharge
                            from trade where market = ? and cluster = ? and tick between ? and ? order by tick desc, id desc`,
    [market, deal.cluster, last - lookback + 1, last],
  );
  const settled = trades.filter((x) => x.settled);
  t.equal(body.realised.length, settled.length, `${settled.length} settled similar deals`);
  body.realised.forEach((r: any, i: number) => {
    const x = settled[i];
    t.same(
      [r.tick, r.qty, r.units_sold, r.pnl, r.sold_out, r.downside_event],
      [x.tick, x.qty, x.units_sold, x.pnl / 100, x.sold_out, x.regime],
    );
    let left = x.qty,
      held = 0;
    for (const s of x.sales_by_tick) {
      held += left * x.holding_cents;
      left -= s;
    }
    const repriced =
      x.units_sold * cents(price) - x.qty * (cents(cost) + x.fee_cents) - held - x.surcharge;
    t.equal(
      r.pnl_repriced,
      repriced / 100,
      "pnl_repriced: same sales path at this deal's cost and price",
    );
  });
  // lost, median and worst per unit (pnl / qty), by hand
  const perUnit = settled.map((x) => x.pnl / x.qty / 100).sort((a, b) => a - b);
  t.equal(body.samples.lost, settled.filter((x) => x.pnl < 0).length, 'lost: settled at a loss');
  if (perUnit.length) {
    const m =
      perUnit.length % 2
        ? perUnit[(perUnit.length - 1) / 2]
        : (perUnit[perUnit.length / 2 - 1] + perUnit[perUnit.length / 2]) / 2;
    t.ok(
      near(body.samples.median_pnl_per_unit, m, 0.005 + 1e-9) &&
        near(body.samples.worst_pnl_per_unit, perUnit[0], 0.005 + 1e-9),
      `median ${m}, worst ${perUnit[0]} per unit`,
    );
  } else t.same([body.samples.median_pnl_per_unit, body.samples.worst_pnl_per_unit], [null, null]);
  // The surcharges a downside event brought, by hand: how often, and the median per unit when it did.
  const hit = settled.filter((x) => x.regime);
  const surchargePerUnit = hit.map((x) => x.surcharge / x.qty / 100).sort((a, b) => a - b);
  t.same(
    [body.surcharge.in_scenarios, body.surcharge.events, body.surcharge.rate],
    [
      false,
      hit.length,
      settled.length ? Math.round((hit.length / settled.length) * 1e4) / 1e4 : null,
    ],
    'surcharge: left out of the scenarios; how often the record had one',
  );
  if (hit.length) {
    const n = surchargePerUnit.length;
    const m =
      n % 2
        ? surchargePerUnit[(n - 1) / 2]
        : (surchargePerUnit[n / 2 - 1] + surchargePerUnit[n / 2]) / 2;
    t.ok(near(body.surcharge.median_per_unit, m, 0.005 + 1e-9), `median surcharge ${m} per unit`);
  } else t.equal(body.surcharge.median_per_unit, null);
  await checkCalibration(t, market, deal.cluster, body, lookback, fit, settled);
  const v = settled.map((x) => x.units_sold / x.horizon).sort((a, b) => a - b);
  const qt = (p: number) => {
    const h = (v.length - 1) * p,
      lo = Math.floor(h);
    return v[lo] + (h - lo) * (v[Math.ceil(h)] - v[lo]);
  };
  t.same(
    [
      body.samples.deals,
      body.samples.settled,
      body.samples.profitable,
      body.samples.downside_events,
      body.samples.sold_out,
    ],
    [
      trades.length,
      settled.length,
      settled.filter((x) => x.pnl > 0).length,
      settled.filter((x) => x.regime).length,
      settled.filter((x) => x.sold_out).length,
    ],
  );
  if (v.length) {
    t.ok(
      near(body.samples.per_deal_velocity_p10, qt(0.1), 1e-4) &&
        near(body.samples.per_deal_velocity_p50, qt(0.5), 1e-4) &&
        near(body.samples.per_deal_velocity_p90, qt(0.9), 1e-4),
      'per-deal velocity quantiles',
    );
  }
  if (body.scenarios.basis === 'per_deal_velocity') {
    t.ok(v.length >= 5);
    t.ok(
      near(body.scenarios.low_mult, Math.min(1, qt(0.1) / qt(0.5)), 1e-4) &&
        near(body.scenarios.high_mult, Math.min(5, Math.max(1, qt(0.9) / qt(0.5))), 1e-4),
      'scenarios from per-deal dispersion',
    );
  } else {
    t.equal(body.scenarios.basis, 'default');
    t.same([body.scenarios.low_mult, body.scenarios.high_mult], [0.5, 1.5]);
  }
  t.same(
    [
      body.params.lookback,
      body.params.fit,
      body.params.horizon,
      body.params.fee,
      body.params.holding,
      body.params.cluster,
      body.params.from_tick,
      body.params.to_tick,
    ],
    [lookback, fit, 8, fee, hold, deal.cluster, last - lookback + 1, last],
  );
}

/**
 * The calibration by hand: each settled deal of the window against the low scenario of a projection
 * of its own session (the tape before it, the deals settled by then), at its own terms. A result
 * within a cent of its low scenario may fall either way of the rounding.
 */
async function checkCalibration(
  t: Tap.Test,
  market: string,
  cluster: number,
  body: any,
  lookback: number,
  fit: 'trend' | 'mean',
  settled: any[],
) {
  const first = body.params.from_tick;
  const tape = await q(
    `select tick::float8 tick, (row->>'sold')::float8 sold, (row->>'active')::float8 active from tape
                         where market = ? and cluster = ? and tick between ? and ? and (row->>'active')::int > 0`,
    [market, cluster, first - lookback, body.params.to_tick],
  );
  const all = await q(
    `select tick::float8 tick, horizon, units_sold from trade where market = ? and cluster = ? and settled and tick between ? and ?`,
    [market, cluster, first - lookback, body.params.to_tick],
  );
  const terms = await q(
    `select tick::float8 tick, qty, unit_cost_cents, list_price_cents, fee_cents, holding_cents, horizon, realized_pnl_cents::float8 pnl
                           from trade where market = ? and cluster = ? and settled and tick between ? and ?`,
    [market, cluster, first, body.params.to_tick],
  );
  t.equal(terms.length, settled.length);
  let surely = 0,
    maybe = 0;
  for (const x of terms) {
    const pts = tape
      .filter((r) => r.tick >= x.tick - lookback && r.tick < x.tick)
      .map((r) => ({ x: x.tick - 1 - r.tick, y: r.sold / r.active }));
    const f = !pts.length
      ? { slope: 0, intercept: 0 }
      : fit === 'trend'
        ? ols(pts)
        : { slope: 0, intercept: pts.reduce((a, p) => a + p.y, 0) / pts.length };
    const v = all
      .filter((y) => y.tick >= x.tick - lookback && y.tick + y.horizon <= x.tick - 1)
      .map((y) => y.units_sold / y.horizon)
      .sort((a, b) => a - b);
    const qt = (p: number) => {
      const h = (v.length - 1) * p,
        lo = Math.floor(h);
      return v[lo] + (h - lo) * (v[Math.ceil(h)] - v[lo]);
    };
    const lowMult =
      v.length >= 5 && qt(0.5) > 0 ? Math.round(Math.min(1, qt(0.1) / qt(0.5)) * 1e4) / 1e4 : 0.5;
    const path = Array.from(
      { length: x.horizon },
      (_, k) => Math.max(0, f.intercept + f.slope * -(k + 2)) * lowMult,
    );
    const low = handPnl(
      x.qty,
      path,
      x.unit_cost_cents / 100,
      x.list_price_cents / 100,
      x.fee_cents / 100,
      x.holding_cents / 100,
    );
    if (x.pnl / 100 < low - 0.011) surely++;
    if (x.pnl / 100 < low + 0.011) maybe++;
  }
  t.equal(
    body.calibration.settled,
    settled.length,
    'calibration: every settled similar deal checked',
  );
  t.ok(
    body.calibration.below_low >= surely && body.calibration.below_low <= maybe,
    `calibration: ${body.calibration.below_low} below the low scenario (by hand ${surely}..${maybe})`,
  );
  t.equal(
    body.calibration.below_low_rate,
    settled.length ? Math.round((body.calibration.below_low / settled.length) * 1e4) / 1e4 : null,
  );
}

t.test(
  'projection of a current deal: every field on m15 and h2, checked against the record',
  async (t) => {
    for (const market of ['m15', 'h2']) {
      const deal = await richDeal(market);
      const r = await svc.getJson(`/api/v1/markets/${market}/deals/${deal.key}/projection`);
      t.equal(r.status, 200);
      t.ok(r.headers.get('etag'), 'ETag');
      await checkAnswer(t, market, deal, r.body, 48, 'trend');
      t.equal(r.body.offer_key, deal.key);
      t.same(
        [
          r.body.params.unit_cost,
          r.body.params.list_price,
          r.body.params.list_price_basis,
          r.body.params.max_qty,
        ],
        [deal.unit_cost, deal.list_price, 'deal', deal.max_qty],
      );
      t.equal(
        r.body.quoted_velocity,
        market === 'm15' ? deal.sales_velocity : null,
        "quoted_velocity: the deal's on m15, null on h2",
      );
      t.ok(r.body.realised.length > 0, `${market}: realised similar deals`);
    }
    // a few more deals: shape and curve length only
    for (const d of (await deals('m15')).slice(0, 5)) {
      const r = await svc.getJson(
        `/api/v1/markets/m15/deals/${d.key}/projection?fit=mean&lookback=8`,
      );
      t.equal(r.status, 200);
      t.equal(r.body.curve.mid.length, d.max_qty);
      t.equal(r.body.fit.kind, 'mean');
      t.ok(r.body.history.every((h: any) => h.tick >= openOf('m15') - 8));
    }
  },
);

t.test('fit=mean with a short lookback', async (t) => {
  const deal = await richDeal('m15');
  const r = await svc.getJson(
    `/api/v1/markets/m15/deals/${deal.key}/projection?fit=mean&lookback=12`,
  );
  t.equal(r.status, 200);
  await checkAnswer(t, 'm15', deal, r.body, 12, 'mean');
  t.ok(
    r.body.projection.every((v: number) => v === r.body.projection[0]),
    'a flat projected path',
  );
});

t.test('404 for an unknown market, an unknown key and a key of a closed session', async (t) => {
  const [old] = await q(
    `select offer_key from menu_row where market = 'm15' and tick = ? limit 1`,
    [openOf('m15') - 1],
  );
  for (const path of [
    '/api/v1/markets/x9/deals/k/projection',
    '/api/v1/markets/m15/deals/nope/projection',
    `/api/v1/markets/m15/deals/${old.offer_key}/projection`,
  ]) {
    const r = await svc.getJson(path);
    t.equal(r.status, 404, path);
    t.type(r.body.detail, 'string');
  }
});

t.test('query bounds answer 422 at the parameter', async (t) => {
  const d = (await deals('m15'))[0];
  for (const [qs, field] of [
    ['lookback=7', 'lookback'],
    ['lookback=401', 'lookback'],
    ['lookback=x', 'lookback'],
    ['fit=cubic', 'fit'],
  ]) {
    const r = await svc.getJson(`/api/v1/markets/m15/deals/${d.key}/projection?${qs}`);
    t.equal(r.status, 422, qs);
    t.same(r.body.detail[0].loc, ['query', field], `${qs}: loc`);
  }
  for (const qs of ['lookback=8', 'lookback=400'])
    t.equal(
      (await svc.getJson(`/api/v1/markets/m15/deals/${d.key}/projection?${qs}`)).status,
      200,
      qs,
    );
});

t.test('hypothetical deal of a family at a unit cost', async (t) => {
  const deal = await richDeal('m15');
  const listed = (await deals('m15')).filter((d) => d.cluster === deal.cluster);
  const mean =
    Math.round(listed.reduce((a, d) => a + cents(d.list_price), 0) / listed.length) / 100;
  const r = await svc.getJson(
    `/api/v1/markets/m15/projection?cluster=${deal.cluster}&unit_cost=${deal.unit_cost}`,
  );
  t.equal(r.status, 200);
  await checkAnswer(t, 'm15', { ...deal, max_qty: undefined }, r.body, 48, 'trend');
  t.same(
    [
      r.body.offer_key,
      r.body.params.list_price,
      r.body.params.list_price_basis,
      r.body.params.max_qty,
    ],
    [null, mean, 'menu_mean', 20],
  );
  t.equal(r.body.quoted_velocity, deal.sales_velocity, "the family's quoted velocity");
  t.equal(r.body.curve.mid.length, 20, "max_qty = the market's");
  // the same family and cost as the deal: the same history, fit and path as the deal's projection
  const real = (await svc.getJson(`/api/v1/markets/m15/deals/${deal.key}/projection`)).body;
  t.same(
    [r.body.history, r.body.fit, r.body.projection, r.body.samples],
    [real.history, real.fit, real.projection, real.samples],
  );

  // h2: ranking market, quoted_velocity null
  const h = await richDeal('h2');
  const rh = await svc.getJson(
    `/api/v1/markets/h2/projection?cluster=${h.cluster}&unit_cost=12.5&fit=mean&lookback=20`,
  );
  t.equal(rh.status, 200);
  await checkAnswer(t, 'h2', { ...h, max_qty: undefined }, rh.body, 20, 'mean');
  t.equal(rh.body.quoted_velocity, null);
  t.equal(rh.body.params.unit_cost, 12.5);

  // a family absent from the current menu: its latest listed session on record sets the price
  const onMenu = new Set((await deals('m15')).map((d) => d.cluster));
  const absent = FAMILIES.find((f) => !onMenu.has(f.cluster));
  if (absent) {
    const [rec] = await q(
      `select round(avg(list_price_cents))::float8 p from menu_row where market = 'm15' and cluster = ?
                            and tick = (select max(tick) from menu_row where market = 'm15' and cluster = ?)`,
      [absent.cluster, absent.cluster],
    );
    const ra = await svc.getJson(
      `/api/v1/markets/m15/projection?cluster=${absent.cluster}&unit_cost=3`,
    );
    t.equal(ra.status, 200);
    t.same(
      [ra.body.params.list_price, ra.body.params.list_price_basis, ra.body.quoted_velocity],
      [rec.p / 100, 'record_mean', null],
    );
  } else t.comment('every family is on the m15 menu: record_mean fallback not exercised');
});

t.test('hypothetical: required parameters, bounds and unknown cluster', async (t) => {
  const cases: [string, (string | number)[]][] = [
    ['unit_cost=5', ['query', 'cluster']],
    ['cluster=1', ['query', 'unit_cost']],
    ['cluster=-1&unit_cost=5', ['query', 'cluster']],
    ['cluster=1&unit_cost=0', ['query', 'unit_cost']],
    ['cluster=1&unit_cost=abc', ['query', 'unit_cost']],
    ['cluster=1&unit_cost=5&lookback=7', ['query', 'lookback']],
    ['cluster=1&unit_cost=5&lookback=401', ['query', 'lookback']],
  ];
  for (const [qs, loc] of cases) {
    const r = await svc.getJson(`/api/v1/markets/m15/projection?${qs}`);
    t.equal(r.status, 422, qs);
    t.same(r.body.detail[0].loc, loc, `${qs}: loc`);
  }
  for (const path of [
    `/api/v1/markets/m15/projection?cluster=${FAMILIES.length}&unit_cost=5`,
    '/api/v1/markets/m99/projection?cluster=1&unit_cost=5',
  ]) {
    const r = await svc.getJson(path);
    t.equal(r.status, 404, path);
    t.type(r.body.detail, 'string');
  }
});
