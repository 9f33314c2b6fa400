import { Migration } from '@mikro-orm/migrations';

/**
 * The exchange (CONTRACT.md "Exchange"): owned goods change owner, so
 * - `inventory_item.provenance` becomes a list with one entry per change of owner: an existing
 *   item's object is wrapped as its first entry, marked with its kind (settlement or purchase);
 * - `inventory_item.source` says `settlement` where it said `trade_round` (one name for one meaning:
 *   the unsold units of a settled position); the third source is `exchange`;
 * - `exchange_listing`: one holder's offer of one item in one book (USD cents or GC hundredths).
 *   An item is listed at most once at a time (the partial unique index on open listings).
 */
export class Migration20261122000011 extends Migration {
  override async up(): Promise<void> {
    this
      .addSql(`update inventory_item set provenance = jsonb_build_array(provenance || jsonb_build_object('kind',
      case when source = 'purchase' then 'purchase' else 'settlement' end)) where jsonb_typeof(provenance) = 'object'`);
    this.addSql(`update inventory_item set source = 'settlement' where source = 'trade_round'`);
    this.addSql(`create table exchange_listing (
      id bigserial primary key,
      item_id bigint not null references inventory_item (id),
      seller_holder_id bigint not null references holder (id),
      currency text not null,
      price_units bigint not null,
      status text not null default 'open',
      buyer_holder_id bigint null references holder (id),
      created_at timestamptz not null default now(),
      closed_at timestamptz null,
      constraint exchange_listing_currency_check check (currency in ('USD', 'GC')),
      constraint exchange_listing_status_check check (status in ('open', 'sold', 'cancelled')),
      constraint exchange_listing_price_units_check check (price_units > 0))`);
    this.addSql(
      `create unique index exchange_listing_open_item on exchange_listing (item_id) where status = 'open'`,
    );
    this.addSql(`create index exchange_listing_book on exchange_listing (currency, status, id)`);
  }
}
