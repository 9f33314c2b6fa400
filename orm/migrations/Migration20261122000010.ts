import { Migration } from '@mikro-orm/migrations';

/**
 * Ledger kinds and account kinds of the exchange and the competitions, in one place so
 * both layers build on them:
 * - ledger kinds `exchange_purchase` (-, the buyer of a USD listing), `exchange_sale` (+, the
 *   seller's Manual desk) and `prize` (+, a competition's prize on a winner's Manual desk);
 * - account kind `competition`: a holder's competition account, holding simulated USD only.
 */
export class Migration20261122000010 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table ledger drop constraint ledger_kind_check`);
    this
      .addSql(`alter table ledger add constraint ledger_kind_check check (kind in ('card_charge', 'crypto_payment', 'order_debit',
      'monthly_fee', 'sale_credit', 'holding_fee', 'surcharge', 'payout', 'topup', 'refund', 'exchange_purchase', 'exchange_sale', 'prize'))`);
    this.addSql(`alter table account drop constraint account_kind_check`);
    this.addSql(
      `alter table account add constraint account_kind_check check (kind in ('agent', 'manual', 'competition'))`,
    );
  }
}
