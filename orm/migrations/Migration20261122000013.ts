import { Migration } from '@mikro-orm/migrations';

/**
 * Room on `trade`'s pages for the close's updates (issue 14): every open trade is rewritten at each
 * of its 8 closes, and with full pages each new version went to another page, with an entry in each
 * of the table's six indexes. With half of each page free, a version that changes no indexed column
 * stays on its page (a HOT update: no index entries). Pages written before this keep their layout.
 */
export class Migration20261122000013 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table trade set (fillfactor = 50)');
  }
}
