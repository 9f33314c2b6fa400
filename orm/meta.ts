// Small service-wide facts that must survive restarts (service_meta), e.g. the clock anchor.
import type { Orm } from './database.js';
import { ServiceMetaSchema } from './entities/index.js';

export async function readMeta(orm: Orm, key: string): Promise<string | null> {
  const row = await orm.em.fork().findOne(ServiceMetaSchema, { key });
  return row?.value ?? null;
}

/**
 * Stores `value` unless the key is already set (first writer wins); answers the stored value. `at`:
 * now, in real unix seconds from the service's clock (never the database's).
 */
export async function initMeta(orm: Orm, key: string, value: string, at: number): Promise<string> {
  // `on conflict do nothing`: another process may have set it a moment earlier; its value stands.
  await orm.em
    .fork()
    .upsert(
      ServiceMetaSchema,
      { key, value, updatedAt: new Date(at * 1000) },
      { onConflictFields: ['key'], onConflictAction: 'ignore' },
    );
  return (await readMeta(orm, key))!;
}

/** Stores `value` under the key at `at` (real unix seconds from the service's clock). */
export async function writeMeta(orm: Orm, key: string, value: string, at: number): Promise<void> {
  await orm.em.fork().upsert(
    ServiceMetaSchema,
    { key, value, updatedAt: new Date(at * 1000) },
    {
      onConflictFields: ['key'],
      onConflictAction: 'merge',
      onConflictMergeFields: ['value', 'updatedAt'],
    },
  );
}
