// Read tasks of the exchange: the open listings of both books with their items (GET
// /api/v1/exchange/listings, the /exchange page, an agent's inventory) and which book a listing is
// in (so the front end asks the right actor). Read-only; the exchange actor writes exchange_listing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineReads } from '../runtime/read.js';
import { itemJson, ITEM_COLUMNS, unix } from '../account/views.js';
import type { Book, ListingView, ListingsArgs } from './messages.js';

/** A price in the book's integer units as served: 2 decimals either way (cents, or hundredths of a coin). */
export const unitsToPrice = (units: number) => units / 100;

export async function listingsOf(em: EntityManager, a: ListingsArgs): Promise<ListingView[]> {
  const rows = await em.execute(
    `select l.id::float8 as listing_id, l.currency, l.price_units::float8 as price_units, l.created_at as listed_at, h.display_name as seller,
            ${ITEM_COLUMNS('i')}
       from exchange_listing l join inventory_item i on i.id = l.item_id join holder h on h.id = l.seller_holder_id
      where l.status = 'open' and (?::text is null or l.currency = ?::text) and (?::text is null or i.history->>'sku_family' = ?::text)
        and (?::bigint is null or l.seller_holder_id = ?::bigint)
      order by l.id desc limit ?`,
    [a.currency, a.currency, a.family, a.family, a.holderId, a.holderId, a.limit],
  );
  return rows.map((r) => ({
    id: r.listing_id,
    currency: r.currency,
    price: unitsToPrice(r.price_units),
    listed_at: unix(r.listed_at)!,
    seller: r.seller,
    item: itemJson(r),
  }));
}

export const exchangeReads = defineReads({
  'exchange.listings': async ({ em }, a: ListingsArgs) => listingsOf(em, a),
  /** The book a listing is in, or null when there is no such listing. */
  'exchange.book': async ({ em }, a: { listingId: number }): Promise<Book | null> => {
    const [r] = await em.execute<{ currency: Book }[]>(
      `select currency from exchange_listing where id = ?`,
      [a.listingId],
    );
    return r?.currency ?? null;
  },
});
