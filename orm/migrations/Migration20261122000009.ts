import { Migration } from '@mikro-orm/migrations';

/**
 * The holder's money (CONTRACT.md "The holder's money").
 * - `payout`: a payout from a trading account the holder owns. The amount leaves the balance when it
 *   is scheduled (ledger `payout`); `pay_at` (real unix seconds) is when the supervisor marks it
 *   paid, once: `status` moves scheduled → paid only by a statement that finds it scheduled.
 * - Gold Coins: `holder.gc_balance_hundredths` (coins in hundredths: 5.0 coins = 500) and
 *   `gc_ledger`, its own ledger, never mixed with USD; every holder gets `gc_grant` 5.0, those
 *   registered before this migration too.
 */
export class Migration20261122000009 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table payout (
      id bigserial primary key,
      account_id bigint not null references account(id),
      holder_id bigint not null references holder(id),
      amount_cents bigint not null check (amount_cents > 0),
      commission_cents bigint not null check (commission_cents >= 0),
      net_cents bigint not null,
      status text not null default 'scheduled' check (status in ('scheduled', 'paid')),
      pay_at float8 not null,
      created_at timestamptz not null default now(),
      paid_at timestamptz null,
      constraint payout_net check (net_cents = amount_cents - commission_cents),
      constraint payout_paid check ((status = 'paid') = (paid_at is not null)))`);
    this.addSql(`create index payout_due on payout (pay_at) where status = 'scheduled'`);
    this.addSql(`create index payout_holder on payout (holder_id, id)`);

    this.addSql(`alter table holder add column gc_balance_hundredths bigint not null default 0`);
    this.addSql(
      `alter table holder add constraint holder_gc_balance_check check (gc_balance_hundredths >= 0)`,
    );
    this.addSql(`create table gc_ledger (
      id bigserial primary key,
      holder_id bigint not null references holder(id),
      kind text not null check (kind in ('gc_grant', 'gc_purchase', 'gc_spend', 'gc_sale')),
      amount_hundredths bigint not null check (amount_hundredths <> 0),
      balance_after_hundredths bigint not null check (balance_after_hundredths >= 0),
      ref text not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index gc_ledger_holder on gc_ledger (holder_id, id)`);
    this
      .addSql(`insert into gc_ledger (holder_id, kind, amount_hundredths, balance_after_hundredths, ref)
      select id, 'gc_grant', 500, gc_balance_hundredths + 500, 'registration' from holder order by id`);
    this.addSql(`update holder set gc_balance_hundredths = gc_balance_hundredths + 500`);
  }
}
