// Opening the system of record: a MikroORM instance, its migrations, and the schema facts the
// manifest reports. Used by the main thread (migrations, read models) and by every worker.
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig } from './config.js';

export type Orm = MikroORM;

export async function openOrm(url: string, poolMax = 8): Promise<Orm> {
  return MikroORM.init(ormConfig(url, poolMax));
}

export async function migrate(orm: Orm): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}

export type SchemaInfo = { applied: number; last: string | null; last_at: number | null };

export async function schemaInfo(orm: Orm): Promise<SchemaInfo> {
  // The migrator's own record of what ran, in the order it ran (ordered by id).
  const executed = await orm.getMigrator().getExecutedMigrations();
  const last = executed[executed.length - 1];
  return { applied: executed.length, last: last ? last.name : null, last_at: last ? Math.floor(new Date(last.executed_at).getTime() / 1000) : null };
}
