// Opening the system of record: a MikroORM instance, its migrations, and the schema facts the
// manifest reports. Used by the main thread (migrations, read models) and by every worker.
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { ormConfig, type Migrations } from './config.js';

export type Orm = MikroORM;

/**
 * Opens the ORM; `migrations: false` leaves out the migrations extension and the migrations (each
 * imports it), which a worker never uses: they load umzug and its command line, CPU spent in each
 * worker of every start.
 */
export async function openOrm(
  url: string,
  poolMax = 8,
  opts: { migrations?: boolean } = {},
): Promise<Orm> {
  const migrations = opts.migrations === false ? undefined : await loadMigrations();
  return MikroORM.init(ormConfig(url, poolMax, migrations));
}

const loadMigrations = async (): Promise<Migrations> => {
  const [{ Migrator }, { migrationsList }] = await Promise.all([
    import('@mikro-orm/migrations'),
    import('./migrations/index.js'),
  ]);
  return { Migrator, migrationsList };
};

/** The advisory lock several processes starting on one database (a cluster, a rolling deploy) migrate under, one at a time. */
const MIGRATION_LOCK_KEY = 0x5356_4d47;

/**
 * Applies the migrations not yet applied. Under a session advisory lock on a connection of its own:
 * a process that finds another migrating waits for it, then finds nothing left to apply.
 */
export async function migrate(orm: Orm): Promise<string[]> {
  const lock = new pg.Client({ connectionString: orm.config.getClientUrl() });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    const applied = await orm.getMigrator().up();
    return applied.map((m) => m.name);
  } finally {
    // Ending the connection gives the lock up, whatever happened above.
    await lock.end().catch(() => {});
  }
}

export type SchemaInfo = { applied: number; last: string | null; last_at: number | null };

export async function schemaInfo(orm: Orm): Promise<SchemaInfo> {
  // The migrator's own record of what ran, in the order it ran (ordered by id).
  const executed = await orm.getMigrator().getExecutedMigrations();
  const last = executed[executed.length - 1];
  return {
    applied: executed.length,
    last: last ? last.name : null,
    last_at: last ? Math.floor(new Date(last.executed_at).getTime() / 1000) : null,
  };
}
