// What the operators' templates show: the figures (src/ops/figures.ts) and the bench results
// (src/ops/bench.ts) as words, table cells and charts (src/web/charts.ts). Every cell the live
// script updates carries `data-f="<path in the figures>"` and the server's own text for it, so the
// page reads the same without the script.
import { figure, lineChart } from '../web/charts.js';
import { SCENARIOS, type BenchResults, type Measure, type Run, type Unit } from './bench.js';
import type { FiguresShape, History, Point } from '../schemas/ops.js';
import { showValue, spanWords, type ThresholdId } from './thresholds.js';

const dash = '–';
export const fmt = {
  int: (n: number | null) => (n === null ? dash : Math.round(n).toLocaleString('en-US')),
  rate: (n: number | null) => (n === null ? dash : n >= 100 ? n.toFixed(0) : n.toFixed(2)),
  ms: (n: number | null) =>
    n === null ? dash : n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(2)} ms`,
  pct: (n: number | null) => (n === null ? dash : `${(n * 100).toFixed(1)} %`),
  mb: (n: number | null) => (n === null ? dash : `${(n / 2 ** 20).toFixed(1)} MB`),
  seconds: (n: number | null) => (n === null ? dash : `${Math.round(n).toLocaleString('en-US')} s`),
  at: (unix: number | null) =>
    unix === null
      ? dash
      : `${new Date(unix * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`,
};

/** A cell: its text now and the figures path the live script keeps it current from. */
type Kind = keyof typeof fmt;
const cell = (path: string, kind: Kind, v: number | null) => ({
  path,
  fmt: kind,
  text: fmt[kind](v),
});
/** A section's labelled cells, each figure named once (its key gives both the value and the cell's path). */
const rows = <T extends Record<string, number | null>>(
  section: string,
  figures: T,
  spec: readonly (readonly [keyof T & string, string, Kind])[],
) =>
  spec.map(([key, label, kind]) => ({ label, ...cell(`${section}.${key}`, kind, figures[key]) }));

/** How a chart's values read: the figures' own formats. */
type ChartFmt = 'rate' | 'ms' | 'pct';
/**
 * One chart of /ops: its lines are keys of the points (a dotted path: `markets.m15.late_ms`), its
 * levels the thresholds drawn (thresholds.ts). The page's script redraws it from the same spec.
 */
type OpsChart = {
  id: string;
  title: string;
  yLabel: string;
  fmt: ChartFmt;
  series: { name: string; key: string }[];
  levels: { id: ThresholdId; name?: string }[];
};

/** A chart as declared: `perMarket` lines are one per market, of that key of its point figures. */
type OpsChartDecl = Omit<OpsChart, 'series'> & {
  series: OpsChart['series'] | { perMarket: string };
};

/** The charts of /ops, in the page's order (CONTRACT.md "Operators"). */
const OPS_CHARTS: readonly OpsChartDecl[] = [
  {
    id: 'requests',
    title: 'Requests per second',
    yLabel: 'req/s',
    fmt: 'rate',
    series: [{ name: 'requests/s', key: 'rate' }],
    levels: [],
  },
  {
    id: 'errors',
    title: '4xx and 5xx answers per second',
    yLabel: 'per second',
    fmt: 'rate',
    series: [
      { name: '4xx/s', key: 'rate_4xx' },
      { name: '5xx/s', key: 'rate_5xx' },
    ],
    levels: [
      { id: 'rate_4xx', name: '4xx' },
      { id: 'rate_5xx', name: '5xx' },
    ],
  },
  {
    id: 'latency',
    title: 'Request latency p99, all routes',
    yLabel: 'ms',
    fmt: 'ms',
    series: [{ name: 'p99', key: 'p99_ms' }],
    levels: [{ id: 'p99_ms' }],
  },
  {
    id: 'close',
    title: 'Close duration per market (the longest in each point)',
    yLabel: 'ms',
    fmt: 'ms',
    series: { perMarket: 'close_ms' },
    levels: [{ id: 'close_ms' }],
  },
  {
    id: 'lateness',
    title: "Close lateness per market (after the session's end)",
    yLabel: 'ms',
    fmt: 'ms',
    series: { perMarket: 'late_ms' },
    levels: [{ id: 'late_ms' }],
  },
  {
    id: 'mailbox',
    title: 'Mailbox depth: the deepest shard, of its bound',
    yLabel: '% of bound',
    fmt: 'pct',
    series: [{ name: 'deepest mailbox', key: 'mailbox_share' }],
    levels: [{ id: 'mailbox_share' }],
  },
  {
    id: 'pool',
    title: 'Database pool: mean wait for a connection',
    yLabel: 'ms',
    fmt: 'ms',
    series: [{ name: 'mean wait', key: 'pool_wait_ms' }],
    levels: [{ id: 'pool_wait_ms' }],
  },
  {
    id: 'fanout',
    title: 'Event fan-out lag p99',
    yLabel: 'ms',
    fmt: 'ms',
    series: [{ name: 'fan-out p99', key: 'fanout_p99_ms' }],
    levels: [{ id: 'fanout_p99_ms' }],
  },
  {
    id: 'loop',
    title: 'Event-loop delay p99',
    yLabel: 'ms',
    fmt: 'ms',
    series: [{ name: 'event-loop p99', key: 'loop_p99_ms' }],
    levels: [],
  },
];

/** The charts of /ops with their per-market lines, one per market of `markets`. */
function opsCharts(markets: readonly string[]): OpsChart[] {
  return OPS_CHARTS.map((c) => ({ ...c, series: linesOf(c.series, markets) }));
}

function linesOf(series: OpsChartDecl['series'], markets: readonly string[]): OpsChart['series'] {
  if (Array.isArray(series)) return series;
  const key = series.perMarket;
  return markets.map((m) => ({ name: m, key: `markets.${m}.${key}` }));
}

/** A point's value at a dotted key. */
function valueAt(p: Point, key: string): number | null {
  let v: unknown = p;
  for (const part of key.split('.'))
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return typeof v === 'number' ? v : null;
}

/** The x axis of the history: seconds before the newest point, labelled in round minutes or seconds. */
export function historyAxis(points: number, pointS: number) {
  const span = Math.max(1, points - 1) * pointS;
  const step = [5, 10, 15, 30, 60, 120, 180, 300].find((s) => span / s <= 6) ?? 600;
  const ticks: number[] = [];
  for (let t = 0; t > -span; t -= step) ticks.unshift(t); // none at the left edge, under the y labels
  return {
    x: Array.from({ length: points }, (_, i) => (i - points + 1) * pointS),
    ticks,
    label: (t: number) => (t === 0 ? 'now' : t % 60 === 0 ? `${-t / 60} min` : `${-t} s`),
  };
}

const CHART_FMT: Record<ChartFmt, (v: number) => string> = {
  rate: (v) => fmt.rate(v),
  ms: (v) => fmt.ms(v),
  pct: (v) => fmt.pct(v),
};

type Levels = { y: number; label: string }[];
type HistoryAxis = ReturnType<typeof historyAxis>;
type RouteRow = FiguresShape['routes'][number];

export function opsView(f: FiguresShape, h: History) {
  return {
    ...headline(f),
    cards: cardsOf(f),
    charts: chartViews(f, h),
    ...historyView(h),
    recent_5xx: f.recent_5xx.map((e) => ({
      at: fmt.at(e.at),
      method: e.method,
      route: e.route,
      status: e.status,
    })),
    has_5xx: f.recent_5xx.length > 0,
    ...routesView(f),
    mailbox_limit: fmt.int(f.mailbox_limit),
    shards: shardRows(f.shards),
    markets: marketRows(f.markets),
    ...tablesView(f),
  };
}

/** Who and when: the process, the figures' span, readiness and the status line. */
function headline(f: FiguresShape) {
  return {
    who: `pid ${f.process.pid} on ${f.process.host}`,
    pid: f.process.pid,
    host: f.process.host,
    basis:
      f.window_s > 0 ? `over the last ${f.window_s.toFixed(0)} s` : 'since the process started',
    at: cell('at', 'at', f.at),
    ready: {
      path: 'ready',
      fmt: 'ready',
      text: f.ready === null ? dash : f.ready ? 'ready' : 'starting',
    },
    status: f.status.map((b) => b.text),
    status_ok: f.status.length === 0,
  };
}

/** The cards at the top: requests, their latency and errors, the process. */
function cardsOf(f: FiguresShape) {
  const r = f.requests;
  return [
    { label: 'Requests per second', ...cell('requests.rate', 'rate', r.rate) },
    { label: 'Latency p50', ...cell('requests.p50_ms', 'ms', r.p50_ms) },
    { label: 'Latency p99', ...cell('requests.p99_ms', 'ms', r.p99_ms) },
    { label: '4xx per second', ...cell('requests.rate_4xx', 'rate', r.rate_4xx) },
    { label: '5xx per second', ...cell('requests.rate_5xx', 'rate', r.rate_5xx) },
    { label: '4xx since start', ...cell('requests.errors_4xx', 'int', r.errors_4xx) },
    { label: '5xx since start', ...cell('requests.errors_5xx', 'int', r.errors_5xx) },
    { label: '429 refusals since start', ...cell('requests.refused_429', 'int', r.refused_429) },
    { label: '503 refusals since start', ...cell('requests.refused_503', 'int', r.refused_503) },
    { label: 'Requests since start', ...cell('requests.total', 'int', r.total) },
    { label: 'Process RSS', ...cell('process.rss_bytes', 'mb', f.process.rss_bytes) },
    {
      label: 'Event-loop delay p99',
      ...cell('process.event_loop_p99_ms', 'ms', f.process.event_loop_p99_ms),
    },
    { label: 'Uptime', ...cell('process.uptime_s', 'seconds', f.process.uptime_s) },
  ];
}

/** Each chart of /ops drawn from the history, with the spec the page's script redraws it from. */
function chartViews(f: FiguresShape, h: History) {
  const byId = new Map(h.thresholds.map((t) => [t.id, t]));
  const axis = historyAxis(h.points.length, h.point_s);
  return opsCharts(f.markets.map((m) => m.market)).map((c) => {
    const levels = levelsOf(c, byId);
    return {
      id: c.id,
      title: c.title,
      spec: JSON.stringify({ ...c, levels }),
      html: figure(historyChart(c, h, axis, levels)),
    };
  });
}

/** The threshold lines of a chart: those of its levels that the history has a threshold for. */
function levelsOf(c: OpsChart, byId: Map<string, History['thresholds'][number]>): Levels {
  return c.levels.flatMap((l) => {
    const t = byId.get(l.id);
    return t
      ? [
          {
            y: t.above,
            label: `${l.name ? `${l.name} ` : ''}threshold ${showValue(t.unit, t.above)}`,
          },
        ]
      : [];
  });
}

function historyChart(c: OpsChart, h: History, axis: HistoryAxis, levels: Levels) {
  return lineChart({
    title: c.title,
    x: axis.x,
    xLabel: 'time before now',
    yLabel: c.yLabel,
    xFormat: axis.label,
    xTicks: axis.ticks,
    yFormat: CHART_FMT[c.fmt],
    yReach: 0,
    series: c.series.map((s) => ({
      name: s.name,
      values: h.points.map((p) => valueAt(p, s.key)),
    })),
    levels,
  });
}

/** The history's span and the thresholds in words. */
function historyView(h: History) {
  return {
    point_s: h.point_s,
    history_span: spanWords(h.point_s * h.max_points),
    has_points: h.points.length >= 2,
    thresholds: h.thresholds.map((t) => ({
      figure: t.figure,
      above: showValue(t.unit, t.above),
      over: spanWords(t.over_s),
      why: t.why,
    })),
  };
}

/** The routes listed: those asked in the window, then the quiet ones. */
function routesView(f: FiguresShape) {
  const busy = f.routes.filter((x) => x.requests > 0);
  const quiet = f.routes.filter((x) => x.requests === 0);
  return {
    routes: busy.map(routeRow),
    quiet_routes: quiet.map(routeRow),
    quiet_count: quiet.length,
    has_quiet: quiet.length > 0,
    routes_more: f.routes_seen > f.routes.length ? f.routes_seen - f.routes.length : 0,
    has_routes: busy.length > 0,
  };
}

function routeRow(x: RouteRow) {
  return {
    method: x.method,
    route: x.route,
    requests: fmt.int(x.requests),
    rate: fmt.rate(x.rate),
    p50: fmt.ms(x.p50_ms),
    p99: fmt.ms(x.p99_ms),
    e4: fmt.int(x.errors_4xx),
    e5: fmt.int(x.errors_5xx),
  };
}

function shardRows(shards: FiguresShape['shards']) {
  return shards.map((s, i) => ({
    shard: s.shard,
    mailbox: cell(`shards.${i}.mailbox`, 'int', s.mailbox),
    share: cell(`shards.${i}.mailbox_share`, 'pct', s.mailbox_share),
    turns: cell(`shards.${i}.turns`, 'int', s.turns),
    p50: cell(`shards.${i}.turn_p50_ms`, 'ms', s.turn_p50_ms),
    p99: cell(`shards.${i}.turn_p99_ms`, 'ms', s.turn_p99_ms),
    utilization: cell(`shards.${i}.utilization`, 'pct', s.utilization),
    restarts: cell(`shards.${i}.restarts`, 'int', s.restarts),
  }));
}

function marketRows(markets: FiguresShape['markets']) {
  return markets.map((m, i) => ({
    market: m.market,
    interval:
      m.interval_s === null
        ? dash
        : `${m.interval_s < 10 ? m.interval_s.toFixed(2) : m.interval_s.toFixed(0)} s`,
    closes: cell(`markets.${i}.closes`, 'int', m.closes),
    performed: cell(`markets.${i}.performed`, 'int', m.performed),
    failures: cell(`markets.${i}.failures`, 'int', m.failures),
    p50: cell(`markets.${i}.close_p50_ms`, 'ms', m.close_p50_ms),
    p99: cell(`markets.${i}.close_p99_ms`, 'ms', m.close_p99_ms),
    late: cell(`markets.${i}.late_p99_ms`, 'ms', m.late_p99_ms),
    last_at: cell(`markets.${i}.last_close_at`, 'at', m.last_close_at),
    last_tick: cell(`markets.${i}.last_tick`, 'int', m.last_tick),
  }));
}

/** The labelled tables: the record cache, the database pools, the webhook backlog, the event streams. */
function tablesView(f: FiguresShape) {
  return {
    cache: rows('record_cache', f.record_cache, [
      ['kept_bytes', 'Kept', 'mb'],
      ['cap_bytes', 'Cap', 'mb'],
      ['sessions', 'Sessions kept', 'int'],
      ['hits', 'Hits', 'int'],
      ['misses', 'Misses', 'int'],
      ['hit_rate', 'Hit rate', 'pct'],
    ]),
    pool: rows('db_pool', f.db_pool, [
      ['waits_rate', 'Shard workers: waits for a connection per second', 'rate'],
      ['wait_ms', 'Shard workers: mean wait for a connection', 'ms'],
      ['waiting', 'Shard workers: waiting for a connection now', 'int'],
      ['used', 'Main thread: running a query', 'int'],
      ['free', 'Main thread: idle', 'int'],
      ['max', 'Main thread: pool size', 'int'],
    ]),
    webhook_backlog: rows('events', f.events, [
      ['webhooks_backlog', 'Webhook deliveries due, not yet sent', 'int'],
      ['webhooks_backlog_oldest_s', 'The oldest of them has waited', 'seconds'],
    ]),
    events: rows('events', f.events, [
      ['streams', 'Streams held', 'int'],
      ['sent_rate', 'Events sent per second', 'rate'],
      ['sent', 'Events sent since start', 'int'],
      ['fanout_p50_ms', 'Fan-out p50', 'ms'],
      ['fanout_p99_ms', 'Fan-out p99', 'ms'],
      ['closed_behind', 'Closed as too slow', 'int'],
      ['closed_gone', 'Closed as gone (410)', 'int'],
      ['webhooks_delivered', 'Webhooks delivered', 'int'],
      ['webhooks_retried', 'Webhooks to retry', 'int'],
      ['webhooks_failed', 'Webhooks given up', 'int'],
    ]),
  };
}

const UNIT_WORDS: Record<Unit, string> = {
  ratio: 'ratio to the same-run baseline',
  times: 'times the same-run floor',
  rps: 'requests per second',
  ms: 'milliseconds',
  MB: 'MB',
  KB: 'KB',
  s: 'seconds',
  per_s: 'a second',
};

function value(m: Pick<Measure, 'unit'>, v: number | null): string {
  if (v === null) return dash;
  if (m.unit === 'ratio') return v >= 10 ? `${v.toFixed(1)}x` : `${(v * 100).toFixed(1)} %`;
  if (m.unit === 'times') return `${v.toFixed(2)}×`;
  if (m.unit === 'rps') return `${Math.round(v).toLocaleString('en-US')} req/s`;
  if (m.unit === 'per_s') return `${v.toFixed(2)} a second`;
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(2)} ${m.unit}`;
}

/** Whether a figure meets its target; null without one. */
const meets = (m: Measure) =>
  m.target === null ? null : m.better === 'higher' ? m.value >= m.target : m.value < m.target;
function met(m: Measure): string {
  const ok = meets(m);
  return ok === null ? dash : ok ? 'yes' : 'no';
}
const day = (iso: string) => iso.slice(0, 16).replace('T', ' ');

/** The target lines of a chart, from each line's latest figure: one per target, naming the lines it is theirs. */
function targetLevels(latest: Measure[]): { y: number; label: string }[] {
  const by = new Map<string, { y: number; label: string; names: string[] }>();
  for (const m of latest) {
    if (m.target === null) continue;
    const label = `target ${m.better === 'higher' ? '≥' : '<'} ${value(m, m.target)}`;
    const level = by.get(label) ?? { y: m.target, label, names: [] };
    level.names.push(m.name);
    by.set(label, level);
  }
  return [...by.values()].map((l) => ({
    y: l.y,
    label: latest.length > 1 ? `${l.label} (${l.names.join(', ')})` : l.label,
  }));
}

const missedOn = (r: Run, m: Measure) =>
  `${m.name} missed its target on ${day(r.date)}: ${value(m, m.value)} against ${value(m, m.target)}`;

/** At most this many lines share a chart (the charts' four colours). */
const PER_CHART = 4;

/** One scenario's charts: per unit, each measure's value over the runs (x: the runs in date order). */
function scenarioCharts(title: string, runs: Run[]): string[] {
  const units = [...new Set(runs.flatMap((r) => r.measures.map((m) => m.unit)))];
  return units.flatMap((unit) => {
    const names = [
      ...new Set(runs.flatMap((r) => r.measures.filter((m) => m.unit === unit).map((m) => m.name))),
    ];
    const groups: string[][] = [];
    for (let k = 0; k < names.length; k += PER_CHART) groups.push(names.slice(k, k + PER_CHART));
    return groups.map((group) => groupChart(title, runs, unit, group));
  });
}

/** A line's runs with a target (`i`: the run's place on the x axis). */
type Judged = { name: string; runs: { i: number; r: Run; m: Measure }[] };
/** A line's runs that missed their target, of the `of` runs that had one. */
type Missed = Judged & { of: number };

/** The chart of the measures `group` of one unit over the runs, in its figure with its caption. */
function groupChart(title: string, runs: Run[], unit: Unit, group: string[]): string {
  const measure = (r: Run, name: string) =>
    r.measures.find((m) => m.name === name && m.unit === unit);
  // Per line, the runs with a target, and those that missed it.
  const judged: Judged[] = group.map((name) => ({
    name,
    runs: runs.flatMap((r, i) => {
      const m = measure(r, name);
      return m && meets(m) !== null ? [{ i, r, m }] : [];
    }),
  }));
  const missed: Missed[] = judged.map((j) => ({
    name: j.name,
    of: j.runs.length,
    runs: j.runs.filter((x) => meets(x.m) === false),
  }));
  const chart = lineChart({
    title: `${title}: ${group.join(', ')} (${UNIT_WORDS[unit]})`,
    x: runs.map((_, i) => i),
    xLabel: 'run date',
    yLabel: unitLabel(unit),
    xFormat: (i: number) => (runs[i] ? runs[i].date.slice(5, 10) : ''),
    yFormat: (v: number) => value({ unit }, v),
    series: group.map((name) => ({
      name,
      values: runs.map((r) => measure(r, name)?.value ?? null),
    })),
    levels: targetLevels(
      group.flatMap((name) =>
        runs
          .map((r) => measure(r, name))
          .filter((m): m is Measure => !!m)
          .slice(-1),
      ),
    ),
    rings: missed.flatMap((j) =>
      j.runs.map(({ i, r, m }) => ({ x: i, y: m.value, label: missedOn(r, m) })),
    ),
  });
  return figure(chart, captionOf(group, judged, missed));
}

/** A bench chart's y axis title. */
function unitLabel(unit: Unit): string {
  if (unit === 'ratio') return 'ratio';
  if (unit === 'times') return '× floor';
  if (unit === 'rps') return 'req/s';
  return unit;
}

/** The lines named, whether any has a target, and per line the runs that missed it. */
function captionOf(group: string[], judged: Judged[], missed: Missed[]): string {
  const words = missed.flatMap((j) => {
    const last = j.runs[j.runs.length - 1];
    return last
      ? [
          `${j.name}: ${j.runs.length} of ${j.of} runs missed the target, the latest: ${missedOn(last.r, last.m)}.`,
        ]
      : [];
  });
  const targeted = judged.some((j) => j.runs.length > 0);
  return [
    `Lines: ${group.join(', ')}.`,
    ...(targeted ? [] : ['No numeric target for these lines (see the targets above).']),
    ...words,
  ].join(' ');
}

export function benchView(b: BenchResults) {
  const by = new Map<string, Run[]>();
  for (const r of b.runs) by.set(r.scenario, [...(by.get(r.scenario) ?? []), r]);
  const order = [...Object.keys(SCENARIOS), ...[...by.keys()].filter((k) => !(k in SCENARIOS))];
  const scenarios = order
    .filter((k) => by.has(k))
    .map((k) => {
      const runs = by.get(k)!;
      const latest = runs[runs.length - 1];
      const about = SCENARIOS[k];
      return {
        id: k,
        title: about?.title ?? k,
        script: about?.script ?? '',
        baseline: about?.baseline ?? '',
        targets: about?.targets ?? '',
        count: runs.length,
        charts: scenarioCharts(about?.title ?? k, runs).join(''),
        latest: {
          file: latest.file,
          date: day(latest.date),
          commit: latest.commit ?? 'not recorded',
          machine: latest.machine,
          notes: latest.notes.join('; '),
          measures: latest.measures.map((m) => ({
            name: m.name,
            value: value(m, m.value),
            against: m.against,
            target: m.target === null ? dash : value(m, m.target),
            met: met(m),
            missed: meets(m) === false,
          })),
          has_measures: latest.measures.length > 0,
        },
        runs: [...runs].reverse().map((r) => ({
          file: r.file,
          date: day(r.date),
          commit: r.commit ?? dash,
          machine: r.machine,
          figures:
            r.measures.map((m) => `${m.name} ${value(m, m.value)}`).join('; ') ||
            r.notes.join('; ') ||
            dash,
        })),
      };
    });
  return {
    scenarios,
    has_runs: b.runs.length > 0,
    runs_count: b.runs.length,
    unreadable: b.unreadable,
    has_unreadable: b.unreadable.length > 0,
    about: Object.entries(SCENARIOS).map(([id, s]) => ({ id, ...s })),
  };
}
