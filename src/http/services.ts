// What route handlers may use. Built once in main.ts; tests build it through the same function. No
// database handle: routes ask actors and run read tasks (`runtime`), so src/ runs no SQL.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../supervisor/clock.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import type { ActorRuntime } from '../../actors/runtime/client.js';
import type { SchemaInfo } from '../../orm/database.js';
import type { Metrics } from '../metrics.js';
import type { RecordFragments } from '../market-data/record-fragments.js';
import type { EventHub } from '../events/hub.js';
import type { OpsFeed } from '../ops/feed.js';
import type { Places, StreamPlaces } from './limits.js';

export type Services = {
  config: Config;
  log: Logger;
  clock: Clock;
  runtime: ActorRuntime;
  metrics: Metrics;
  supervisor: Supervisor;
  schema: SchemaInfo;
  /** The record's settled sessions kept in memory (off with SVC_RECORD_CACHE_MB=0). */
  record: RecordFragments;
  /** The event log's streams of this process (LISTEN/NOTIFY). */
  events: EventHub;
  /** The operators' figures, sampled once someone opens /ops (src/ops/feed.ts). */
  opsFeed: OpsFeed;
  /** Unauthenticated work under way per client address (limits.ts UNAUTHENTICATED_PER_ADDRESS): POST /mcp without a key, WebSockets before their auth. */
  unauthenticated: Places;
  /** This process's name (SVC_NODE_NAME, else HOST:PORT as it listens): /readyz says it. */
  node: () => string;
  /** Whether this process is stopping (SVC_DRAIN_MS): /readyz answers 503 so a balancer takes it out first. */
  draining: () => boolean;
  /** The node running the market closes now (the closes' lease), or null between a holder's death and a takeover. */
  closesHolder: () => Promise<string | null>;
  /** Streams held per API key and public market streams per address (limits.ts STREAMS_PER_KEY, MARKET_STREAMS_PER_ADDRESS). */
  streams: StreamPlaces;
};
