// Charts of the pages: inline SVG drawn on the server (no script; the pages' CSP allows none inline).
// Scales and paths come from d3-scale and d3-shape; this module only lays out axes and text. Every
// chart carries its own text alternative (<title>, <desc>) and a summary sentence for the caption.
import { scaleBand, scaleLinear } from 'd3-scale';
import { area, line } from 'd3-shape';

/** One line of a chart; `null` where a value is unknown (the line breaks there). */
export type Series = { name: string; values: (number | null)[] };

export type ChartSpec = {
  /** Short title: the chart's accessible name. */
  title: string;
  /** x positions (session ticks, quantities...), one per value of each series. */
  x: number[];
  xLabel: string;
  yLabel: string;
  /** Formats a y value for the axis and the summary ("12.50 USD"). */
  yFormat?: (v: number) => string;
  /** Formats an x value for the axis and the summary (a day number as a date...); default: the number. */
  xFormat?: (x: number) => string;
  series: Series[];
  /** A shaded range (low / high) behind the lines, e.g. a projection's scenarios. */
  band?: { low: (number | null)[]; high: (number | null)[]; name?: string };
  /** A marked x position (the chosen quantity...): a dashed line with its label. */
  marker?: { x: number; label: string };
  /** Horizontal reference lines (a threshold, a target), always within the y axis. */
  levels?: { y: number; label: string }[];
  /** Points ringed and named in their own title (a missed target): x and y in the chart's values. */
  rings?: { x: number; y: number; label: string }[];
  /** The x axis's labelled positions (default: about six round ones). */
  xTicks?: number[];
  /** A value the y axis always reaches (0: a figure that cannot be negative starts at 0). */
  yReach?: number;
  width?: number;
  height?: number;
};

/** A legend entry: the series' name and its swatch's class (s0..s3, band, marker). */
export type LegendItem = { name: string; swatch: string };
export type Chart = { svg: string; summary: string; legend?: LegendItem[] };

/** The legend of a chart's lines, band and marker (figure() lists it under the chart). */
function legendOf(
  spec: Pick<ChartSpec, 'series' | 'band' | 'marker' | 'levels' | 'rings'>,
): LegendItem[] {
  const items = spec.series.map((s, k) => ({ name: s.name, swatch: `s${k % 4}` }));
  if (spec.band) items.push({ name: spec.band.name ?? 'range', swatch: 'band' });
  if (spec.marker) items.push({ name: spec.marker.label, swatch: 'marker' });
  for (const l of spec.levels ?? []) items.push({ name: l.label, swatch: 'level' });
  if (spec.rings?.length) items.push({ name: 'missed target', swatch: 'ring' });
  return items;
}

// The right margin holds half of the last x label at a phone's text size (see TICK_CHAR).
const M = { top: 12, right: 28, bottom: 36, left: 68 };
/**
 * User units a y tick label's character may take: site.css draws axis text at 18 units on a phone,
 * where a chart scales down to the screen's width, so the labels need this room beside the axis's
 * title there (at 11 units on a desktop they leave a gap).
 */
const TICK_CHAR = 10.5;

/** The plot's left edge: room for the axis title (x = 12), then the widest y tick label. */
function plotLeft(
  y: ReturnType<typeof scaleLinear<number, number>>,
  fmt: (v: number) => string,
): number {
  return Math.max(
    M.left,
    Math.ceil(26 + Math.max(0, ...y.ticks(5).map((t) => fmt(t).length)) * TICK_CHAR),
  );
}
let ids = 0;

const ESC: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESC[c]);
const defaultFormat = (v: number) =>
  Math.abs(v) >= 1000 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);

function extent(values: (number | null)[]): [number, number] | undefined {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v === null || !Number.isFinite(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return lo <= hi ? [lo, hi] : undefined;
}

/** "price: from 10.00 to 12.50 USD (low 9.80, high 13.10) over sessions 100 to 219." */
function describe(spec: ChartSpec, fmt: (v: number) => string): string {
  const parts = spec.series.map((s) => {
    const known = s.values
      .map((v, i) => [spec.x[i], v] as const)
      .filter((p): p is readonly [number, number] => p[1] !== null && Number.isFinite(p[1]));
    if (!known.length) return `${s.name}: no data`;
    const [lo, hi] = extent(known.map((p) => p[1]))!;
    return `${s.name} from ${fmt(known[0][1])} to ${fmt(known[known.length - 1][1])} (low ${fmt(lo)}, high ${fmt(hi)})`;
  });
  const xs = extent(spec.x);
  const xf = spec.xFormat ?? String;
  const span = xs ? ` over ${spec.xLabel} ${xf(xs[0])} to ${xf(xs[1])}` : '';
  return `${spec.title}: ${parts.join('; ')}${span}.`;
}

function frame(spec: ChartSpec, w: number, h: number, body: string, summary: string): string {
  const id = `chart-${++ids}`;
  return (
    `<svg class="chart" role="img" aria-labelledby="${id}-t ${id}-d" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="${id}-t">${esc(spec.title)}</title><desc id="${id}-d">${esc(summary)}</desc>${body}</svg>`
  );
}

function yAxis(
  y: ReturnType<typeof scaleLinear<number, number>>,
  left: number,
  w: number,
  fmt: (v: number) => string,
  label: string,
  h: number,
): string {
  const ticks = y.ticks(5);
  let out = `<g class="axis y">`;
  for (const t of ticks) {
    const py = y(t).toFixed(1);
    out += `<line x1="${left}" x2="${w - M.right}" y1="${py}" y2="${py}" stroke-opacity=".25"/><text x="${left - 6}" y="${py}" dy=".32em" text-anchor="end">${esc(fmt(t))}</text>`;
  }
  const mid = ((M.top + h - M.bottom) / 2).toFixed(1);
  return `${out}<text class="axis-title" transform="translate(12 ${mid}) rotate(-90)" text-anchor="middle">${esc(label)}</text></g>`;
}

function xAxisLabel(left: number, w: number, h: number, label: string): string {
  return `<text class="axis-title" x="${((left + w - M.right) / 2).toFixed(1)}" y="${h - 4}" text-anchor="middle">${esc(label)}</text>`;
}

type Scale = ReturnType<typeof scaleLinear<number, number>>;
/** A line chart's scales, the plot's left edge and the chart's size. */
type Plot = { x: Scale; y: Scale; left: number; w: number; h: number };

const known = (v: number | null): v is number => v !== null && Number.isFinite(v);

/** Lines over a numeric x axis (sessions, quantities), with an optional shaded band. */
export function lineChart(spec: ChartSpec): Chart {
  const w = spec.width ?? 640;
  const h = spec.height ?? 220;
  const fmt = spec.yFormat ?? defaultFormat;
  const summary = [describe(spec, fmt), ...(spec.levels ?? []).map((l) => `${l.label}.`)].join(' ');
  const ys = extent(yValues(spec));
  const xs = extent(spec.x);
  if (!ys || !xs) return noData(spec, w, summary);
  const p = linePlot(ys, xs, w, h, fmt);
  let body =
    yAxis(p.y, p.left, w, fmt, spec.yLabel, h) +
    lineXAxis(spec, p) +
    bandPath(spec, p) +
    seriesPaths(spec, p, fmt) +
    levelLines(spec, p) +
    ringMarks(spec, p);
  if (p.y.domain()[0] < 0 && p.y.domain()[1] > 0) body = zeroLine(p) + body;
  body += markerMark(spec, p);
  return { svg: frame(spec, w, h, body, summary), summary, legend: legendOf(spec) };
}

/** Every y value the axis must reach: the lines', the band's, the levels' and `yReach`. */
function yValues(spec: ChartSpec): (number | null)[] {
  return [
    ...spec.series.flatMap((s) => s.values),
    ...(spec.band ? [...spec.band.low, ...spec.band.high] : []),
    ...(spec.levels ?? []).map((l) => l.y),
    ...(spec.yReach === undefined ? [] : [spec.yReach]),
  ];
}

/** The scales of the values' extents: y padded when flat and made round, x widened when one point. */
function linePlot(
  ys: [number, number],
  xs: [number, number],
  w: number,
  h: number,
  fmt: (v: number) => string,
): Plot {
  const pad = ys[0] === ys[1] ? Math.max(Math.abs(ys[0]) * 0.1, 1) : 0;
  const y = scaleLinear()
    .domain([ys[0] - pad, ys[1] + pad])
    .nice()
    .range([h - M.bottom, M.top]);
  const left = plotLeft(y, fmt);
  const x = scaleLinear()
    .domain(xs[0] === xs[1] ? [xs[0] - 1, xs[1] + 1] : xs)
    .range([left, w - M.right]);
  return { x, y, left, w, h };
}

/** The x axis: its line, the ticks given (those within the axis) or about six whole ones, its title. */
function lineXAxis(spec: ChartSpec, { x, left, w, h }: Plot): string {
  let xAxis = `<g class="axis x"><line x1="${left}" x2="${w - M.right}" y1="${h - M.bottom}" y2="${h - M.bottom}"/>`;
  const xTicks =
    spec.xTicks?.filter((t) => t >= x.domain()[0] && t <= x.domain()[1]) ??
    x.ticks(Math.min(6, spec.x.length)).filter(Number.isInteger);
  for (const t of xTicks) {
    xAxis += `<text x="${x(t).toFixed(1)}" y="${h - M.bottom + 14}" text-anchor="middle">${esc((spec.xFormat ?? String)(t))}</text>`;
  }
  return `${xAxis}${xAxisLabel(left, w, h, spec.xLabel)}</g>`;
}

/** The shaded band, where both its bounds are known. */
function bandPath(spec: ChartSpec, { x, y }: Plot): string {
  if (!spec.band) return '';
  const { low, high } = spec.band;
  const d = area<number>()
    .defined((i) => known(low[i]) && known(high[i]))
    .x((i) => x(spec.x[i]))
    .y0((i) => y(low[i] as number))
    .y1((i) => y(high[i] as number))(spec.x.map((_, i) => i));
  return d ? `<path class="band" d="${d}"/>` : '';
}

/** Each line, broken where a value is unknown, and a dot for each value alone between unknowns. */
function seriesPaths(spec: ChartSpec, { x, y }: Plot, fmt: (v: number) => string): string {
  let body = '';
  spec.series.forEach((s, k) => {
    const d = line<number>()
      .defined((i) => known(s.values[i]))
      .x((i) => x(spec.x[i]))
      .y((i) => y(s.values[i] as number))(spec.x.map((_, i) => i));
    if (d)
      body += `<path class="line series-${k % 4}" d="${d}"><title>${esc(s.name)}</title></path>`;
    // A value without a known neighbour draws no segment: a dot shows it (a close alone in its point).
    s.values.forEach((v, i) => {
      if (known(v) && !known(s.values[i - 1] ?? null) && !known(s.values[i + 1] ?? null)) {
        body += `<circle class="dot series-${k % 4}" cx="${x(spec.x[i]).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3"><title>${esc(s.name)}: ${esc(fmt(v))}</title></circle>`;
      }
    });
  });
  return body;
}

function levelLines(spec: ChartSpec, { y, left, w }: Plot): string {
  let body = '';
  for (const l of spec.levels ?? []) {
    const ly = y(l.y).toFixed(1);
    // The label above its line, or below it when the line runs along the plot's top.
    const dy = y(l.y) - M.top < 20 ? '1.2em' : '-.4em';
    body += `<g class="level"><line x1="${left}" x2="${w - M.right}" y1="${ly}" y2="${ly}"/><text x="${w - M.right - 4}" y="${ly}" dy="${dy}" text-anchor="end">${esc(l.label)}</text></g>`;
  }
  return body;
}

function ringMarks(spec: ChartSpec, { x, y }: Plot): string {
  let body = '';
  for (const r of spec.rings ?? []) {
    body += `<circle class="ring" cx="${x(r.x).toFixed(1)}" cy="${y(r.y).toFixed(1)}" r="6"><title>${esc(r.label)}</title></circle>`;
  }
  return body;
}

function zeroLine({ y, left, w }: Plot): string {
  return `<line class="zero" x1="${left}" x2="${w - M.right}" y1="${y(0).toFixed(1)}" y2="${y(0).toFixed(1)}"/>`;
}

/** The marker, when within the x axis: its label on the side with more room. */
function markerMark(spec: ChartSpec, { x, left, w, h }: Plot): string {
  const marker = spec.marker;
  if (!(marker && marker.x >= x.domain()[0] && marker.x <= x.domain()[1])) return '';
  const mx = x(marker.x);
  const anchor = mx > (left + w - M.right) / 2 ? 'end' : 'start';
  return (
    `<g class="marker"><line x1="${mx.toFixed(1)}" x2="${mx.toFixed(1)}" y1="${M.top}" y2="${h - M.bottom}"/>` +
    `<text x="${(mx + (anchor === 'end' ? -5 : 5)).toFixed(1)}" y="${M.top + 12}" text-anchor="${anchor}">${esc(marker.label)}</text></g>`
  );
}

/** A chart without values: a line of text in its frame. */
function noData(spec: ChartSpec, w: number, summary: string): Chart {
  return { svg: frame(spec, w, 40, `<text x="8" y="24">No data yet.</text>`, summary), summary };
}

/** Bars over categories or sessions (volume, P&L per session); negative bars drawn below zero. */
export function barChart(spec: Omit<ChartSpec, 'band'> & { series: [Series] }): Chart {
  const w = spec.width ?? 640;
  const h = spec.height ?? 200;
  const fmt = spec.yFormat ?? defaultFormat;
  const xf = spec.xFormat ?? String;
  const summary = describe(spec, fmt);
  const values = spec.series[0].values;
  const ys = extent([...values, 0]);
  if (!ys || spec.x.length === 0) return noData(spec, w, summary);
  const y = scaleLinear()
    .domain(ys[0] === ys[1] ? [ys[0], ys[0] + 1] : ys)
    .nice()
    .range([h - M.bottom, M.top]);
  const left = plotLeft(y, fmt);
  const x = scaleBand<number>()
    .domain(spec.x)
    .range([left, w - M.right])
    .paddingInner(0.15);
  let body = yAxis(y, left, w, fmt, spec.yLabel, h);
  const zero = y(0);
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) return;
    const top = Math.min(y(v), zero);
    const height = Math.max(Math.abs(y(v) - zero), v === 0 ? 0 : 0.5);
    body += `<rect class="bar${v < 0 ? ' neg' : ''}" x="${x(spec.x[i])!.toFixed(1)}" y="${top.toFixed(1)}" width="${Math.max(x.bandwidth(), 0.5).toFixed(1)}" height="${height.toFixed(1)}"><title>${esc(xf(spec.x[i]))}: ${esc(fmt(v))}</title></rect>`;
  });
  let xAxis = `<g class="axis x"><line x1="${left}" x2="${w - M.right}" y1="${zero.toFixed(1)}" y2="${zero.toFixed(1)}"/>`;
  const every = Math.max(1, Math.ceil(spec.x.length / 6));
  spec.x.forEach((t, i) => {
    if (i % every === 0)
      xAxis += `<text x="${(x(t)! + x.bandwidth() / 2).toFixed(1)}" y="${h - M.bottom + 14}" text-anchor="middle">${esc(xf(t))}</text>`;
  });
  body += `${xAxis}${xAxisLabel(left, w, h, spec.xLabel)}</g>`;
  return { svg: frame(spec, w, h, body, summary), summary, legend: legendOf(spec) };
}

/** The chart inside a <figure> with its summary as the caption: what a template inserts with {{{ }}}. */
export function figure(chart: Chart, caption?: string): string {
  const legend = chart.legend?.length
    ? `<ul class="legend" aria-hidden="true">${chart.legend.map((l) => `<li><span class="swatch ${l.swatch}"></span>${esc(l.name)}</li>`).join('')}</ul>`
    : '';
  return `<figure class="chart">${chart.svg}${legend}<figcaption>${esc(caption ? `${caption} ${chart.summary}` : chart.summary)}</figcaption></figure>`;
}

// The console inventory's price line of a family (templates/console-inventory.mustache).

/** The chart's size in SVG user units (the page scales it). */
export const CHART_W = 240;
export const CHART_H = 48;

/**
 * A family's resale price over the sessions before minting as an SVG polyline's points (oldest
 * left); sessions without a price are skipped. Empty when fewer than two prices are known.
 */
export function chartPoints(prices: (number | null)[]): string {
  const known = prices
    .map((p, i) => [i, p] as const)
    .filter((x): x is readonly [number, number] => x[1] !== null);
  if (known.length < 2) return '';
  const lo = Math.min(...known.map((x) => x[1]));
  const hi = Math.max(...known.map((x) => x[1]));
  const x = (i: number) => ((i / Math.max(1, prices.length - 1)) * CHART_W).toFixed(1);
  const y = (p: number) =>
    (hi === lo ? CHART_H / 2 : CHART_H - ((p - lo) / (hi - lo)) * CHART_H).toFixed(1);
  return known.map(([i, p]) => `${x(i)},${y(p)}`).join(' ');
}
