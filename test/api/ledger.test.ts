// The ledger invariant on a real database (CONTRACT.md "Money"): whatever sequence of postings,
// refused or not, every balance equals the sum of its ledger amounts and each entry's
// balance_after is the running balance. A refused posting (insufficient funds) writes nothing.
import t from 'tap';
import fc from 'fast-check';
import { postEntries, type Entry } from '../../actors/money/ledger.js';
import { ActorError } from '../../actors/runtime/actor.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { migratedOrm } from '../helpers/db.js';
import { T0 } from '../helpers/clock-rig.js';

t.test('postEntries keeps balance = sum(ledger) and refuses overdrafts atomically', async (t) => {
  const { orm } = await migratedOrm(t);
  const em = orm.em.fork();
  // Every row at one fixed instant (no service here: nothing reads it).
  const accounts = (
    await em.execute(
      `insert into account (created_at) select ${instantSql()} from generate_series(1, 3) returning id::float8 as id`,
      [T0],
    )
  ).map((r) => r.id as number);
  const kinds: Entry['kind'][] = [
    'card_charge',
    'order_debit',
    'sale_credit',
    'holding_fee',
    'monthly_fee',
  ];
  const posting = fc.record({
    requireFunds: fc.boolean(),
    entries: fc.array(
      fc.record({
        account: fc.integer({ min: 0, max: 2 }),
        kind: fc.constantFrom(...kinds),
        amount: fc.integer({ min: -5000, max: 5000 }).filter((x) => x !== 0),
      }),
      { minLength: 1, maxLength: 5 },
    ),
  });
  let refused = 0;
  let posted = 0;
  await fc.assert(
    fc.asyncProperty(posting, async ({ requireFunds, entries }) => {
      const before = await em
        .fork()
        .execute('select id::float8 as id, balance_cents::float8 as b from account order by id');
      let refusedNow = false;
      const rows: Entry[] = entries.map((e) => ({
        account_id: accounts[e.account],
        kind: e.kind,
        amount_cents: e.amount,
        ref: 'prop',
      }));
      try {
        await em.fork().transactional((tx) => postEntries(tx, rows, T0, { requireFunds }));
        posted++;
      } catch (err) {
        if (!(err instanceof ActorError) || err.status !== 400 || !requireFunds) throw err;
        refused++;
        refusedNow = true;
        const after = await em
          .fork()
          .execute('select id::float8 as id, balance_cents::float8 as b from account order by id');
        if (JSON.stringify(after) !== JSON.stringify(before))
          throw new Error('a refused posting moved a balance', { cause: err });
      }
      const bad = await em.fork().execute(
        `select a.id from account a
          where a.balance_cents <> coalesce((select sum(amount_cents) from ledger l where l.account_id = a.id), 0)
             or a.balance_cents <> coalesce((select balance_after_cents from ledger l where l.account_id = a.id order by id desc limit 1), 0)`,
      );
      if (bad.length)
        throw new Error(`balance differs from its ledger on accounts ${JSON.stringify(bad)}`);
      if (requireFunds && !refusedNow) {
        // A funded posting covered its debits from the balance before it: what it touched stays >= 0.
        const touched = [...new Set(rows.map((r) => r.account_id))];
        const negative = await em
          .fork()
          .execute('select id from account where id = any(?::bigint[]) and balance_cents < 0', [
            `{${touched.join(',')}}`,
          ]);
        if (negative.length)
          throw new Error(`overdraft under requireFunds on ${JSON.stringify(negative)}`);
      }
    }),
    { numRuns: 150 },
  );
  t.ok(posted > 0 && refused > 0, `both outcomes exercised (${posted} posted, ${refused} refused)`);
});
