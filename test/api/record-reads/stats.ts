// GET /markets/{id}/stats over HTTP on one day of recorded history, with and without the oracle.
import t from 'tap';
import { sharedRecordedService } from '../../helpers/service.js';
import { dealProfitCurve, sessionRows, type MarketId } from '../../../src/engine/index.js';

const svc = await sharedRecordedService();

const sql = (q: string, p: unknown[] = []) => svc.orm.em.fork().execute(q, p);
const open = (m: string) => svc.services.supervisor.openTick(m)!;
const stats = (s: typeof svc, m: string, qs: string) =>
  s.getJson(`/api/v1/markets/${m}/stats?${qs}`);
const cents = (x: number) => Math.round(x * 100);
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

const FIELDS = [
  'tick',
  'menu_n',
  'observed_n',
  'observed_rate',
  'house_n',
  'house_rate',
  'house_pnl',
  'house_pnl_mean',
  'house_roi',
  'user_n',
  'user_pnl',
  'observed_profitable_rate',
  'regime_rate',
  'censored_rate',
  'mean_margin',
  'mean_cost',
  'mean_sv',
  'families',
];
const FAMILY = [
  'sku_family',
  'n',
  'observed_n',
  'units',
  'pnl',
  'profitable_rate',
  'regime_rate',
  'censored_rate',
];
const ORACLE = [
  'rows',
  'rejected_n',
  'best_pnl',
  'best_pnl_observed',
  'best_pnl_rejected',
  'best_qty_mean',
  'profitable_rate_q1',
  'observed_profitable_rate_q1',
  'rejected_profitable_rate_q1',
  'regime_rate',
  'demand_mean',
];

t.test(
  'one row per settled recorded session, every field per market kind, no oracle by default',
  async (t) => {
    for (const market of ['m15', 'h2']) {
      const o = open(market);
      const { status, body } = await stats(svc, market, `from_tick=${o - 30}&to_tick=${o}`);
      t.equal(status, 200);
      t.same([body.market, body.from_tick, body.to_tick], [market, o - 30, o]);
      const settled = (
        await sql(
          'select tick::float8 as tick from market_session where market = ? and recorded and tick between ? and ? order by tick',
          [market, o - 30, o - 9],
        )
      ).map((r) => r.tick);
      t.ok(settled.length > 0);
      t.same(
        body.rows.map((r: any) => r.tick),
        settled,
        `${market}: settled sessions only`,
      );
      for (const r of body.rows) {
        t.same(Object.keys(r), FIELDS, `${market} ${r.tick}: exactly the stats fields, no oracle`);
        if (market === 'm15')
          t.ok(
            r.mean_sv === null ? r.observed_n === 0 : r.mean_sv > 0,
            'mean_sv on a velocity market',
          );
        else t.equal(r.mean_sv, null, 'mean_sv null on a ranking market');
        for (const f of Object.values(r.families) as any[]) t.same(Object.keys(f), FAMILY);
      }
    }
  },
);

t.test('figures equal the trade and menu_row tables', async (t) => {
  const o = open('m15');
  const { body } = await stats(svc, 'm15', `from_tick=${o - 40}&to_tick=${o - 9}`);
  t.equal(body.rows.length, 32);
  for (const r of body.rows) {
    const [tr] = await sql(
      `select count(*)::int as n, coalesce(sum(realized_pnl_cents), 0)::float8 as pnl, coalesce(sum(cost_basis_cents), 0)::float8 as cost,
              count(*) filter (where realized_pnl_cents > 0)::int as profitable, count(*) filter (where sold_out)::int as sold_out,
              count(*) filter (where regime)::int as regime,
              coalesce(avg(m.unit_cost_cents), 0)::float8 as mean_cost, avg((m.deal->>'sales_velocity')::float8) as sv
         from trade t join menu_row m using (market, tick, idx) where t.market = 'm15' and t.tick = ? and t.actor = 'house'`,
      [r.tick],
    );
    const [menu] = await sql(
      `select count(*)::int as n from menu_row where market = 'm15' and tick = ?`,
      [r.tick],
    );
    t.equal(r.menu_n, menu.n);
    // Only the desk trades in this record: observed rows = desk trades.
    t.same(
      [r.observed_n, r.house_n, r.user_n, r.user_pnl],
      [tr.n, tr.n, 0, 0],
      `${r.tick}: counts`,
    );
    t.equal(cents(r.house_pnl), tr.pnl, `${r.tick}: house_pnl = SQL sum`);
    t.equal(r.observed_rate, r4(tr.n / menu.n));
    t.equal(r.house_rate, r.observed_rate);
    if (tr.n === 0) {
      t.same(
        [r.house_pnl_mean, r.house_roi, r.censored_rate, r.mean_cost, r.mean_sv, r.families],
        [null, null, null, null, null, {}],
      );
      continue;
    }
    t.equal(r.house_pnl_mean, Math.round(tr.pnl / tr.n) / 100);
    t.equal(r.house_roi, r4(tr.pnl / tr.cost), 'roi = pnl / cost basis');
    t.equal(r.observed_profitable_rate, r4(tr.profitable / tr.n));
    t.equal(r.censored_rate, r4(tr.sold_out / tr.n), 'one trade per row: censored = sold out');
    t.equal(r.regime_rate, r4(tr.regime / tr.n));
    t.equal(r.mean_cost, Math.round(tr.mean_cost) / 100);
    // The service averages in floating point, SQL in numeric: a mean on a rounding boundary (x.xxxx5)
    // may round either way, so the served 4 decimals are checked against the exact mean.
    t.ok(
      Math.abs(r.mean_sv - tr.sv) <= 0.00005 + 1e-9,
      `mean_sv ${r.mean_sv} is ${tr.sv} to 4 decimals`,
    );
    const fams = Object.values(r.families) as any[];
    t.equal(
      fams.reduce((s, f) => s + f.n, 0),
      r.observed_n,
      'families split the trades',
    );
    t.equal(
      fams.reduce((s, f) => s + cents(f.pnl), 0),
      cents(r.house_pnl),
      'families split the result',
    );
    const clusters = (
      await sql(
        `select distinct cluster from trade where market = 'm15' and tick = ? order by cluster`,
        [r.tick],
      )
    ).map((c) => String(c.cluster));
    t.same(Object.keys(r.families).sort(), clusters.sort(), 'keyed by the clusters traded');
  }
});

t.test('ranges: unsettled only is empty, cap 400, reversed, unknown market', async (t) => {
  const o = open('m15');
  const live = await stats(svc, 'm15', `from_tick=${o - 8}&to_tick=${o}`);
  t.same([live.status, live.body.rows], [200, []]);
  t.equal((await stats(svc, 'm15', `from_tick=${o - 399}&to_tick=${o}`)).status, 200);
  const over = await stats(svc, 'm15', `from_tick=${o - 400}&to_tick=${o}`);
  t.equal(over.status, 422);
  t.same(over.body.detail[0].loc, ['query', 'to_tick']);
  const reversed = await stats(svc, 'm15', `from_tick=${o}&to_tick=${o - 5}`);
  t.same([reversed.status, reversed.body.detail[0].loc], [422, ['query', 'to_tick']]);
  t.equal((await stats(svc, 'm15', `from_tick=${o - 5}`)).status, 422, 'to_tick required');
  t.equal((await stats(svc, 'zz', `from_tick=${o - 5}&to_tick=${o}`)).status, 404);
  const settled = await stats(svc, 'm15', `from_tick=${o - 20}&to_tick=${o - 9}`);
  t.match(settled.headers.get('cache-control'), /immutable/);
});

t.test('with SVC_ORACLE=1 every row carries the engine outcomes of all menu rows', async (t) => {
  const osvc = await sharedRecordedService({ SVC_ORACLE: '1' });
  const osql = (q: string, p: unknown[] = []) => osvc.orm.em.fork().execute(q, p);
  for (const market of ['m15', 'h2'] as MarketId[]) {
    const o = osvc.services.supervisor.openTick(market)!;
    const { body } = await stats(osvc, market, `from_tick=${o - 12}&to_tick=${o - 9}`);
    t.ok(body.rows.length > 0);
    for (const r of body.rows) {
      t.same(Object.keys(r), [...FIELDS, 'oracle']);
      t.same(Object.keys(r.oracle), ORACLE);
      t.equal(r.oracle.rows, r.menu_n);
      t.equal(r.oracle.rejected_n, r.menu_n - r.observed_n);
      t.equal(
        cents(r.oracle.best_pnl_observed) + cents(r.oracle.best_pnl_rejected),
        cents(r.oracle.best_pnl),
      );
      t.ok(r.oracle.best_pnl_observed >= r.house_pnl, 'hindsight beats the desk on its own rows');
      // The same figures straight from the engine.
      const executed = new Set(
        (await osql('select idx from trade where market = ? and tick = ?', [market, r.tick])).map(
          (x) => x.idx,
        ),
      );
      let best = 0;
      let rejected = 0;
      let rejectedProfitable = 0;
      sessionRows(osvc.config.seed, market, r.tick).forEach(({ deal, inputs }, idx) => {
        const curve = dealProfitCurve(market, deal, inputs, 0).profit_curve_cents as number[];
        best += Math.max(0, ...curve);
        if (!executed.has(idx)) {
          rejected++;
          rejectedProfitable += curve[0] > 0 ? 1 : 0;
        }
      });
      t.equal(cents(r.oracle.best_pnl), best, `${market} ${r.tick}: best_pnl from the engine`);
      t.equal(r.oracle.rejected_profitable_rate_q1, r4(rejectedProfitable / rejected));
    }
  }
  // The oracle does not change the recorded figures.
  const o = open('m15');
  const plain = (await stats(svc, 'm15', `from_tick=${o - 12}&to_tick=${o - 9}`)).body.rows;
  const withOracle = (await stats(osvc, 'm15', `from_tick=${o - 12}&to_tick=${o - 9}`)).body.rows;
  t.same(
    withOracle.map(({ oracle: _o, ...r }: any) => r),
    plain,
  );
});
