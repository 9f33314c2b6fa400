// MikroORM options shared by the main thread and the workers.
import { defineConfig } from '@mikro-orm/postgresql';
import type { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities/index.js';
import type { migrationsList } from './migrations/index.js';

export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/**
 * Settings of every connection the service opens (sent at connect: no statement, no round trip).
 * `jit = off`: the service's statements are short and bounded (index lookups, one close's rows), but
 * the planner's estimate of some is large (a many-account read of a log not yet analyzed), and past
 * `jit_above_cost` PostgreSQL compiles each first, for far longer than it runs: a close's event
 * fan-out would take seconds. Nothing here scans enough rows to win that back.
 */
export const CONNECTION_SETTINGS = '-c jit=off';

/** The migrations extension and the migrations it runs (orm/database.ts loads them only where they are used). */
export type Migrations = { Migrator: typeof Migrator; migrationsList: typeof migrationsList };

/**
 * `migrations`: for the connections that migrate or report the schema (the main thread); the
 * workers open without them.
 */
export function ormConfig(clientUrl: string, poolMax: number, migrations?: Migrations) {
  return defineConfig({
    clientUrl,
    entities,
    extensions: migrations ? [migrations.Migrator] : [],
    migrations: {
      migrationsList: migrations?.migrationsList ?? [],
      tableName: MIGRATIONS_TABLE,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 10_000 },
    driverOptions: { connection: { options: CONNECTION_SETTINGS } },
    debug: false,
    allowGlobalContext: false,
    discovery: { warnWhenNoEntities: false },
  });
}
