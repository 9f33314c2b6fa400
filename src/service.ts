// Assembles the service: database (PostgreSQL or embedded), migrations, clock, actor shards,
// supervisor, front end. `startService` is what `npm start` runs and what the API tests start.
import { KeyRateLimit } from './http/rate-limit.js';
import pino, { type Logger } from 'pino';
import type { Config } from './config.js';
import { MARKETS, MARKET_IDS, type MarketId } from './engine/index.js';
import { Clock, resolveAnchor, type Anchor } from './supervisor/clock.js';
import { Supervisor } from './supervisor/supervisor.js';
import type { BoundedBackoff } from './supervisor/backoff.js';
import {
  ActorRuntime,
  CloseLease,
  NotifyListener,
  read,
  withSafeErrors,
} from '../actors/runtime/client.js';
import { answersRef } from '../actors/answers/messages.js';
import {
  budgetProblem,
  connectionBudget,
  connectionLimit,
  MAIN_POOL,
  poolStats,
  REPLICA_POOL,
  WORKER_POOL,
} from '../orm/connections.js';
import { ConfigError } from './config.js';
import { migrate, openOrm, schemaInfo, type Orm } from '../orm/database.js';
import { EmbeddedDatabaseError, startEmbedded, type EmbeddedDatabase } from '../orm/embedded.js';
import { initMeta, writeMeta } from '../orm/meta.js';
import { Metrics } from './metrics.js';
import {
  createApp,
  listen,
  type FrontEnd,
  type Listening,
  type ServerOptions,
} from './http/server.js';
import { errorPage } from './web/pages.js';
import { routeTable } from './http/route-table.js';
import { heardRevocation, keyAuthenticator } from './http/authenticators/agent-key.js';
import { KEYS_CHANNEL } from '../actors/agent/messages.js';
import { holderAuthenticator } from './http/authenticators/holder-session.js';
import type { Services } from './http/services.js';
import { RecordFragments } from './market-data/record-fragments.js';
import { warmCloseAnswers } from './market-data/families-book.js';
import { EventHub } from './events/hub.js';
import { EVENTS_CHANNEL, SESSIONS_CHANNEL } from '../actors/events/messages.js';
import { attachWebSocket } from './events/websocket.js';
import { Places, StreamPlaces, UNAUTHENTICATED_PER_ADDRESS } from './http/limits.js';
import { sessionClosedEvent } from './events/market-stream.js';
import { OpsFeed, type OpsFeedOptions } from './ops/feed.js';
import { opsAuthenticator } from './ops/access.js';

/** How often stored idempotency answers past their retention are swept. */
const ANSWER_SWEEP_MS = 3_600_000;
/**
 * How long a close's warming of the record waits, at most, for the close's events to reach this
 * process's streams: the record's routes move to the new session after it, so this bounds that delay.
 */
const WARM_WAITS_FOR_FANOUT_MS = 2000;

export type StartOptions = {
  log?: Logger;
  /** Real time source for the clock (tests drive it). */
  realMs?: () => number;
  /** Extra actor modules for the workers (tests). */
  extraActorModules?: string[];
  /** How the supervisor's start is retried before `ready` rejects (main.ts then exits). */
  startRetry?: BoundedBackoff;
  /** How long a WebSocket may wait for its auth message (default limits.ts AUTH_TIMEOUT_MS; tests lengthen it). */
  wsAuthTimeoutMs?: number;
  /** Streams one API key may hold (default limits.ts STREAMS_PER_KEY; a test of a hundred slow readers of one log raises it). */
  streamsPerKey?: number;
  /** /ops's chart points and thresholds (defaults: src/ops/feed.ts, thresholds.ts; tests shorten or lower them). */
  ops?: OpsFeedOptions;
};

export type RunningService = {
  port: number;
  url: string;
  services: Services;
  /** The process's own database handle (migrations, start-up checks; tests read through it). Routes have none. */
  orm: Orm;
  /** Resolves once every market has an open session (after any catch-up); rejects when the supervisor could not start. */
  ready: Promise<void>;
  stop: () => Promise<void>;
};

const ANCHOR_KEY = 'clock_anchor';

async function loadClock(orm: Orm, scale: number, realMs: () => number): Promise<Clock> {
  const now = realMs() / 1000;
  const fresh: Anchor = resolveAnchor(null, scale, now);
  const stored = JSON.parse(await initMeta(orm, ANCHOR_KEY, JSON.stringify(fresh), now)) as Anchor;
  const anchor = resolveAnchor(stored, scale, now);
  if (anchor !== stored) await writeMeta(orm, ANCHOR_KEY, JSON.stringify(anchor), now);
  return new Clock(anchor, realMs);
}

/** Headroom of the embedded server over the service's own connections (psql, pg_dump). */
const EMBEDDED_SPARE_CONNECTIONS = 10;

/** The embedded server under DATA_DIR, sized for the shards; what it cannot use is a configuration error. */
async function startEmbeddedServer(config: Config, log: Logger): Promise<EmbeddedDatabase> {
  try {
    const db = await startEmbedded(config.dataDir, {
      maxConnections: connectionBudget(config.shards).total + EMBEDDED_SPARE_CONNECTIONS,
    });
    for (const note of db.notes) log.info({ dataDir: config.dataDir }, note);
    // Where to point pg_dump or psql (README "Your data"); never the password itself.
    log.info(
      {
        dataDir: config.dataDir,
        host: db.host,
        port: db.port,
        user: 'postgres',
        passwordFile: db.passwordFile,
      },
      'embedded PostgreSQL started',
    );
    return db;
  } catch (err) {
    if (err instanceof EmbeddedDatabaseError) throw new ConfigError(err.message);
    throw err;
  }
}

export async function startService(
  config: Config,
  opts: StartOptions = {},
): Promise<RunningService> {
  // Every error log of this process goes through the secret-free `err` serializer (actors/runtime/log.ts).
  const log = withSafeErrors(opts.log ?? pino({ level: config.logLevel }));
  const embedded = config.databaseUrl ? undefined : await startEmbeddedServer(config, log);
  try {
    return await serve(config, opts, log, config.databaseUrl ?? embedded!.url, embedded);
  } catch (err) {
    // A start that fails (migrations, the port) leaves no server of ours running.
    await embedded?.stop().catch((e) => log.error({ err: e }, 'embedded PostgreSQL did not stop'));
    throw err;
  }
}

/** Counts an answer: its route, method, status and seconds. */
type OnRequest = NonNullable<ServerOptions['onRequest']>;

/** What changes while the service runs, read by what was made before it changed. */
type Live = {
  /** This node's name: host and port, the listening port once it is known (or SVC_NODE_NAME). */
  node: string;
  /** Stopping: /readyz answers 503. */
  draining: boolean;
};

/** The actors of this process and what is kept and counted of them. */
type Core = { clock: Clock; metrics: Metrics; runtime: ActorRuntime; record: RecordFragments };

/** What runs the closes and follows them: the supervisor, its lease, the events it publishes. */
type Closes = {
  listener: NotifyListener;
  events: EventHub;
  lease: CloseLease;
  supervisor: Supervisor;
};

/** The service on its database: the actors, the supervisor, the servers, and how it all stops. */
async function serve(
  config: Config,
  opts: StartOptions,
  log: Logger,
  databaseUrl: string,
  embedded: EmbeddedDatabase | undefined,
): Promise<RunningService> {
  const { orm, schema, clock } = await openDatabase(config, opts, log, databaseUrl);
  let readMark: () => unknown = () => undefined;
  // What this process has seen closed (reads a replica may serve): the supervisor's, once it exists.
  const core = newCore(config, opts, log, databaseUrl, orm, clock, () => readMark());
  const live: Live = { node: config.nodeName ?? `${config.host}:${config.port}`, draining: false };
  const closes = newCloses(config, opts, log, databaseUrl, core, live, () => services);
  readMark = () => closes.supervisor.readMark();
  await followNotices(closes);
  const { services, opsFeed, onRequest } = newServices(
    config,
    opts,
    log,
    core,
    closes,
    schema,
    live,
  );
  // A key revoked on any process: this one forgets it and ends its streams.
  await closes.listener.listen(KEYS_CHANNEL, (payload) => heardRevocation(services, payload));
  const { front, listening, url } = await startServers(config, opts, services, onRequest, live);
  log.info(
    {
      url,
      node: live.node,
      shards: config.shards,
      timeScale: config.timeScale,
      database: embedded ? 'embedded' : 'postgresql',
    },
    'listening',
  );

  const ready = closes.supervisor.start();
  // The supervisor logged each failed attempt; on the last one main.ts exits (tests see `ready` reject).
  ready.catch(() => {});
  const sweep = startSweep(core, log);
  const stop = stopSequence(config, log, live, {
    ...closes,
    runtime: core.runtime,
    orm,
    embedded,
    opsFeed,
    front,
    listening,
    sweep,
  });
  return { port: listening.port, url, services, orm, ready, stop };
}

/**
 * The process's database handle, once the shards' pools are known to fit, the migrations are
 * applied and the clock's anchor is read (or made).
 */
async function openDatabase(
  config: Config,
  opts: StartOptions,
  log: Logger,
  databaseUrl: string,
): Promise<{ orm: Orm; schema: Services['schema']; clock: Clock }> {
  const orm = await openOrm(databaseUrl, MAIN_POOL);
  // Every shard's pools must fit in what the database accepts: refuse to start rather than fail under load.
  const problem = budgetProblem(config.shards, await connectionLimit(orm));
  if (problem) {
    await orm.close();
    throw new ConfigError(problem);
  }
  const applied = await migrate(orm);
  if (applied.length) log.info({ applied }, 'migrations applied');
  const schema = await schemaInfo(orm);
  const clock = await loadClock(orm, config.timeScale, opts.realMs ?? Date.now);
  return { orm, schema, clock };
}

/** The actors' shards, the closed record's cache over them, and the metrics that watch both. */
function newCore(
  config: Config,
  opts: StartOptions,
  log: Logger,
  databaseUrl: string,
  orm: Orm,
  clock: Clock,
  readMark: () => unknown,
): Core {
  const metrics = new Metrics();
  const runtime = newRuntime(config, opts, databaseUrl, metrics, clock, readMark);
  metrics.watch(runtime, () => poolStats(orm));
  const record = new RecordFragments(runtime, config.recordCacheBytes, log, (market) => [
    // What a request with default flags reads: warmed at each close even before anyone asked.
    { kind: 'history', market, includeBundle: false, oracle: false },
    { kind: 'trades', market },
    { kind: 'tape', market, cluster: -1 },
    { kind: 'stats', market, oracle: config.oracle },
    { kind: 'dataset', market, split: 'labeled', expandQty: false },
  ]);
  metrics.watchRecord(() => record.stats());
  return { clock, metrics, runtime, record };
}

/** The supervisor, the lease that lets one process of those on the database run the closes, and the events hub. */
function newCloses(
  config: Config,
  opts: StartOptions,
  log: Logger,
  databaseUrl: string,
  core: Core,
  live: Live,
  services: () => Services,
): Closes {
  const { clock, metrics, runtime } = core;
  const listener = new NotifyListener(databaseUrl, (err) =>
    log.warn({ err }, 'event notices: the listening connection failed; reconnecting'),
  );
  const events = new EventHub(
    runtime,
    listener,
    log,
    (market, tick) => sessionClosedEvent(runtime, clock, market, tick),
    metrics.events,
  );
  metrics.watchEvents(() => events.size());
  // One process of those on this database runs the closes; its lease names it by this node's name.
  const lease = new CloseLease(
    databaseUrl,
    () => live.node,
    (err) => log.error({ err }, "the closes' lease connection ended"),
  );
  const supervisor = newSupervisor(config, opts, log, { ...core, lease, events, services });
  return { listener, events, lease, supervisor };
}

/** The events hub started, and the database's notices followed. */
async function followNotices({ listener, events, supervisor }: Closes): Promise<void> {
  await events.start();
  // Webhook deliveries start soon after an account's log grew, not only at the next pass (CONTRACT.md "Events" → Webhooks).
  await listener.listen(EVENTS_CHANNEL, () => supervisor.wakeWebhooks());
  // A process that does not run the closes follows each one as it commits.
  await listener.listen(SESSIONS_CHANNEL, (payload) => supervisor.heardClose(payload));
}

/** What the routes are given (Services), with /ops's feed started and each answer counted for it. */
function newServices(
  config: Config,
  opts: StartOptions,
  log: Logger,
  { clock, metrics, runtime, record }: Core,
  { events, lease, supervisor }: Closes,
  schema: Services['schema'],
  live: Live,
): { services: Services; opsFeed: OpsFeed; onRequest: OnRequest } {
  metrics.watchService({
    ready: () => supervisor.ready && !live.draining,
    holdsCloses: () => supervisor.holdsCloses,
    mailboxLimit: config.mailboxLimit,
    intervals: Object.fromEntries(
      MARKET_IDS.map((id) => [id, MARKETS[id].interval_seconds / config.timeScale]),
    ),
  });
  const opsFeed = new OpsFeed(metrics, () => clock.realNow() * 1000, opts.ops);
  opsFeed.start();
  // Each answer is counted, and a 5xx kept for /ops with its route and instant.
  const onRequest: OnRequest = (route, method, status, seconds) => {
    metrics.observeRequest(route, method, status, seconds);
    opsFeed.served(method, route, status);
  };
  const services: Services = {
    config,
    log,
    clock,
    runtime,
    metrics,
    supervisor,
    schema,
    record,
    events,
    opsFeed,
    unauthenticated: new Places(UNAUTHENTICATED_PER_ADDRESS),
    streams: new StreamPlaces(opts.streamsPerKey),
    node: () => live.node,
    draining: () => live.draining,
    closesHolder: () => lease.holder(),
  };
  return { services, opsFeed, onRequest };
}

/** The HTTP front end and the WebSocket on it, listening; the node is then named by its port. */
async function startServers(
  config: Config,
  opts: StartOptions,
  services: Services,
  onRequest: OnRequest,
  live: Live,
): Promise<{ front: FrontEnd; listening: Listening; url: string }> {
  const { log, runtime } = services;
  const keyAuth = keyAuthenticator(services);
  const front = createApp({
    routes: routeTable(services),
    log,
    bodyLimitBytes: config.bodyLimitBytes,
    trustedProxies: config.trustedProxies,
    authenticators: {
      key: keyAuth,
      holder: holderAuthenticator(services),
      ops: opsAuthenticator(config),
    },
    siteOrigin: new URL(config.baseUrl).origin,
    rateLimit: new KeyRateLimit(config.rateLimit, () => services.clock.realNow()),
    answers: {
      keyBusy: (k) => runtime.keyBusy(k),
      holdKey: (k) => runtime.holdKey(k),
      find: async (scope, key) =>
        (await read(runtime, 'idempotency.find', { scope, key })) ?? undefined,
    },
    onRequest,
    onCut: services.metrics.observeCut,
    errorPage,
  });
  // The WebSocket (uWS answers its upgrades before the route table's GET of the same path).
  attachWebSocket(front.app, {
    hub: services.events,
    authenticate: keyAuth,
    log,
    onRequest,
    unauthenticated: services.unauthenticated,
    keyStreams: services.streams.byKey,
    trustedProxies: config.trustedProxies,
    authTimeoutMs: opts.wsAuthTimeoutMs,
  });
  const listening = await listen(front.app, config.host, config.port);
  const url = `http://${config.host}:${listening.port}`;
  live.node = config.nodeName ?? `${config.host}:${listening.port}`;
  return { front, listening, url };
}

/** Stored Idempotency-Key answers are forgotten after 24 h and events after 7 days (CONTRACT.md), bounded batches an hour. */
function startSweep({ runtime, clock }: Core, log: Logger): NodeJS.Timeout {
  const sweep = setInterval(() => {
    runtime
      .ask(answersRef, { kind: 'sweep', at: clock.realNow() })
      .catch((err) => log.warn({ err }, 'retention sweep failed; the next one retries'));
  }, ANSWER_SWEEP_MS);
  sweep.unref();
  return sweep;
}

/** What the stop sequence ends, in its order. */
type Stoppable = Closes & {
  runtime: ActorRuntime;
  orm: Orm;
  embedded: EmbeddedDatabase | undefined;
  opsFeed: OpsFeed;
  front: FrontEnd;
  listening: Listening;
  sweep: NodeJS.Timeout;
};

/**
 * The service's stop, once however often it is called: drained (behind a balancer), the closes
 * finished and their lease given up, the requests under way answered, then the shards, the
 * connections and the database.
 */
function stopSequence(config: Config, log: Logger, live: Live, p: Stoppable): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= (async () => {
      // Behind a balancer: /readyz answers 503 until its health checks have taken this node out, then it stops.
      live.draining = true;
      if (config.drainMs > 0 && p.supervisor.ready) {
        log.info(
          { drainMs: config.drainMs },
          'draining: /readyz answers 503 before the node stops',
        );
        await new Promise((r) => setTimeout(r, config.drainMs));
      }
      clearInterval(p.sweep);
      p.events.stop();
      p.listening.close();
      p.opsFeed.stop();
      await p.supervisor.stop();
      // After the closes under way: another process takes them at its next try.
      await p.lease.release();
      await answerInflight(p.front, log);
      await p.runtime.close();
      await p.listener.close();
      await p.orm.close();
      await p.embedded?.stop();
      log.info('stopped');
    })());
}

/** Lets answered-but-unfinished requests finish (bounded), before the mailboxes drain. */
async function answerInflight(front: FrontEnd, log: Logger): Promise<void> {
  for (let i = 0; i < 100 && front.inflight() > 0; i++) await new Promise((r) => setTimeout(r, 50));
  if (front.inflight() > 0)
    log.warn({ inflight: front.inflight() }, 'stopping with requests still unanswered');
}

/** The actors' shards, with the settings of this process. */
function newRuntime(
  config: Config,
  opts: StartOptions,
  databaseUrl: string,
  metrics: Metrics,
  clock: Clock,
  readMark: () => unknown,
): ActorRuntime {
  return new ActorRuntime({
    shards: config.shards,
    databaseUrl,
    poolMax: WORKER_POOL,
    seed: config.seed,
    baseUrl: config.baseUrl,
    idleMs: 60_000,
    logLevel: config.logLevel,
    askTimeoutMs: config.askTimeoutMs,
    mailboxLimit: config.mailboxLimit,
    workerHeapMb: config.workerHeapMb,
    extraActorModules: opts.extraActorModules,
    replicaUrls: config.replicaUrls,
    replicaPoolMax: REPLICA_POOL,
    readMark,
    onTurn: metrics.observeTurn,
    clock: () => clock.realNow(),
  });
}

/** The supervisor of this process: the clock's closes, warming what a close changes, each close counted and logged. */
function newSupervisor(
  config: Config,
  opts: StartOptions,
  log: Logger,
  p: {
    runtime: ActorRuntime;
    clock: Clock;
    lease: CloseLease;
    metrics: Metrics;
    events: EventHub;
    record: RecordFragments;
    services: () => Services;
  },
): Supervisor {
  const { runtime, clock, lease, metrics, events, record } = p;
  return new Supervisor(
    runtime,
    clock,
    MARKET_IDS.map((id) => MARKETS[id]),
    {
      catchupLimit: config.catchupLimit,
      backfillDays: config.backfillDays,
      lease,
      startRetry: opts.startRetry,
      webhookAllowPrivate: config.webhookAllowPrivate,
      webhookTimeoutMs: config.webhookTimeoutMs,
      log,
      metrics,
      // The sessions the close settled, and the answers that change only at a close (families, book),
      // once the close's events have reached this process's streams (at most WARM_WAITS_FOR_FANOUT_MS).
      warm: async (market, prevOpen, open) => {
        await events.idle(WARM_WAITS_FOR_FANOUT_MS);
        await Promise.all([
          record.warm(market as MarketId, prevOpen, open),
          warmCloseAnswers(p.services(), market as MarketId, open),
        ]);
      },
      onClose: (market, tick, reply) => {
        const now = clock.realNow();
        metrics.observeClose(
          market,
          reply.closed,
          reply.ms / 1000,
          tick,
          now,
          now - clock.closesAt(tick, MARKETS[market as MarketId].interval_seconds),
        );
        log.info(
          { market, tick, performed: reply.closed, ms: reply.ms, steps: reply.steps },
          'session closed',
        );
      },
    },
  );
}
