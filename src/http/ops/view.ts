// What the operators' templates show: the figures (src/http/ops/figures.ts) and the bench results
// (src/http/ops/bench.ts) as words, table cells and charts (src/http/charts.ts). Every cell the live
// script updates carries `data-f="<path in the figures>"` and the server's own text for it, so the
// page reads the same without the script.
import { figure, lineChart } from '../charts.js';
import { SCENARIOS, type BenchResults, type Measure, type Run, type Unit } from './bench.js';
import type { Figures } from './figures.js';
import type { Point } from './feed.js';

const dash = '–';
export const fmt = {
  int: (n: number | null) => (n === null ? dash : Math.round(n).toLocaleString('en-US')),
  rate: (n: number | null) => (n === null ? dash : n >= 100 ? n.toFixed(0) : n.toFixed(2)),
  ms: (n: number | null) => (n === null ? dash : n >= 100 ? `${n.toFixed(0)} ms` : `${n.toFixed(2)} ms`),
  pct: (n: number | null) => (n === null ? dash : `${(n * 100).toFixed(1)} %`),
  mb: (n: number | null) => (n === null ? dash : `${(n / 2 ** 20).toFixed(1)} MB`),
  seconds: (n: number | null) => (n === null ? dash : `${Math.round(n).toLocaleString('en-US')} s`),
  at: (unix: number | null) => (unix === null ? dash : `${new Date(unix * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`),
};

/** A cell: its text now and the figures path the live script keeps it current from. */
type Kind = keyof typeof fmt;
const cell = (path: string, kind: Kind, v: number | null) => ({ path, fmt: kind, text: fmt[kind](v) });
/** A section's labelled cells, each figure named once (its key gives both the value and the cell's path). */
const rows = <T extends Record<string, number | null>>(section: string, figures: T, spec: readonly (readonly [keyof T & string, string, Kind])[]) =>
  spec.map(([key, label, kind]) => ({ label, ...cell(`${section}.${key}`, kind, figures[key]) }));

export function opsView(f: Figures, points: readonly Point[]) {
  const x = points.map((_, i) => i - points.length + 1);
  const xFormat = (i: number) => (i === 0 ? 'now' : `${i} s`);
  const charts = points.length >= 2
    ? [
        figure(lineChart({ title: 'Requests per second', x, xLabel: 'seconds ago', yLabel: 'req/s', xFormat, series: [{ name: 'requests/s', values: points.map((p) => p.rate) }] })),
        figure(lineChart({ title: 'Request latency p99', x, xLabel: 'seconds ago', yLabel: 'ms', xFormat, yFormat: (v) => `${v.toFixed(1)} ms`, series: [{ name: 'p99', values: points.map((p) => p.p99_ms) }] })),
        figure(lineChart({ title: 'Process memory and event-loop delay', x, xLabel: 'seconds ago', yLabel: 'MB / ms', xFormat, series: [{ name: 'RSS MB', values: points.map((p) => p.rss_mb) }, { name: 'event-loop p99 ms', values: points.map((p) => p.loop_p99_ms) }] })),
      ]
    : [];
  const r = f.requests;
  return {
    who: `pid ${f.process.pid} on ${f.process.host}`,
    pid: f.process.pid, host: f.process.host,
    basis: f.window_s > 0 ? `over the last ${f.window_s.toFixed(0)} s` : 'since the process started',
    at: cell('at', 'at', f.at),
    ready: { path: 'ready', fmt: 'ready', text: f.ready === null ? dash : f.ready ? 'ready' : 'starting' },
    cards: [
      { label: 'Requests per second', ...cell('requests.rate', 'rate', r.rate) },
      { label: 'Latency p50', ...cell('requests.p50_ms', 'ms', r.p50_ms) },
      { label: 'Latency p99', ...cell('requests.p99_ms', 'ms', r.p99_ms) },
      { label: '4xx since start', ...cell('requests.errors_4xx', 'int', r.errors_4xx) },
      { label: '5xx since start', ...cell('requests.errors_5xx', 'int', r.errors_5xx) },
      { label: '429 refusals since start', ...cell('requests.refused_429', 'int', r.refused_429) },
      { label: '503 refusals since start', ...cell('requests.refused_503', 'int', r.refused_503) },
      { label: 'Requests since start', ...cell('requests.total', 'int', r.total) },
      { label: 'Process RSS', ...cell('process.rss_bytes', 'mb', f.process.rss_bytes) },
      { label: 'Event-loop delay p99', ...cell('process.event_loop_p99_ms', 'ms', f.process.event_loop_p99_ms) },
      { label: 'Uptime', ...cell('process.uptime_s', 'seconds', f.process.uptime_s) },
    ],
    charts: charts.join(''),
    has_charts: charts.length > 0,
    routes: f.routes.map((x, i) => ({
      method: x.method, route: x.route,
      requests: cell(`routes.${i}.requests`, 'int', x.requests), rate: cell(`routes.${i}.rate`, 'rate', x.rate),
      p50: cell(`routes.${i}.p50_ms`, 'ms', x.p50_ms), p99: cell(`routes.${i}.p99_ms`, 'ms', x.p99_ms),
      e4: cell(`routes.${i}.errors_4xx`, 'int', x.errors_4xx), e5: cell(`routes.${i}.errors_5xx`, 'int', x.errors_5xx),
    })),
    routes_more: f.routes_seen > f.routes.length ? f.routes_seen - f.routes.length : 0,
    has_routes: f.routes.length > 0,
    mailbox_limit: fmt.int(f.mailbox_limit),
    shards: f.shards.map((s, i) => ({
      shard: s.shard,
      mailbox: cell(`shards.${i}.mailbox`, 'int', s.mailbox), share: cell(`shards.${i}.mailbox_share`, 'pct', s.mailbox_share),
      turns: cell(`shards.${i}.turns`, 'int', s.turns), p50: cell(`shards.${i}.turn_p50_ms`, 'ms', s.turn_p50_ms), p99: cell(`shards.${i}.turn_p99_ms`, 'ms', s.turn_p99_ms),
      utilization: cell(`shards.${i}.utilization`, 'pct', s.utilization), restarts: cell(`shards.${i}.restarts`, 'int', s.restarts),
    })),
    markets: f.markets.map((m, i) => ({
      market: m.market,
      interval: m.interval_s === null ? dash : `${m.interval_s < 10 ? m.interval_s.toFixed(2) : m.interval_s.toFixed(0)} s`,
      closes: cell(`markets.${i}.closes`, 'int', m.closes), performed: cell(`markets.${i}.performed`, 'int', m.performed),
      failures: cell(`markets.${i}.failures`, 'int', m.failures),
      p50: cell(`markets.${i}.close_p50_ms`, 'ms', m.close_p50_ms), p99: cell(`markets.${i}.close_p99_ms`, 'ms', m.close_p99_ms),
      late: cell(`markets.${i}.late_p99_ms`, 'ms', m.late_p99_ms),
      last_at: cell(`markets.${i}.last_close_at`, 'at', m.last_close_at), last_tick: cell(`markets.${i}.last_tick`, 'int', m.last_tick),
    })),
    cache: rows('record_cache', f.record_cache, [
      ['kept_bytes', 'Kept', 'mb'], ['cap_bytes', 'Cap', 'mb'], ['sessions', 'Sessions kept', 'int'],
      ['hits', 'Hits', 'int'], ['misses', 'Misses', 'int'], ['hit_rate', 'Hit rate', 'pct'],
    ]),
    pool: (['used', 'free', 'pending', 'max'] as const).map((k) => ({ label: k, ...cell(`db_pool.${k}`, 'int', f.db_pool[k]) })),
    events: rows('events', f.events, [
      ['streams', 'Streams held', 'int'], ['sent_rate', 'Events sent per second', 'rate'], ['sent', 'Events sent since start', 'int'],
      ['fanout_p50_ms', 'Fan-out p50', 'ms'], ['fanout_p99_ms', 'Fan-out p99', 'ms'],
      ['closed_behind', 'Closed as too slow', 'int'], ['closed_gone', 'Closed as gone (410)', 'int'],
      ['webhooks_delivered', 'Webhooks delivered', 'int'], ['webhooks_retried', 'Webhooks to retry', 'int'], ['webhooks_failed', 'Webhooks given up', 'int'],
    ]),
  };
}

const UNIT_WORDS: Record<Unit, string> = { ratio: 'ratio to the same-run baseline', ms: 'milliseconds', MB: 'MB', KB: 'KB', s: 'seconds' };

function value(m: Pick<Measure, 'unit'>, v: number | null): string {
  if (v === null) return dash;
  if (m.unit === 'ratio') return v >= 10 ? `${v.toFixed(1)}x` : `${(v * 100).toFixed(1)} %`;
  return `${v >= 100 ? v.toFixed(0) : v.toFixed(2)} ${m.unit}`;
}

const met = (m: Measure) => (m.target === null ? dash : (m.better === 'higher' ? m.value >= m.target : m.value < m.target) ? 'yes' : 'no');
const day = (iso: string) => iso.slice(0, 16).replace('T', ' ');

/** At most this many lines share a chart (the charts' four colours). */
const PER_CHART = 4;

/** One scenario's charts: per unit, each measure's value over the runs (x: the runs in date order). */
function scenarioCharts(title: string, runs: Run[]): string[] {
  const out: string[] = [];
  const x = runs.map((_, i) => i);
  const xFormat = (i: number) => (runs[i] ? runs[i].date.slice(5, 10) : '');
  const units = [...new Set(runs.flatMap((r) => r.measures.map((m) => m.unit)))];
  for (const unit of units) {
    const names = [...new Set(runs.flatMap((r) => r.measures.filter((m) => m.unit === unit).map((m) => m.name)))];
    for (let k = 0; k < names.length; k += PER_CHART) {
      const group = names.slice(k, k + PER_CHART);
      const fmtY = (v: number) => value({ unit }, v);
      const chart = lineChart({
        title: `${title}: ${group.join(', ')} (${UNIT_WORDS[unit]})`, x, xLabel: 'run date', yLabel: unit === 'ratio' ? 'ratio' : unit, xFormat, yFormat: fmtY,
        series: group.map((name) => ({ name, values: runs.map((r) => r.measures.find((m) => m.name === name && m.unit === unit)?.value ?? null) })),
      });
      out.push(figure(chart, `Lines: ${group.join(', ')}.`));
    }
  }
  return out;
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
        id: k, title: about?.title ?? k, script: about?.script ?? '', baseline: about?.baseline ?? '', targets: about?.targets ?? '',
        count: runs.length,
        charts: scenarioCharts(about?.title ?? k, runs).join(''),
        latest: {
          file: latest.file, date: day(latest.date), commit: latest.commit ?? 'not recorded', machine: latest.machine, notes: latest.notes.join('; '),
          measures: latest.measures.map((m) => ({ name: m.name, value: value(m, m.value), against: m.against, target: m.target === null ? dash : value(m, m.target), met: met(m) })),
          has_measures: latest.measures.length > 0,
        },
        runs: [...runs].reverse().map((r) => ({
          file: r.file, date: day(r.date), commit: r.commit ?? dash, machine: r.machine,
          figures: r.measures.map((m) => `${m.name} ${value(m, m.value)}`).join('; ') || r.notes.join('; ') || dash,
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
