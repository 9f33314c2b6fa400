// The operators' figures (GET /ops, its live feed): read from the service's own metrics
// (Metrics.snapshot(): prom-client's registry as JSON and the request counters), never counted a
// second time. Rates and latency quantiles are taken between two samples of those counters, the
// way Prometheus' rate() and histogram_quantile() take them between two scrapes.
import type { CloseSeen, MetricJson } from '../metrics.js';
import type {
  FiguresShape,
  MarketFigures,
  Point,
  RouteFigures,
  ShardFigures,
} from '../schemas/ops.js';

/** One read of the metrics: `t` monotonic seconds (for rates), `at` unix seconds (for people). */
export type Sample = { t: number; at: number; metrics: Map<string, MetricJson> };

export function sampleOf(metrics: MetricJson[], t: number, at: number): Sample {
  return { t, at, metrics: new Map(metrics.map((m) => [m.name, m])) };
}

type Value = { value: number; labels: Record<string, string | number> };

/** The values of metric `name` (of its series `series`, e.g. `x_bucket`, for a histogram). */
function valuesOf(s: Sample | undefined, name: string, series?: string): Value[] {
  const m = s?.metrics.get(name);
  if (!m) return [];
  return series ? m.values.filter((v) => v.metricName === series) : m.values;
}

const one = (s: Sample, name: string): number | null => {
  const v = valuesOf(s, name)[0]?.value;
  return v !== undefined && Number.isFinite(v) ? v : null;
};
const keyOf = (labels: Record<string, string | number>, names: string[]) =>
  names.map((n) => String(labels[n] ?? '')).join('\u0000');

/** Sum of `name`'s values grouped by the labels `by` (and filtered by `keep`). */
function sumBy(
  s: Sample | undefined,
  name: string,
  by: string[],
  keep: (l: Record<string, string | number>) => boolean = () => true,
  series?: string,
): Map<string, number> {
  const out = new Map<string, number>();
  // A value that is not a number (NaN: not measured) is left out, so it reads as unknown (null).
  for (const v of valuesOf(s, name, series))
    if (Number.isFinite(v.value) && keep(v.labels))
      out.set(keyOf(v.labels, by), (out.get(keyOf(v.labels, by)) ?? 0) + v.value);
  return out;
}

/** Cumulative histogram buckets grouped by the labels `by`: key → (upper bound → count). */
function bucketsBy(
  s: Sample | undefined,
  name: string,
  by: string[],
): Map<string, Map<number, number>> {
  const out = new Map<string, Map<number, number>>();
  for (const v of valuesOf(s, name, `${name}_bucket`)) {
    const key = keyOf(v.labels, by);
    const le = v.labels.le === '+Inf' ? Infinity : Number(v.labels.le);
    let b = out.get(key);
    if (!b) out.set(key, (b = new Map()));
    b.set(le, (b.get(le) ?? 0) + v.value);
  }
  return out;
}

/** The buckets of `now` less those of `before` (counts since `before`). */
function bucketDelta(
  now: Map<number, number>,
  before: Map<number, number> | undefined,
): Map<number, number> {
  if (!before) return now;
  const out = new Map<number, number>();
  for (const [le, n] of now) out.set(le, Math.max(0, n - (before.get(le) ?? 0)));
  return out;
}

/**
 * The q-quantile of cumulative buckets, interpolated linearly inside its bucket as Prometheus'
 * histogram_quantile does; null without observations. In the +Inf bucket: the largest finite bound.
 */
export function quantile(q: number, buckets: Map<number, number>): number | null {
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const total =
    buckets.get(Infinity) ?? (bounds.length ? buckets.get(bounds[bounds.length - 1])! : 0);
  if (!total) return null;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (const le of bounds) {
    const count = buckets.get(le)!;
    if (count >= rank) {
      if (le === Infinity) return prevBound;
      if (count === prevCount) return le;
      return prevBound + (le - prevBound) * ((rank - prevCount) / (count - prevCount));
    }
    prevBound = le;
    prevCount = count;
  }
  return prevBound;
}

const countOf = (b: Map<number, number> | undefined) => (b ? (b.get(Infinity) ?? 0) : 0);

/** The figures read from the metrics; the feed adds the status line and the recent 5xx (src/schemas/ops.ts). */
export type Figures = Omit<FiguresShape, 'status' | 'recent_5xx'>;

/** At most this many routes are listed (the busiest in the window, then since start). */
export const ROUTES_SHOWN = 30;

const ms = (s: number | null) => (s === null ? null : Math.round(s * 1e6) / 1e3);
const round = (n: number, d = 3) => Math.round(n * 10 ** d) / 10 ** d;

/**
 * The figures of `now`, with rates and quantiles over the time since `before` (an older sample of
 * the same process), or since the process started when there is none.
 */
export function figuresOf(
  now: Sample,
  before: Sample | undefined,
  who: { pid: number; host: string },
): Figures {
  const uptime = Math.max(0, now.at - (one(now, 'process_start_time_seconds') ?? now.at));
  const window = before ? Math.max(0, now.t - before.t) : 0;
  const per = window > 0 ? window : Math.max(uptime, 1);
  const b = window > 0 ? before : undefined;
  const limit = one(now, 'actor_mailbox_limit');
  const ready = one(now, 'service_ready');
  return {
    process: {
      ...who,
      uptime_s: Math.round(uptime),
      rss_bytes: one(now, 'process_resident_memory_bytes'),
      heap_used_bytes: one(now, 'nodejs_heap_size_used_bytes'),
      event_loop_p50_ms: ms(one(now, 'nodejs_eventloop_lag_p50_seconds')),
      event_loop_p99_ms: ms(one(now, 'nodejs_eventloop_lag_p99_seconds')),
    },
    at: round(now.at),
    window_s: round(window),
    ready: ready === null ? null : ready === 1,
    ...requestFigures(now, b, per),
    mailbox_limit: limit,
    shards: shardFigures(now, b, limit),
    markets: marketFigures(now),
    record_cache: recordCacheFigures(now),
    db_pool: poolFigures(now, b, per),
    events: eventFigures(now, b, per),
  };
}

type RouteTally = RouteFigures & { total: number };
/** Requests since start (`total`, `e4`...) and in the window (`inWindow`, `w4`...), all routes together. */
type RequestTotals = Record<
  'total' | 'inWindow' | 'e4' | 'e5' | 'r429' | 'r503' | 'w4' | 'w5',
  number
>;

/** Requests by route and status over the window (counters less those of `b`), and all routes' together. */
function requestFigures(
  now: Sample,
  b: Sample | undefined,
  per: number,
): Pick<Figures, 'requests' | 'routes' | 'routes_seen'> {
  const { perRoute, totals } = tallyRequests(now, b);
  const all = routeLatencies(perRoute, now, b, per);
  return {
    requests: {
      total: totals.total,
      rate: round(totals.inWindow / per),
      errors_4xx: totals.e4,
      errors_5xx: totals.e5,
      refused_429: totals.r429,
      refused_503: totals.r503,
      rate_4xx: round(totals.w4 / per),
      rate_5xx: round(totals.w5 / per),
      p50_ms: ms(quantile(0.5, all)),
      p99_ms: ms(quantile(0.99, all)),
    },
    routes: busiestRoutes(perRoute),
    routes_seen: perRoute.size,
  };
}

/** The request counters by method, route and status, tallied per route and for all routes together. */
function tallyRequests(
  now: Sample,
  b: Sample | undefined,
): { perRoute: Map<string, RouteTally>; totals: RequestTotals } {
  const status = (s: Sample | undefined) =>
    sumBy(s, 'http_requests_total', ['method', 'route', 'status']);
  const sNow = status(now);
  const sBefore = status(b);
  const perRoute = new Map<string, RouteTally>();
  const totals = { total: 0, inWindow: 0, e4: 0, e5: 0, r429: 0, r503: 0, w4: 0, w5: 0 };
  for (const [key, n] of sNow) {
    const [method, route, code] = key.split('\u0000');
    const d = n - (sBefore.get(key) ?? 0);
    const r = routeTally(perRoute, method, route);
    r.total += n;
    r.requests += d;
    const c = Number(code);
    totals.total += n;
    totals.inWindow += d;
    if (c >= 400 && c < 500) {
      r.errors_4xx += d;
      totals.e4 += n;
      totals.w4 += d;
    }
    if (c >= 500) {
      r.errors_5xx += d;
      totals.e5 += n;
      totals.w5 += d;
    }
    if (c === 429) totals.r429 += n;
    if (c === 503) totals.r503 += n;
  }
  return { perRoute, totals };
}

/** The tally of `method route`, started at zero when first seen. */
function routeTally(perRoute: Map<string, RouteTally>, method: string, route: string): RouteTally {
  const rk = `${method}\u0000${route}`;
  let r = perRoute.get(rk);
  if (!r)
    perRoute.set(
      rk,
      (r = {
        method,
        route,
        requests: 0,
        rate: 0,
        p50_ms: null,
        p99_ms: null,
        errors_4xx: 0,
        errors_5xx: 0,
        total: 0,
      }),
    );
  return r;
}

/** Each route's rate and latency quantiles over the window (set on its tally); the buckets of all routes together. */
function routeLatencies(
  perRoute: Map<string, RouteTally>,
  now: Sample,
  b: Sample | undefined,
  per: number,
): Map<number, number> {
  const routeBucketsNow = bucketsBy(now, 'http_request_duration_seconds', ['method', 'route']);
  const routeBucketsBefore = bucketsBy(b, 'http_request_duration_seconds', ['method', 'route']);
  const all = new Map<number, number>();
  for (const [rk, r] of perRoute) {
    const buckets = bucketDelta(routeBucketsNow.get(rk) ?? new Map(), routeBucketsBefore.get(rk));
    for (const [le, n] of buckets) all.set(le, (all.get(le) ?? 0) + n);
    r.rate = round(r.requests / per);
    r.p50_ms = ms(quantile(0.5, buckets));
    r.p99_ms = ms(quantile(0.99, buckets));
  }
  return all;
}

/** The routes listed: the busiest in the window, then since start, then by path; at most ROUTES_SHOWN. */
function busiestRoutes(perRoute: Map<string, RouteTally>): RouteFigures[] {
  return [...perRoute.values()]
    .sort((x, y) => y.requests - x.requests || y.total - x.total || (x.route < y.route ? -1 : 1))
    .slice(0, ROUTES_SHOWN)
    .map(({ total: _total, ...r }) => r);
}

/** Shards: mailbox, workers, and turn latency by the shard that ran the turn. */
function shardFigures(now: Sample, b: Sample | undefined, limit: number | null): ShardFigures[] {
  const byShard = (name: string) => sumBy(now, name, ['shard']);
  const mailbox = byShard('actor_mailbox_depth');
  const utilization = byShard('worker_utilization');
  const restarts = byShard('worker_restarts');
  const turnsNow = bucketsBy(now, 'actor_turn_seconds', ['shard']);
  const turnsBefore = bucketsBy(b, 'actor_turn_seconds', ['shard']);
  const shardIds = [...new Set([...mailbox.keys(), ...turnsNow.keys()])]
    .filter((x) => x !== '')
    .sort((x, y) => Number(x) - Number(y));
  return shardIds.map((shard): ShardFigures => {
    const turns = bucketDelta(turnsNow.get(shard) ?? new Map(), turnsBefore.get(shard));
    const depth = mailbox.get(shard) ?? 0;
    return {
      shard,
      mailbox: depth,
      mailbox_share: limit ? round(depth / limit, 4) : null,
      utilization: round(utilization.get(shard) ?? 0),
      restarts: restarts.get(shard) ?? 0,
      turns: countOf(turns),
      turn_p50_ms: ms(quantile(0.5, turns)),
      turn_p99_ms: ms(quantile(0.99, turns)),
    };
  });
}

/** Markets: closes since start, their duration since start, the last close seen. */
function marketFigures(now: Sample): MarketFigures[] {
  const closes = sumBy(now, 'session_closes_total', ['market']);
  const performed = sumBy(now, 'session_closes_total', ['market'], (l) => l.performed === 'true');
  const failures = sumBy(now, 'session_close_failures_total', ['market']);
  const closeBuckets = bucketsBy(now, 'session_close_seconds', ['market']);
  const lateBuckets = bucketsBy(now, 'session_close_lateness_seconds', ['market']);
  const lastAt = sumBy(now, 'session_last_close_timestamp_seconds', ['market']);
  const lastTick = sumBy(now, 'session_last_closed_tick', ['market']);
  const interval = sumBy(now, 'session_interval_seconds', ['market']);
  const marketIds = [...new Set([...interval.keys(), ...closes.keys()])].filter((x) => x !== '');
  return marketIds.map((market): MarketFigures => ({
    market,
    closes: closes.get(market) ?? 0,
    performed: performed.get(market) ?? 0,
    failures: failures.get(market) ?? 0,
    close_p50_ms: ms(quantile(0.5, closeBuckets.get(market) ?? new Map())),
    close_p99_ms: ms(quantile(0.99, closeBuckets.get(market) ?? new Map())),
    late_p99_ms: ms(quantile(0.99, lateBuckets.get(market) ?? new Map())),
    last_close_at: lastAt.get(market) ?? null,
    last_tick: lastTick.get(market) ?? null,
    interval_s: interval.get(market) ?? null,
  }));
}

/** The record's cache of settled sessions. */
function recordCacheFigures(now: Sample): Figures['record_cache'] {
  const cacheBytes = sumBy(now, 'record_cache_bytes', ['kind']);
  const cacheSessions = sumBy(now, 'record_cache_sessions', ['event']);
  const hits = cacheSessions.get('hit') ?? 0;
  const misses = cacheSessions.get('miss') ?? 0;
  return {
    kept_bytes: cacheBytes.get('kept') ?? null,
    cap_bytes: cacheBytes.get('cap') ?? null,
    sessions: cacheSessions.get('kept') ?? null,
    hits,
    misses,
    hit_rate: hits + misses > 0 ? round(hits / (hits + misses), 4) : null,
  };
}

/** The main pool now, and the shards' pools: counters since start less those of `b`; unknown while no shard reports. */
function poolFigures(now: Sample, b: Sample | undefined, per: number): Figures['db_pool'] {
  const pool = sumBy(now, 'db_pool_connections', ['state']);
  const poolTotal = (s: Sample | undefined, name: string) => sumBy(s, name, []).get('');
  const poolDelta = (name: string) => (poolTotal(now, name) ?? 0) - (poolTotal(b, name) ?? 0);
  const acquires = poolDelta('db_pool_acquires_total');
  return {
    used: pool.get('used') ?? null,
    free: pool.get('free') ?? null,
    pending: pool.get('pending') ?? null,
    max: pool.get('max') ?? null,
    waits_rate: round(poolDelta('db_pool_waits_total') / per),
    wait_ms: acquires > 0 ? ms(poolDelta('db_pool_wait_seconds_total') / acquires) : null,
    waiting: poolTotal(now, 'db_pool_waiting') ?? null,
  };
}

/** Event streams, their fan-out and webhooks. */
function eventFigures(now: Sample, b: Sample | undefined, per: number): Figures['events'] {
  const sent = (s: Sample | undefined) => sumBy(s, 'events_sent_total', []).get('') ?? 0;
  const fanout = bucketDelta(
    bucketsBy(now, 'event_fanout_seconds', []).get('') ?? new Map(),
    bucketsBy(b, 'event_fanout_seconds', []).get(''),
  );
  const closedBy = sumBy(now, 'event_streams_closed_total', ['reason']);
  const webhooks = sumBy(now, 'webhook_deliveries_total', ['result']);
  return {
    streams: one(now, 'event_streams'),
    sent: sent(now),
    sent_rate: round((sent(now) - (b ? sent(b) : 0)) / per),
    fanout_p50_ms: ms(quantile(0.5, fanout)),
    fanout_p99_ms: ms(quantile(0.99, fanout)),
    closed_behind: closedBy.get('behind') ?? 0,
    closed_gone: closedBy.get('gone') ?? 0,
    webhooks_delivered: webhooks.get('delivered') ?? 0,
    webhooks_retried: webhooks.get('retried') ?? 0,
    webhooks_failed: webhooks.get('failed') ?? 0,
    webhooks_backlog: one(now, 'webhook_backlog_deliveries'),
    webhooks_backlog_oldest_s: one(now, 'webhook_backlog_oldest_seconds'),
  };
}

/**
 * A chart point: the figures over its span (`f`, taken between the samples that bound it) and the
 * closes this process performed in it (`closes`, exact: the longest, and the latest one's lateness).
 */
export function pointOf(f: Figures, closes: readonly CloseSeen[]): Point {
  const markets: Point['markets'] = {};
  for (const m of f.markets) markets[m.market] = { close_ms: null, late_ms: null };
  for (const c of closes) {
    const m = (markets[c.market] ??= { close_ms: null, late_ms: null });
    m.close_ms = Math.max(m.close_ms ?? 0, ms(c.seconds)!);
    m.late_ms = Math.max(m.late_ms ?? 0, ms(c.late_seconds)!);
  }
  const shares = f.shards.map((s) => s.mailbox_share).filter((x): x is number => x !== null);
  return {
    at: f.at,
    rate: f.requests.rate,
    rate_4xx: f.requests.rate_4xx,
    rate_5xx: f.requests.rate_5xx,
    p99_ms: f.requests.p99_ms,
    mailbox_share: shares.length ? Math.max(...shares) : null,
    pool_wait_ms: f.db_pool.wait_ms,
    fanout_p99_ms: f.events.fanout_p99_ms,
    loop_p99_ms: f.process.event_loop_p99_ms,
    markets,
  };
}
