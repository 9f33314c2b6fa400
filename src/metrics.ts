// Prometheus metrics (CONTRACT.md /metrics): requests per route, actor mailboxes and turns,
// worker utilisation, the database pool, session closes, the supervisor's failures. Gauges that
// mirror live state are collected at scrape time from the objects that own the state.
import client from 'prom-client';
import type { ActorRuntime } from '../actors/runtime/client.js';

export type PoolStats = () => { used: number; free: number; pending: number; max: number };

export class Metrics {
  readonly registry = new client.Registry();
  private readonly turns = new client.Histogram({
    name: 'actor_turn_seconds',
    help: 'Actor turn latency (activation, handler and commit) by actor kind and message',
    labelNames: ['actor', 'message', 'ok'] as const,
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

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
  }

  // Requests are counted in plain typed arrays: prom-client re-hashes label objects on every
  // observation, which cost a fifth of a fast route's throughput. Rendered at scrape time.
  private readonly http = new RequestStats(HTTP_BUCKETS);

  observeRequest = (route: string, method: string, status: number, seconds: number): void => {
    this.http.observe(route, method, status, seconds);
  };

  observeTurn = (actor: string, message: string, seconds: number, ok: boolean): void => {
    this.turns.observe({ actor, message, ok: String(ok) }, seconds);
  };

  observeClose(market: string, performed: boolean, seconds: number): void {
    this.closesTotal.inc({ market, performed: String(performed) });
    if (performed) this.closes.observe({ market }, seconds);
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

  /** Gauges read from the runtime and the database pool at each scrape. */
  watch(runtime: ActorRuntime, pool: PoolStats): void {
    const registers = [this.registry];
    new client.Gauge({
      name: 'actor_mailbox_depth',
      help: 'Messages sent to a shard and not yet answered',
      labelNames: ['shard'] as const,
      registers,
      collect() {
        for (const s of runtime.stats()) this.set({ shard: String(s.shard) }, s.pending);
      },
    });
    new client.Gauge({
      name: 'worker_utilization',
      help: 'Share of time a shard worker was busy (Piscina utilisation, 0..1)',
      labelNames: ['shard'] as const,
      registers,
      collect() {
        for (const s of runtime.stats()) this.set({ shard: String(s.shard) }, s.utilization);
      },
    });
    new client.Gauge({
      name: 'worker_restarts',
      help: 'Shard workers replaced after dying',
      labelNames: ['shard'] as const,
      registers,
      collect() {
        for (const s of runtime.stats()) this.set({ shard: String(s.shard) }, s.restarts);
      },
    });
    new client.Gauge({
      name: 'db_pool_connections',
      help: "Main thread's database pool connections by state",
      labelNames: ['state'] as const,
      registers,
      collect() {
        const p = pool();
        this.set({ state: 'used' }, p.used);
        this.set({ state: 'free' }, p.free);
        this.set({ state: 'pending' }, p.pending);
        this.set({ state: 'max' }, p.max);
      },
    });
  }

  /** The record's cache of settled sessions (src/http/record-fragments.ts), read at each scrape. */
  watchRecord(stats: () => { bytes: number; capBytes: number; entries: number; hits: number; misses: number; evicted: number; built: number; warmed: number }): void {
    const registers = [this.registry];
    new client.Gauge({
      name: 'record_cache_bytes',
      help: "Bytes of settled sessions' record kept in memory, and the cap (SVC_RECORD_CACHE_MB)",
      labelNames: ['kind'] as const,
      registers,
      collect() {
        const s = stats();
        this.set({ kind: 'kept' }, s.bytes);
        this.set({ kind: 'cap' }, s.capBytes);
      },
    });
    new client.Gauge({
      name: 'record_cache_sessions',
      help: 'Sessions kept now (kept), and since start: found in memory (hit), not found (miss), evicted, read from a worker (built), built by a close (warmed)',
      labelNames: ['event'] as const,
      registers,
      collect() {
        const s = stats();
        for (const [event, n] of [['kept', s.entries], ['hit', s.hits], ['miss', s.misses], ['evicted', s.evicted], ['built', s.built], ['warmed', s.warmed]] as const) this.set({ event }, n);
      },
    });
  }

  async text(): Promise<string> {
    return (await this.registry.metrics()) + this.http.render();
  }
}

const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

type RouteStats = { route: string; method: string; byStatus: Map<number, number>; buckets: Float64Array; sum: number; count: number };

/** http_requests_total and http_request_duration_seconds, kept cheaply and rendered on demand. */
export class RequestStats {
  private readonly routes = new Map<string, RouteStats>();

  constructor(private readonly bounds: number[]) {}

  observe(route: string, method: string, status: number, seconds: number): void {
    const key = method + route;
    let r = this.routes.get(key);
    if (!r) this.routes.set(key, (r = { route, method, byStatus: new Map(), buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 }));
    r.byStatus.set(status, (r.byStatus.get(status) ?? 0) + 1);
    for (let i = 0; i < this.bounds.length; i++) if (seconds <= this.bounds[i]) r.buckets[i]++;
    r.sum += seconds;
    r.count++;
  }

  render(): string {
    const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    const out = [
      '# HELP http_requests_total HTTP requests by route pattern, method and status',
      '# TYPE http_requests_total counter',
    ];
    for (const r of this.routes.values()) {
      for (const [status, n] of r.byStatus) out.push(`http_requests_total{route="${esc(r.route)}",method="${r.method}",status="${status}"} ${n}`);
    }
    out.push('# HELP http_request_duration_seconds HTTP request latency by route pattern', '# TYPE http_request_duration_seconds histogram');
    for (const r of this.routes.values()) {
      const l = `route="${esc(r.route)}",method="${r.method}"`;
      this.bounds.forEach((b, i) => out.push(`http_request_duration_seconds_bucket{${l},le="${b}"} ${r.buckets[i]}`));
      out.push(`http_request_duration_seconds_bucket{${l},le="+Inf"} ${r.count}`);
      out.push(`http_request_duration_seconds_sum{${l}} ${r.sum}`, `http_request_duration_seconds_count{${l}} ${r.count}`);
    }
    return out.join('\n') + '\n';
  }
}
