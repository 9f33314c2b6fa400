// Small service-wide facts that must survive restarts (service_meta), e.g. the clock anchor.
import type { Orm } from './database.js';

export async function readMeta(orm: Orm, key: string): Promise<string | null> {
  const rows = await orm.em.fork().execute('select value from service_meta where key = ?', [key]);
  return rows[0]?.value ?? null;
}

/** Stores `value` unless the key is already set (first writer wins); answers the stored value. */
export async function initMeta(orm: Orm, key: string, value: string): Promise<string> {
  const em = orm.em.fork();
  await em.execute('insert into service_meta (key, value) values (?, ?) on conflict (key) do nothing', [key, value]);
  return (await readMeta(orm, key))!;
}

export async function writeMeta(orm: Orm, key: string, value: string): Promise<void> {
  await orm.em.fork().execute(
    'insert into service_meta (key, value) values (?, ?) on conflict (key) do update set value = excluded.value, updated_at = now()',
    [key, value],
  );
}
