// The thresholds of /ops's figures (CONTRACT.md "Operators"): one table, listed on the page, drawn
// on its charts and compared by its status line. Where an alert rule of ops/prometheus/alerts.yml
// or a benchmark target of bench/README.md watches the same figure, the threshold is that one
// (test/unit/ops-thresholds.test.ts holds the alert rules to this table).
import type { Breach, Point, Threshold } from '../schemas/ops.js';

export type ThresholdId =
  | 'rate_5xx'
  | 'rate_4xx'
  | 'p99_ms'
  | 'close_ms'
  | 'late_ms'
  | 'mailbox_share'
  | 'pool_wait_ms'
  | 'fanout_p99_ms';
export type OpsThreshold = Threshold & { id: ThresholdId };

/** The figures kept per market in a point (the others are one number a point). */
const PER_MARKET = new Set<ThresholdId>(['close_ms', 'late_ms']);

export const THRESHOLDS: readonly OpsThreshold[] = [
  {
    id: 'rate_5xx',
    figure: '5xx answers per second',
    unit: 'per_s',
    above: 0,
    over_s: 300,
    why: 'any 5xx is a bug or an outage (CONTRACT.md "Errors"); alert ServerErrors, over 5 minutes',
  },
  {
    id: 'rate_4xx',
    figure: '4xx answers per second',
    unit: 'per_s',
    above: 5,
    over_s: 60,
    why: 'clients failing in numbers: a broken agent, a misread contract, throttling',
  },
  {
    id: 'p99_ms',
    figure: 'request latency p99',
    unit: 'ms',
    above: 100,
    over_s: 60,
    why: "twice the read routes' 50 ms p99 target (bench/README.md): slow across routes, not one slow read",
  },
  {
    id: 'close_ms',
    figure: 'close duration',
    unit: 'ms',
    above: 1000,
    over_s: 900,
    why: 'an m15 close with 10 000 open positions takes under 1 s (bench/README.md, issue 14)',
  },
  {
    id: 'late_ms',
    figure: 'close lateness',
    unit: 'ms',
    above: 2000,
    over_s: 900,
    why: "a close finishing more than 2 s after its session's end; alert CloseLate, over 15 minutes",
  },
  {
    id: 'mailbox_share',
    figure: 'deepest mailbox, of its bound',
    unit: 'share',
    above: 0.8,
    over_s: 60,
    why: 'past the bound requests answer 503; alert MailboxNearlyFull',
  },
  {
    id: 'pool_wait_ms',
    figure: 'mean wait for a database connection',
    unit: 'ms',
    above: 10,
    over_s: 60,
    why: "the shard workers' pools add that much to each query: the pool, not the queries, is what is slow",
  },
  {
    id: 'fanout_p99_ms',
    figure: 'event fan-out p99',
    unit: 'ms',
    above: 250,
    over_s: 60,
    why: 'event delivery p99 target 250 ms (bench/README.md, issue 27); fan-out is its part in this process',
  },
];

/** The table with some thresholds replaced (a test's low threshold through the service's options). */
export function thresholdsWith(
  overrides: Partial<Record<ThresholdId, number>> = {},
): OpsThreshold[] {
  return THRESHOLDS.map((t) =>
    overrides[t.id] === undefined ? t : { ...t, above: overrides[t.id]! },
  );
}

/** A value of a threshold's unit, in words. */
export function showValue(unit: Threshold['unit'], v: number): string {
  if (unit === 'share') return `${(v * 100).toFixed(1)} %`;
  if (unit === 'per_s') return `${v.toFixed(2)} per second`;
  return v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v >= 100 ? 0 : 1)} ms`;
}

/** A span of seconds in words: minutes from one. */
export const spanWords = (s: number) => (s >= 60 ? `${+(s / 60).toFixed(1)} min` : `${s} s`);

/** A threshold's values in one point: one, or one per market. */
function valuesOf(p: Point, id: ThresholdId): [market: string | null, value: number | null][] {
  if (PER_MARKET.has(id))
    return Object.entries(p.markets).map(([m, x]) => [m, x[id as 'close_ms' | 'late_ms']]);
  return [[null, p[id as Exclude<ThresholdId, 'close_ms' | 'late_ms'>]]];
}

/**
 * The figures past their thresholds: for each threshold (in the table's order), the worst value of
 * the points within its window (`over_s`, the newest points, `pointS` seconds each), per market for
 * the per-market figures. Empty: every figure within its threshold (or not measured).
 */
export function breachesOf(
  points: readonly Point[],
  thresholds: readonly OpsThreshold[],
  pointS: number,
): Breach[] {
  const out: Breach[] = [];
  for (const t of thresholds) {
    const recent = points.slice(-Math.max(1, Math.ceil(t.over_s / pointS)));
    const worst = new Map<string | null, number>();
    for (const p of recent) {
      for (const [market, v] of valuesOf(p, t.id))
        if (v !== null && v > (worst.get(market) ?? -Infinity)) worst.set(market, v);
    }
    for (const [market, value] of worst) {
      if (value <= t.above) continue;
      const what = market === null ? t.figure : `${market} ${t.figure}`;
      out.push({
        id: t.id,
        market,
        value,
        above: t.above,
        text: `${what}: ${showValue(t.unit, value)} in the last ${spanWords(t.over_s)} (threshold ${showValue(t.unit, t.above)})`,
      });
    }
  }
  return out;
}
