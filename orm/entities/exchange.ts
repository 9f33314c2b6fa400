// The exchange (migration 0011, CONTRACT.md "Exchange"): holders' listings of owned goods in two
// books, USD (price in cents) and GC (price in hundredths of a coin), never mixed.
import { EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt, serialId, timestampNull } from './columns.js';
import {
  HolderSchema,
  InventoryItemSchema,
  ref,
  type Holder,
  type InventoryItem,
} from './trading.js';

export const LISTING_CURRENCIES = ['USD', 'GC'] as const;
export const LISTING_STATUSES = ['open', 'sold', 'cancelled'] as const;

/** One offer of one item; `priceUnits` is cents (USD) or hundredths of a coin (GC). */
export type ExchangeListing = {
  id: number;
  item: Ref<InventoryItem>;
  seller: Ref<Holder>;
  currency: (typeof LISTING_CURRENCIES)[number];
  priceUnits: number;
  status: Opt<(typeof LISTING_STATUSES)[number]>;
  buyer?: Ref<Holder> | null;
  createdAt: Date;
  closedAt?: Date | null;
};
// Owner: exchange (actors/exchange/actor.ts, one actor per book).
export const ExchangeListingSchema = new EntitySchema<ExchangeListing>({
  name: 'ExchangeListing',
  tableName: 'exchange_listing',
  properties: {
    id: serialId(),
    item: ref(() => InventoryItemSchema, 'item_id', 'exchange_listing'),
    seller: ref(() => HolderSchema, 'seller_holder_id', 'exchange_listing'),
    currency: { enum: true, items: [...LISTING_CURRENCIES], columnType: 'text' },
    priceUnits: { type: bigint(), fieldName: 'price_units' },
    status: { enum: true, items: [...LISTING_STATUSES], columnType: 'text', default: 'open' },
    buyer: ref(() => HolderSchema, 'buyer_holder_id', 'exchange_listing', { nullable: true }),
    createdAt: createdAt(),
    closedAt: timestampNull('closed_at'),
  },
  checks: [{ name: 'exchange_listing_price_units_check', expression: 'price_units > 0' }],
  indexes: [
    {
      name: 'exchange_listing_open_item',
      expression: `create unique index exchange_listing_open_item on exchange_listing (item_id) where status = 'open'`,
    },
    { name: 'exchange_listing_book', properties: ['currency', 'status', 'id'] },
  ],
});

export const exchangeEntities = [ExchangeListingSchema];
