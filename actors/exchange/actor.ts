// ExchangeActor ("exchange:USD", "exchange:GC"; CONTRACT.md "Exchange"): one actor per book, so a
// book's turns never interleave in a process; across processes the database decides: an item is
// listed once at a time (the partial unique index on open listings) and a buy locks its listing row
// (`for update`) and checks it is still open in the same transaction, so exactly one buyer wins and
// the loser's turn, rolled back whole, charged nothing. Money moves only through the ledgers:
// USD through the money kernel (actors/money/charge.ts), Gold Coins through actors/holder/coins.ts. Simulated
// (competition) goods are never listed, so neither book ever sells them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ActorError, defineActor } from '../runtime/actor.js';
import { instantSql, jsonParam } from '../runtime/sql.js';
import { chargeHolder } from '../money/charge.js';
import type { Payment } from '../money/messages.js';
import { manualDesk } from '../account/desk.js';
import { postCoins } from '../holder/coins.js';
import type { SaleEntry } from '../market/goods.js';
import { unitsToPrice } from './reads.js';
import type {
  Book,
  Bought,
  Cancelled,
  ExchangeMessage,
  ExchangeReplies,
  Listed,
} from './messages.js';

type Buy = Extract<ExchangeMessage, { kind: 'buy' }>;

function bookOf(id: string): Book {
  if (id !== 'USD' && id !== 'GC') throw new ActorError(404, `no exchange book ${id}`);
  return id;
}

async function list(
  em: EntityManager,
  book: Book,
  msg: Extract<ExchangeMessage, { kind: 'list' }>,
  at: number,
): Promise<Listed> {
  if (!Number.isSafeInteger(msg.priceUnits) || msg.priceUnits <= 0)
    throw new ActorError(400, 'a price is above 0');
  // Only the item's owner lists it; another holder's item (or none) is not found.
  const [item] = await em.execute<{ simulated: boolean }[]>(
    `select simulated from inventory_item where id = ? and holder_id = ? for update`,
    [msg.itemId, msg.holderId],
  );
  if (!item) throw new ActorError(404, `no owned item ${msg.itemId} of yours`);
  // Competition goods were bought with simulated USD: selling them in either book would turn it into
  // real money or coins (CONTRACT.md "Competitions").
  if (item.simulated) {
    throw new ActorError(
      400,
      `item ${msg.itemId} is competition goods: simulated goods, bought with simulated USD, cannot be sold on the exchange; nothing was listed`,
    );
  }
  // The partial unique index decides, also against the other book's actor: no row, already listed.
  const [row] = await em.execute<{ id: number }[]>(
    `insert into exchange_listing (item_id, seller_holder_id, currency, price_units, created_at) values (?, ?, ?, ?, ${instantSql()})
     on conflict (item_id) where status = 'open' do nothing returning id::float8 as id`,
    [msg.itemId, msg.holderId, book, msg.priceUnits, at],
  );
  if (!row)
    throw new ActorError(409, `item ${msg.itemId} is already listed: cancel that listing first`);
  return { listing_id: row.id };
}

async function cancel(
  em: EntityManager,
  book: Book,
  msg: Extract<ExchangeMessage, { kind: 'cancel' }>,
  at: number,
): Promise<Cancelled> {
  const [row] = await em.execute<{ status: string }[]>(
    `select status from exchange_listing where id = ? and seller_holder_id = ? and currency = ? for update`,
    [msg.listingId, msg.holderId, book],
  );
  if (!row) throw new ActorError(404, `no listing ${msg.listingId} of yours`);
  if (row.status !== 'open') throw new ActorError(409, `listing ${msg.listingId} is ${row.status}`);
  await em.execute(
    `update exchange_listing set status = 'cancelled', closed_at = ${instantSql()} where id = ?`,
    [at, msg.listingId],
  );
  return { listing_id: msg.listingId };
}

/**
 * The USD side of a sale: the buyer's Manual desk pays (a card is charged onto it first) with the
 * month's fee when due, and the seller's desk is credited in the same posting. Returns the fee.
 */
async function payUsd(
  em: EntityManager,
  msg: Buy,
  sellerId: number,
  cents: number,
  payment: Payment,
): Promise<number> {
  const buyerDesk = await manualDesk(em, msg.holderId);
  const sellerDesk = await manualDesk(em, sellerId);
  const ref = `listing:${msg.listingId}`;
  const c = await chargeHolder(em, {
    holderId: msg.holderId,
    payer: buyerDesk,
    payment,
    at: msg.at,
    ref,
    debits: [{ ref, cents, kind: 'exchange_purchase' }],
    counterparts: [{ account_id: sellerDesk, kind: 'exchange_sale', amount_cents: cents, ref }],
  });
  return c.feeCents;
}

async function buy(em: EntityManager, book: Book, msg: Buy): Promise<Bought> {
  const [l] = await em.execute<
    { item_id: number; seller: number; price_units: number; status: string }[]
  >(
    `select item_id::float8 as item_id, seller_holder_id::float8 as seller, price_units::float8 as price_units, status
       from exchange_listing where id = ? and currency = ? for update`,
    [msg.listingId, book],
  );
  if (!l) throw new ActorError(404, `no listing ${msg.listingId} in the ${book} book`);
  if (l.status !== 'open')
    throw new ActorError(
      409,
      `listing ${msg.listingId} is no longer open (${l.status}): someone else bought it or it was cancelled; nothing was charged`,
    );
  if (l.seller === msg.holderId)
    throw new ActorError(400, 'that is your own listing: cancel it instead');
  let fee = 0;
  if (book === 'USD') {
    if (!msg.payment)
      throw new ActorError(400, 'choose how to pay: method balance, card or new_card');
    fee = await payUsd(em, msg, l.seller, l.price_units, msg.payment);
  } else {
    const ref = `listing:${msg.listingId}`;
    await postCoins(
      em,
      msg.holderId,
      [{ kind: 'gc_spend', hundredths: -l.price_units, ref }],
      msg.at,
    );
    await postCoins(em, l.seller, [{ kind: 'gc_sale', hundredths: l.price_units, ref }], msg.at);
  }
  const sale: SaleEntry = {
    kind: 'exchange',
    at: msg.at,
    from_holder: l.seller,
    to_holder: msg.holderId,
    price: unitsToPrice(l.price_units),
    currency: book,
    listing_id: msg.listingId,
  };
  // The item keeps its id; it moves to the buyer's Manual desk with its provenance extended.
  await em.execute(
    `update inventory_item set holder_id = ?, account_id = ?, source = 'exchange', provenance = provenance || jsonb_build_array(?::jsonb) where id = ?`,
    [msg.holderId, await manualDesk(em, msg.holderId), jsonParam(sale), l.item_id],
  );
  await em.execute(
    `update exchange_listing set status = 'sold', buyer_holder_id = ?, closed_at = ${instantSql()} where id = ?`,
    [msg.holderId, msg.at, msg.listingId],
  );
  return {
    listing_id: msg.listingId,
    item_id: l.item_id,
    currency: book,
    paid_units: l.price_units,
    fee_cents: fee,
  };
}

export const exchangeActor = defineActor<{ book: Book }, ExchangeMessage, ExchangeReplies>({
  kind: 'exchange',

  async activate(ctx) {
    return { book: bookOf(ctx.id) };
  },

  handlers: {
    async list(state, msg, ctx): Promise<Listed> {
      return ctx.em.transactional((em) => list(em, state.book, msg, ctx.at));
    },
    async cancel(state, msg, ctx): Promise<Cancelled> {
      return ctx.em.transactional((em) => cancel(em, state.book, msg, ctx.at));
    },
    async buy(state, msg, ctx): Promise<Bought> {
      return ctx.em.transactional((em) => buy(em, state.book, msg));
    },
  },
});
