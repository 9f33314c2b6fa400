// GET /markets/{id}/trades over HTTP on a started service with one day of history, plus holders'
// trades written straight into the record before anything is read (as the fill at the close of their
// settled session did): actor filter, account_id, paging, order, SQL sums, and how a holder's fill
// makes a history row observed.
import t from 'tap';
import {
  dealMarketPath,
  dealProfitCurve,
  dealOutcomeInputs,
  menu,
  MARKETS,
  type MarketId,
} from '../../src/engine/index.js';
import { holderTrade as writeHolderTrade } from '../helpers/holder-trades.js';
import { RECORDED_DAY_MS, startRecordedService } from '../helpers/service.js';

// A frozen clock: no session closes while the test compares answers about the same range.
const frozen = RECORDED_DAY_MS;
const svc = await startRecordedService(t, {}, { realMs: () => frozen });
const seed = svc.config.seed;
const em = () => svc.orm.em.fork();
const cents = (x: number) => Math.round(x * 100);
const trades = (m: string, qs: string) => svc.getJson(`/api/v1/markets/${m}/trades?${qs}`);
const history = async (m: string, qs: string) =>
  (await svc.getJson(`/api/v1/markets/${m}/history?${qs}`)).body;
const openOf = (m: MarketId) => svc.services.supervisor.openTick(m)!;
const holderTrade = (m: MarketId, tick: number, idx: number, qty: number, account: number) =>
  writeHolderTrade(em(), seed, m, tick, idx, qty, account, svc.services.clock.realNow());

// The holders' fills, in settled sessions, chosen from the engine's menus: a row the house
// rejected, and one it executed below max_qty (the holder buys all of it).
const fills = (() => {
  const open = openOf('m15');
  const at = (pick: (d: ReturnType<typeof menu>[number]) => boolean) => {
    for (let tick = open - 30; tick <= open - 20; tick++) {
      const idx = menu(seed, 'm15', tick).findIndex(pick);
      if (idx >= 0) return { tick, idx, deal: menu(seed, 'm15', tick)[idx] };
    }
    throw new Error('no such row');
  };
  const h2open = openOf('h2');
  const h2tick = h2open - 10;
  return {
    from: open - 30,
    to: open - 20,
    rejected: at((d) => !d.house_accepted),
    house: at((d) => d.house_accepted && d.house_qty < d.max_qty),
    h2: { tick: h2tick, idx: menu(seed, 'h2', h2tick).findIndex((d) => !d.house_accepted) },
  };
})();
const u1 = await holderTrade('m15', fills.rejected.tick, fills.rejected.idx, 2, 41);
const u2 = await holderTrade(
  'm15',
  fills.house.tick,
  fills.house.idx,
  fills.house.deal.max_qty,
  42,
);
await holderTrade('h2', fills.h2.tick, fills.h2.idx, 1, 43);

t.test(
  'every trade of a range in (tick, id) order, with SQL-exact sums; unsettled trades revealed so far',
  async (t) => {
    for (const m of ['m15', 'h2'] as MarketId[]) {
      const open = openOf(m);
      const from = open - 40,
        to = open + 5;
      const { status, body } = await trades(m, `from_tick=${from}&to_tick=${to}`);
      t.equal(status, 200);
      t.same(Object.keys(body).sort(), [
        'actor',
        'from_tick',
        'last_closed',
        'last_settled',
        'limit',
        'market',
        'offset',
        'to_tick',
        'total',
        'trades',
      ]);
      t.same(
        [body.market, body.from_tick, body.to_tick, body.actor, body.limit, body.offset],
        [m, from, to, null, 2000, 0],
        'defaults',
      );
      const [sql] = await em().execute(
        `select count(*)::int as n, coalesce(sum(realized_pnl_cents), 0)::float8 as pnl, coalesce(sum(revenue_cents), 0)::float8 as revenue,
              count(*) filter (where settled)::int as settled
         from trade where market = ? and tick between ? and ?`,
        [m, from, body.last_closed],
      );
      t.ok(sql.n > 0);
      t.equal(body.total, sql.n);
      t.equal(body.trades.length, sql.n);
      const served = body.trades as any[];
      t.equal(
        served.reduce((s, x) => s + cents(x.realized_pnl ?? 0), 0),
        sql.pnl,
        'realized_pnl sums to the record',
      );
      t.equal(
        served.reduce((s, x) => s + cents(x.revenue_so_far), 0),
        sql.revenue,
      );
      t.equal(served.filter((x) => x.settled).length, sql.settled);
      for (let i = 1; i < served.length; i++) {
        const [a, b] = [served[i - 1], served[i]];
        t.ok(a.tick < b.tick || (a.tick === b.tick && a.id < b.id), 'ordered by tick then id');
      }
      for (const x of served) {
        t.ok(x.tick <= body.last_closed);
        t.equal(x.market, m);
        t.equal(x.settled, x.tick <= body.last_settled);
        t.equal(x.revealed_ticks, Math.min(8, body.last_closed - x.tick));
        t.equal(x.sales_by_tick.length, x.revealed_ticks);
        t.equal('realized_pnl' in x, x.settled, 'realized_pnl only once settled');
        t.equal('sales_velocity' in x, MARKETS[m].quotes_velocity);
        t.equal('sales_rank' in x, !MARKETS[m].quotes_velocity);
        if (!MARKETS[m].quotes_velocity) {
          const path = dealMarketPath(
            seed,
            m,
            menu(seed, m, x.tick)[Number(x.offer_key.split('-')[2])],
          );
          t.same(
            x.price_by_tick,
            path.price_by_tick_cents.slice(0, x.revealed_ticks).map((c) => c / 100),
            'price path revealed session by session',
          );
          t.same(x.nsellers_by_tick, path.nsellers_by_tick.slice(0, x.revealed_ticks));
        }
        if (x.settled) {
          t.equal(
            cents(x.realized_pnl),
            cents(x.revenue_so_far) -
              cents(x.cost_basis) -
              cents(x.holding_cost_so_far) -
              cents(x.surcharge),
          );
        }
      }
      t.ok(
        served.some((x) => !x.settled) && served.some((x) => x.settled),
        'both settled and open trades',
      );
    }
  },
);

t.test(
  "holders' trades: actor filter, account_id, and the history rows they execute",
  async (t) => {
    const m = 'm15';
    const { from, to } = fills;
    const rows = (await history(m, `from_tick=${from}&to_tick=${to}`)).rows;
    const rejected = rows.find((r: any) => r.key === fills.rejected.deal.key);
    const house = rows.find((r: any) => r.key === fills.house.deal.key);
    const idxOf = (r: any) => Number(r.key.split('-')[2]);
    const bigger = house.max_qty;
    t.equal(rejected.house_accepted, false);
    t.ok(house.house_accepted && house.house_qty < house.max_qty);

    const all = (await trades(m, `from_tick=${from}&to_tick=${to}`)).body;
    const users = (await trades(m, `from_tick=${from}&to_tick=${to}&actor=user`)).body;
    const desk = (await trades(m, `from_tick=${from}&to_tick=${to}&actor=house`)).body;
    t.equal(users.actor, 'user');
    t.equal(users.total, 2);
    t.equal(desk.total + users.total, all.total);
    t.ok(
      desk.trades.every(
        (x: any) => x.actor === 'house' && !('account_id' in x) && x.position_id === null,
      ),
      'house trades carry no account_id',
    );
    t.same(users.trades.map((x: any) => x.id).sort(), [u1, u2].sort());
    for (const x of users.trades) {
      t.equal(x.actor, 'user');
      t.equal(x.position_id, x.account_id * 10);
      t.same(Object.keys(x).slice(0, 8), [
        'id',
        'market',
        'tick',
        'offer_key',
        'cluster',
        'actor',
        'account_id',
        'position_id',
      ]);
      t.equal(
        cents(x.realized_pnl),
        cents(x.revenue_so_far) -
          cents(x.cost_basis) -
          cents(x.holding_cost_so_far) -
          cents(x.surcharge),
      );
    }

    const r1 = rejected;
    t.equal(r1.status, 'observed', "a holder's fill makes a rejected row observed");
    t.same(
      r1.trades.map((x: any) => [x.id, x.actor, x.account_id, x.qty]),
      [[u1, 'user', 41, 2]],
    );
    const c1 = dealProfitCurve(
      m,
      menu(seed, m, r1.tick)[idxOf(r1)],
      dealOutcomeInputs(seed, m, r1.tick, idxOf(r1)),
      2,
    );
    t.same(
      r1.profit_curve,
      c1.profit_curve_cents.map((x) => (x === null ? null : x / 100)),
    );
    t.equal(r1.profit_curve[1], r1.trades[0].realized_pnl);
    t.notOk('house_profit' in r1 || 'house_units_sold' in r1, 'no desk figures without the desk');
    const r2 = house;
    t.same(
      r2.trades.map((x: any) => x.actor),
      ['house', 'user'],
      'trades of a row in id order',
    );
    t.equal(r2.house_profit, r2.trades[0].realized_pnl, "house_profit is the house trade's");
    t.equal(
      r2.known_up_to_qty,
      r2.max_qty,
      'censoring judged at the largest executed volume (the whole max_qty here)',
    );
    const c2 = dealProfitCurve(
      m,
      menu(seed, m, r2.tick)[idxOf(r2)],
      dealOutcomeInputs(seed, m, r2.tick, idxOf(r2)),
      bigger,
    );
    t.same(
      r2.profit_curve,
      c2.profit_curve_cents.map((x) => (x === null ? null : x / 100)),
    );
    t.equal(r2.profit_curve[bigger - 1], r2.trades[1].realized_pnl);
    t.equal(r2.profit_curve[house.house_qty - 1], r2.trades[0].realized_pnl);

    const cov = (await svc.getJson(`/api/v1/markets/${m}/coverage`)).body;
    t.same(cov.trades.user, 2);

    // A ranking market's holder trade carries the deal's ranking fields and the revealed paths.
    const h2row = (await history('h2', `from_tick=${fills.h2.tick}&to_tick=${fills.h2.tick}`)).rows[
      fills.h2.idx
    ];
    const h2 = (await trades('h2', `from_tick=${h2row.tick}&to_tick=${h2row.tick}&actor=user`)).body
      .trades[0];
    for (const f of ['sales_rank', 'sales_rank_avg', 'rank_drops', 'rank_drops_long', 'nsellers'])
      t.equal(h2[f], h2row[f], f);
    t.notOk('sales_velocity' in h2);
    t.equal(h2.price_by_tick.length, 8);
    t.equal(h2.account_id, 43);
  },
);

t.test('paging', async (t) => {
  const open = openOf('m45');
  const qs = `from_tick=${open - 30}&to_tick=${open - 1}`;
  const all = (await trades('m45', qs)).body;
  t.ok(all.total > 10);
  const page = (await trades('m45', `${qs}&limit=5&offset=3`)).body;
  t.same([page.limit, page.offset, page.total], [5, 3, all.total]);
  t.same(page.trades, all.trades.slice(3, 8));
  const tail = (await trades('m45', `${qs}&limit=10000&offset=${all.total - 2}`)).body;
  t.same(tail.trades, all.trades.slice(-2));
  const past = (await trades('m45', `${qs}&offset=${all.total + 5}`)).body;
  t.same([past.trades, past.total], [[], all.total]);
});

t.test('caps, validation, errors and caching', async (t) => {
  const loc = async (qs: string) => {
    const r = await trades('m15', qs);
    t.equal(r.status, 422, qs);
    return r.body.detail[0].loc;
  };
  t.same(await loc('from_tick=100&to_tick=300'), ['query', 'to_tick'], '201 sessions');
  t.equal((await trades('m15', 'from_tick=100&to_tick=299')).status, 200, '200 sessions allowed');
  t.same(await loc('from_tick=100&to_tick=99'), ['query', 'to_tick']);
  t.same(await loc('from_tick=1&to_tick=2&limit=0'), ['query', 'limit']);
  t.same(await loc('from_tick=1&to_tick=2&limit=10001'), ['query', 'limit']);
  t.same(await loc('from_tick=1&to_tick=2&offset=-1'), ['query', 'offset']);
  t.same(await loc('from_tick=1&to_tick=2&actor=desk'), ['query', 'actor']);
  t.same(await loc('to_tick=2'), ['query', 'from_tick']);
  const unknown = await trades('zz', 'from_tick=1&to_tick=2');
  t.equal(unknown.status, 404);
  t.type(unknown.body.detail, 'string');

  const open = openOf('m15');
  const url = `/api/v1/markets/m15/trades?from_tick=${open - 40}&to_tick=${open - 30}`;
  const first = await svc.get(url);
  t.match(first.headers.get('cache-control'), /immutable/);
  const etag = first.headers.get('etag')!;
  t.equal((await svc.get(url, { headers: { 'if-none-match': etag } })).status, 304);
  const live = await svc.get(
    `/api/v1/markets/m15/trades?from_tick=${open - 5}&to_tick=${open - 1}`,
  );
  t.equal(live.headers.get('cache-control'), 'no-cache');
});
