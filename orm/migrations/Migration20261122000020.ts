import { Migration } from '@mikro-orm/migrations';

/**
 * One clock (ARCHITECTURE rule 7): every stored instant comes from the service's Clock,
 * passed to SQL as a parameter. The `default now()` of the business columns is dropped, so an
 * insert that forgets its instant fails loudly (not null) instead of taking the database server's
 * clock, which disagrees with the service clock under SVC_TIME_SCALE and in every clocked test.
 */
export const CLOCKED_COLUMNS: readonly (readonly [table: string, column: string])[] = [
  ['account', 'created_at'],
  ['account_event', 'created_at'],
  ['agent', 'created_at'],
  ['card', 'created_at'],
  ['cart', 'created_at'],
  ['cart', 'updated_at'],
  ['cart_grant', 'created_at'],
  ['cart_item', 'created_at'],
  ['competition', 'created_at'],
  ['competition_entry', 'created_at'],
  ['exchange_listing', 'created_at'],
  ['gc_ledger', 'created_at'],
  ['history_load', 'started_at'],
  ['holder', 'created_at'],
  ['holder_session', 'created_at'],
  ['idempotency', 'created_at'],
  ['inventory_item', 'created_at'],
  ['ledger', 'created_at'],
  ['market_session', 'opened_at'],
  ['monthly_fee', 'created_at'],
  ['orders', 'created_at'],
  ['payout', 'created_at'],
  ['position', 'created_at'],
  ['service_meta', 'updated_at'],
  ['signing_key', 'created_at'],
  ['trade', 'created_at'],
  ['trade_round', 'created_at'],
  ['webhook', 'created_at'],
  ['webhook_delivery', 'created_at'],
];

export class Migration20261122000020 extends Migration {
  override async up(): Promise<void> {
    for (const [table, column] of CLOCKED_COLUMNS)
      this.addSql(`alter table "${table}" alter column ${column} drop default`);
  }
}
