// MikroORM options shared by the main thread and the workers.
import { defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities/index.js';
import { migrationsList } from './migrations/index.js';

export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

export function ormConfig(clientUrl: string, poolMax: number) {
  return defineConfig({
    clientUrl,
    entities,
    extensions: [Migrator],
    migrations: { migrationsList, tableName: MIGRATIONS_TABLE, transactional: true, allOrNothing: true, snapshot: false, silent: true },
    pool: { min: 0, max: poolMax, idleTimeoutMillis: 10_000 },
    debug: false,
    allowGlobalContext: false,
    discovery: { warnWhenNoEntities: false },
  });
}
