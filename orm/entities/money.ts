// The holder's money beyond orders (migration 0009): payouts from trading accounts, and the Gold Coin
// ledger (coins in hundredths, never mixed with USD).
import { EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt, serialId, timestampNull } from './columns.js';
import { AccountSchema, HolderSchema, ref, type Account, type Holder } from './trading.js';

export const PAYOUT_STATUSES = ['scheduled', 'paid'] as const;
export const GC_KINDS = ['gc_grant', 'gc_purchase', 'gc_spend', 'gc_sale'] as const;

/** A payout: the amount left the account when scheduled; the supervisor marks it paid at `payAt`. */
export type Payout = {
  id: number;
  account: Ref<Account>;
  holder: Ref<Holder>;
  amountCents: number;
  commissionCents: number;
  netCents: number;
  status: Opt<(typeof PAYOUT_STATUSES)[number]>;
  /** Real unix seconds. */
  payAt: number;
  createdAt: Date;
  paidAt?: Date | null;
};
// Owner: account (actors/account/payouts.ts schedules with the ledger's payout entry); the payouts
// actor marks due ones paid (actors/payouts/actor.ts).
export const PayoutSchema = new EntitySchema<Payout>({
  name: 'Payout',
  tableName: 'payout',
  properties: {
    id: serialId(),
    account: ref(() => AccountSchema, 'account_id', 'payout'),
    holder: ref(() => HolderSchema, 'holder_id', 'payout'),
    amountCents: { type: bigint(), fieldName: 'amount_cents' },
    commissionCents: { type: bigint(), fieldName: 'commission_cents' },
    netCents: { type: bigint(), fieldName: 'net_cents' },
    status: { enum: true, items: [...PAYOUT_STATUSES], columnType: 'text', default: 'scheduled' },
    payAt: { type: 'double', runtimeType: 'number', fieldName: 'pay_at' },
    createdAt: createdAt(),
    paidAt: timestampNull('paid_at'),
  },
  checks: [
    { name: 'payout_amount_cents_check', expression: 'amount_cents > 0' },
    { name: 'payout_commission_cents_check', expression: 'commission_cents >= 0' },
    { name: 'payout_net', expression: 'net_cents = amount_cents - commission_cents' },
    { name: 'payout_paid', expression: `(status = 'paid') = (paid_at is not null)` },
  ],
  indexes: [
    {
      name: 'payout_due',
      expression: `create index payout_due on payout (pay_at) where status = 'scheduled'`,
    },
    { name: 'payout_holder', properties: ['holder', 'id'] },
  ],
});

/** A Gold Coin ledger entry (hundredths of a coin): every movement of a holder's GC balance. */
export type GcLedgerEntry = {
  id: number;
  holder: Ref<Holder>;
  kind: (typeof GC_KINDS)[number];
  amountHundredths: number;
  balanceAfterHundredths: number;
  ref: string;
  createdAt: Date;
};
// Owner: holder (actors/holder/coins.ts, the one place Gold Coins move).
export const GcLedgerSchema = new EntitySchema<GcLedgerEntry>({
  name: 'GcLedgerEntry',
  tableName: 'gc_ledger',
  properties: {
    id: serialId(),
    holder: ref(() => HolderSchema, 'holder_id', 'gc_ledger'),
    kind: { enum: true, items: [...GC_KINDS], columnType: 'text' },
    amountHundredths: { type: bigint(), fieldName: 'amount_hundredths' },
    balanceAfterHundredths: { type: bigint(), fieldName: 'balance_after_hundredths' },
    ref: { type: 'text' },
    createdAt: createdAt(),
  },
  checks: [
    { name: 'gc_ledger_amount_hundredths_check', expression: 'amount_hundredths <> 0' },
    {
      name: 'gc_ledger_balance_after_hundredths_check',
      expression: 'balance_after_hundredths >= 0',
    },
  ],
  indexes: [{ name: 'gc_ledger_holder', properties: ['holder', 'id'] }],
});

export const moneyEntities = [PayoutSchema, GcLedgerSchema];
