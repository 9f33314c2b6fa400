import { Migration } from '@mikro-orm/migrations';

/**
 * Spending limits and signed approval receipts (CONTRACT.md "Spending limits", "Signed approval
 * receipts").
 * - `agent.limit_*`: the holder's standing instructions for what the agent may spend without the
 *   holder present: one order's total, a UTC day's total (service clock), the markets. Null: no limit.
 * - `orders.standing_agent_id`: the agent that funded the order without the holder present
 *   (pay_from_balance, an execute checkout): its day's spending is the sum of these orders' totals
 *   (indexed by agent and paid_at).
 * - `orders.receipt`: the compact JWS signed when the holder's hand or grant funded the order.
 * - `signing_key`: the receipts' Ed25519 keys; the newest signs, every public key stays in the JWKS.
 */
export class Migration20261122000017 extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table agent add column limit_max_order_cents bigint, add column limit_max_day_cents bigint, add column limit_markets text[]`,
    );
    this.addSql(
      `alter table agent add constraint agent_limits_check check (coalesce(limit_max_order_cents, 0) >= 0 and coalesce(limit_max_day_cents, 0) >= 0)`,
    );
    this.addSql(`alter table orders add column standing_agent_id bigint, add column receipt text`);
    this.addSql(
      `create index orders_standing on orders (standing_agent_id, paid_at) where standing_agent_id is not null`,
    );
    this.addSql(`create table signing_key (
      kid text primary key,
      public_jwk jsonb not null,
      private_jwk jsonb not null,
      created_at timestamptz not null default now())`);
  }
}
