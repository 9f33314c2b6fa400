import { Migration } from '@mikro-orm/migrations';

/**
 * One meaning per name: "record" is the public record SPEC.md serves (menus, trades, tape);
 * the table of each market's history-load progress was `market_record`, a third meaning. It is
 * `history_load` now, its primary key named after it.
 */
export class Migration20261122000007 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table market_record rename to history_load`);
    this.addSql(`alter index market_record_pkey rename to history_load_pkey`);
  }
}
