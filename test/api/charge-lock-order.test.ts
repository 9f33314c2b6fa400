// A holder's pay turn and an order batch of the same holder at once must never deadlock: both take
// the accounts they post to first (in id order), then the month's fee row (money/charge.ts
// lockAccounts). Here a batch's transaction holds the account (its read locked it) while a pay turn
// starts; the pay turn must wait for the account before it claims the fee row, so the batch can
// still insert that fee row and commit. Claiming the fee row first (as before) made PostgreSQL abort
// one of the two with a deadlock (40P01), which the front end answers with a 5xx.
import t from 'tap';
import pg from 'pg';
import { chargeHolder } from '../../actors/money/charge.js';
import { postEntries } from '../../actors/money/ledger.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { feeMonth } from '../../src/payments/fee.js';
import { migratedOrm } from '../helpers/db.js';
import { eventually } from '../helpers/wait.js';

t.test(
  'a pay turn waits for the account a batch holds before it claims the fee row: no deadlock',
  async (t) => {
    const { orm } = await migratedOrm(t);
    const em = orm.em.fork();
    // The one instant of the test (the fee's month follows from it): every row is stamped with it.
    const at = Date.UTC(2026, 10, 26, 12) / 1000;
    const [holder] = await em.execute(
      `insert into holder (email, password_hash, created_at) values ('h@example.org', 'x', ${instantSql()}) returning id::float8 as id`,
      [at],
    );
    const [account] = await em.execute(
      `insert into account (holder_id, created_at) values (?, ${instantSql()}) returning id::float8 as id`,
      [holder.id, at],
    );
    await postEntries(
      em,
      [{ account_id: account.id, kind: 'topup', amount_cents: 100_000, ref: 'test:funds' }],
      at,
    );

    // The batch: its read locked the account; its write will insert the holder's fee row.
    const batch = new pg.Client(em.getConnection().getConnectionOptions() as pg.ClientConfig);
    await batch.connect();
    t.teardown(() => batch.end());
    await batch.query('begin');
    await batch.query('select id from account where id = $1 for update', [account.id]);

    const paid = orm.em.fork().transactional((tem) =>
      chargeHolder(tem, {
        holderId: holder.id,
        payer: account.id,
        payment: { method: 'balance' },
        at,
        debits: [{ ref: 'test:purchase', cents: 500 }],
        ref: 'test:purchase',
      }),
    );
    // The pay turn is waiting, on a lock.
    await eventually(async () => {
      const { rows } = await batch.query(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      return rows[0].n === 1;
    });
    // The batch inserts the fee row and commits: it must not wait for the pay turn.
    await batch.query(
      `insert into monthly_fee (holder_id, month, account_id, amount_cents, created_at) values ($1, $2, $3, 2000, ${instantSql('$4')})`,
      [holder.id, feeMonth(new Date(at * 1000)), account.id, at],
    );
    await batch.query('commit');

    const charged = await paid;
    t.equal(
      charged.feeCents,
      0,
      "the batch charged the month's fee; the pay turn found it charged",
    );
    t.equal(charged.chargedCents, 500);
    const [fees] = await em.execute(
      'select count(*)::int as n from monthly_fee where holder_id = ?',
      [holder.id],
    );
    t.equal(fees.n, 1, 'one fee for the month');
  },
);
