// Opening the system of record: a MikroORM instance, its migrations, and the schema facts the
// manifest reports. Used by the main thread (migrations, read models) and by every worker.
import { MikroORM } from '@mikro-orm/postgresql';
import { ormConfig, MIGRATIONS_TABLE } from './config.js';

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
  const rows = await orm.em.getConnection().execute(
    `select name, extract(epoch from executed_at)::float8 as at from ${MIGRATIONS_TABLE} order by id`,
  );
  const last = rows[rows.length - 1];
  return { applied: rows.length, last: last ? last.name : null, last_at: last ? Math.floor(Number(last.at)) : null };
}
