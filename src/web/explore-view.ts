// What the explore pages show of the record (GET /explore, /explore/{id}, /explore/{id}/tick/{tick}):
// pure functions from tape rows and history rows (SPEC.md "Tape row", "History row") to charts and
// table rows. The routes read the record and cache the rendered result.
import { MARKETS, type MarketId } from '../engine/index.js';
import { barChart, figure, lineChart, type Chart } from './charts.js';
import { usd } from './answers.js';

export type TapeRow = { tick: number } & Record<string, number | null | undefined>;

// Axis and summary values; the unit is in the axis label and the caption.
const money = (v: number) => v.toFixed(2);
const count = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
/** 1234567 → 1.2M, 53000 → 53k: short enough for the axis. */
export const compact = (v: number) => {
  const a = Math.abs(v);
  return a >= 1e6
    ? `${(v / 1e6).toFixed(1)}M`
    : a >= 1e4
      ? `${(v / 1e3).toFixed(0)}k`
      : a >= 100
        ? v.toFixed(0)
        : v.toFixed(2);
};

/** Chart modes of a market's explore page. */
export const MODES = {
  price: 'resale price (close of each session, with its low-high range)',
  cost: 'landed cost (menu mean and floor) and the executed cost',
  volume: 'units executed per session',
  pnl: "result of the session's trades (settled sessions)",
} as const;
export type Mode = keyof typeof MODES;
export const MODE_NAMES = Object.keys(MODES) as Mode[];

/** Values of `field` for every tick of `ticks` (null where the tape has no row or no value). */
function column(
  ticks: number[],
  byTick: Map<number, TapeRow>,
  field: string | ((r: TapeRow) => number | null),
): (number | null)[] {
  return ticks.map((t) => {
    const r = byTick.get(t);
    if (!r) return null;
    const v = typeof field === 'string' ? r[field] : field(r);
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  });
}

/** The session's result: desk and holder trades, once the session has settled (null before). */
const sessionPnl = (r: TapeRow) =>
  typeof r.desk_pnl === 'number'
    ? Math.round((r.desk_pnl + (r.holder_pnl ?? 0)) * 100) / 100
    : null;

/** The chart of a market's sessions `ticks` in `mode`. */
export function modeChart(
  market: MarketId,
  mode: Mode,
  ticks: number[],
  rows: TapeRow[],
  size: { width?: number; height?: number } = {},
): Chart {
  const byTick = new Map(rows.map((r) => [r.tick, r]));
  const label = MARKETS[market].label;
  const base = { x: ticks, xLabel: 'session', ...size };
  switch (mode) {
    case 'price':
      return lineChart({
        ...base,
        title: `${label}: resale price per session`,
        yLabel: 'USD per unit',
        yFormat: money,
        series: [
          { name: 'resale price at the close', values: column(ticks, byTick, 'price_close') },
        ],
        band: {
          low: column(ticks, byTick, 'price_low'),
          high: column(ticks, byTick, 'price_high'),
        },
      });
    case 'cost':
      return lineChart({
        ...base,
        title: `${label}: landed cost per session`,
        yLabel: 'USD per unit',
        yFormat: money,
        series: [
          { name: 'mean landed cost of the menu', values: column(ticks, byTick, 'cost_mean') },
          { name: 'lowest landed cost', values: column(ticks, byTick, 'cost_floor') },
          { name: 'executed cost (VWAP)', values: column(ticks, byTick, 'vwap') },
        ],
      });
    case 'volume':
      return barChart({
        ...base,
        title: `${label}: units executed per session`,
        yLabel: 'units',
        yFormat: count,
        series: [{ name: 'units executed', values: column(ticks, byTick, 'units') }],
      });
    case 'pnl':
      return barChart({
        ...base,
        title: `${label}: result per settled session`,
        yLabel: 'USD',
        yFormat: compact,
        series: [{ name: 'desk and holder result', values: column(ticks, byTick, sessionPnl) }],
      });
  }
}

/** The last `n` closed sessions before `open` (none below session 0). */
export function lastTicks(open: number, n: number): number[] {
  const from = Math.max(0, open - n);
  return Array.from({ length: Math.max(0, open - from) }, (_, i) => from + i);
}

const maybe = (v: number | null | undefined) => (typeof v === 'number' ? usd(v) : '');

/** The sessions table of a market's explore page, latest first. */
export function sessionRows(market: MarketId, rows: TapeRow[]) {
  return [...rows].reverse().map((r) => {
    const pnl = sessionPnl(r);
    return {
      tick: r.tick,
      href: `/explore/${market}/tick/${r.tick}`,
      price_close: maybe(r.price_close),
      cost_mean: maybe(r.cost_mean),
      vwap: maybe(r.vwap),
      menu_n: r.menu_n ?? '',
      exec_n: r.exec_n ?? 0,
      units: r.units ?? 0,
      settled: pnl !== null,
      pnl: pnl === null ? 'not settled' : usd(pnl),
      pnl_neg: pnl !== null && pnl < 0,
    };
  });
}

/** A small chart of the overview: the menu's mean landed cost and the executed cost over the tape's sessions. */
export function overviewChart(market: MarketId, tape: TapeRow[]): string {
  const ticks = tape.map((r) => r.tick);
  const byTick = new Map(tape.map((r) => [r.tick, r]));
  const chart = lineChart({
    title: `${MARKETS[market].label}: landed cost`,
    x: ticks,
    xLabel: 'session',
    yLabel: 'USD per unit',
    yFormat: money,
    series: [
      { name: 'mean landed cost of the menu', values: column(ticks, byTick, 'cost_mean') },
      { name: 'executed cost (VWAP)', values: column(ticks, byTick, 'vwap') },
    ],
    width: 420,
    height: 200,
  });
  return figure(chart, 'Prices in USD per unit.');
}

// ------------------------------------------------------------------ one closed session

export type HistoryRow = Record<string, any> & {
  key: string;
  cluster: number;
  status: 'observed' | 'rejected' | 'unrecorded';
  house_accepted: boolean;
  house_qty: number;
  trades: Record<string, any>[];
};

export const STATUSES = ['observed', 'rejected', 'unrecorded'] as const;
export type RowStatus = (typeof STATUSES)[number];

/** The realised result of a row's trades once all are settled; null before (or without trades). */
export function rowPnl(r: HistoryRow): number | null {
  if (!r.trades.length || !r.trades.every((t) => t.settled)) return null;
  return Math.round(r.trades.reduce((a, t) => a + t.realized_pnl * 100, 0)) / 100;
}

const deskVolume = (r: HistoryRow) =>
  r.trades.filter((t) => t.actor === 'house').reduce((a, t) => a + t.qty, 0);
const executed = (r: HistoryRow) => (r.trades.length ? 1 : 0);
type RowCompare = (a: HistoryRow, b: HistoryRow) => number;

/** Sorts of a session's page; ties keep the menu's listed_at order. */
export const TICK_SORTS = {
  house: {
    label: 'desk executions first, then the other executed rows',
    compare: ((a, b) => deskVolume(b) - deskVolume(a) || executed(b) - executed(a)) as RowCompare,
  },
  pnl: {
    label: 'realised result (settled rows)',
    compare: ((a, b) =>
      (rowPnl(b) ?? -Infinity) - (rowPnl(a) ?? -Infinity) ||
      executed(b) - executed(a)) as RowCompare,
  },
  margin: { label: 'margin', compare: ((a, b) => b.margin - a.margin) as RowCompare },
  cost: {
    label: 'landed cost, lowest first',
    compare: ((a, b) => a.unit_cost - b.unit_cost) as RowCompare,
  },
  price: { label: 'resale price', compare: ((a, b) => b.list_price - a.list_price) as RowCompare },
  listed: { label: 'listing order', compare: (() => 0) as RowCompare },
} as const;
export type TickSort = keyof typeof TICK_SORTS;
export const TICK_SORT_NAMES = Object.keys(TICK_SORTS) as TickSort[];

export type TickQuery = { family: number; sort: TickSort; status_filter?: RowStatus };

/** Rows of the session filtered and sorted by the query; counts over the whole session. */
export function tickRows(rows: HistoryRow[], q: TickQuery) {
  const counts = { observed: 0, rejected: 0, unrecorded: 0, executions: 0, units: 0 };
  for (const r of rows) {
    counts[r.status]++;
    counts.executions += r.trades.length;
    counts.units += r.trades.reduce((a, t) => a + t.qty, 0);
  }
  const picked = rows.filter(
    (r) =>
      (q.family < 0 || r.cluster === q.family) &&
      (q.status_filter === undefined || r.status === q.status_filter),
  );
  const compare = TICK_SORTS[q.sort].compare;
  return { counts, rows: q.sort === 'listed' ? picked : [...picked].sort(compare) };
}

const ACTOR = { house: 'desk', user: 'holder' } as Record<string, string>;

/** What the session's table shows of a history row. */
export function tickRowView(r: HistoryRow) {
  const pnl = rowPnl(r);
  return {
    key: r.key,
    title: r.title,
    family: r.sku_family,
    unit_cost: usd(r.unit_cost),
    list_price: usd(r.list_price),
    margin: usd(r.margin),
    margin_neg: r.margin < 0,
    demand:
      typeof r.sales_velocity === 'number'
        ? r.sales_velocity.toFixed(2)
        : String(r.sales_rank ?? ''),
    max_qty: r.max_qty,
    desk_bid: r.house_accepted ? r.house_qty : null,
    status: r.status,
    trades: r.trades.map((t) => ({
      who: ACTOR[t.actor] ?? t.actor,
      qty: t.qty,
      outcome: t.settled
        ? `${usd(t.realized_pnl)} USD, sold ${t.units_sold} of ${t.qty}${t.sold_out ? ', sold out' : ''}${t.regime ? ', downside event' : ''}`
        : `sold ${t.units_sold_so_far} of ${t.qty} in ${t.revealed_ticks} of ${t.horizon} sessions`,
      neg: t.settled && t.realized_pnl < 0,
    })),
    pnl: pnl === null ? '' : usd(pnl),
    pnl_neg: pnl !== null && pnl < 0,
  };
}
