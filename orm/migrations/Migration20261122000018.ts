import { Migration } from '@mikro-orm/migrations';

/**
 * The event log's append, cheaper (bench/close.mjs: a close appends 10k position events):
 * no foreign key from `account_event` to `account`. The append (actors/events/log.ts, the only
 * writer) inserts events only joined to the head rows its own statement upserted, and the head
 * keeps its foreign key, so the per-row check, a large share of the insert's cost, proves nothing
 * the statement does not. Accounts are never deleted (as for `ledger`, migration 13).
 * `data` as json, not jsonb: the log is only ever served whole (nothing queries inside it), and
 * json is stored and served as the text it was built as, while jsonb is converted to its binary
 * form on the way in and back to text on the way out, a cost on each of the close's 10k objects.
 */
export class Migration20261122000018 extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table account_event drop constraint account_event_account_id_fkey');
    this.addSql('alter table account_event alter column data type json using data::json');
  }
}
