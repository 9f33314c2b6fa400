import { Migration } from '@mikro-orm/migrations';

/**
 * Quarantine at the close (a close that cannot wedge): a paid order the close cannot
 * fill is `refunded` with a reason the agent can read, its funding credited back (ledger kind
 * `refund`), and its round counts what went back. The reason is there exactly when the status
 * says refunded.
 */
export class Migration20261122000005 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table orders add column refund_reason text null, add column refunded_at timestamptz null`,
    );
    this.addSql(`alter table orders drop constraint orders_status_check`);
    this.addSql(`alter table orders add constraint orders_status_check
      check (status in ('awaiting_payment', 'paid', 'filled', 'expired', 'refunded'))`);
    this.addSql(`alter table orders add constraint orders_refund_reason
      check ((status = 'refunded') = (refund_reason is not null and refunded_at is not null))`);

    this.addSql(`alter table trade_round add column refunded_cents bigint not null default 0`);
    this.addSql(`alter table trade_round drop constraint trade_round_status_check`);
    this.addSql(`alter table trade_round add constraint trade_round_status_check
      check (status in ('awaiting_payment', 'funded', 'expired', 'completed', 'refunded'))`);

    this.addSql(`alter table ledger drop constraint ledger_kind_check`);
    this
      .addSql(`alter table ledger add constraint ledger_kind_check check (kind in ('card_charge', 'crypto_payment', 'order_debit',
      'monthly_fee', 'sale_credit', 'holding_fee', 'surcharge', 'payout', 'topup', 'refund'))`);
  }
}
