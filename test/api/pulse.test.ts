// GET /ticker and GET /pulse over HTTP on a started service with one day of history and a clock the
// test drives: every figure against SQL sums over the record, the tape's last rows, and the cache
// that holds until the next close of any market.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { MARKETS, MARKET_IDS } from '../../src/engine/index.js';

let nowMs = Date.now();
const svc = await startTestService(
  t,
  { SVC_BACKFILL_DAYS: '1', SVC_ASK_TIMEOUT_MS: '60000' },
  { realMs: () => nowMs },
);
await svc.services.supervisor.backfilled();
const openOf = (m: string) => svc.services.supervisor.openTick(m)!;
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
const IVS = JSON.stringify(MARKET_IDS.map((m) => ({ market: m, iv: MARKETS[m].interval_seconds })));
const cents = (x: number) => Math.round(x * 100);
const FIGURES = ['executions', 'units', 'turnover', 'units_sold', 'pnl'];

async function checkTicker(t: Tap.Test) {
  const r = await svc.getJson('/api/v1/ticker');
  t.equal(r.status, 200);
  t.ok(r.headers.get('etag'));
  t.type(r.body.price_basis, 'string');
  t.same(
    r.body.markets.map((m: any) => m.market),
    MARKET_IDS,
    'all four markets in order',
  );
  for (const m of r.body.markets) {
    const open = openOf(m.market);
    const rows = await q(
      `select tick::float8 tick, row from tape where market = ? and cluster = -1 and tick in (?, ?) order by tick desc`,
      [m.market, open - 1, open - 2],
    );
    t.equal(rows.length, 2, `${m.market}: the last two closes are on the tape`);
    const [last, prev] = rows.map((x) => x.row);
    t.same(
      [m.tick, m.last, m.prev_close, m.cost, m.units, m.executions, m.notional],
      [
        open - 1,
        last.price_close,
        prev.price_close,
        last.vwap,
        last.units,
        last.exec_n,
        last.notional,
      ],
      `${m.market}: the tape's last row`,
    );
    t.equal(
      cents(m.change),
      cents(last.price_close) - cents(prev.price_close),
      'change versus the close before',
    );
    t.equal(
      m.change_pct,
      Math.round(
        (10000 * (cents(last.price_close) - cents(prev.price_close))) / cents(prev.price_close),
      ) / 100,
    );
    t.equal(m.label, MARKETS[m.market as keyof typeof MARKETS].label);
    t.type(m.price_basis, 'string');
    if (m.market === 'm15' || m.market === 'm45') {
      t.type(m.demand_index, 'number');
      t.equal(m.demand_index, last.demand_index);
    } else t.equal(m.demand_index, null, `${m.market}: ranking market, no demand index`);
    const status = (await svc.getJson(`/api/v1/markets/${m.market}`)).body;
    t.same(
      m.clock,
      {
        current_tick: status.current_tick,
        tick_closes_at: status.tick_closes_at,
        seconds_to_close: status.seconds_to_close,
      },
      'clock as the market status',
    );
    t.equal(m.clock.current_tick, open);
  }
  return r.body;
}

const totalsSql = (group: string) =>
  q(`select ${group ? 'market,' : ''} count(*)::float8 executions, sum(qty)::float8 units,
  sum(qty::bigint * unit_cost_cents)::float8 turnover, coalesce(sum(units_sold) filter (where settled), 0)::float8 units_sold,
  coalesce(sum(realized_pnl_cents) filter (where settled), 0)::float8 pnl, coalesce(sum(qty_left) filter (where not settled), 0)::float8 oi
  from trade ${group}`);

async function checkPulse(t: Tap.Test) {
  const r = await svc.getJson('/api/v1/pulse');
  t.equal(r.status, 200);
  const b = r.body;
  t.same(Object.keys(b).sort(), [
    'as_of',
    'days',
    'last_24h',
    'markets',
    'recent',
    'totals',
    'window',
  ]);
  t.equal(
    b.as_of,
    Math.max(...MARKET_IDS.map((m) => openOf(m) * MARKETS[m].interval_seconds)),
    'as_of = the latest close',
  );

  // totals = SQL sums over the record
  const [all] = await totalsSql('');
  const [{ n: sessions }] = await q(`select count(*)::float8 n from market_session where recorded`);
  const [{ n: days }] = await q(
    `select count(distinct (s.tick * m.iv) / 86400)::float8 n from market_session s
    join jsonb_to_recordset(?::jsonb) m(market text, iv bigint) on m.market = s.market where s.recorded`,
    [IVS],
  );
  const figs = (x: any) => [x.executions, x.units, cents(x.turnover), x.units_sold, cents(x.pnl)];
  t.same(
    figs(b.totals),
    [all.executions, all.units, all.turnover, all.units_sold, all.pnl],
    'totals = SQL sums',
  );
  t.same(
    [b.totals.sessions_recorded, b.totals.days_on_record, b.totals.open_interest],
    [sessions, days, all.oi],
  );
  t.ok(all.executions > 500 && all.pnl !== 0, `${all.executions} executions on record`);

  // days: ascending UTC days; fills on their fill day, results on their settle day
  t.ok(
    b.days.every(
      (d: any, i: number) =>
        /^\d{4}-\d{2}-\d{2}$/.test(d.day) && (i === 0 || d.day > b.days[i - 1].day),
    ),
    'days sorted, unique',
  );
  for (const k of [0, 1, 2, 3, 4])
    t.equal(
      b.days.reduce((a: number, d: any) => a + figs(d)[k], 0),
      figs(b.totals)[k],
      `days sum to the totals: ${FIGURES[k]}`,
    );
  const perDay = await q(
    `select t.market, ((t.tick + 1) * m.iv) / 86400 as day, count(*)::float8 n from trade t
    join jsonb_to_recordset(?::jsonb) m(market text, iv bigint) on m.market = t.market group by 1, 2`,
    [IVS],
  );
  const pnlDay = await q(
    `select t.market, ((t.tick + 1 + t.horizon) * m.iv) / 86400 as day, sum(realized_pnl_cents)::float8 pnl from trade t
    join jsonb_to_recordset(?::jsonb) m(market text, iv bigint) on m.market = t.market where settled group by 1, 2`,
    [IVS],
  );
  const label = (d: string) => new Date(Number(d) * 86_400_000).toISOString().slice(0, 10);
  for (const x of perDay)
    t.equal(
      b.days.find((d: any) => d.day === label(x.day))?.by_market[x.market]?.executions,
      x.n,
      `${x.market} ${label(x.day)} executions`,
    );
  for (const x of pnlDay)
    t.equal(
      cents(b.days.find((d: any) => d.day === label(x.day))?.by_market[x.market]?.pnl),
      x.pnl,
      `${x.market} ${label(x.day)} pnl`,
    );
  for (const d of b.days) {
    t.same(Object.keys(d.by_market), MARKET_IDS, `${d.day}: every market`);
    for (const k of [0, 1, 2, 3, 4])
      t.equal(
        Object.values(d.by_market).reduce((a: number, m: any) => a + figs(m)[k], 0),
        figs(d)[k],
        `${d.day} by_market sums`,
      );
  }

  // window (the record is shorter than 30 days: every day) and last 24 hours
  t.equal(b.window.days, b.days.length);
  t.same(figs(b.window), figs(b.totals), 'window = totals on one day of record');
  const best = b.days.reduce((x: any, d: any) => (d.turnover > x.turnover ? d : x));
  t.same(
    b.window.best_day,
    {
      day: best.day,
      executions: best.executions,
      units: best.units,
      turnover: best.turnover,
      units_sold: best.units_sold,
      pnl: best.pnl,
    },
    'best day by turnover',
  );
  t.equal(b.window.per_day.turnover, Math.round(all.turnover / b.days.length) / 100);
  t.equal(b.window.per_day.executions, Math.round((all.executions / b.days.length) * 100) / 100);
  const since = b.as_of - 86400;
  const [l24] = await q(
    `select count(*) filter (where (t.tick + 1) * m.iv > ?)::float8 executions,
      coalesce(sum(qty::bigint * unit_cost_cents) filter (where (t.tick + 1) * m.iv > ?), 0)::float8 turnover,
      coalesce(sum(realized_pnl_cents) filter (where settled and (t.tick + 1 + t.horizon) * m.iv > ?), 0)::float8 pnl
    from trade t join jsonb_to_recordset(?::jsonb) m(market text, iv bigint) on m.market = t.market`,
    [since, since, since, IVS],
  );
  t.same(
    [b.last_24h.executions, cents(b.last_24h.turnover), cents(b.last_24h.pnl)],
    [l24.executions, l24.turnover, l24.pnl],
    'last 24 hours',
  );

  // per market
  const byMarket = await totalsSql('group by market');
  t.same(
    b.markets.map((m: any) => m.market),
    MARKET_IDS,
  );
  for (const m of b.markets) {
    const s = byMarket.find((x) => x.market === m.market);
    t.same(
      [...figs(m), m.open_interest],
      [s.executions, s.units, s.turnover, s.units_sold, s.pnl, s.oi],
      `${m.market}: figures = SQL sums`,
    );
    const open = openOf(m.market);
    t.ok(m.tape.length > 0 && m.tape.length <= 48, `${m.market}: ${m.tape.length} tape rows`);
    t.ok(
      m.tape.every(
        (x: any, i: number) =>
          x.tick >= open - 48 && x.tick < open && (i === 0 || x.tick > m.tape[i - 1].tick),
      ),
      'the last 48 closed sessions, ascending',
    );
    t.equal(m.tape.at(-1).tick, open - 1);
    const [row] = await q(`select row from tape where market = ? and tick = ? and cluster = -1`, [
      m.market,
      open - 1,
    ]);
    t.same(m.tape.at(-1), { tick: open - 1, ...row.row }, 'whole-market tape row');
  }
  t.equal(b.markets.find((m: any) => m.market === 'm15').tape.length, 48);

  // recent settled trades, latest settlement first
  t.ok(b.recent.length > 0 && b.recent.length <= 20);
  t.ok(
    b.recent.every((r: any, i: number) => i === 0 || r.settled_at <= b.recent[i - 1].settled_at),
    'latest first',
  );
  const [latest] = await q(
    `select max((t.tick + 1 + t.horizon) * m.iv)::float8 at from trade t
    join jsonb_to_recordset(?::jsonb) m(market text, iv bigint) on m.market = t.market where settled`,
    [IVS],
  );
  t.equal(b.recent[0].settled_at, latest.at, 'the latest settlement on record');
  for (const r of b.recent) {
    t.same(Object.keys(r).sort(), [
      'actor',
      'cluster',
      'market',
      'qty',
      'realized_pnl',
      'regime',
      'settled_at',
      'sku_family',
      'sold_out',
      'tick',
      'units_sold',
    ]);
    const rows = await q(
      `select realized_pnl_cents::float8 pnl from trade where market = ? and tick = ? and cluster = ? and qty = ? and settled and sold_out = ? and regime = ?`,
      [r.market, r.tick, r.cluster, r.qty, r.sold_out, r.regime],
    );
    t.ok(
      rows.some((x) => x.pnl === cents(r.realized_pnl)),
      `${r.market} ${r.tick}: a settled trade with that result`,
    );
  }
  return r;
}

t.test("ticker: all four markets from the tape's last row, with the clock", async (t) => {
  await checkTicker(t);
});

t.test('pulse: totals, days, window, markets and recent trades against SQL sums', async (t) => {
  const first = await checkPulse(t);
  // Cached until the next close: the same answer, with a validator, and no new computation (no
  // 'projection.pulse' read reaches the workers). How fast a cached answer is belongs to
  // bench/record.mjs (its 'pulse' row), not to a test.
  const rt = svc.services.runtime;
  const reads: string[] = [];
  const read = rt.read.bind(rt);
  rt.read = ((name: string, args: unknown, timeoutMs?: number) => (
    reads.push(name),
    read(name, args, timeoutMs)
  )) as typeof rt.read;
  try {
    for (let i = 0; i < 3; i++) t.same((await svc.getJson('/api/v1/pulse')).body, first.body);
  } finally {
    rt.read = read;
  }
  t.same(
    reads.filter((n) => n === 'projection.pulse'),
    [],
    'the cached pulse answers without computing it again',
  );
  const etag = first.headers.get('etag')!;
  t.equal((await svc.get('/api/v1/pulse', { headers: { 'if-none-match': etag } })).status, 304);
});

t.test('after a close, ticker and pulse follow the record', async (t) => {
  const before = (await svc.getJson('/api/v1/pulse')).body;
  const open = openOf('m15');
  nowMs += 900_000;
  await svc.services.supervisor.runDue();
  t.equal(openOf('m15'), open + 1, 'm15 closed a session');
  const ticker = await checkTicker(t);
  t.equal(ticker.markets[0].tick, open);
  const after = (await checkPulse(t)).body;
  t.equal(after.as_of, before.as_of + 900);
  t.ok(after.totals.sessions_recorded > before.totals.sessions_recorded);
  t.ok(after.totals.executions >= before.totals.executions);
});
