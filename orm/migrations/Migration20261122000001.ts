import { Migration } from '@mikro-orm/migrations';

/** The backbone: service settings that must survive restarts, and the session ledger. */
export class Migration20261122000001 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table service_meta (
      key text primary key,
      value text not null,
      updated_at timestamptz not null default now())`);
    // (market, tick) is the close's idempotency key: a second close of the same pair finds
    // closed_at already set and does nothing; the next session's insert conflicts and is skipped.
    this.addSql(`create table market_session (
      market text not null,
      tick bigint not null,
      opened_at timestamptz not null default now(),
      closed_at timestamptz null,
      close_ms integer null,
      primary key (market, tick))`);
    this.addSql(
      `create index market_session_open on market_session (market) where closed_at is null`,
    );
  }
}
