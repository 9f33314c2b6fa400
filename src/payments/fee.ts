// The month's participation fee (CONTRACT.md: once per holder and calendar month, UTC, with the
// holder's first real-money checkout of the month), decided in this one module: its
// amount, the month a checkout belongs to, whether a checkout carries it, and what the holder pays
// (the goods and the fee). Pure, no I/O, so both layers import it: the money kernel
// (actors/money/charge.ts) charges by it and alone writes the fee's rows and postings; the order
// batch, the account and cart read models and the pages (through the actors' answers) quote it.
// Where a statement must apply the rule, its SQL twin sits next to the JS one, and
// test/unit/fee.test.ts + test/api/fee-sql.test.ts prove they agree.
import { centsToNumber } from '../engine/money.js';

/** The fee, in integer cents: the one declaration of its amount. */
export const MONTHLY_FEE_CENTS = 1500;
/** The fee as the payment terms serve it (USD). */
export const MONTHLY_FEE = { amount: centsToNumber(MONTHLY_FEE_CENTS), currency: 'USD' } as const;

/**
 * The month a participation fee belongs to: `YYYY-MM` of `at` in UTC, whatever the process's time
 * zone. `at` is the service clock's (every checkout carries it), so the database's own clock never
 * decides a month.
 */
export function feeMonth(at: Date): string {
  const y = at.getUTCFullYear();
  if (!Number.isFinite(y) || y < 1 || y > 9999)
    throw new RangeError(`no fee month for ${at.toString()}`);
  return `${String(y).padStart(4, '0')}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The fee month of a checkout at `at` (real unix seconds on the service clock). */
export const feeMonthAt = (at: number) => feeMonth(new Date(at * 1000));

/** A holder's fee of the month of `at`, as reads name the fees already charged (`holder/month`). */
export const feeKey = (holderId: number, at: number) => `${holderId}/${feeMonthAt(at)}`;
/** feeKey of a fee row in SQL: `holder` and `month` are SQL expressions of its columns. */
export const feeKeySql = (holder: string, month: string) => `(${holder} || '/' || ${month})`;

/** The one fee decision: a holder's real-money checkout carries the month's fee unless that fee is charged. */
export const feeDue = (charged: boolean): number => (charged ? 0 : MONTHLY_FEE_CENTS);

/** feeDue where a statement decides it: `charged` is a boolean SQL expression (the holder's fee of the month is charged). */
export const feeDueSql = (charged: string) =>
  `(case when ${charged} then 0 else ${MONTHLY_FEE_CENTS} end)`;

/** What the holder will pay (CONTRACT.md): a card payment made now, in USD. */
export type HolderPays = { goods: number; participation_fee: number; total: number };

/** What a payment of `goodsCents` made now charges, in cents: the goods, the fee it carries, and their sum. */
export function holderPaysCents(
  goodsCents: number,
  feeCharged: boolean,
): { goods: number; fee: number; total: number } {
  if (!Number.isSafeInteger(goodsCents) || goodsCents < 0)
    throw new RangeError(`goods must be non-negative integer cents, got ${goodsCents}`);
  const fee = feeDue(feeCharged);
  return { goods: goodsCents, fee, total: goodsCents + fee };
}

/**
 * What a card payment of `goodsCents` made now would charge the holder: the goods and the month's
 * fee unless the holder's is charged (an agent without a holder: due, as for a holder new this month).
 */
export function holderPays(goodsCents: number, feeCharged: boolean): HolderPays {
  const c = holderPaysCents(goodsCents, feeCharged);
  return {
    goods: centsToNumber(c.goods),
    participation_fee: centsToNumber(c.fee),
    total: centsToNumber(c.total),
  };
}

/**
 * holderPays in a statement, as the json object it serves: `goodsCents` is the SQL of the goods'
 * cents, `feeCents` the SQL of the fee a payment made now carries (feeDueSql of whether it is
 * charged), `usd` the SQL of cents as a served amount (the actors' runtime/sql.ts usdSql).
 */
export const holderPaysSql = (
  goodsCents: string,
  feeCents: string,
  usd: (cents: string) => string,
) =>
  `json_build_object('goods', ${usd(goodsCents)}, 'participation_fee', ${usd(feeCents)}, 'total', ${usd(`${goodsCents} + ${feeCents}`)})`;
