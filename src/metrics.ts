// Prometheus metrics (CONTRACT.md /metrics): requests per route, actor mailboxes and turns,
// worker utilisation, the database pool, session closes. Gauges that mirror live state are
// collected at scrape time from the objects that own the state.
import client from 'prom-client';
import type { ActorRuntime } from '../actors/runtime/shards.js';

export type PoolStats = () => { used: number; free: number; pending: number; max: number };

export class Metrics {
  readonly registry = new client.Registry();
  private readonly requests = new client.Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route pattern',
    labelNames: ['route', 'method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
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

  constructor() {
    client.collectDefaultMetrics({ register: this.registry });
  }

  // Label children are looked up once per (route, method[, status]): the request hot path then
  // only increments numbers instead of hashing label objects.
  private readonly requestChildren = new Map<string, { latency: client.Histogram.Internal<'route' | 'method'>; byStatus: Map<number, client.Counter.Internal> }>();

  observeRequest = (route: string, method: string, status: number, seconds: number): void => {
    const key = `${method} ${route}`;
    let c = this.requestChildren.get(key);
    if (!c) this.requestChildren.set(key, (c = { latency: this.latency.labels(route, method), byStatus: new Map() }));
    let counter = c.byStatus.get(status);
    if (!counter) c.byStatus.set(status, (counter = this.requests.labels(route, method, String(status))));
    counter.inc();
    c.latency.observe(seconds);
  };

  observeTurn = (actor: string, message: string, seconds: number, ok: boolean): void => {
    this.turns.observe({ actor, message, ok: String(ok) }, seconds);
  };

  observeClose(market: string, performed: boolean, seconds: number): void {
    this.closesTotal.inc({ market, performed: String(performed) });
    if (performed) this.closes.observe({ market }, seconds);
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

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
