import { Migration } from '@mikro-orm/migrations';

/**
 * Competitions (CONTRACT.md "Competitions").
 * - `competition`: one window of one market (id `<market>-<window>`, src/rules.ts), times in real
 *   unix seconds. `status` moves running → finished once, by the statement that also pays the
 *   prizes (actors/competition/actor.ts); "upcoming" and "ended, not yet paid" are read from the clock.
 * - `competition_entry`: a holder's entry, with the competition account (kind `competition`) that
 *   holds its simulated USD; one entry per holder and competition.
 */
export class Migration20261122000012 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table competition (
      id text primary key,
      market text not null,
      name text not null,
      starts_at float8 not null,
      ends_at float8 not null,
      starting_balance_cents bigint not null check (starting_balance_cents > 0),
      prize_pool_cents bigint not null check (prize_pool_cents >= 0),
      sponsor text not null,
      status text not null default 'running' check (status in ('running', 'finished')),
      finished_at timestamptz null,
      created_at timestamptz not null default now(),
      constraint competition_window check (ends_at > starts_at))`);
    this.addSql(`create index competition_market on competition (market, ends_at)`);
    this.addSql(`create table competition_entry (
      account_id bigint primary key references account(id),
      competition_id text not null references competition(id),
      holder_id bigint not null references holder(id),
      prize_cents bigint null,
      created_at timestamptz not null default now())`);
    this.addSql(
      `create unique index competition_entry_holder on competition_entry (competition_id, holder_id)`,
    );
  }
}
