// What the assets pages show (SPEC.md "Web routes": GET /assets, GET /assets/{market_id}/{cluster}):
// the families of a market's current menu in a chosen order, and one family's price, sales and
// outcome history with its ranking signals, as charts and tables. Pure: the route reads the record
// (families, tape, signals) and hands the rows here.
import { barChart, figure, lineChart } from './charts.js';
import { centsToNumber, numberToCents } from '../engine/index.js';
import { usd } from './answers.js';

/** A 4-decimal rate as a percentage with 2 decimals: the same number, exactly. */
export const percent = (rate: number | null) =>
  rate === null ? 'none yet' : `${(rate * 100).toFixed(2)} %`;

/** Chart amounts: cents while they fit the axis, whole dollars from 1000 on. */
export const money = (v: number) => (Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(2));

/** Chart counts (units, ranks): whole numbers as they are, axis steps between them with a decimal. */
const count = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

/** A families answer's row (GET /markets/{id}/families), with either kind of quote. */
export type FamilyRow = {
  cluster: number;
  sku_family: string;
  deals: number;
  house_bids: number;
  mean_unit_cost: number;
  mean_list_price: number;
  mean_margin: number;
  executed: number;
  settled: number;
  mean_pnl: number | null;
  profitable_rate: number | null;
  downside_rate: number | null;
  sold_out_rate: number | null;
  units_sold_per_session: number | null;
  sales_velocity?: number;
  sales_rank?: number;
  nsellers?: number;
};
export type TapeRow = { tick: number } & Record<string, number | null>;
export type SignalRow = {
  tick: number;
  sales_rank: number;
  rank_drops_prev: number;
  nsellers: number;
};

/** The orders of GET /assets (`sort`), each with its words and its comparison. */
export const FAMILY_SORTS = {
  house: 'desk bids',
  deals: 'deals on the menu',
  margin: 'mean margin',
  result: 'mean result',
  profitable: 'profitable share',
  family: 'name',
} as const;
export type FamilySort = keyof typeof FAMILY_SORTS;

/** Larger first, unknown (null) last. */
const desc = (a: number | null, b: number | null) =>
  a === b ? 0 : a === null ? 1 : b === null ? -1 : b - a;

const BY: Record<FamilySort, (a: FamilyRow, b: FamilyRow) => number> = {
  house: (a, b) => desc(a.house_bids, b.house_bids) || desc(a.deals, b.deals),
  deals: (a, b) => desc(a.deals, b.deals),
  margin: (a, b) => desc(a.mean_margin, b.mean_margin),
  result: (a, b) => desc(a.mean_pnl, b.mean_pnl),
  profitable: (a, b) => desc(a.profitable_rate, b.profitable_rate),
  family: (a, b) => a.sku_family.localeCompare(b.sku_family),
};

/** The families in `sort` order; ties by cluster id, so the order is total. */
export function sortFamilies<F extends FamilyRow>(rows: readonly F[], sort: FamilySort): F[] {
  return [...rows].sort((a, b) => BY[sort](a, b) || a.cluster - b.cluster);
}

const num = (v: number | null | undefined, digits = 2) =>
  v === null || v === undefined ? '' : v.toFixed(digits);
const plain = (v: number | null | undefined) => (v === null || v === undefined ? '' : String(v));

/** One family as a row of the families table and the cards of its page. */
export function familyCells(market: string, f: FamilyRow) {
  return {
    cluster: f.cluster,
    sku_family: f.sku_family,
    path: `/assets/${market}/${f.cluster}`,
    deals: f.deals,
    house_bids: f.house_bids,
    mean_unit_cost: usd(f.mean_unit_cost),
    mean_list_price: usd(f.mean_list_price),
    mean_margin: usd(f.mean_margin),
    margin_neg: f.mean_margin < 0,
    quote:
      f.sales_velocity !== undefined
        ? `${plain(f.sales_velocity)} units / session`
        : `rank ${plain(f.sales_rank)}, ${plain(f.nsellers)} sellers`,
    executed: f.executed,
    settled: f.settled,
    profitable: percent(f.profitable_rate),
    downside: percent(f.downside_rate),
    sold_out: percent(f.sold_out_rate),
    mean_pnl: f.mean_pnl === null ? 'none yet' : usd(f.mean_pnl),
    pnl_neg: (f.mean_pnl ?? 0) < 0,
    units_sold_per_session: plain(f.units_sold_per_session),
  };
}

/** The families' mean results as bars (x: cluster ids). */
export function familiesChart(rows: readonly FamilyRow[], window: number): string {
  const ordered = [...rows].sort((a, b) => a.cluster - b.cluster);
  return figure(
    barChart({
      title: `Mean result per settled trade, by family, last ${window} sessions`,
      x: ordered.map((f) => f.cluster),
      xLabel: 'family (cluster)',
      yLabel: 'USD per trade',
      yFormat: money,
      series: [{ name: 'mean result', values: ordered.map((f) => f.mean_pnl) }],
    }),
    'Families without settled trades have no bar.',
  );
}

/** Every session from..to, with the rows' values where a row exists (null elsewhere: the line breaks). */
function dense(
  rows: readonly TapeRow[],
  from: number,
  to: number,
  pick: (r: TapeRow) => number | null,
) {
  const byTick = new Map(rows.map((r) => [r.tick, r]));
  const x: number[] = [];
  const values: (number | null)[] = [];
  for (let t = from; t <= to; t++) {
    x.push(t);
    const r = byTick.get(t);
    values.push(r ? pick(r) : null);
  }
  return { x, values };
}

const sumCents = (a: number | null, b: number | null) =>
  a === null && b === null ? null : centsToNumber(numberToCents(a ?? 0) + numberToCents(b ?? 0));

/** A family's history over closed sessions from..to (settled up to lastSettled): three charts. */
export function historyCharts(
  name: string,
  rows: readonly TapeRow[],
  from: number,
  to: number,
  lastSettled: number,
) {
  const close = dense(rows, from, to, (r) => r.price_close);
  const price = lineChart({
    title: `${name}: resale price and landed cost per session`,
    x: close.x,
    xLabel: 'session',
    yLabel: 'USD per unit',
    yFormat: money,
    series: [
      { name: 'resale price at the close', values: close.values },
      { name: 'landed cost paid (vwap)', values: dense(rows, from, to, (r) => r.vwap).values },
    ],
    band: {
      low: dense(rows, from, to, (r) => r.price_low).values,
      high: dense(rows, from, to, (r) => r.price_high).values,
    },
  });
  const units = dense(rows, from, to, (r) => r.units);
  const sales = lineChart({
    title: `${name}: units bought and sold per session`,
    x: units.x,
    xLabel: 'session',
    yLabel: 'units',
    yFormat: count,
    series: [
      { name: 'units bought', values: units.values },
      { name: 'units sold', values: dense(rows, from, to, (r) => r.sold).values },
    ],
  });
  const settledTo = Math.min(to, lastSettled);
  const pnl = dense(rows, from, Math.max(from - 1, settledTo), (r) =>
    sumCents(r.desk_pnl ?? null, r.holder_pnl ?? null),
  );
  const outcome = barChart({
    title: `${name}: realised P&L of the trades of each settled session`,
    x: pnl.x,
    xLabel: 'session',
    yLabel: 'USD',
    yFormat: money,
    series: [{ name: 'realised P&L (desk and holders)', values: pnl.values }],
  });
  return {
    price_chart: figure(
      price,
      'The shaded band runs from the lowest to the highest resale price listed in the session.',
    ),
    sales_chart: figure(sales),
    outcome_chart: figure(
      outcome,
      `Sessions settle ${to - lastSettled} sessions after they close; later ones have no result yet.`,
    ),
  };
}

/** The tape rows as table rows, newest first. */
export function historyTable(rows: readonly TapeRow[]) {
  return [...rows].reverse().map((r) => ({
    tick: r.tick,
    price_low: usd(r.price_low),
    price_close: usd(r.price_close),
    price_high: usd(r.price_high),
    vwap: usd(r.vwap),
    exec_n: plain(r.exec_n),
    units: plain(r.units),
    sold: plain(r.sold),
    active: plain(r.active),
    sell_through: num(r.sell_through, 4),
    settled: r.desk_pnl !== undefined,
    desk_pnl: usd(r.desk_pnl),
    holder_pnl: usd(r.holder_pnl),
    profitable: r.profitable_rate === undefined ? '' : percent(r.profitable_rate),
    downside: r.downside_rate === undefined ? '' : percent(r.downside_rate),
  }));
}

/** A ranking family's signals: the rank as a chart (lower is better), every row as a table (newest first). */
export function signalsView(name: string, rows: readonly SignalRow[]) {
  const chart = lineChart({
    title: `${name}: sales rank at each session's open`,
    x: rows.map((r) => r.tick),
    xLabel: 'session',
    yLabel: 'sales rank',
    yFormat: count,
    series: [{ name: 'sales rank', values: rows.map((r) => r.sales_rank) }],
  });
  return {
    signals_chart: figure(chart, 'A lower rank sells faster.'),
    signals: [...rows].reverse().map((r) => ({
      tick: r.tick,
      sales_rank: plain(r.sales_rank),
      rank_drops_prev: plain(r.rank_drops_prev),
      nsellers: plain(r.nsellers),
    })),
  };
}
