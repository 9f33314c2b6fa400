import { Migration } from '@mikro-orm/migrations';

/**
 * Competition goods (CONTRACT.md "Competitions"): goods a competition account's positions
 * leave unsold were bought with simulated USD, so they must never be sold for real money or coins.
 * - `inventory_item.simulated`: true on such goods, whose `source` is `competition`; the check keeps
 *   the two together, so an exchange sale (which rewrites `source`) can never move a simulated item.
 * - Goods already minted on a competition account (still there: they move only by a sale) are
 *   marked, and their open listings cancelled. Goods already sold off one stay as they are: the
 *   buyer paid for them.
 */
export class Migration20261122000014 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table inventory_item add column simulated boolean not null default false`);
    this.addSql(
      `update inventory_item i set source = 'competition', simulated = true from account a where a.id = i.account_id and a.kind = 'competition'`,
    );
    this.addSql(
      `update exchange_listing l set status = 'cancelled', closed_at = now() from inventory_item i where i.id = l.item_id and i.simulated and l.status = 'open'`,
    );
    this.addSql(
      `alter table inventory_item add constraint inventory_item_simulated_check check ((source = 'competition') = simulated)`,
    );
  }
}
