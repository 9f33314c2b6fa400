// The entities (orm/entities) describe the database the migrations build, exactly: MikroORM's
// schema generator, asked for the SQL that would turn the migrated database into the entities'
// schema, answers nothing. Both directions count (a column, table, index or check only one side
// has; a type, nullability, default, enum list, check expression, foreign key that differs).
// MikroORM compares an index with a predicate (`where ...`) by name only, so those are compared
// here as PostgreSQL itself prints them. Not compared, because MikroORM 6 describes no such thing:
// the plpgsql function svc_assert (migration 0004); see orm/entities/service.ts.
import t from 'tap';
import { EntitySchema } from '@mikro-orm/core';
import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import { ormConfig, MIGRATIONS_TABLE } from '../../orm/config.js';
import { entities, HolderSchema, TradeSchema } from '../../orm/entities/index.js';
import { migratedOrm } from '../helpers/db.js';

type Schema = EntitySchema<any, never>;

/** The SQL that would make the database at `url` equal `list` (up), and back (down); empty when equal. */
async function schemaDiff(url: string, list: Schema[]): Promise<{ up: string; down: string }> {
  const orm = await MikroORM.init({
    ...ormConfig(url, 2),
    entities: list,
    schemaGenerator: { skipTables: [MIGRATIONS_TABLE] },
  });
  try {
    const diff = await orm.schema.getUpdateSchemaMigrationSQL({
      wrap: false,
      safe: false,
      dropTables: true,
    });
    return { up: diff.up.trim(), down: diff.down.trim() };
  } finally {
    await orm.close();
  }
}

/**
 * Indexes declared with an `expression` (the partial ones) whose definition differs from the
 * database's: PostgreSQL prints the entity's statement, run under a probe name in a transaction
 * that is rolled back, and the stored index, in the same canonical form.
 */
async function expressionIndexDiffs(em: EntityManager, list: Schema[]): Promise<string[]> {
  const diffs: string[] = [];
  for (const schema of list) {
    for (const index of [...schema.meta.indexes, ...schema.meta.uniques]) {
      if (typeof index.expression !== 'string' || !index.name) continue;
      const name = index.name;
      const [stored] = await em.execute(`select pg_get_indexdef(to_regclass(?)) as def`, [name]);
      const probe = `${name}_probe`;
      const tx = em.fork();
      await tx.begin();
      let declared: string;
      try {
        await tx.execute(index.expression.replace(new RegExp(`\\b${name}\\b`), probe));
        const [row] = await tx.execute(`select pg_get_indexdef(to_regclass(?)) as def`, [probe]);
        declared = String(row.def).replace(probe, name);
      } finally {
        await tx.rollback();
      }
      if (stored.def !== declared)
        diffs.push(
          `${schema.meta.tableName}.${name}: database ${stored.def ?? '(none)'}; entity ${declared}`,
        );
    }
  }
  return diffs;
}

/** A copy of `schema` with `change` applied to its options (the original is left as it is). */
function modified(schema: Schema, change: (opts: any) => void): Schema {
  const m = schema.meta;
  const opts = {
    name: m.className,
    tableName: m.tableName,
    properties: Object.fromEntries(Object.entries(m.properties).map(([k, p]) => [k, { ...p }])),
    indexes: m.indexes.map((i) => ({ ...i })),
    uniques: m.uniques.map((u) => ({ ...u })),
    checks: m.checks.map((c) => ({ ...c })),
  };
  change(opts);
  return new EntitySchema(opts as any);
}
const replacing = (original: Schema, copy: Schema) =>
  (entities as Schema[]).map((e) => (e === original ? copy : e));

t.test('the entities equal the migrated database', async (t) => {
  const { url, orm } = await migratedOrm(t);
  const em = orm.em.fork();

  // Every table has its entity and every entity its table.
  const tables = (
    await em.execute(
      `select tablename from pg_tables where schemaname = current_schema() and tablename <> ? order by 1`,
      [MIGRATIONS_TABLE],
    )
  ).map((r: { tablename: string }) => r.tablename);
  t.same(
    [...new Set(entities.map((e) => e.meta.tableName))].sort(),
    tables,
    'one entity per table',
  );

  const diff = await schemaDiff(url, entities as Schema[]);
  t.equal(
    diff.up,
    '',
    `entities and migrations differ; to make the database equal the entities:\n${diff.up}\n-- and back:\n${diff.down}`,
  );

  const indexDiffs = await expressionIndexDiffs(em, entities as Schema[]);
  t.same(indexDiffs, [], `partial indexes differ:\n${indexDiffs.join('\n')}`);

  t.test('a difference is found (the comparison can fail)', async (t) => {
    // An entity column the table lacks, and a table column the entity lacks.
    const extra = await schemaDiff(
      url,
      replacing(
        HolderSchema,
        modified(HolderSchema, (o) => {
          o.properties.nickname = { type: 'text', nullable: true };
        }),
      ),
    );
    t.match(extra.up, /alter table "holder" add column "nickname" text null/);
    const missing = await schemaDiff(
      url,
      replacing(
        HolderSchema,
        modified(HolderSchema, (o) => delete o.properties.displayName),
      ),
    );
    t.match(missing.up, /alter table "holder" drop column "display_name"/);
    // A nullability, a default, a type, a check, an enum list.
    const changed = await schemaDiff(
      url,
      replacing(
        TradeSchema,
        modified(TradeSchema, (o) => {
          o.properties.market = { ...o.properties.market, nullable: true };
          o.properties.horizon = { ...o.properties.horizon, default: 9 };
          o.properties.cluster = { ...o.properties.cluster, type: 'bigint' };
          o.checks = o.checks.map((c: { name: string }) =>
            c.name === 'trade_qty_check' ? { ...c, expression: 'qty >= 0' } : c,
          );
          o.properties.actor = { ...o.properties.actor, items: ['house', 'user', 'desk'] };
        }),
      ),
    );
    t.match(changed.up, /alter column "market" drop not null/);
    t.match(changed.up, /alter column "horizon" set default 9/);
    t.match(changed.up, /alter column "cluster" type bigint/);
    t.match(changed.up, /add constraint trade_qty_check check\(qty >= 0\)/);
    t.match(changed.up, /"trade_actor_check" check\("actor" in \('house', 'user', 'desk'\)\)/);
    // An index only one side has, and a partial index whose predicate differs.
    const indexes = modified(TradeSchema, (o) => {
      o.indexes = o.indexes
        .filter((i: { name: string }) => i.name !== 'trade_market_tick')
        .map((i: { name: string }) =>
          i.name === 'trade_open'
            ? { ...i, expression: 'create index trade_open on trade (market, tick) where settled' }
            : i,
        );
    });
    t.match(
      (await schemaDiff(url, replacing(TradeSchema, indexes))).up,
      /drop index "trade_market_tick"/,
    );
    t.same(await expressionIndexDiffs(em, [indexes]), [
      'trade.trade_open: database CREATE INDEX trade_open ON public.trade USING btree (market, tick) WHERE (NOT settled); ' +
        'entity CREATE INDEX trade_open ON public.trade USING btree (market, tick) WHERE settled',
    ]);
  });
});

t.test(
  "no column takes the database server's clock by default (ARCHITECTURE rule 7: the writer gives the service clock's instant)",
  async (t) => {
    const { orm } = await migratedOrm(t);
    const clocked = await orm.em.fork().execute<{ col: string; def: string }[]>(
      `select table_name || '.' || column_name as col, column_default as def from information_schema.columns
      where table_schema = current_schema() and table_name <> ?
        and column_default ~* '(now\\(\\)|current_timestamp|current_date|localtimestamp|clock_timestamp|statement_timestamp|transaction_timestamp)'
      order by 1`,
      [MIGRATIONS_TABLE],
    );
    t.same(
      clocked.map((c) => `${c.col} default ${c.def}`),
      [],
    );
    // The timestamp columns migration 20 let go of are still there and still refuse a forgotten instant.
    const [{ n }] = await orm.em.fork().execute<{ n: number }[]>(
      `select count(*)::int as n from information_schema.columns
      where table_schema = current_schema() and data_type = 'timestamp with time zone' and is_nullable = 'NO' and column_default is null`,
    );
    t.ok(n >= 29, `${n} not-null instants with no default`);
    await t.rejects(
      orm.em.fork().execute(`insert into account (kind) values ('agent')`),
      /null value in column "created_at"/,
      'an insert that forgets its instant fails',
    );
  },
);
