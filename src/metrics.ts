// Prometheus metrics (CONTRACT.md /metrics): requests per route, actor mailboxes and turns,
// worker utilisation, the database pool, session closes, the supervisor's failures, the event
// streams (held, fan-out time, events sent, consumers closed) and webhook deliveries. Gauges that
// mirror live state are collected at scrape time from the objects that own the state.
import client from 'prom-client';
import type { ActorRuntime } from '../actors/runtime/client.js';
import type { DeliverReport } from '../actors/webhooks/messages.js';

export type PoolStats = () => { used: number; free: number; pending: number; max: number };
export type RecordCacheStats = {
  bytes: number;
  capBytes: number;
  entries: number;
  hits: number;
  misses: number;
  evicted: number;
  built: number;
  warmed: number;
};
/** Why the event hub closed a stream (http/event-hub.ts). */
export type StreamCloseReason = 'behind' | 'gone' | 'stopping' | 'revoked';
/** What the event hub reports (http/event-hub.ts): each drain of the log into the streams, each stream it closes. */
export type EventHubObserver = {
  /** A drain ended: `seconds` from the notice that started it to the last event handed; `events` handed to streams in it. */
  fanout(seconds: number, events: number): void;
  closed(reason: StreamCloseReason): void;
};
/** What the alert rules compare with: readiness, the mailbox bound, each market's session length in real seconds. */
export type ServiceFacts = {
  ready: () => boolean;
  holdsCloses: () => boolean;
  mailboxLimit: number;
  intervals: Record<string, number>;
};
/** A close this process performed: its exact duration and lateness (the histograms keep only buckets). */
export type CloseSeen = { seq: number; market: string; seconds: number; late_seconds: number };
/** Closes kept for the operators' charts (GET /ops): far more than a chart point's span sees at any time scale. */
export const RECENT_CLOSES = 256;
/** One metric as prom-client's getMetricsAsJSON() gives it. */
export type MetricJson = {
  name: string;
  help: string;
  type: string;
  values: { value: number; labels: Record<string, string | number>; metricName?: string }[];
};

/** A shard worker's figures as the runtime reports them. */
type ShardStats = ReturnType<ActorRuntime['stats']>[number];
/** A shard worker's waits for a database connection (actors/runtime/pool-waits.ts). */
type PoolWaits = ShardStats['poolWaits'];

/** What the scrape-time metrics read: the objects that own the live state (Metrics.watch*). */
type ScrapeSources = {
  runtime?: Pick<ActorRuntime, 'stats' | 'readSources'>;
  pool?: PoolStats;
  recordStats?: () => RecordCacheStats;
  service?: ServiceFacts;
  streams?: () => number;
  lastClose: Map<string, { at: number; tick: number }>;
};

/** A metric read at scrape time: `collect` sets its values from the sources at each scrape. */
type Scraped = { name: string; help: string; labels?: string[] } & (
  | { type: 'gauge'; collect: (g: client.Gauge, s: ScrapeSources) => void }
  | { type: 'counter'; collect: (c: client.Counter, s: ScrapeSources) => void }
);

const shards = (s: ScrapeSources) => s.runtime?.stats() ?? [];
/** Values by a label's value; undefined while the source is not watched. */
type ByLabel = readonly (readonly [string, number])[] | undefined;

/** A gauge without labels; left unset while its source is not watched (undefined). */
const valueGauge = (
  name: string,
  help: string,
  read: (s: ScrapeSources) => number | undefined,
): Scraped => ({
  type: 'gauge',
  name,
  help,
  collect: (g, s) => {
    const v = read(s);
    if (v !== undefined) g.set(v);
  },
});

/** A gauge by `label`, set to each value read. */
const labelledGauge = (
  name: string,
  help: string,
  label: string,
  read: (s: ScrapeSources) => ByLabel,
): Scraped => ({
  type: 'gauge',
  name,
  help,
  labels: [label],
  collect: (g, s) => {
    for (const [v, n] of read(s) ?? []) g.set({ [label]: v }, n);
  },
});

/** A counter by `label` whose totals are kept by its source: reset to them at each scrape. */
const labelledCounter = (
  name: string,
  help: string,
  label: string,
  read: (s: ScrapeSources) => ByLabel,
): Scraped => ({
  type: 'counter',
  name,
  help,
  labels: [label],
  collect: (c, s) => {
    const values = read(s);
    if (!values) return;
    c.reset();
    for (const [v, n] of values) c.inc({ [label]: v }, n);
  },
});

/** A gauge by shard: `value` of each shard's figures. */
const shardGauge = (name: string, help: string, value: (s: ShardStats) => number) =>
  labelledGauge(name, help, 'shard', (src) =>
    shards(src).map((s) => [String(s.shard), value(s)] as const),
  );

/** A counter by shard of the shards' waits for a database connection, cumulative since start. */
const poolCounter = (name: string, help: string, value: (w: PoolWaits) => number) =>
  labelledCounter(name, help, 'shard', (src) =>
    shards(src).map((s) => [String(s.shard), value(s.poolWaits)] as const),
  );

/** The keys of T whose values are numbers. */
type NumberKey<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T];

/** Fields of `o` by label value (label value → field name, in the order listed); undefined while `o` is. */
const fieldsBy = <T>(o: T | undefined, fields: Record<string, NumberKey<T>>): ByLabel =>
  o && Object.entries(fields).map(([label, k]) => [label, o[k] as number] as const);

const lastCloses = (s: ScrapeSources, of: 'at' | 'tick'): ByLabel =>
  [...s.lastClose].map(([market, c]) => [market, c[of]] as const);

/** The metrics that mirror live state, in the order /metrics lists them. */
const SCRAPED: Scraped[] = [
  shardGauge(
    'actor_mailbox_depth',
    'Messages sent to a shard and not yet answered',
    (s) => s.pending,
  ),
  valueGauge(
    'actor_mailbox_limit',
    'Pending messages per shard before new ones are refused with 503 (SVC_MAILBOX_LIMIT)',
    (s) => s.service?.mailboxLimit,
  ),
  shardGauge(
    'worker_utilization',
    'Share of time a shard worker was busy (Piscina utilisation, 0..1)',
    (s) => s.utilization,
  ),
  labelledCounter(
    'record_replica_reads_total',
    'Record reads a replica could serve (SVC_REPLICA_URLS), by where they were served from: the replica when it had replayed every close this process had seen, else the primary',
    'source',
    (s) => fieldsBy(s.runtime?.readSources(), { replica: 'replica', primary: 'primary' }),
  ),
  shardGauge('worker_restarts', 'Shard workers replaced after dying', (s) => s.restarts),
  labelledGauge(
    'db_pool_connections',
    "Main thread's database pool connections by state",
    'state',
    (s) => fieldsBy(s.pool?.(), { used: 'used', free: 'free', pending: 'pending', max: 'max' }),
  ),
  poolCounter(
    'db_pool_acquires_total',
    "Database connections a shard worker's turns and read tasks asked its pool for",
    (w) => w.acquires,
  ),
  poolCounter(
    'db_pool_waits_total',
    'Connections asked for when none of the pool was idle (the ask waited for one to be released or opened)',
    (w) => w.waited,
  ),
  poolCounter(
    'db_pool_wait_seconds_total',
    'Seconds the asks for a connection waited, all of them together',
    (w) => w.wait_seconds,
  ),
  shardGauge(
    'db_pool_waiting',
    "Asks for a connection a shard worker's pool has not served yet",
    (s) => s.poolWaits.waiting,
  ),
  labelledGauge(
    'record_cache_bytes',
    "Bytes of settled sessions' record kept in memory, and the cap (SVC_RECORD_CACHE_MB)",
    'kind',
    (s) => fieldsBy(s.recordStats?.(), { kept: 'bytes', cap: 'capBytes' }),
  ),
  labelledGauge(
    'record_cache_sessions',
    'Sessions kept now (kept), and since start: found in memory (hit), not found (miss), evicted, read from a worker (built), built by a close (warmed)',
    'event',
    (s) =>
      fieldsBy(s.recordStats?.(), {
        kept: 'entries',
        hit: 'hits',
        miss: 'misses',
        evicted: 'evicted',
        built: 'built',
        warmed: 'warmed',
      }),
  ),
  valueGauge(
    'service_ready',
    '1 once migrations ran and every market has an open session (GET /readyz answers 200), else 0',
    (s) => s.service && (s.service.ready() ? 1 : 0),
  ),
  valueGauge(
    'closes_held',
    '1 while this process runs the market closes (it holds the closes\' lease; CONTRACT.md "Several front ends"), else 0',
    (s) => s.service && (s.service.holdsCloses() ? 1 : 0),
  ),
  labelledGauge(
    'session_interval_seconds',
    "A market's session length in real seconds (its interval divided by SVC_TIME_SCALE)",
    'market',
    (s) => Object.entries(s.service?.intervals ?? {}),
  ),
  labelledGauge(
    'session_last_close_timestamp_seconds',
    'Unix time (real seconds) at which this process last saw a close of the market finish',
    'market',
    (s) => lastCloses(s, 'at'),
  ),
  valueGauge(
    'event_streams',
    'Event streams this process holds (a WebSocket counts once, whatever its channels)',
    (s) => s.streams?.(),
  ),
  labelledGauge(
    'session_last_closed_tick',
    'The session (tick) of the last close of the market this process saw',
    'market',
    (s) => lastCloses(s, 'tick'),
  ),
];

/**
 * Registers one scrape-time metric. prom-client calls collect() with the metric as `this`; the
 * sources are handed to the table's collect explicitly.
 */
function registerScraped(m: Scraped, registry: client.Registry, sources: ScrapeSources): void {
  const config = { name: m.name, help: m.help, labelNames: m.labels ?? [], registers: [registry] };
  if (m.type === 'gauge')
    new client.Gauge({
      ...config,
      collect() {
        m.collect(this, sources);
      },
    });
  else
    new client.Counter({
      ...config,
      collect() {
        m.collect(this, sources);
      },
    });
}

export class Metrics {
  readonly registry = new client.Registry();
  private readonly turns = new client.Histogram({
    name: 'actor_turn_seconds',
    help: 'Actor turn latency (activation, handler and commit) by actor kind and message',
    labelNames: ['actor', 'message', 'ok', 'shard'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  private readonly closes = new client.Histogram({
    name: 'session_close_seconds',
    help: 'Session close duration by market (closes this process performed)',
    labelNames: ['market'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [this.registry],
  });
  private readonly closeLateness = new client.Histogram({
    name: 'session_close_lateness_seconds',
    help: 'From the end of a session (service clock) to its close finishing, by market (closes this process performed)',
    labelNames: ['market'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 120],
    registers: [this.registry],
  });
  private readonly closesTotal = new client.Counter({
    name: 'session_closes_total',
    help: 'Session closes by market and by whether this process performed them (false: already closed)',
    labelNames: ['market', 'performed'] as const,
    registers: [this.registry],
  });

  private readonly closeFailures = new client.Counter({
    name: 'session_close_failures_total',
    help: 'Session closes that failed (each is retried with backoff) by market',
    labelNames: ['market'] as const,
    registers: [this.registry],
  });
  private readonly quarantined = new client.Counter({
    name: 'session_close_quarantined_orders_total',
    help: 'Paid orders a close could not fill and refunded instead (logged with the cause) by market',
    labelNames: ['market'] as const,
    registers: [this.registry],
  });
  private readonly backfillFailures = new client.Counter({
    name: 'backfill_chunk_failures_total',
    help: 'Failed history backfill turns by market, and whether the chunk was then given up',
    labelNames: ['market', 'abandoned'] as const,
    registers: [this.registry],
  });
  private readonly startFailures = new client.Counter({
    name: 'supervisor_start_failures_total',
    help: 'Failed supervisor start attempts (retried with backoff; the process exits after the last)',
    registers: [this.registry],
  });

  private readonly fanouts = new client.Histogram({
    name: 'event_fanout_seconds',
    help: "Time from an event notice to the last event it brought being handed to this process's streams (one drain of the log)",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  private readonly eventsSent = new client.Counter({
    name: 'events_sent_total',
    help: "Events handed to this process's streams (Server-Sent Events and WebSocket channels)",
    registers: [this.registry],
  });
  private readonly answersCut = new client.Counter({
    name: 'http_answers_cut_total',
    help: 'Answers whose client went away (or was closed for asking again) before reading all of it: slow or non-reading clients',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  private readonly streamsClosed = new client.Counter({
    name: 'event_streams_closed_total',
    help: 'Event streams the service closed, by reason: behind (too slow to read), gone (resumed from before what is kept), stopping',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  private readonly webhookDeliveries = new client.Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts this process made, by result: delivered (2xx), retried (to be tried again), failed (given up)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  // The webhook delivery pass's view (set from its report, src/supervisor/supervisor.ts).
  private readonly webhookInFlight = this.gauge(
    'webhook_attempts_in_flight',
    'Webhook delivery attempts this process has started and not yet seen end (at its last pass)',
  );
  private readonly webhookBacklog = this.gauge(
    'webhook_backlog_deliveries',
    "Webhook deliveries due and not yet sent, on every process (at most 10000 counted; at this process's last pass)",
  );
  private readonly webhookBacklogAge = this.gauge(
    'webhook_backlog_oldest_seconds',
    'How long ago the earliest webhook delivery due and not yet sent fell due, in seconds (0: none; a warning is logged from 10 s)',
  );

  /** The event hub's reports (src/events/hub.ts). */
  readonly events: EventHubObserver = {
    fanout: (seconds, events) => {
      this.fanouts.observe(seconds);
      this.eventsSent.inc(events);
    },
    closed: (reason) => this.streamsClosed.inc({ reason }),
  };

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
    for (const m of SCRAPED) registerScraped(m, this.registry, this.sources);
  }

  // Requests are counted in plain typed arrays: prom-client re-hashes label objects on every
  // observation, too slow for the fastest routes. Rendered at scrape time.
  private readonly http = new RequestStats(HTTP_BUCKETS);

  observeRequest = (route: string, method: string, status: number, seconds: number): void => {
    this.http.observe(route, method, status, seconds);
  };

  /** An answer was cut: its client went away before it had read all of it (src/http/server.ts sendBody). */
  observeCut = (route: string): void => {
    this.answersCut.inc({ route });
  };

  observeTurn = (
    actor: string,
    message: string,
    seconds: number,
    ok: boolean,
    shard: number,
  ): void => {
    this.turns.observe({ actor, message, ok: String(ok), shard: String(shard) }, seconds);
  };

  /**
   * A close of `market` finished (`tick`: the session it closed), at real unix time `atSeconds`,
   * `lateSeconds` after the session ended.
   */
  observeClose(
    market: string,
    performed: boolean,
    seconds: number,
    tick: number,
    atSeconds: number,
    lateSeconds: number,
  ): void {
    this.closesTotal.inc({ market, performed: String(performed) });
    if (performed) {
      this.closes.observe({ market }, seconds);
      this.closeLateness.observe({ market }, Math.max(0, lateSeconds));
      this.recentCloses.push({
        seq: ++this.closeSeq,
        market,
        seconds,
        late_seconds: Math.max(0, lateSeconds),
      });
      if (this.recentCloses.length > RECENT_CLOSES) this.recentCloses.shift();
    }
    const last = this.sources.lastClose.get(market);
    if (!last || tick >= last.tick) this.sources.lastClose.set(market, { at: atSeconds, tick });
  }

  /** The closes this process performed after the one numbered `seq` (oldest first; at most RECENT_CLOSES). */
  closesAfter(seq: number): CloseSeen[] {
    return this.recentCloses.filter((c) => c.seq > seq);
  }

  // The supervisor's failures (SupervisorMetrics).
  closeFailed(market: string): void {
    this.closeFailures.inc({ market });
  }

  ordersQuarantined(market: string, n: number): void {
    this.quarantined.inc({ market }, n);
  }

  backfillChunkFailed(market: string, abandoned: boolean): void {
    this.backfillFailures.inc({ market, abandoned: String(abandoned) });
  }

  startFailed(): void {
    this.startFailures.inc();
  }

  /** A webhook delivery pass's report: the attempts that ended, those in flight, the backlog. */
  webhookPass(r: DeliverReport): void {
    this.webhookDeliveries.inc({ result: 'delivered' }, r.delivered);
    this.webhookDeliveries.inc({ result: 'failed' }, r.failed);
    this.webhookDeliveries.inc({ result: 'retried' }, r.retried);
    this.webhookInFlight.set(r.inFlight);
    this.webhookBacklog.set(r.backlog.due);
    this.webhookBacklogAge.set(r.backlog.oldestSeconds);
  }

  /** A gauge without labels whose value is set as things happen (not collected at scrape time). */
  private gauge(name: string, help: string): client.Gauge {
    return new client.Gauge({ name, help, registers: [this.registry] });
  }

  /** Where the metrics of SCRAPED read at each scrape (set by watch, watchRecord, watchEvents and watchService). */
  private readonly sources: ScrapeSources = { lastClose: new Map() };
  private readonly recentCloses: CloseSeen[] = [];
  private closeSeq = 0;

  /** Gauges read from the runtime and the database pool at each scrape. */
  watch(runtime: Pick<ActorRuntime, 'stats' | 'readSources'>, pool: PoolStats): void {
    this.sources.runtime = runtime;
    this.sources.pool = pool;
  }

  /** The record's cache of settled sessions (src/market-data/record-fragments.ts), read at each scrape. */
  watchRecord(stats: () => RecordCacheStats): void {
    this.sources.recordStats = stats;
  }

  /** The event streams held (the hub's count), read at each scrape. */
  watchEvents(streams: () => number): void {
    this.sources.streams = streams;
  }

  /** Readiness, the mailbox bound and each market's session length, for the alert rules (ops/prometheus/). */
  watchService(facts: ServiceFacts): void {
    this.sources.service = facts;
  }

  /**
   * Every metric of the registry and the request counters, as prom-client's JSON (one object per
   * metric, its values with labels): what the operators' page reads (src/ops/).
   */
  async snapshot(): Promise<MetricJson[]> {
    // prom-client types `type` as its enum; its values are the strings of the text format.
    return [
      ...((await this.registry.getMetricsAsJSON()) as unknown as MetricJson[]),
      ...this.http.json(),
    ];
  }

  async text(): Promise<string> {
    return (await this.registry.metrics()) + this.http.render();
  }
}

const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

type RouteStats = {
  route: string;
  method: string;
  byStatus: Map<number, number>;
  buckets: Float64Array;
  sum: number;
  count: number;
};

/** http_requests_total and http_request_duration_seconds, kept cheaply and rendered on demand. */
export class RequestStats {
  /** In the order first seen (the rendering's order). */
  private readonly routes: RouteStats[] = [];
  /**
   * By route, then method: two lookups of strings whose hashes are kept (a route table's own
   * strings), where one by `method + route` built a new string per request and hashed it.
   */
  private readonly byRoute = new Map<string, Map<string, RouteStats>>();

  constructor(private readonly bounds: number[]) {}

  observe(route: string, method: string, status: number, seconds: number): void {
    let methods = this.byRoute.get(route);
    if (!methods) this.byRoute.set(route, (methods = new Map()));
    let r = methods.get(method);
    if (!r) {
      methods.set(
        method,
        (r = {
          route,
          method,
          byStatus: new Map(),
          buckets: new Float64Array(this.bounds.length),
          sum: 0,
          count: 0,
        }),
      );
      this.routes.push(r);
    }
    r.byStatus.set(status, (r.byStatus.get(status) ?? 0) + 1);
    for (let i = 0; i < this.bounds.length; i++) if (seconds <= this.bounds[i]) r.buckets[i]++;
    r.sum += seconds;
    r.count++;
  }

  /** The same figures as prom-client's JSON (a counter and a histogram, `_bucket`, `_sum`, `_count`). */
  json(): MetricJson[] {
    const counts: MetricJson['values'] = [];
    const hist: MetricJson['values'] = [];
    for (const r of this.routes) {
      for (const [status, n] of r.byStatus)
        counts.push({ value: n, labels: { route: r.route, method: r.method, status } });
      const l = { route: r.route, method: r.method };
      this.bounds.forEach((b, i) =>
        hist.push({
          value: r.buckets[i],
          labels: { ...l, le: b },
          metricName: 'http_request_duration_seconds_bucket',
        }),
      );
      hist.push({
        value: r.count,
        labels: { ...l, le: '+Inf' },
        metricName: 'http_request_duration_seconds_bucket',
      });
      hist.push(
        { value: r.sum, labels: l, metricName: 'http_request_duration_seconds_sum' },
        { value: r.count, labels: l, metricName: 'http_request_duration_seconds_count' },
      );
    }
    return [
      {
        name: 'http_requests_total',
        help: 'HTTP requests by route pattern, method and status',
        type: 'counter',
        values: counts,
      },
      {
        name: 'http_request_duration_seconds',
        help: 'HTTP request latency by route pattern',
        type: 'histogram',
        values: hist,
      },
    ];
  }

  render(): string {
    const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    const out = [
      '# HELP http_requests_total HTTP requests by route pattern, method and status',
      '# TYPE http_requests_total counter',
    ];
    for (const r of this.routes) {
      for (const [status, n] of r.byStatus)
        out.push(
          `http_requests_total{route="${esc(r.route)}",method="${r.method}",status="${status}"} ${n}`,
        );
    }
    out.push(
      '# HELP http_request_duration_seconds HTTP request latency by route pattern',
      '# TYPE http_request_duration_seconds histogram',
    );
    for (const r of this.routes) {
      const l = `route="${esc(r.route)}",method="${r.method}"`;
      this.bounds.forEach((b, i) =>
        out.push(`http_request_duration_seconds_bucket{${l},le="${b}"} ${r.buckets[i]}`),
      );
      out.push(`http_request_duration_seconds_bucket{${l},le="+Inf"} ${r.count}`);
      out.push(
        `http_request_duration_seconds_sum{${l}} ${r.sum}`,
        `http_request_duration_seconds_count{${l}} ${r.count}`,
      );
    }
    return out.join('\n') + '\n';
  }
}
