// The served objects built in SQL (GET and the events read them: views.ts orderJsonSql and
// positionJsonSql, ledger.ts ledgerEntryJsonSql) must give the same numbers the JavaScript
// definitions give: amounts as centsToNumber's double, times as a Date's unix seconds to the
// millisecond. Checked as properties on the real PostgreSQL; and the event numbering a close does
// itself (events/log.ts numbered) is 1..n per account in the order given.
import t from 'tap';
import fc from 'fast-check';
import { openOrm } from '../../orm/database.js';
import { centsToNumber } from '../../src/engine/money.js';
import { jsonObjectSql, unixSql, usdSql } from '../../actors/runtime/sql.js';
import { numbered } from '../../actors/events/log.js';
import { unix } from '../../actors/account/views.js';
import { freshDatabase } from '../helpers/db.js';

t.test('usdSql and unixSql serve the numbers centsToNumber and a Date give', async (t) => {
  const orm = await openOrm(await freshDatabase(t), 1);
  t.teardown(() => orm.close());
  const em = orm.em.fork();
  const cents = fc.sample(
    fc.oneof(
      fc.integer({ min: -1e9, max: 1e9 }),
      fc.maxSafeInteger().map((x) => Math.trunc(x / 1000)),
    ),
    { numRuns: 2000, seed: 27 },
  );
  const [r] = await em.execute<{ usd: number[] }[]>(
    `select array_agg(${usdSql('c')} order by i) as usd from unnest(?::bigint[]) with ordinality as x(c, i)`,
    [`{${cents.join(',')}}`],
  );
  t.same(r.usd, cents.map(centsToNumber), `${cents.length} amounts: the same doubles`);
  const ms = fc.sample(fc.integer({ min: 0, max: 4102444800000 }), { numRuns: 2000, seed: 27 });
  const [s] = await em.execute<{ at: number[] }[]>(
    `select array_agg(${unixSql('to_timestamp(m / 1000.0)')} order by i) as at from unnest(?::bigint[]) with ordinality as x(m, i)`,
    [`{${ms.join(',')}}`],
  );
  t.same(
    s.at,
    ms.map((m) => unix(new Date(m))),
    `${ms.length} instants: the same unix seconds`,
  );
  const [j] = await em.execute(
    `select ${jsonObjectSql(
      [
        ['a', '1'],
        ['b', "'x'"],
      ],
      { when: 'false', pairs: [['c', '2']] },
    )}::text as j`,
  );
  t.same(JSON.parse(j.j), { a: 1, b: 'x' }, 'an optional key is absent when its condition fails');
});

t.test('jsonObjectSql takes only plain keys (they are written into the SQL)', async (t) => {
  t.throws(() => jsonObjectSql([['a"; drop table x; --', '1']]), /not a plain key/);
  t.throws(
    () => jsonObjectSql([['ok', '1']], { when: 'true', pairs: [['Bad', '2']] }),
    /not a plain key/,
  );
});

t.test("numbered: 1..n per account in the order given, and each account's count", async (t) => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 60 }), (accounts) => {
      const { seq, counts } = numbered(accounts);
      const seen = new Map<number, number>();
      accounts.forEach((a, i) => {
        seen.set(a, (seen.get(a) ?? 0) + 1);
        if (seq[i] !== seen.get(a))
          throw new Error(`event ${i} of account ${a} numbered ${seq[i]}`);
      });
      t.same(counts, seen);
    }),
    { seed: 27 },
  );
  t.pass('numbering holds');
});
