// The SQL twins of src/rules.ts run on the database: feeMonthSql gives feeMonth's month for any
// instant, at month and year boundaries, whatever the session's TimeZone; the ledger's fee month
// (the monthly_fee key) is that expression of the transaction's now().
import t from 'tap';
import fc from 'fast-check';
import pg from 'pg';
import { feeMonth, feeMonthSql } from '../../src/rules.js';
import { FEE_MONTH_SQL } from '../../actors/account/ledger.js';
import { freshDatabase } from '../helpers/db.js';

const ZONES = ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/Los_Angeles', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Europe/Berlin'];

/** A UTC instant near a month boundary (± 15 hours covers every zone's midnight), or any instant. */
const instant = fc.oneof(
  fc.record({ y: fc.integer({ min: 1970, max: 2200 }), m: fc.integer({ min: 0, max: 11 }), offset: fc.integer({ min: -15 * 3600_000, max: 15 * 3600_000 }) })
    .map(({ y, m, offset }) => new Date(Date.UTC(y, m, 1) + offset)),
  fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
);

t.test('feeMonthSql agrees with feeMonth on PostgreSQL in every session time zone', async (t) => {
  const client = new pg.Client({ connectionString: await freshDatabase(t) });
  await client.connect();
  t.teardown(() => client.end());
  const month = async (zone: string, at: Date, sql: string) => {
    await client.query(`set time zone '${zone}'`);
    return (await client.query(`select ${sql} as m`, [at.toISOString()])).rows[0].m as string;
  };

  await fc.assert(
    fc.asyncProperty(instant, fc.constantFrom(...ZONES), async (at, zone) => (await month(zone, at, feeMonthSql('$1::timestamptz'))) === feeMonth(at)),
    { numRuns: 300 },
  );
  // The check can fail: the same expression without "at time zone 'UTC'" follows the session's zone.
  const newYear = new Date('2026-12-31T12:00:00Z');
  t.equal(await month('Pacific/Kiritimati', newYear, "to_char($1::timestamptz, 'YYYY-MM')"), '2027-01');
  t.equal(await month('Pacific/Kiritimati', newYear, feeMonthSql('$1::timestamptz')), '2026-12');

  // The ledger's fee month is the twin of the transaction's now().
  for (const zone of ZONES) {
    await client.query(`set time zone '${zone}'`);
    const { rows } = await client.query(`select now() as now, ${FEE_MONTH_SQL} as m`);
    t.equal(rows[0].m, feeMonth(new Date(rows[0].now)), zone);
  }
});
