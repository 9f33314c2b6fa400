import { Migration } from '@mikro-orm/migrations';

/**
 * The event log (CONTRACT.md "Events", ARCHITECTURE.md rule 9): every change an agent
 * cares about, appended in the change's own transaction.
 * - `account_event_head`: the last event id of each account. An append moves it by the events it
 *   adds under the head row's lock, so ids are the account's own sequence, gap-free (1, 2, 3, ...):
 *   a rolled-back append moves nothing, unlike a sequence. Its own table, not a column of
 *   `account`: a posting moves the balance and appends `ledger.posted` in one statement, and one
 *   statement must not update one row twice.
 * - `account_event`: (account, id) → type, data (the object as GET serves it), created_at; kept 7
 *   days (swept in batches by the created_at index).
 */
export class Migration20261122000015 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table account_event_head (
      account_id bigint primary key references account (id) on delete cascade,
      last_id bigint not null,
      constraint account_event_head_last_id_check check (last_id > 0))`);
    this.addSql(`create table account_event (
      account_id bigint not null references account (id) on delete cascade,
      id bigint not null,
      type text not null,
      data jsonb not null,
      created_at timestamptz not null default now(),
      primary key (account_id, id),
      constraint account_event_id_check check (id > 0))`);
    this.addSql(`create index account_event_created on account_event (created_at)`);
  }
}
