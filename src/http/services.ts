// What route handlers may use. Built once in main.ts; tests build it through the same function.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../supervisor/clock.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import type { ActorRuntime } from '../../actors/runtime/shards.js';
import type { Orm, SchemaInfo } from '../../orm/database.js';
import type { Metrics } from '../metrics.js';

export type Services = {
  config: Config;
  log: Logger;
  clock: Clock;
  runtime: ActorRuntime;
  /** The main thread's database handle: read models only; writes go through actors. */
  orm: Orm;
  metrics: Metrics;
  supervisor: Supervisor;
  schema: SchemaInfo;
};
