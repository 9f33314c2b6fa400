import { Migration } from '@mikro-orm/migrations';

/**
 * The public record (the market engine's): every menu row of every recorded session, the trades
 * that executed them (the house's and, later, holders'), tape rows per session and family, and the
 * history-load progress per market.
 */
export class Migration20261122000002 extends Migration {
  override async up(): Promise<void> {
    // A session is recorded once its menu, trades and tape are written: by its live close, or by
    // the history backfill (source 'backfill', opened and closed at load time).
    this.addSql(`alter table market_session
      add column source text not null default 'live' check (source in ('live', 'backfill')),
      add column recorded boolean not null default false`);

    this.addSql(`create table menu_row (
      market text not null,
      tick bigint not null,
      idx integer not null,
      offer_key text not null,
      cluster integer not null,
      unit_cost_cents integer not null,
      list_price_cents integer not null,
      listed_at double precision not null,
      max_qty integer not null,
      house_accepted boolean not null,
      house_qty integer not null,
      deal jsonb not null,
      primary key (market, tick, idx))`);
    this.addSql(`create unique index menu_row_offer_key on menu_row (offer_key)`);

    // Money in integer cents. State columns are the revealed state: they advance at each close.
    this.addSql(`create table trade (
      id bigserial primary key,
      market text not null,
      tick bigint not null,
      idx integer not null,
      offer_key text not null,
      cluster integer not null,
      actor text not null check (actor in ('house', 'user')),
      account_id bigint null,
      position_id bigint null,
      qty integer not null check (qty > 0),
      unit_cost_cents integer not null,
      list_price_cents integer not null,
      fee_cents integer not null,
      holding_cents integer not null,
      cost_basis_cents bigint not null,
      horizon integer not null default 8,
      revealed_ticks integer not null default 0,
      sales_by_tick integer[] not null default '{}',
      units_sold integer not null default 0,
      qty_left integer not null,
      revenue_cents bigint not null default 0,
      holding_cost_cents bigint not null default 0,
      settled boolean not null default false,
      sold_out boolean null,
      regime boolean null,
      surcharge_cents bigint null,
      writeoff_cents bigint null,
      realized_pnl_cents bigint null,
      price_by_tick_cents integer[] null,
      nsellers_by_tick integer[] null,
      created_at timestamptz not null default now(),
      settled_at timestamptz null,
      check (units_sold + qty_left = qty))`);
    // The house executes a menu row at most once, whatever replays or processes run the close.
    this.addSql(
      `create unique index trade_house_once on trade (market, tick, idx) where actor = 'house'`,
    );
    this.addSql(`create index trade_market_tick on trade (market, tick)`);
    this.addSql(`create index trade_open on trade (market, tick) where not settled`);
    this.addSql(`create index trade_account on trade (account_id) where account_id is not null`);

    // cluster -1 is the whole market.
    this.addSql(`create table tape (
      market text not null,
      tick bigint not null,
      cluster integer not null,
      row jsonb not null,
      primary key (market, tick, cluster))`);

    this.addSql(`create table market_record (
      market text primary key,
      live_start bigint not null,
      from_tick bigint not null,
      sessions_total integer not null,
      sessions_loaded integer not null default 0,
      engine jsonb not null,
      started_at timestamptz not null default now(),
      finished_at timestamptz null)`);
  }
}
