import { Migration } from '@mikro-orm/migrations';

/**
 * Position events stored as figures (bench/close.mjs: a close appends 10k of them). A
 * `position.advanced` / `position.settled` event keeps the position it moved and the figures its
 * close moved (the session's sales, revenue and holding fee; the trade's sessions done, units left
 * and sold, revenue and holding so far), and no `data`: its object is built when read
 * (actors/events/position-events.ts). Every other event keeps its object; the check says one of
 * the two is there. Existing position events keep their stored objects.
 */
export class Migration20261122000019 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table account_event alter column data drop not null,
      add column position_id bigint null, add column session_tick bigint null, add column session_sold int null,
      add column session_revenue_cents bigint null, add column session_holding_cents bigint null, add column revealed_ticks int null,
      add column qty_left int null, add column units_sold int null, add column revenue_cents bigint null, add column holding_cost_cents bigint null`);
    this.addSql(
      'alter table account_event add constraint account_event_data_check check (data is not null or position_id is not null)',
    );
  }
}
