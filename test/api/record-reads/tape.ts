// GET /markets/{id}/tape over HTTP on one day of recorded history, checked against the tables.
import t from 'tap';
import { sharedRecordedService } from '../../helpers/service.js';
import { SETTLED_TAPE_FIELDS, TAPE_FIELDS } from '../../../src/analytics/tape.js';

// The shared service's clock stands at RECORDED_DAY_MS: no session closes while the tests read.
const svc = await sharedRecordedService();

const sql = (q: string, p: unknown[] = []) => svc.orm.em.fork().execute(q, p);
const open = (m: string) => svc.services.supervisor.openTick(m)!;
const tape = (m: string, qs: string) => svc.getJson(`/api/v1/markets/${m}/tape?${qs}`);
const cents = (x: number) => Math.round(x * 100);

async function recordedTicks(market: string, from: number, to: number): Promise<number[]> {
  const rows = await sql(
    'select tick::float8 as tick from market_session where market = ? and recorded and tick between ? and ? order by tick',
    [market, from, to],
  );
  return rows.map((r) => r.tick);
}

t.test(
  'every tape field per market kind; settled-only fields exactly on settled sessions',
  async (t) => {
    for (const market of ['m15', 'h2']) {
      const o = open(market);
      const from = o - 30;
      const { status, body } = await tape(market, `from_tick=${from}&to_tick=${o}`);
      t.equal(status, 200);
      t.same([body.market, body.cluster, body.from_tick, body.to_tick], [market, null, from, o]);
      t.same(
        body.rows.map((r: any) => r.tick),
        await recordedTicks(market, from, o - 1),
        `${market}: one row per closed recorded session, the open one absent`,
      );
      let settled = 0;
      for (const r of body.rows) {
        const isSettled = r.tick <= o - 9;
        settled += isSettled ? 1 : 0;
        const expected = ['tick', ...TAPE_FIELDS, ...(isSettled ? SETTLED_TAPE_FIELDS : [])];
        t.same(
          Object.keys(r),
          expected,
          `${market} ${r.tick}: exactly the tape fields${isSettled ? ' with the settled ones' : ''}`,
        );
        for (const f of [
          'exec_n',
          'units',
          'desk_units',
          'holder_units',
          'sold',
          'active',
          'inventory',
          'menu_n',
          'supply_units',
          'advancers',
          'decliners',
        ]) {
          t.ok(Number.isInteger(r[f]) && r[f] >= 0, `${f} is a count`);
        }
        t.equal(r.units, r.desk_units + r.holder_units);
        t.ok(r.price_low <= r.price_close && r.price_close <= r.price_high);
        if (market === 'm15') t.ok(r.quoted > 0 && r.demand_index > 0, 'velocity market quotes');
        else
          t.same(
            [r.quoted, r.demand_index],
            [null, null],
            'ranking market: quoted and demand_index null',
          );
        if (isSettled)
          for (const f of ['profitable_rate', 'downside_rate', 'exec_rate'])
            t.ok(r[f] === null || (r[f] >= 0 && r[f] <= 1), `${f} is a rate`);
      }
      t.ok(
        settled > 0 && settled < body.rows.length,
        `${market}: both settled and unsettled sessions covered`,
      );
    }
  },
);

t.test(
  'tape rows agree with trade and menu_row; desk_pnl is the SQL sum of the session',
  async (t) => {
    const o = open('m15');
    const { body } = await tape('m15', `from_tick=${o - 40}&to_tick=${o - 9}`);
    t.equal(body.rows.length, 32);
    for (const r of body.rows) {
      const [tr] = await sql(
        `select count(*)::int as n, coalesce(sum(qty), 0)::int as units, coalesce(sum(realized_pnl_cents) filter (where actor = 'house'), 0)::float8 as desk,
              count(*) filter (where realized_pnl_cents > 0)::int as profitable, count(*) filter (where regime)::int as regime
         from trade where market = 'm15' and tick = ?`,
        [r.tick],
      );
      const [menu] = await sql(
        `select count(*)::int as n, count(distinct t.idx)::int as executed from menu_row m left join trade t using (market, tick, idx) where m.market = 'm15' and m.tick = ?`,
        [r.tick],
      );
      t.equal(r.exec_n, tr.n, `${r.tick} exec_n`);
      t.equal(r.units, tr.units);
      t.equal(r.menu_n, menu.n);
      t.equal(cents(r.desk_pnl), tr.desk, `${r.tick} desk_pnl = sum of house realized_pnl`);
      t.equal(r.holder_pnl, 0, 'no holder trades in the record');
      t.equal(r.exec_rate, Math.round((menu.executed / menu.n) * 1e4) / 1e4);
      t.equal(r.profitable_rate, tr.n ? Math.round((tr.profitable / tr.n) * 1e4) / 1e4 : null);
      t.equal(r.downside_rate, tr.n ? Math.round((tr.regime / tr.n) * 1e4) / 1e4 : null);
    }
    t.ok(
      body.rows.some((r: any) => r.desk_pnl !== 0),
      'some session has a result',
    );
  },
);

t.test(
  'cluster filter: the family rows of each session, figures restricted to the family',
  async (t) => {
    const o = open('m15');
    const from = o - 40;
    const to = o - 1;
    const [{ cluster }] = await sql(
      `select cluster from trade where market = 'm15' and tick between ? and ? group by cluster order by count(*) desc limit 1`,
      [from, o - 9],
    );
    const { body } = await tape('m15', `from_tick=${from}&to_tick=${to}&cluster=${cluster}`);
    t.equal(body.cluster, cluster);
    // A family's tape row exists for every session that listed it or in which earlier positions of it
    // (filled in the 8 sessions before) were still selling.
    const ticks = (
      await sql(
        `select s::float8 as tick from generate_series(?::bigint, ?::bigint) as s
        where exists (select 1 from menu_row m where m.market = 'm15' and m.tick = s and m.cluster = ?)
           or exists (select 1 from trade x where x.market = 'm15' and x.cluster = ? and x.tick between s - 8 and s - 1)
        order by s`,
        [from, to, cluster, cluster],
      )
    ).map((r) => r.tick);
    t.same(
      body.rows.map((r: any) => r.tick),
      ticks,
      'a row for every session that listed or carried the family',
    );
    const whole = new Map(
      (await tape('m15', `from_tick=${from}&to_tick=${to}`)).body.rows.map((r: any) => [r.tick, r]),
    );
    let withPnl = 0;
    for (const r of body.rows) {
      const [tr] = await sql(
        `select count(*)::int as n, coalesce(sum(qty), 0)::int as units, coalesce(sum(realized_pnl_cents), 0)::float8 as pnl
         from trade where market = 'm15' and tick = ? and cluster = ?`,
        [r.tick, cluster],
      );
      const [menu] = await sql(
        `select count(*)::int as n from menu_row where market = 'm15' and tick = ? and cluster = ?`,
        [r.tick, cluster],
      );
      t.same([r.exec_n, r.units, r.menu_n], [tr.n, tr.units, menu.n], `${r.tick}: family counts`);
      t.ok(r.menu_n <= (whole.get(r.tick) as any).menu_n);
      if (r.tick <= o - 9) {
        t.equal(cents(r.desk_pnl), tr.pnl, `${r.tick}: family desk_pnl`);
        withPnl += r.desk_pnl !== 0 ? 1 : 0;
      } else t.notOk('desk_pnl' in r);
    }
    t.ok(withPnl > 0, 'the family has settled results in the range');
  },
);

t.test('sessions not recorded are absent', async (t) => {
  const o = open('h2');
  const [{ first }] = await sql(
    `select min(tick)::float8 as first from market_session where market = 'h2' and recorded`,
  );
  const { status, body } = await tape('h2', `from_tick=${first - 50}&to_tick=${first + 2}`);
  t.equal(status, 200);
  t.same(
    body.rows.map((r: any) => r.tick),
    [first, first + 1, first + 2],
  );
  t.ok(first > o - 20, 'one day of h2 history');
  const none = await tape('h2', `from_tick=${first - 50}&to_tick=${first - 1}`);
  t.same(none.body.rows, []);
});

t.test('span cap, reversed range, bad input, unknown market and cluster', async (t) => {
  const o = open('m15');
  const ok = await tape('m15', `from_tick=${o - 499}&to_tick=${o}`);
  t.equal(ok.status, 200, '500 sessions allowed');
  const over = await tape('m15', `from_tick=${o - 500}&to_tick=${o}`);
  t.equal(over.status, 422, '501 sessions refused');
  t.same(over.body.detail[0].loc, ['query', 'to_tick']);
  const reversed = await tape('m15', `from_tick=${o}&to_tick=${o - 1}`);
  t.equal(reversed.status, 422);
  t.same(reversed.body.detail[0].loc, ['query', 'to_tick']);
  const missing = await tape('m15', `to_tick=${o}`);
  t.equal(missing.status, 422);
  t.same(missing.body.detail[0].loc, ['query', 'from_tick']);
  const negative = await tape('m15', `from_tick=${o - 2}&to_tick=${o}&cluster=-1`);
  t.equal(negative.status, 422);
  t.same(negative.body.detail[0].loc, ['query', 'cluster']);
  const unknownCluster = await tape('m15', `from_tick=${o - 2}&to_tick=${o}&cluster=999`);
  t.equal(unknownCluster.status, 404);
  t.type(unknownCluster.body.detail, 'string');
  const unknown = await tape('x1', `from_tick=${o - 2}&to_tick=${o}`);
  t.equal(unknown.status, 404);
  t.type(unknown.body.detail, 'string');
});

t.test('settled-only ranges are immutable; others revalidate; ETag answers 304', async (t) => {
  const o = open('m15');
  const settled = await tape('m15', `from_tick=${o - 20}&to_tick=${o - 9}`);
  t.match(settled.headers.get('cache-control'), /immutable/);
  const live = await tape('m15', `from_tick=${o - 20}&to_tick=${o - 8}`);
  t.equal(live.headers.get('cache-control'), 'no-cache');
  const etag = settled.headers.get('etag')!;
  const again = await svc.get(`/api/v1/markets/m15/tape?from_tick=${o - 20}&to_tick=${o - 9}`, {
    headers: { 'if-none-match': etag },
  });
  t.equal(again.status, 304);
});
