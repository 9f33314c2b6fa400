// Small service-wide facts that must survive restarts (service_meta), e.g. the clock anchor.
import type { Orm } from './database.js';
import { ServiceMetaSchema } from './entities/index.js';

export async function readMeta(orm: Orm, key: string): Promise<string | null> {
  const row = await orm.em.fork().findOne(ServiceMetaSchema, { key });
  return row?.value ?? null;
}

/** Stores `value` unless the key is already set (first writer wins); answers the stored value. */
export async function initMeta(orm: Orm, key: string, value: string): Promise<string> {
  // `on conflict do nothing`: another process may have set it a moment earlier; its value stands.
  await orm.em.fork().upsert(ServiceMetaSchema, { key, value }, { onConflictFields: ['key'], onConflictAction: 'ignore' });
  return (await readMeta(orm, key))!;
}

export async function writeMeta(orm: Orm, key: string, value: string): Promise<void> {
  await orm.em.fork().upsert(
    ServiceMetaSchema,
    { key, value, updatedAt: new Date() },
    { onConflictFields: ['key'], onConflictAction: 'merge', onConflictMergeFields: ['value', 'updatedAt'] },
  );
}
