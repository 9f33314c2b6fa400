// The exchange (CONTRACT.md "Exchange"; SPEC.md item 9): holders list owned goods by hand at their
// own price in USD or Gold Coins, cancel, and buy each other's listings on the web (turns of the
// book's exchange actor, "exchange:USD" or "exchange:GC"); the API only reads the open listings.
// A card is checked here first (src/web/pay-form.ts): a declined or crypto payment reaches no actor.
import Type, { type Static } from 'typebox';
import {
  exchangeRef,
  type Book,
  type Bought,
  type Cancelled,
  type ExchangeMessage,
  type ExchangeReplies,
  type ListingView,
  type Listed,
} from '../../../actors/exchange/messages.js';
import type { Payment } from '../../../actors/money/messages.js';
import { read, type IdemTicket } from '../../../actors/runtime/client.js';
import { numberToCents } from '../../engine/money.js';
import { LIST_CAPS } from '../../rules.js';
import {
  BoughtForm,
  ListedForm,
  ListingCancelledForm,
  ListingsAnswer,
  amount,
  rowId,
} from '../../schemas/index.js';
import type { HolderPrincipal } from '../../http/authenticators/holder-session.js';
import { renderPage } from '../../web/pages.js';
import { CardFields, cardPaymentOf } from '../../web/pay-form.js';
import {
  HttpError,
  htmlPage,
  json,
  route,
  type Context,
  type HolderContext,
  type PublicContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { formReply, holderFormRoute, type HolderForm, type Problem } from '../../web/answers.js';

/** The highest price one listing asks (USD or GC): a bound on input, far above any demo use. */
const MAX_PRICE = 1_000_000;
const CURRENCIES = ['USD', 'GC'] as const;

const Currency = Type.Union(
  CURRENCIES.map((c) => Type.Literal(c)),
  { description: 'the book: USD or GC (Gold Coins)' },
);
const Family = Type.String({
  minLength: 1,
  maxLength: 120,
  description: 'only goods of this item family (sku_family)',
});
const ListingsQuery = Type.Object({
  currency: Type.Optional(Currency),
  family: Type.Optional(Family),
  limit: Type.Integer({
    minimum: 1,
    maximum: LIST_CAPS.listings,
    default: 100,
    description: `most listings answered (1..${LIST_CAPS.listings})`,
  }),
});
type ListingsQuery = Static<typeof ListingsQuery>;
const PageQuery = Type.Object({
  currency: Type.Optional(
    Type.Union([Currency, Type.Literal('')], { description: 'one book, or both when empty' }),
  ),
  family: Type.Optional(
    Type.String({ maxLength: 120, description: 'only this item family; any when empty' }),
  ),
});
type PageQuery = Static<typeof PageQuery>;

const ListFields = Type.Object({
  item_id: rowId('one of your owned items'),
  price: amount('your price, at most 2 decimals (USD, or Gold Coins)', {
    exclusiveMinimum: 0,
    maximum: MAX_PRICE,
  }),
  currency: Currency,
});
type ListFields = Static<typeof ListFields>;
const ListingFields = Type.Object({ listing_id: rowId('the listing') });
type ListingFields = Static<typeof ListingFields>;
const BuyFields = Type.Object({
  listing_id: rowId('the listing'),
  method: Type.Optional(
    Type.Union(
      [
        Type.Literal('balance'),
        Type.Literal('new_card'),
        Type.Literal('card'),
        Type.Literal('crypto'),
      ],
      {
        description:
          'USD listings: balance (your Manual desk), new_card (the card fields), card (a stored card: card_id) or crypto (not ready: refused); Gold Coin listings pay from your coins',
      },
    ),
  ),
  ...CardFields,
});
type BuyFields = Static<typeof BuyFields>;

const WORDS = {
  item_id: 'choose one of your owned items',
  price: `enter a price above 0 and at most ${MAX_PRICE}, with at most 2 decimals`,
  currency: 'choose USD or GC',
  listing_id: 'choose a listing',
};

export function exchangeRoutes(s: Services): Route[] {
  const post = <B, R>(d: Omit<HolderForm<B, R>, 'words'>) =>
    holderFormRoute<B, R>({ ...d, words: WORDS }, (holder, p) => exchangePage(s, holder, {}, p));

  return [
    route<unknown, ListingsQuery>({
      method: 'GET',
      path: '/api/v1/exchange/listings',
      operationId: 'list_exchange_listings',
      auth: 'none',
      query: ListingsQuery,
      summary:
        'Open exchange listings with their items, newest first: both books, or one (currency), optionally one item family',
      response: { 200: ListingsAnswer },
      handler: (c) => listExchangeListings(s, c),
    }),
    route<unknown, PageQuery>({
      method: 'GET',
      path: '/exchange',
      auth: 'holder',
      query: PageQuery,
      summary:
        'The exchange: both books with buy buttons, filters by family and currency, your own listings with cancel buttons',
      response: { 200: htmlPage('the exchange page') },
      handler: (c) => showExchange(s, c),
    }),
    post<ListFields, Listed>({
      path: '/exchange/list',
      summary:
        'List one of your owned items at your price in USD or Gold Coins (an item is listed once at a time: 409)',
      body: ListFields,
      answer: ListedForm,
      run: (holder, c) => listItem(s, holder, c),
      reply: (req, r) => formReply(req, '/exchange', { listing_id: r.listing_id }),
    }),
    post<ListingFields, Cancelled>({
      path: '/exchange/cancel',
      summary: 'Cancel one of your open listings',
      body: ListingFields,
      answer: ListingCancelledForm,
      run: (holder, c) => cancelListing(s, holder, c),
      reply: (req, r) => formReply(req, '/exchange', { listing_id: r.listing_id }),
    }),
    post<BuyFields, Bought>({
      path: '/exchange/buy',
      summary:
        "Buy another holder's listing: USD from your Manual desk or by card (the month's participation fee when due), Gold Coins from your coins; a listing sold meanwhile is 409, nothing charged",
      body: BuyFields,
      answer: BoughtForm,
      run: (holder, c) => buyListing(s, holder, c),
      reply: (req, r) =>
        formReply(req, '/exchange', {
          item_id: r.item_id,
          paid: r.paid_units / 100,
          fee: r.fee_cents / 100,
        }),
    }),
  ];
}

async function listExchangeListings(
  s: Services,
  { query }: PublicContext<unknown, ListingsQuery>,
): Promise<Reply> {
  return json({
    listings: await read(s.runtime, 'exchange.listings', {
      currency: query.currency ?? null,
      family: query.family ?? null,
      holderId: null,
      limit: query.limit,
    }),
  });
}

function showExchange(
  s: Services,
  { principal, query }: HolderContext<unknown, PageQuery>,
): Promise<Reply> {
  return exchangePage(s, principal, query);
}

function listItem(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, ListFields>,
): Promise<Listed> {
  return ask(
    s,
    body.currency,
    {
      kind: 'list',
      holderId: holder.holderId,
      itemId: body.item_id,
      priceUnits: numberToCents(body.price),
    },
    idem,
  );
}

async function cancelListing(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, ListingFields>,
): Promise<Cancelled> {
  return ask(
    s,
    await bookOf(s, body.listing_id),
    { kind: 'cancel', holderId: holder.holderId, listingId: body.listing_id },
    idem,
  );
}

async function buyListing(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, BuyFields>,
): Promise<Bought> {
  const book = await bookOf(s, body.listing_id);
  const pay = book === 'USD' ? payment(s, body) : null;
  return ask(
    s,
    book,
    {
      kind: 'buy',
      holderId: holder.holderId,
      listingId: body.listing_id,
      payment: pay,
      at: s.clock.realNow(),
    },
    idem,
  );
}

function ask<K extends ExchangeMessage['kind']>(
  s: Services,
  book: Book,
  msg: ExchangeMessage & { kind: K },
  idem?: IdemTicket,
) {
  return s.runtime.ask<ExchangeMessage, ExchangeReplies, K>(exchangeRef(book), msg, { idem });
}

/** The book a listing is in, so the right actor is asked; 404 when there is no such listing. */
async function bookOf(s: Services, listingId: number): Promise<Book> {
  const book = await read(s.runtime, 'exchange.book', { listingId });
  if (!book) throw new HttpError(404, `no listing ${listingId}`);
  return book;
}

/** How a USD buyer pays, from the form; a Gold Coin buy needs no method. */
function payment(s: Services, body: BuyFields): Payment | null {
  if (body.method === undefined) return null;
  if (body.method === 'balance') return { method: 'balance' };
  return cardPaymentOf({ ...body, method: body.method }, new Date(s.clock.realNow() * 1000));
}

const shown = (l: ListingView) => ({
  ...l,
  price_text: l.price.toFixed(2),
  usd: l.currency === 'USD',
});

/** GET /exchange: both books (or one), filtered by family, and the holder's own listings with cancel buttons. */
async function exchangePage(
  s: Services,
  holder: HolderPrincipal,
  q: PageQuery = {},
  p?: Problem,
): Promise<Reply> {
  const currency = q.currency || null;
  const family = q.family || null;
  const [all, mine, owned] = await Promise.all([
    read(s.runtime, 'exchange.listings', {
      currency,
      family,
      holderId: null,
      limit: LIST_CAPS.listings,
    }),
    read(s.runtime, 'exchange.listings', {
      currency: null,
      family: null,
      holderId: holder.holderId,
      limit: LIST_CAPS.listings,
    }),
    read(s.runtime, 'account.holderInventory', { holderId: holder.holderId }),
  ]);
  const mineIds = new Set(mine.map((l) => l.id));
  // What can be listed: the holder's owned items not listed already (an item is listed at most once).
  const listed = new Set(mine.map((l) => l.item.id));
  const listable = owned
    .filter((i) => !listed.has(i.id))
    .map((i) => ({
      id: i.id,
      label: `${i.title}: ${i.qty} unit${i.qty === 1 ? '' : 's'}, ${i.rarity} (item ${i.id})`,
    }));
  const books = CURRENCIES.filter((c) => !currency || c === currency).map((c) => ({
    name: c === 'USD' ? 'USD book' : 'Gold Coin book',
    listings: all
      .filter((l) => l.currency === c)
      .map((l) => ({ ...shown(l), own: mineIds.has(l.id) })),
  }));
  return renderPage(
    'exchange',
    {
      title: 'Exchange',
      holder,
      error: p?.message,
      family: family ?? '',
      books,
      mine: mine.map(shown),
      listable,
      has_listable: listable.length > 0,
      currencies: CURRENCIES.map((code) => ({ code, selected: code === currency })),
    },
    p?.status ?? 200,
  );
}
