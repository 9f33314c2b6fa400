// The fee rule's SQL twins (src/payments/fee.ts) agree with the JS rule on PostgreSQL: holder_pays
// served by a read (holderPaysSql of feeDueSql) is holderPays, and a charged fee's key in a
// statement (feeKeySql, the order batch's read) is feeKey; for any goods total and fee state.
import fc from 'fast-check';
import t from 'tap';
import {
  feeDueSql,
  feeKey,
  feeKeySql,
  feeMonthAt,
  holderPays,
  holderPaysSql,
} from '../../src/payments/fee.js';
import { arrayParam, usdSql } from '../../actors/runtime/sql.js';
import { migratedOrm } from '../helpers/db.js';

t.test('holderPaysSql and feeKeySql agree with holderPays and feeKey', async (t) => {
  const { orm } = await migratedOrm(t);
  const em = orm.em.fork();
  const cases = fc.sample(
    fc.tuple(
      fc.integer({ min: 0, max: 10_000_000_00 }),
      fc.boolean(),
      fc.integer({ min: 1, max: 2 ** 40 }),
      fc.integer({ min: Date.UTC(2000, 0, 1) / 1000, max: Date.UTC(2100, 0, 1) / 1000 }),
    ),
    { numRuns: 300, seed: 45 },
  );
  cases.push(
    [0, false, 1, 0],
    [1, true, 2, 1],
    [1228, false, 3, Date.UTC(2026, 10, 30, 23, 59, 59) / 1000],
  );
  const rows = await em.execute<{ pays: unknown; key: string }[]>(
    `select ${holderPaysSql('v.g', feeDueSql('v.c'), usdSql)} as pays, ${feeKeySql('v.h', 'v.m')} as key
       from unnest(?::bigint[], ?::boolean[], ?::bigint[], ?::text[]) with ordinality as v(g, c, h, m, n) order by v.n`,
    [
      arrayParam(cases.map((c) => c[0])),
      arrayParam(cases.map((c) => c[1])),
      arrayParam(cases.map((c) => c[2])),
      arrayParam(cases.map((c) => feeMonthAt(c[3]))),
    ],
  );
  const wrong = cases.flatMap(([goods, charged, holder, at], i) => {
    const pays = holderPays(goods, charged);
    const out: string[] = [];
    if (JSON.stringify(rows[i].pays) !== JSON.stringify(pays))
      out.push(
        `holder_pays ${goods} ${charged}: SQL ${JSON.stringify(rows[i].pays)}, JS ${JSON.stringify(pays)}`,
      );
    if (rows[i].key !== feeKey(holder, at))
      out.push(`key ${holder} ${at}: SQL ${rows[i].key}, JS ${feeKey(holder, at)}`);
    return out;
  });
  t.same(wrong, [], `${cases.length} cases agree`);
});
