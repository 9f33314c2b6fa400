import { Migration } from '@mikro-orm/migrations';

/**
 * The close's two bulk writes, cheaper (bench/close.mjs: 10k open positions):
 * - Room on `trade`'s pages: every open trade is rewritten at each of its 8 closes, and with full
 *   pages each new version went to another page, with an entry in each of the table's six indexes.
 *   With half of each page free, a version that changes no indexed column stays on its page (a HOT
 *   update: no index entries). Pages written before this keep their layout.
 * - No foreign key from `ledger` to `account`: the posting (actors/account/ledger.ts, the only
 *   writer) inserts an entry only joined to the account row its own statement updated, and accounts
 *   are never deleted, so the per-row check (once per entry, 20k entries per such close) proves
 *   nothing the statement does not.
 */
export class Migration20261122000013 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table trade set (fillfactor = 50)');
    this.addSql('alter table ledger drop constraint ledger_account_id_fkey');
  }
}
