// GET /markets/{id}/families and /families/{cluster}/signals over HTTP on one day of history.
import t from 'tap';
import { sharedRecordedService } from '../../helpers/service.js';

const svc = await sharedRecordedService();

const sql = (q: string, p: unknown[] = []) => svc.orm.em.fork().execute(q, p);
const open = (m: string) => svc.services.supervisor.openTick(m)!;
const families = (m: string, qs = '') =>
  svc.getJson(`/api/v1/markets/${m}/families${qs ? `?${qs}` : ''}`);
const signals = (m: string, c: number | string, qs = '') =>
  svc.getJson(`/api/v1/markets/${m}/families/${c}/signals${qs ? `?${qs}` : ''}`);
const cents = (x: number) => Math.round(x * 100);
const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

const HEAD = [
  'cluster',
  'sku_family',
  'deals',
  'house_bids',
  'mean_unit_cost',
  'mean_list_price',
  'mean_margin',
];
const VELOCITY = ['sales_velocity', 'inverse_sv'];
const RANKING = ['sales_rank', 'sales_rank_avg', 'rank_drops', 'rank_drops_long', 'nsellers'];
const TAIL = [
  'executed',
  'settled',
  'mean_pnl',
  'profitable_rate',
  'downside_rate',
  'sold_out_rate',
  'units_sold_per_session',
];

t.test('families of the current menu with its quotes, per market kind', async (t) => {
  for (const market of ['m15', 'h2']) {
    const o = open(market);
    const { status, body } = await families(market);
    t.equal(status, 200);
    t.same([body.market, body.tick, body.window], [market, o, 48]);
    const deals = (await svc.getJson(`/api/v1/markets/${market}/deals`)).body.deals as any[];
    const clusters = [...new Set(deals.map((d) => d.cluster))].sort((a, b) => a - b);
    t.same(
      body.families.map((f: any) => f.cluster),
      clusters,
      `${market}: every family on the menu, by cluster`,
    );
    const quotes = market === 'm15' ? VELOCITY : RANKING;
    for (const f of body.families) {
      t.same(
        Object.keys(f),
        [...HEAD, ...quotes, ...TAIL],
        `${market} ${f.cluster}: exactly the family fields`,
      );
      const mine = deals.filter((d) => d.cluster === f.cluster);
      t.equal(f.sku_family, mine[0].sku_family);
      t.equal(f.deals, mine.length);
      t.equal(f.house_bids, mine.filter((d) => d.house_accepted).length);
      const mean = (k: string) => mine.reduce((s, d) => s + cents(d[k]), 0) / mine.length;
      t.equal(cents(f.mean_unit_cost), Math.round(mean('unit_cost')), 'mean unit_cost to the cent');
      t.equal(cents(f.mean_list_price), Math.round(mean('list_price')));
      t.equal(cents(f.mean_margin), Math.round(mean('margin')));
      for (const q of quotes) t.equal(f[q], mine[0][q], `${q} is the family quote of the session`);
    }
  }
});

t.test('recorded outcomes over the window equal the trade and tape tables', async (t) => {
  const o = open('m15');
  const { body } = await families('m15', 'window=30');
  t.equal(body.window, 30);
  t.equal(body.sessions, 30);
  let traded = 0;
  for (const f of body.families) {
    const [tr] = await sql(
      `select count(*)::int as n, count(*) filter (where settled)::int as settled, avg(realized_pnl_cents)::float8 as pnl,
              count(*) filter (where realized_pnl_cents > 0)::int as profitable, count(*) filter (where regime)::int as regime,
              count(*) filter (where sold_out)::int as sold_out
         from trade where market = 'm15' and cluster = ? and tick between ? and ?`,
      [f.cluster, o - 30, o - 1],
    );
    const [tape] = await sql(
      `select coalesce(sum((row->>'sold')::int), 0)::int as sold from tape where market = 'm15' and cluster = ? and tick between ? and ?`,
      [f.cluster, o - 30, o - 1],
    );
    t.same([f.executed, f.settled], [tr.n, tr.settled], `${f.cluster}: trades in the window`);
    t.ok(f.settled <= f.executed);
    if (tr.settled) {
      traded++;
      t.equal(cents(f.mean_pnl), Math.round(tr.pnl), `${f.cluster}: mean realized_pnl`);
      t.equal(f.profitable_rate, r4(tr.profitable / tr.settled));
      t.equal(f.downside_rate, r4(tr.regime / tr.settled));
      t.equal(f.sold_out_rate, r4(tr.sold_out / tr.settled));
    } else
      t.same(
        [f.mean_pnl, f.profitable_rate, f.downside_rate, f.sold_out_rate],
        [null, null, null, null],
      );
    t.equal(f.units_sold_per_session, r4(tape.sold / 30), `${f.cluster}: units sold per session`);
  }
  t.ok(traded > 0, 'some family has settled trades in the window');
});

t.test('window bounds', async (t) => {
  for (const w of ['0', '401', 'x']) {
    const r = await families('m15', `window=${w}`);
    t.equal(r.status, 422, `window=${w}`);
    t.same(r.body.detail[0].loc, ['query', 'window']);
  }
  const one = await families('m15', 'window=1');
  t.same([one.status, one.body.window, one.body.sessions], [200, 1, 1]);
  const max = await families('m15', 'window=400');
  t.same(
    [max.status, max.body.sessions],
    [200, 96],
    'a window beyond the record counts the recorded sessions',
  );
  t.equal((await families('nope')).status, 404);
});

t.test('signals: velocity markets and unknown clusters answer 404', async (t) => {
  for (const m of ['m15', 'm45']) {
    const r = await signals(m, 0);
    t.equal(r.status, 404, m);
    t.type(r.body.detail, 'string');
  }
  t.equal((await signals('h2', 999)).status, 404, 'unknown cluster');
  t.equal((await signals('zz', 0)).status, 404, 'unknown market');
  const neg = await signals('h2', -1);
  t.same([neg.status, neg.body.detail[0].loc], [422, ['path', 'cluster']]);
});

t.test(
  'signals on ranking markets: last 120 sessions up to the open one, equal to the menus',
  async (t) => {
    for (const market of ['h2', 'h10']) {
      const o = open(market);
      const deals = (await svc.getJson(`/api/v1/markets/${market}/deals`)).body.deals as any[];
      const deal = deals[0];
      const { status, body } = await signals(market, deal.cluster);
      t.equal(status, 200);
      t.same(
        [body.market, body.cluster, body.sku_family, body.from_tick, body.to_tick],
        [market, deal.cluster, deal.sku_family, o - 119, o],
      );
      t.equal(body.rows.length, 120);
      t.same(
        body.rows.map((r: any) => r.tick),
        Array.from({ length: 120 }, (_, i) => o - 119 + i),
      );
      for (const r of body.rows)
        t.same(Object.keys(r), ['tick', 'sales_rank', 'rank_drops_prev', 'nsellers']);
      const last = body.rows.at(-1);
      t.same(
        [last.sales_rank, last.rank_drops_prev, last.nsellers],
        [deal.sales_rank, deal.rank_drops, deal.nsellers],
        'the open session row = the current deal quotes',
      );
      // Closed sessions: the recorded menus quoted the same signals.
      const past = await sql(
        `select distinct on (tick) tick::float8 as tick, deal from menu_row where market = ? and cluster = ? and tick between ? and ? order by tick, idx`,
        [market, deal.cluster, o - 119, o - 1],
      );
      t.ok(past.length > 0);
      const byTick = new Map(body.rows.map((r: any) => [r.tick, r]));
      for (const p of past) {
        const r: any = byTick.get(p.tick);
        t.same(
          [r.sales_rank, r.rank_drops_prev, r.nsellers],
          [p.deal.sales_rank, p.deal.rank_drops, p.deal.nsellers],
          `${market} ${p.tick}`,
        );
      }
    }
  },
);

t.test('signals ranges: explicit, clamped to the open session, capped at 2000', async (t) => {
  const o = open('h2');
  const r = await signals('h2', 1, `from_tick=${o - 9}&to_tick=${o - 5}`);
  t.same(
    r.body.rows.map((x: any) => x.tick),
    [o - 9, o - 8, o - 7, o - 6, o - 5],
  );
  t.match(r.headers.get('cache-control'), /immutable/, 'closed sessions never change');
  const beyond = await signals('h2', 1, `from_tick=${o - 2}&to_tick=${o + 50}`);
  t.same([beyond.body.to_tick, beyond.body.rows.length], [o, 3], 'nothing after the open session');
  t.equal((await signals('h2', 1, `from_tick=${o - 1999}&to_tick=${o}`)).body.rows.length, 2000);
  const over = await signals('h2', 1, `from_tick=${o - 2000}&to_tick=${o}`);
  t.same([over.status, over.body.detail[0].loc], [422, ['query', 'to_tick']]);
  const reversed = await signals('h2', 1, `from_tick=${o}&to_tick=${o - 3}`);
  t.same([reversed.status, reversed.body.detail[0].loc], [422, ['query', 'to_tick']]);
  const onlyFrom = await signals('h2', 1, `from_tick=${o - 3}`);
  t.same(
    onlyFrom.body.rows.map((x: any) => x.tick),
    [o - 3, o - 2, o - 1, o],
    'to_tick defaults to the open session',
  );
});
