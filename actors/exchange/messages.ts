// ExchangeActor's messages and replies ("exchange:USD", "exchange:GC": one actor per book, the books
// never mixed), and the arguments and replies of the exchange read tasks (reads.ts). Prices are
// integer units of the book: cents (USD) or hundredths of a coin (GC).
import type { Static } from 'typebox';
import type { Payment } from '../money/messages.js';
import type * as schemas from '../../src/schemas/index.js';
import { actorRef } from '../runtime/protocol.js';

export type Book = 'USD' | 'GC';

/** `at`: the service clock (real unix seconds), for the month of the participation fee and the provenance. */
export type ExchangeMessage =
  | { kind: 'list'; holderId: number; itemId: number; priceUnits: number }
  | { kind: 'cancel'; holderId: number; listingId: number }
  /** `payment`: how a USD buyer pays (the balance of their Manual desk, or a card charged onto it first); null in the Gold Coin book. */
  | { kind: 'buy'; holderId: number; listingId: number; payment: Payment | null; at: number };

export type Listed = { listing_id: number };
export type Cancelled = { listing_id: number };
/** What the buyer paid in the book's units, and the participation fee (USD cents) it carried. */
export type Bought = {
  listing_id: number;
  item_id: number;
  currency: Book;
  paid_units: number;
  fee_cents: number;
};

/** The reply to each message kind (actor.ts's handlers answer these). */
export type ExchangeReplies = { list: Listed; cancel: Cancelled; buy: Bought };
/** The address of the actor of `book`. */
export const exchangeRef = (book: Book) =>
  actorRef<ExchangeMessage, ExchangeReplies>('exchange', book);

// Read tasks (reads.ts).

/** Open listings, newest first; `holderId`: only that holder's own. */
export type ListingsArgs = {
  currency: Book | null;
  family: string | null;
  holderId: number | null;
  limit: number;
};
export type ListingView = Static<typeof schemas.Listing>;
