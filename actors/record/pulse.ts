// Read tasks of the record: the ticker (last two whole-market tape rows per market) and the pulse
// (aggregates across the four markets). Every figure is an aggregate SQL over the trade, tape and
// market_session tables (one scan grouped by market and day); nothing loops over the record row
// by row.
//
// Time: a trade is an execution of the close of its session, at service time (tick + 1) * interval;
// it settles at the close of session tick + horizon, at (tick + horizon + 1) * interval, and its
// result counts on that day. Days are UTC days of service time. `as_of` is the latest close of any
// market ((open tick) * interval, service seconds).
import {
  MARKETS,
  MARKET_IDS,
  centsToNumber,
  familyByCluster,
  type MarketId,
} from '../../src/engine/index.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineReads } from '../runtime/read.js';
import { jsonParam } from '../runtime/sql.js';
import type {
  DayCents,
  DayRow,
  FinalDays,
  PulseAnswer,
  PulseArgs,
  PulseReply,
  TickerArgs,
} from './messages.js';

const DAY = 86_400;
const TAPE_SESSIONS = 48;
const RECENT = 20;
const WINDOW_DAYS = 30;

type Figures = {
  executions: number;
  units: number;
  turnover: number;
  units_sold: number;
  pnl: number;
};
type Cents = DayCents;
type Group = { market: MarketId; fday: string; sday: string; open_interest: number } & Cents;
type Recent = {
  market: MarketId;
  tick: number;
  settled_at: number;
  cluster: number;
  actor: 'house' | 'user';
  qty: number;
  units_sold: number;
  pnl_cents: number;
  sold_out: boolean;
  regime: boolean;
};

const zero = (): Cents => ({
  executions: 0,
  units: 0,
  turnover_cents: 0,
  units_sold: 0,
  pnl_cents: 0,
});
const KEYS = ['executions', 'units', 'turnover_cents', 'units_sold', 'pnl_cents'] as const;
const add = (a: Cents, b: Partial<Cents>) => {
  for (const k of KEYS) a[k] += b[k] ?? 0;
};
const served = (c: Cents): Figures => ({
  executions: c.executions,
  units: c.units,
  turnover: centsToNumber(c.turnover_cents),
  units_sold: c.units_sold,
  pnl: centsToNumber(c.pnl_cents),
});
const dayLabel = (day: number) => new Date(day * DAY * 1000).toISOString().slice(0, 10);
const perMarket = MARKET_IDS.map(() => '(t.market = ? and t.tick >= ?)').join(' or ');
const boundsOf = (lo: Record<MarketId, number>) => MARKET_IDS.flatMap((m) => [m, lo[m]]);
const intervals = () =>
  jsonParam(MARKET_IDS.map((m) => ({ market: m, iv: MARKETS[m].interval_seconds })));

export const pulseReads = defineReads({
  'projection.ticker': async ({ em }, a: TickerArgs) => {
    const rows = await em.execute(
      `select x.market, t.tick::float8 as tick, t.row from jsonb_to_recordset(?::jsonb) as x(market text, hi bigint)
         cross join lateral (select tick, row from tape where market = x.market and cluster = -1 and tick <= x.hi
                              order by tick desc limit 2) t`,
      [jsonParam(a.markets)],
    );
    return rows as { market: MarketId; tick: number; row: Record<string, number | null> }[];
  },

  'projection.pulse': async ({ em }, a: PulseArgs): Promise<PulseReply> => {
    const closes = MARKET_IDS.map((m) => a.open[m] * MARKETS[m].interval_seconds);
    const asOf = Math.max(...closes);
    const groups = await tradeGroups(em, lowTicks(a.final?.before ?? null));
    const reads: PulseReads = {
      last24: await tradesSince(em, asOf - DAY),
      sessions: await recordedSessions(em),
      tape: await recentTape(em, a.open),
      recent: await recentSettled(em),
    };
    const rows = dayRows(groups, a.final);
    const openInterest = new Map<MarketId, number>();
    for (const g of groups)
      openInterest.set(g.market, (openInterest.get(g.market) ?? 0) + g.open_interest);
    const finalBefore = Math.floor(Math.min(...closes) / DAY);
    return {
      answer: assemble(asOf, rows, openInterest, reads),
      final: a.keep ? { before: finalBefore, rows: rows.filter((r) => r.day < finalBefore) } : null,
    };
  },
});

type Last24 = { market: MarketId } & Cents;
type Sessions = { market: MarketId; day: string; n: number };
type TapeRow = { market: MarketId; tick: number; row: Record<string, unknown> };
/** What the pulse reads besides the day groups: the last 24 hours, the sessions, the tape and the latest settlements. */
type PulseReads = { last24: Last24[]; sessions: Sessions[]; tape: TapeRow[]; recent: Recent[] };

/**
 * Each market's lowest tick whose trades can count on a day from `before` on (final days kept
 * before it; null: none kept, the whole record).
 */
function lowTicks(before: number | null): Record<MarketId, number> {
  return Object.fromEntries(
    MARKET_IDS.map((m) => {
      const { interval_seconds: iv, settlement_horizon_ticks: h } = MARKETS[m];
      return [m, before === null ? 0 : Math.floor((before * DAY) / iv) - 1 - h];
    }),
  ) as Record<MarketId, number>;
}

/**
 * One scan of the trades not in final days, grouped by market, fill day and settle day. The
 * per-market lower ticks are bound values, so the planner sees them and uses the (market, tick)
 * index when they cut the record short.
 */
async function tradeGroups(em: EntityManager, lows: Record<MarketId, number>): Promise<Group[]> {
  return (await em.execute(
    `select t.market, ((t.tick + 1) * m.iv) / ${DAY} as fday, ((t.tick + 1 + t.horizon) * m.iv) / ${DAY} as sday,
              count(*)::float8 as executions, sum(t.qty)::float8 as units, sum(t.qty::bigint * t.unit_cost_cents)::float8 as turnover_cents,
              coalesce(sum(t.units_sold) filter (where t.settled), 0)::float8 as units_sold,
              coalesce(sum(t.realized_pnl_cents) filter (where t.settled), 0)::float8 as pnl_cents,
              coalesce(sum(t.qty_left) filter (where not t.settled), 0)::float8 as open_interest
         from trade t join jsonb_to_recordset(?::jsonb) as m(market text, iv bigint) on m.market = t.market
        where ${perMarket}
        group by 1, 2, 3`,
    [intervals(), ...boundsOf(lows)],
  )) as Group[];
}

/** The last 24 hours at session precision (fills, and settlements, after `since`: as_of - 1 day). */
async function tradesSince(em: EntityManager, since: number): Promise<Last24[]> {
  const lo24 = Object.fromEntries(
    MARKET_IDS.map((m) => [
      m,
      Math.floor(since / MARKETS[m].interval_seconds) - 1 - MARKETS[m].settlement_horizon_ticks,
    ]),
  ) as Record<MarketId, number>;
  return (await em.execute(
    `select t.market,
              count(*) filter (where (t.tick + 1) * m.iv > ?)::float8 as executions,
              coalesce(sum(t.qty) filter (where (t.tick + 1) * m.iv > ?), 0)::float8 as units,
              coalesce(sum(t.qty::bigint * t.unit_cost_cents) filter (where (t.tick + 1) * m.iv > ?), 0)::float8 as turnover_cents,
              coalesce(sum(t.units_sold) filter (where t.settled and (t.tick + 1 + t.horizon) * m.iv > ?), 0)::float8 as units_sold,
              coalesce(sum(t.realized_pnl_cents) filter (where t.settled and (t.tick + 1 + t.horizon) * m.iv > ?), 0)::float8 as pnl_cents
         from trade t join jsonb_to_recordset(?::jsonb) as m(market text, iv bigint) on m.market = t.market
        where ${perMarket}
        group by 1`,
    [since, since, since, since, since, intervals(), ...boundsOf(lo24)],
  )) as Last24[];
}

/** Recorded sessions per market and day. */
async function recordedSessions(em: EntityManager): Promise<Sessions[]> {
  return (await em.execute(
    `select s.market, (s.tick * m.iv) / ${DAY} as day, count(*)::float8 as n
         from market_session s join jsonb_to_recordset(?::jsonb) as m(market text, iv bigint) on m.market = s.market
        where s.recorded group by 1, 2`,
    [intervals()],
  )) as Sessions[];
}

/** Each market's whole-market tape rows of its last TAPE_SESSIONS closed sessions. */
async function recentTape(em: EntityManager, open: Record<MarketId, number>): Promise<TapeRow[]> {
  return (await em.execute(
    `select x.market, t.tick::float8 as tick, t.row from jsonb_to_recordset(?::jsonb) as x(market text, lo bigint, hi bigint)
         join tape t on t.market = x.market and t.cluster = -1 and t.tick between x.lo and x.hi order by x.market, t.tick`,
    [
      jsonParam(
        MARKET_IDS.map((m) => ({ market: m, lo: open[m] - TAPE_SESSIONS, hi: open[m] - 1 })),
      ),
    ],
  )) as TapeRow[];
}

/** Each market's latest RECENT settled trades. */
async function recentSettled(em: EntityManager): Promise<Recent[]> {
  return (await em.execute(
    `select r.* from jsonb_to_recordset(?::jsonb) as x(market text, iv bigint) cross join lateral (
         select t.market, t.tick::float8 as tick, ((t.tick + 1 + t.horizon) * x.iv)::float8 as settled_at, t.cluster, t.actor, t.qty,
                t.units_sold, t.realized_pnl_cents::float8 as pnl_cents, t.sold_out, t.regime
           from trade t where t.market = x.market and t.settled order by t.tick desc, t.id desc limit ${RECENT}) r`,
    [intervals()],
  )) as Recent[];
}

/** Per (market, day) figures: kept final days plus what the scan found for the later ones. */
function dayRows(groups: Group[], final: FinalDays | null): DayRow[] {
  const out = new Map<string, DayRow>();
  const at = (market: MarketId, day: number) => {
    const k = `${market}|${day}`;
    let r = out.get(k);
    if (!r) out.set(k, (r = { day, market, ...zero() }));
    return r;
  };
  for (const r of final?.rows ?? []) add(at(r.market, r.day), r);
  const fresh = (day: number) => final === null || day >= final.before;
  for (const g of groups) {
    const [fday, sday] = [Number(g.fday), Number(g.sday)];
    if (fresh(fday))
      add(at(g.market, fday), {
        executions: g.executions,
        units: g.units,
        turnover_cents: g.turnover_cents,
      });
    if (fresh(sday) && (g.units_sold || g.pnl_cents))
      add(at(g.market, sday), { units_sold: g.units_sold, pnl_cents: g.pnl_cents });
  }
  return [...out.values()];
}

type Days = Map<number, { all: Cents; by: Map<MarketId, Cents> }>;
type Total = Cents & { open_interest: number; sessions: number; days: Set<number> };
type Totals = Map<MarketId | 'all', Total>;

function dayOf(days: Days, d: number) {
  let e = days.get(d);
  if (!e) days.set(d, (e = { all: zero(), by: new Map() }));
  return e;
}

function totalOf(totals: Totals, k: MarketId | 'all'): Total {
  let e = totals.get(k);
  if (!e) totals.set(k, (e = { ...zero(), open_interest: 0, sessions: 0, days: new Set() }));
  return e;
}

/** The day rows, open interest and recorded sessions summed per day (all markets and each) and per market and overall. */
function tally(
  rows: DayRow[],
  openInterest: Map<MarketId, number>,
  sessions: Sessions[],
): { days: Days; totals: Totals } {
  const days: Days = new Map();
  const totals: Totals = new Map();
  const tot = (k: MarketId | 'all') => totalOf(totals, k);
  for (const r of rows) {
    const { day, market } = r;
    const c: Cents = {
      executions: r.executions,
      units: r.units,
      turnover_cents: r.turnover_cents,
      units_sold: r.units_sold,
      pnl_cents: r.pnl_cents,
    };
    const e = dayOf(days, day);
    add(e.all, c);
    if (!e.by.has(market)) e.by.set(market, zero());
    add(e.by.get(market)!, c);
    add(tot(market), c);
    add(tot('all'), c);
  }
  for (const m of MARKET_IDS) {
    tot(m).open_interest = openInterest.get(m) ?? 0;
    tot('all').open_interest += tot(m).open_interest;
  }
  for (const s of sessions) {
    dayOf(days, Number(s.day));
    for (const k of [s.market, 'all'] as const) {
      tot(k).sessions += s.n;
      tot(k).days.add(Number(s.day));
    }
  }
  return { days, totals };
}

/** The last WINDOW_DAYS days to as_of (of `sorted`, the days on record ascending): sums, per-day means and the best day. */
function windowOf(sorted: number[], asOfDay: number, pick: (d: number) => Cents | undefined) {
  const inWindow = sorted.filter((d) => d > asOfDay - WINDOW_DAYS);
  const sum = zero();
  let best: { day: number; c: Cents } | null = null;
  for (const d of inWindow) {
    const c = pick(d) ?? zero();
    add(sum, c);
    if (best === null || c.turnover_cents > best.c.turnover_cents) best = { day: d, c };
  }
  const n = inWindow.length || 1;
  return {
    days: inWindow.length,
    from_day: inWindow.length ? dayLabel(inWindow[0]) : null,
    to_day: dayLabel(asOfDay),
    ...served(sum),
    per_day: {
      executions: Math.round((sum.executions / n) * 100) / 100,
      units: Math.round((sum.units / n) * 100) / 100,
      turnover: centsToNumber(sum.turnover_cents / n),
    },
    best_day: best === null ? null : { day: dayLabel(best.day), ...served(best.c) },
  };
}

function figuresOf(t: Total) {
  return {
    ...served(t),
    sessions_recorded: t.sessions,
    days_on_record: t.days.size,
    open_interest: t.open_interest,
  };
}

function last24Of(last24: Last24[], k: MarketId | 'all') {
  const c = zero();
  for (const r of last24)
    if (k === 'all' || r.market === k)
      add(c, {
        executions: r.executions,
        units: r.units,
        turnover_cents: r.turnover_cents,
        units_sold: r.units_sold,
        pnl_cents: r.pnl_cents,
      });
  return served(c);
}

/** The latest RECENT settlements across the markets, newest first. */
function recentJson(recent: Recent[]) {
  return recent
    .sort((x, y) => y.settled_at - x.settled_at || y.tick - x.tick)
    .slice(0, RECENT)
    .map((r) => ({
      market: r.market,
      tick: r.tick,
      settled_at: r.settled_at,
      cluster: r.cluster,
      sku_family: familyByCluster(r.cluster).sku_family,
      actor: r.actor,
      qty: r.qty,
      units_sold: r.units_sold,
      realized_pnl: centsToNumber(r.pnl_cents),
      sold_out: r.sold_out,
      regime: r.regime,
    }));
}

function assemble(
  asOf: number,
  rows: DayRow[],
  openInterest: Map<MarketId, number>,
  reads: PulseReads,
): PulseAnswer {
  const asOfDay = Math.floor(asOf / DAY);
  const { days, totals } = tally(rows, openInterest, reads.sessions);
  const sorted = [...days.keys()].filter((d) => d <= asOfDay).sort((x, y) => x - y);
  return {
    as_of: asOf,
    totals: figuresOf(totalOf(totals, 'all')),
    window: windowOf(sorted, asOfDay, (d) => days.get(d)?.all),
    last_24h: last24Of(reads.last24, 'all'),
    days: sorted.map((d) => {
      const e = days.get(d)!;
      return {
        day: dayLabel(d),
        ...served(e.all),
        by_market: Object.fromEntries(MARKET_IDS.map((m) => [m, served(e.by.get(m) ?? zero())])),
      };
    }),
    markets: MARKET_IDS.map((m) => ({
      market: m,
      ...figuresOf(totalOf(totals, m)),
      window: windowOf(sorted, asOfDay, (d) => days.get(d)?.by.get(m)),
      last_24h: last24Of(reads.last24, m),
      tape: reads.tape.filter((r) => r.market === m).map((r) => ({ tick: r.tick, ...r.row })),
    })),
    recent: recentJson(reads.recent),
  };
}
