// The load benchmarks' results (bench/results/*.json, written by bench/*.mjs) read for GET /ops/bench:
// each run's figures against its same-run baseline (fixed bytes, the naive peer, pgbench, the
// "before" build) or, where a scenario has no baseline, against its target. The scenarios wrote
// their files in several shapes over time; each shape is read here, and a file that cannot be read
// is listed with the reason, never fatal. Bounded: the newest MAX_FILES files of at most MAX_BYTES.
import fs from 'node:fs';
import path from 'node:path';
import { TEMPLATES_DIR } from '../web/pages.js';

/** bench/results of this checkout (templates/ and bench/ are siblings). */
export const BENCH_RESULTS_DIR = path.resolve(TEMPLATES_DIR, '..', 'bench', 'results');

/** Files read at most (the newest by name, which starts with the run's date). */
export const MAX_FILES = 1000;
/** A result file larger than this is listed as unreadable instead of parsed. */
export const MAX_BYTES = 8 * 1024 * 1024;

/** ratio: a share of a baseline (shown in %); times: a multiple of a floor (shown as 1.23×); rps: requests per second. */
export type Unit = 'ratio' | 'times' | 'rps' | 'ms' | 'MB' | 'KB' | 's' | 'per_s';
/** One figure of a run: `value` against `against` (a baseline of the same run, or the target). */
export type Measure = {
  name: string;
  value: number;
  unit: Unit;
  against: string;
  target: number | null;
  better: 'higher' | 'lower';
};
export type Run = {
  file: string;
  scenario: string;
  date: string;
  commit: string | null;
  machine: string;
  notes: string[];
  measures: Measure[];
};
export type Unreadable = { file: string; reason: string };
export type BenchResults = { dir: string; runs: Run[]; unreadable: Unreadable[] };

/** What each scenario measures and its targets, as bench/README.md states them. */
export const SCENARIOS: Record<
  string,
  { title: string; script: string; baseline: string; targets: string }
> = {
  http: {
    title: 'HTTP read routes',
    script: 'bench/run.mjs (npm run bench)',
    baseline:
      'fixed-bytes: a bare uWebSockets.js server answering the same bytes, measured first in the same run',
    targets:
      'deals (the menu) >= 90 % of fixed-bytes of the same size (issue 46; 70 % in issue 3); the market and explore pages of the same order as deals (issue 13); families and book >= 20x their per-request figure and p99 <= 50 ms (issue 24); the pulse >= 10 000 req/s with p99 <= 20 ms at 64 connections (issue 46)',
  },
  orders: {
    title: 'Durable orders paid from the balance',
    script: 'bench/orders.mjs',
    baseline:
      'a naive Fastify + pg peer and pgbench single-row updates on the same PostgreSQL, interleaved in the same run',
    targets:
      'orders/s >= 2.0x the naive peer, >= 50 % of pgbench (60 % in the first issue-4 runs), p99 <= 25 ms at 32 connections (issue 14)',
  },
  close: {
    title: 'Session close at scale',
    script: 'bench/close.mjs',
    baseline: 'none: the close time is compared with its target',
    targets: 'an m15 close with 10 000 open positions in < 1 s (issue 14)',
  },
  record: {
    title: 'Record reads (history, trades, tape, stats, dataset)',
    script: 'bench/record.mjs',
    baseline:
      'the build before the record cache (SVC_RECORD_CACHE_MB=0, or a "before" checkout), measured in the same run',
    targets: '>= 20x the before build, p99 <= 50 ms (issue 14)',
  },
  memory: {
    title: 'Memory with 100k agents',
    script: 'bench/agents-memory.mjs',
    baseline: 'none: the peak RSS is compared with its target',
    targets: 'RSS with 100 000 agents, 10 000 active, < 600 MB (issue 14)',
  },
  ws: {
    title: 'Event fan-out over the WebSocket',
    script: 'bench/ws.mjs --peer',
    baseline:
      "bench/ws-peer.mjs: a bare uWebSockets.js server sending the same frames to the same subscribers when told of the same closes, in the same run; then the same peer reading each close's events from the log first (--read), the floor of a fan-out that reads the log",
    targets:
      'the service at most 1.5x the bare peer for CPU per 1000 delivered events and for p99 delivery (issue 46); runs without the peer against the earlier absolute p99 of 250 ms (issue 27)',
  },
  idle: {
    title: 'An idle node',
    script: 'bench/idle-commits.mjs',
    baseline: 'none: the commits a second are compared with their target',
    targets: 'an idle node (history loaded, no request) commits at most 1 transaction a second',
  },
  backfill: {
    title: 'First-start history backfill',
    script: 'bench/backfill.mjs',
    baseline: 'none: the time to record the history is compared with its target',
    targets: '30 days of all four markets recorded in < 60 s on PostgreSQL (issue 3)',
  },
};

type Json = Record<string, any>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function machineOf(m: unknown): string {
  if (!isObj(m)) return 'unknown';
  const cpus = num(m.nproc) ?? num(m.cpus);
  return (
    [
      cpus !== null ? `${cpus} CPU` : undefined,
      typeof m.cpu === 'string' ? m.cpu : typeof m.model === 'string' ? m.model : undefined,
      typeof m.node === 'string' ? `node ${m.node}` : undefined,
    ]
      .filter(Boolean)
      .join(', ') || 'unknown'
  );
}

/** `commit` as written, or the hash that starts `code` ("7582284 bench/...: ..."). */
function commitOf(r: Json): string | null {
  if (typeof r.commit === 'string' && r.commit) return r.commit.slice(0, 12);
  const m = typeof r.code === 'string' ? /^([0-9a-f]{7,40})\b/.exec(r.code) : null;
  return m ? m[1].slice(0, 12) : null;
}

/** The HTTP routes with a numeric target, as a ratio to fixed-bytes (SCENARIOS.http.targets; the others' are not ratios to it). */
const HTTP_TARGETS: Record<string, number> = { deals: 0.9 };
/** The HTTP routes with absolute targets on this machine (SCENARIOS.http.targets): requests/s at least, p99 below. */
const HTTP_ABSOLUTE: Record<string, { rps: number; p99_ms: number }> = {
  pulse: { rps: 10_000, p99_ms: 20 },
};
/** The WebSocket fan-out: the service at most this many times the bare peer (SCENARIOS.ws.targets). */
const WS_PEER_TARGET = 1.5;
/** Runs without the peer: the absolute delivery p99 (SCENARIOS.ws.targets). */
const WS_P99_TARGET_MS = 250;
/** Record reads: each at least this many times the before build (SCENARIOS.record.targets). */
const RECORD_TARGET_RATIO = 20;
/** Backfill: 30 days of all four markets recorded in under this many seconds (SCENARIOS.backfill.targets). */
const BACKFILL_TARGET = { days: 30, seconds: 60 };

function httpMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  if (!Array.isArray(r.results)) throw new Error('no results list');
  const sized = r.fixed_bytes_sized_as ? ` sized as ${r.fixed_bytes_sized_as}` : '';
  const against = `fixed-bytes (${num(r.fixed_bytes) ?? '?'} B${sized})`;
  const measures = r.results
    .filter((x: unknown) => isObj(x) && x.name !== 'fixed-bytes' && num(x.ratio_to_fixed) !== null)
    .flatMap((x: Json): Measure[] => {
      const name = String(x.name);
      const share: Measure = {
        name,
        value: x.ratio_to_fixed,
        unit: 'ratio',
        against,
        target: HTTP_TARGETS[name] ?? null,
        better: 'higher',
      };
      const abs = HTTP_ABSOLUTE[name];
      const rps = num(x.rps);
      const p99 = num(x.latency_ms?.p99);
      if (!abs) return [share];
      return [
        share,
        ...(rps === null
          ? []
          : [
              {
                name: `${name} req/s`,
                value: rps,
                unit: 'rps',
                against: 'target',
                target: abs.rps,
                better: 'higher',
              } satisfies Measure,
            ]),
        ...(p99 === null
          ? []
          : [
              {
                name: `${name} p99`,
                value: p99,
                unit: 'ms',
                against: 'target',
                target: abs.p99_ms,
                better: 'lower',
              } satisfies Measure,
            ]),
      ];
    });
  const notes =
    typeof r.service === 'string' && r.service !== 'dist/src/main.js'
      ? [`service: ${r.service}`]
      : [];
  if (Array.isArray(r.problems) && r.problems.length) notes.push(`problems: ${r.problems.length}`);
  return { measures, notes };
}

function ordersMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  const measures: Measure[] = [];
  const t = isObj(r.targets) ? r.targets : {};
  if (isObj(r.ratios)) {
    if (num(r.ratios.service_to_peer) !== null)
      measures.push({
        name: 'service / peer',
        value: r.ratios.service_to_peer,
        unit: 'ratio',
        against: 'the naive peer, same run',
        target: num(t.service_to_peer),
        better: 'higher',
      });
    if (num(r.ratios.service_to_pgbench) !== null)
      measures.push({
        name: 'service / pgbench',
        value: r.ratios.service_to_pgbench,
        unit: 'ratio',
        against: 'pgbench, same run',
        target: num(t.service_to_pgbench),
        better: 'higher',
      });
  } else if (num(r.ratio) !== null) {
    // The older shape: one ratio to pgbench and its target in per cent.
    measures.push({
      name: 'service / pgbench',
      value: r.ratio,
      unit: 'ratio',
      against: 'pgbench, same run',
      target: num(r.target_pct) === null ? null : r.target_pct / 100,
      better: 'higher',
    });
  }
  const p99 = num(r.orders?.latency_ms?.p99);
  if (p99 !== null)
    measures.push({
      name: 'service p99',
      value: p99,
      unit: 'ms',
      against: 'target',
      target: num(t.service_p99_ms),
      better: 'lower',
    });
  const rate = num(r.orders?.orders_per_s);
  const notes = rate !== null ? [`${Math.round(rate)} orders/s`] : [];
  if (!measures.length) notes.push('no same-run baseline in this run');
  return { measures, notes };
}

function closeMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  if (!Array.isArray(r.closes)) throw new Error('no closes list');
  const ms = r.closes
    .map((c: unknown) => (isObj(c) ? num(c.close_ms) : null))
    .filter((v: number | null): v is number => v !== null);
  const target = num(r.target?.close_ms_below);
  const positions = num(r.config?.positions) ?? num(r.target?.open_positions);
  const measures: Measure[] = [];
  if (ms.length)
    measures.push({
      name: 'close with fills',
      value: ms[0],
      unit: 'ms',
      against: 'target',
      target,
      better: 'lower',
    });
  if (ms.length > 1)
    measures.push({
      name: `worst close with ${positions ?? '?'} open positions`,
      value: Math.max(...ms.slice(1)),
      unit: 'ms',
      against: 'target',
      target,
      better: 'lower',
    });
  return { measures, notes: positions !== null ? [`${positions} positions`] : [] };
}

function recordMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  if (!isObj(r.summary)) throw new Error('no summary');
  const measures: Measure[] = [];
  for (const [name, s] of Object.entries(r.summary)) {
    if (isObj(s) && num(s.ratio_after_before) !== null)
      measures.push({
        name,
        value: s.ratio_after_before,
        unit: 'ratio',
        against: 'the before build, same run',
        target: RECORD_TARGET_RATIO,
        better: 'higher',
      });
  }
  return {
    measures,
    notes:
      typeof r.before_service?.commit === 'string' ? [`before: ${r.before_service.commit}`] : [],
  };
}

function memoryMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  if (!isObj(r.rss)) throw new Error('no rss');
  const peaks = Object.values(r.rss).map((p) => (isObj(p) ? (num(p.rss_mb) ?? 0) : 0));
  return {
    measures: [
      {
        name: 'RSS, largest phase',
        value: Math.max(...peaks),
        unit: 'MB',
        against: 'target',
        target: num(r.target_mb),
        better: 'lower',
      },
    ],
    notes: num(r.agents) !== null ? [`${r.agents} agents`] : [],
  };
}

/** bench/idle-commits.mjs: the commits a second of a node left alone. */
function idleMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  const perSecond = num(r.commits_per_second);
  if (perSecond === null) throw new Error('no commits_per_second');
  return {
    measures: [
      {
        name: 'commits a second, idle',
        value: perSecond,
        unit: 'per_s',
        against: 'target',
        target: num(r.target_per_second),
        better: 'lower',
      },
    ],
    notes: num(r.seconds) !== null ? [`over ${r.seconds} s`] : [],
  };
}

function backfillMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  const s = num(r.recorded_s);
  if (s === null) throw new Error('no recorded_s');
  const target = num(r.days) === BACKFILL_TARGET.days ? BACKFILL_TARGET.seconds : null;
  return {
    measures: [
      {
        name: `${num(r.days) ?? '?'} days recorded`,
        value: s,
        unit: 's',
        against: 'target',
        target,
        better: 'lower',
      },
    ],
    notes: [`database ${r.database ?? '?'}`],
  };
}

/**
 * bench/ws.mjs: delivery latency from commit to client, RSS per idle connection; with --peer, the
 * service against the bare peer's fan-out of the same frames (then the absolute p99 has no target).
 */
function wsMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  const all = num(r.latency_ms?.all?.p99_ms);
  if (all === null) throw new Error('no latency_ms.all');
  const ratios = isObj(r.ratios) ? r.ratios : {};
  const peer = isObj(ratios.service_to_uws) ? ratios.service_to_uws : undefined;
  const measures: Measure[] = [
    {
      name: 'event delivery p99',
      value: all,
      unit: 'ms',
      against: 'target',
      target: peer ? null : WS_P99_TARGET_MS,
      better: 'lower',
    },
  ];
  // The service against the bare peer (the target), then the floor of a fan-out that reads the log
  // (bench/ws-peer.mjs --read): what the read costs by itself, and what the service adds beyond it;
  // measured apart, so without a target of their own.
  const pairs = [
    ['service / uWS', ratios.service_to_uws, 'the bare uWS peer, same run', WS_PEER_TARGET],
    [
      'uWS reading the log / uWS',
      ratios.uws_reading_the_log_to_uws,
      'the bare uWS peer, same run',
      null,
    ],
    [
      'service / uWS reading the log',
      ratios.service_to_uws_reading_the_log,
      'the uWS peer reading the log, same run',
      null,
    ],
  ] as const;
  for (const [what, x, against, target] of pairs) {
    if (!isObj(x)) continue;
    if (num(x.cpu_per_1000) !== null)
      measures.push({
        name: `CPU per 1000 events, ${what}`,
        value: x.cpu_per_1000,
        unit: 'times',
        against,
        target,
        better: 'lower',
      });
    if (num(x.p99) !== null)
      measures.push({
        name: `delivery p99, ${what}`,
        value: x.p99,
        unit: 'times',
        against,
        target,
        better: 'lower',
      });
  }
  const rss = num(r.targets?.rss_per_idle_connection_le_10_kb?.value);
  if (rss !== null)
    measures.push({
      name: 'RSS per idle connection',
      value: rss,
      unit: 'KB',
      against: 'target',
      target: 10,
      better: 'lower',
    });
  const held = num(r.targets?.subscribers_10000?.value);
  return { measures, notes: held !== null ? [`${held} subscribers`] : [] };
}

/** bench/compare.mjs: each build's median against the first build's, in one run. */
function compareMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  if (!Array.isArray(r.summary)) throw new Error('no summary');
  const better: Measure['better'] = r.better === 'lower' ? 'lower' : 'higher';
  const measures = r.summary.slice(1).flatMap((s: unknown): Measure[] =>
    isObj(s) && num(s.ratio_to_first) !== null
      ? [
          {
            name: `${r.bench ?? '?'}: ${s.build} / ${r.summary[0].build}`,
            value: num(s.ratio_to_first)!,
            unit: 'ratio',
            against: 'the first build, same run',
            target: null,
            better,
          },
        ]
      : [],
  );
  return { measures, notes: [`${r.metric ?? ''}, median of ${num(r.rounds) ?? '?'} rounds`] };
}

/** bench/notify-commit.mjs: commits/s with the NOTIFY after the commit against inside the transaction, per client count. */
function notifyMeasures(r: Json): { measures: Measure[]; notes: string[] } {
  if (!isObj(r.summary)) throw new Error('no summary');
  const measures = Object.entries(r.summary).flatMap(([clients, s]): Measure[] =>
    isObj(s) && num(s.after_commit_to_in_transaction) !== null
      ? [
          {
            name: `${clients} clients: commits/s, NOTIFY after the commit`,
            value: s.after_commit_to_in_transaction,
            unit: 'ratio',
            against: 'NOTIFY in the transaction, same run',
            target: null,
            better: 'higher',
          },
        ]
      : [],
  );
  return { measures, notes: [`median of ${num(r.options?.rounds) ?? '?'} rounds`] };
}

const READERS: Record<string, (r: Json) => { measures: Measure[]; notes: string[] }> = {
  http: httpMeasures,
  orders: ordersMeasures,
  close: closeMeasures,
  record: recordMeasures,
  memory: memoryMeasures,
  idle: idleMeasures,
  backfill: backfillMeasures,
  ws: wsMeasures,
  compare: compareMeasures,
  notify: notifyMeasures,
};

/** A result file's scenario: the last word of its name (`2026-11-22T04-12-42Z-http.json` → http). */
export const scenarioOfFile = (file: string) => /-([a-z][a-z0-9]*)\.json$/.exec(file)?.[1];

/** One result file, read: a run, or why it cannot be read. */
export function readRun(file: string, text: string): Run | Unreadable {
  const scenario = scenarioOfFile(file);
  if (!scenario) return { file, reason: 'not named <date>-<scenario>.json' };
  let r: unknown;
  try {
    r = JSON.parse(text);
  } catch (err) {
    return { file, reason: `not JSON: ${(err as Error).message.slice(0, 120)}` };
  }
  if (!isObj(r)) return { file, reason: 'not a JSON object' };
  const reader = READERS[scenario];
  if (!reader) return { file, reason: `unknown scenario "${scenario}"` };
  let read: { measures: Measure[]; notes: string[] };
  try {
    read = reader(r);
  } catch (err) {
    return { file, reason: `not a ${scenario} result: ${(err as Error).message}` };
  }
  const date =
    typeof r.date === 'string'
      ? r.date
      : typeof r.started === 'string'
        ? r.started
        : file.slice(0, 20);
  return { file, scenario, date, commit: commitOf(r), machine: machineOf(r.machine), ...read };
}

type Cached = { key: string; result: Run | Unreadable };
const cache = new Map<string, Cached>();

/** Every result file of `dir`, read (parsed files are kept while their size and time stay the same). */
export function readBenchResults(dir: string): BenchResults {
  let names: string[];
  try {
    names = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .slice(-MAX_FILES);
  } catch (err) {
    return {
      dir,
      runs: [],
      unreadable: [
        {
          file: dir,
          reason: `cannot list the folder: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        },
      ],
    };
  }
  const runs: Run[] = [];
  const unreadable: Unreadable[] = [];
  const seen = new Set<string>();
  for (const file of names) {
    const full = path.join(dir, file);
    seen.add(full);
    let result: Run | Unreadable;
    try {
      const st = fs.statSync(full);
      const key = `${st.size}:${st.mtimeMs}`;
      const hit = cache.get(full);
      if (hit?.key === key) result = hit.result;
      else {
        result =
          st.size > MAX_BYTES
            ? { file, reason: `larger than ${MAX_BYTES / 2 ** 20} MB` }
            : readRun(file, fs.readFileSync(full, 'utf8'));
        cache.set(full, { key, result });
      }
    } catch (err) {
      result = {
        file,
        reason: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      };
    }
    if ('reason' in result) unreadable.push(result);
    else runs.push(result);
  }
  // Forget files that are gone (the cache never holds more than the folders read).
  for (const k of cache.keys()) if (k.startsWith(dir + path.sep) && !seen.has(k)) cache.delete(k);
  runs.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.file < b.file ? -1 : 1));
  return { dir, runs, unreadable };
}
