import { Migration } from '@mikro-orm/migrations';

/**
 * Budgets that end (CONTRACT.md "Spending limits"): `agent.limit_max_week_cents`, what an ISO week
 * (Monday 00:00 UTC of the service clock) of funding without the holder may total, counted as
 * max_day is; `agent.limit_expires_at` (real unix seconds of the service clock): from it the agent
 * funds nothing without the holder until the holder sets its limits again. Null: no limit.
 */
export class Migration20261122000023 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table agent add column limit_max_week_cents bigint null, add column limit_expires_at float8 null`,
    );
    this.addSql(
      `alter table agent add constraint agent_limit_max_week_check check (coalesce(limit_max_week_cents, 0) >= 0)`,
    );
  }
}
