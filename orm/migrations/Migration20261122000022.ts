import { Migration } from '@mikro-orm/migrations';

/**
 * Withdrawing an order (CONTRACT.md "Withdrawing an order"): an order awaiting payment can be
 * `cancelled` by its agent (DELETE /orders/{id}) or declined by the holder on its purchase page;
 * `cancelled_by` says which and `cancelled_at` when, exactly when the status says cancelled. Its
 * round, never funded, is cancelled with it.
 */
export class Migration20261122000022 extends Migration {
  override async up(): Promise<void> {
    this
      .addSql(`alter table orders add column cancelled_by text null, add column cancelled_at timestamptz null,
      add constraint orders_cancelled_by_check check (cancelled_by in ('agent', 'holder'))`);
    this.addSql(`alter table orders drop constraint orders_status_check`);
    this.addSql(`alter table orders add constraint orders_status_check
      check (status in ('awaiting_payment', 'paid', 'filled', 'expired', 'refunded', 'cancelled'))`);
    this.addSql(`alter table orders add constraint orders_cancelled
      check ((status = 'cancelled') = (cancelled_by is not null and cancelled_at is not null))`);
    this.addSql(`alter table trade_round drop constraint trade_round_status_check`);
    this.addSql(`alter table trade_round add constraint trade_round_status_check
      check (status in ('awaiting_payment', 'funded', 'expired', 'completed', 'refunded', 'cancelled'))`);
  }
}
