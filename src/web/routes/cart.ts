// The holder's carts on the web (SPEC.md "Web routes": GET /cart and the /cart form posts; CONTRACT.md
// "Carts" for the CSV): their own cart and their agents' carts with lines, totals and stale marks,
// and the forms that change them. Every change is a turn of the cart's actor, which checks that the
// holder may make it: a cart or line id from a form is only ever a question to that actor.
import Type, { type Static } from 'typebox';
import {
  cartRef,
  type Caller,
  type CartDetail,
  type CartMessage,
  type CartReplies,
  type CheckedOut,
  type Cleared,
  type LineAdded,
  type LineChanged,
  type LinesAdded,
  type NewLine,
} from '../../../actors/cart/messages.js';
import { read, type IdemTicket } from '../../../actors/runtime/client.js';
import type { HolderPrincipal } from '../../http/authenticators/holder-session.js';
import { csvRows, rowRequest, templateCsv, uploadedFile } from '../../api/cart-csv.js';
import { cartSummary, currentSessions, linesView, paidPayload, sampleDeal } from '../cart-view.js';
import { renderPage } from '../pages.js';
import { PayFields, cardOptions, paymentOf } from '../pay-form.js';
import {
  HttpError,
  htmlPage,
  media,
  route,
  type Context,
  type HolderContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import {
  CartClearedForm,
  CartLineForm,
  CartPaidForm,
  CartRefreshedForm,
  CartUploadForm,
  rowId,
} from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import {
  formReply,
  holderFormRoute,
  problemOf,
  type HolderForm,
  type Problem,
} from '../answers.js';
import { menuSnapshots, recordOpen } from '../../market-data/live-session.js';
import { currentLine } from '../../api/cart-line.js';
import { MARKET_IDS, numberToCents } from '../../engine/index.js';
import { consoleReply } from '../console-notice.js';

/** Carts the page shows with their lines (a holder with more finds the rest through their links). */
const PAGE_CARTS = 50;

const Next = Type.String({
  default: '/cart',
  description: 'page to go to afterwards (a path of this site)',
});
const Id = rowId;
const CartIdOrOwn = Type.Union([Id('the cart'), Type.Null()], {
  default: null,
  description: 'the cart; empty: your own cart',
});

type AddForm = Static<typeof AddForm>;
const AddForm = Type.Object({
  market: Type.String({ maxLength: 16 }),
  offer_key: Type.String({ maxLength: 200 }),
  qty: Type.Integer({ minimum: 1, default: 1 }),
  note: Type.String({ maxLength: 255, default: '' }),
  next: Next,
});
// `cart_id` is a hint (the line's cart); the cart's actor refuses a line that is not in it.
type LineForm = Static<typeof LineForm>;
const LineForm = Type.Object({
  item_id: Id('the line'),
  cart_id: Type.Union([Id("the line's cart"), Type.Null()], { default: null }),
  next: Next,
});
type UpdateForm = Static<typeof UpdateForm>;
const UpdateForm = Type.Object({
  ...LineForm.properties,
  qty: Type.Integer({ minimum: 0, description: 'units (clamped to max_qty); 0 removes the line' }),
});
type ClearForm = Static<typeof ClearForm>;
const ClearForm = Type.Object({ cart_id: CartIdOrOwn, next: Next });
type NextForm = Static<typeof NextForm>;
const NextForm = Type.Object({ next: Next });
type CheckoutForm = Static<typeof CheckoutForm>;
const CheckoutForm = Type.Object({ ...PayFields, cart_id: CartIdOrOwn });
type CartQuery = Static<typeof CartQuery>;
const CartQuery = Type.Object({
  added: Type.Optional(Type.Integer({ minimum: 0 })),
  skipped: Type.Optional(Type.Integer({ minimum: 0 })),
});

const WORDS = {
  qty: 'qty is a whole number (at least 1 to add, 0 removes)',
  item_id: 'which line? (item_id)',
  market: 'choose a market',
  offer_key: 'enter a deal key (offer_key)',
};

type Refreshed = { remapped: number; still_stale: number };

/** A form post of the cart: its one effect (`run`, a turn or a few) and its answer, fresh or replayed (`reply`). */
type CartPost<B, R> = Omit<HolderForm<B, R>, 'words'>;

export function webCartPageRoutes(s: Services): Route[] {
  return [...cartReadRoutes(s), ...cartFormRoutes(s)];
}

/** The carts page and the upload's CSV template. */
function cartReadRoutes(s: Services): Route[] {
  return [
    route<unknown, CartQuery>({
      method: 'GET',
      path: '/cart',
      auth: 'holder',
      summary: "Your carts: your own and your agents', with their lines and totals",
      query: CartQuery,
      response: { 200: htmlPage("the holder's carts") },
      handler: (c) => showCarts(s, c),
    }),

    route({
      method: 'GET',
      path: '/cart/template.csv',
      auth: 'none',
      summary: 'The CSV template of POST /cart/upload: market,offer_key,qty,note',
      response: { 200: media('text/csv; charset=utf-8', 'the header and a sample row') },
      handler: () => getCartTemplate(s),
    }),
  ];
}

/** The forms that change carts: a refused one shows the carts page again with the problem. */
function cartFormRoutes(s: Services): Route[] {
  const cartPost = <B, R>(d: CartPost<B, R>): Route =>
    holderFormRoute({ ...d, words: WORDS }, (holder, p) => cartPage(s, holder, p));

  return [
    cartPost<AddForm, LineAdded>({
      path: '/cart/add',
      summary: 'Add a deal of the current menu to your own cart',
      body: AddForm,
      answer: CartLineForm,
      run: (holder, c) => addCartLine(s, holder, c),
      reply: (req, a, body) =>
        formReply(req, body.next, { cart_id: a.cart_id, item_id: a.item_id, qty: a.qty }),
    }),

    cartPost<UpdateForm, LineChanged>({
      path: '/cart/update',
      summary: "Change a line's qty (0 removes it), while not ordered",
      body: UpdateForm,
      answer: CartLineForm,
      run: (holder, c) => updateCartLine(s, holder, c),
      reply: lineReply,
    }),

    cartPost<LineForm, LineChanged>({
      path: '/cart/remove',
      summary: 'Remove a line, while not ordered',
      body: LineForm,
      answer: CartLineForm,
      run: (holder, c) => removeCartLine(s, holder, c),
      reply: lineReply,
    }),

    cartPost<ClearForm, Cleared>({
      path: '/cart/clear',
      summary: 'Remove every line not yet ordered from a cart (empty cart_id: your own)',
      body: ClearForm,
      answer: CartClearedForm,
      run: (holder, c) => clearCart(s, holder, c),
      reply: (req, c, body) =>
        formReply(req, body.next, { cart_id: c.cart_id, removed: c.removed }),
    }),

    cartPost<NextForm, Refreshed>({
      path: '/cart/refresh',
      summary:
        'Move the stale lines of every cart of yours to the closest deal of their family on the current menu',
      body: NextForm,
      answer: CartRefreshedForm,
      run: (holder) => refreshCarts(s, holder),
      reply: (req, r, body) => formReply(req, body.next, r),
    }),

    cartPost<CheckoutForm, CheckedOut>({
      path: '/cart/checkout',
      summary: "Pay a cart's lines (empty cart_id: your own cart) by card or from balances",
      body: CheckoutForm,
      answer: CartPaidForm,
      run: (holder, c) => checkOutCart(s, holder, c),
      reply: (req, paid) => checkoutReply(s, req, paid),
    }),

    cartPost<unknown, LinesAdded>({
      path: '/cart/upload',
      summary:
        'Add the rows of a CSV (multipart field file; columns market,offer_key,qty,note) to your own cart',
      answer: CartUploadForm,
      run: (holder, c) => uploadCart(s, holder, c),
      reply: (req, u) => formReply(req, `/cart?added=${u.added}&skipped=${u.skipped.length}`, u),
    }),
  ];
}

const now = (s: Services) => s.clock.realNow();
const caller = (h: HolderPrincipal): Caller => ({ kind: 'holder', holderId: h.holderId });
const ask = <K extends CartMessage['kind']>(
  s: Services,
  cartId: number,
  msg: CartMessage & { kind: K },
  idem?: IdemTicket,
) => s.runtime.ask<CartMessage, CartReplies, K>(cartRef(cartId), msg, { idem });

/** The holder's carts with their lines, their own first. */
async function cartsOf(s: Services, holder: HolderPrincipal): Promise<CartDetail[]> {
  const base = s.config.baseUrl;
  const at = now(s);
  const entries = await read(s.runtime, 'cart.list', { caller: caller(holder), baseUrl: base, at });
  const details = await Promise.all(
    entries
      .slice(0, PAGE_CARTS)
      .map((e) =>
        read(s.runtime, 'cart.detail', { caller: caller(holder), cartId: e.id, baseUrl: base, at }),
      ),
  );
  return details
    .filter((c): c is CartDetail => c !== null)
    .sort((a, b) => Number(b.owner.kind === 'holder') - Number(a.owner.kind === 'holder'));
}

async function cartPage(
  s: Services,
  holder: HolderPrincipal,
  p?: Problem,
  upload?: CartQuery,
): Promise<Reply> {
  const [carts, cards] = await Promise.all([
    cartsOf(s, holder),
    read(s.runtime, 'holder.cards', { holderId: holder.holderId }),
  ]);
  const at = now(s);
  return renderPage(
    'carts',
    {
      title: 'Your carts',
      holder,
      error: p?.message,
      carts: carts.map((c) => ({
        ...cartSummary(c),
        owner_name: c.owner.kind === 'agent' ? c.owner.name : 'you',
        mine: true,
        lines: linesView(c, at, true, '/cart'),
      })),
      has_carts: carts.length > 0,
      markets: MARKET_IDS,
      cards: cardOptions(cards),
      has_cards: cards.length > 0,
      uploaded:
        upload?.added !== undefined
          ? { added: upload.added, skipped: upload.skipped ?? 0 }
          : undefined,
      scripts: ['/static/countdown.js'],
    },
    p?.status ?? 200,
  );
}

const ownCart = (s: Services, holder: HolderPrincipal) =>
  read(s.runtime, 'cart.holderCart', { holderId: holder.holderId });
const cartIdOr = async (s: Services, holder: HolderPrincipal, cartId: number | null) =>
  cartId ?? (await ownCart(s, holder)).id;

/** The cart a line is in, among the holder's (the form's hint first: the actor checks it). */
async function cartOfItem(
  s: Services,
  holder: HolderPrincipal,
  itemId: number,
  hint: number | null,
): Promise<number> {
  if (hint !== null) return hint;
  const cart = (await cartsOf(s, holder)).find((c) => c.items.some((l) => l.id === itemId));
  if (!cart) throw new HttpError(404, `no line ${itemId} in your carts`);
  return cart.id;
}

function lineReply(req: RequestInfo, c: LineChanged, body: { next: string }): Reply {
  return formReply(req, body.next, {
    cart_id: c.cart_id,
    item_id: c.removed ? null : c.item_id,
    qty: c.qty,
  });
}

async function showCarts(
  s: Services,
  { principal, query }: HolderContext<unknown, CartQuery>,
): Promise<Reply> {
  return cartPage(s, principal, undefined, query);
}

function getCartTemplate(s: Services): Reply {
  const d = sampleDeal(menuSnapshots(s), 'm15');
  return {
    body: templateCsv(d && { market: 'm15', key: d.key }),
    contentType: 'text/csv; charset=utf-8',
    headers: { 'content-disposition': 'attachment; filename="cart-template.csv"' },
  };
}

async function addCartLine(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, AddForm>,
): Promise<LineAdded> {
  const line = currentLine(s, menuSnapshots(s), body);
  await recordOpen(s, line);
  return ask(
    s,
    (await ownCart(s, holder)).id,
    { kind: 'add', caller: caller(holder), line, at: now(s) },
    idem,
  );
}

async function updateCartLine(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, UpdateForm>,
): Promise<LineChanged> {
  return ask(
    s,
    await cartOfItem(s, holder, body.item_id, body.cart_id),
    { kind: 'setQty', caller: caller(holder), itemId: body.item_id, qty: body.qty, at: now(s) },
    idem,
  );
}

async function removeCartLine(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, LineForm>,
): Promise<LineChanged> {
  return ask(
    s,
    await cartOfItem(s, holder, body.item_id, body.cart_id),
    { kind: 'remove', caller: caller(holder), itemId: body.item_id, at: now(s) },
    idem,
  );
}

async function clearCart(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, ClearForm>,
): Promise<Cleared> {
  return ask(
    s,
    await cartIdOr(s, holder, body.cart_id),
    { kind: 'clear', caller: caller(holder), at: now(s) },
    idem,
  );
}

/** One turn per cart with stale lines, without the key: a repeat finds nothing stale left to move, so it is safe as it is. */
async function refreshCarts(s: Services, holder: HolderPrincipal): Promise<Refreshed> {
  const stale = (
    await read(s.runtime, 'cart.list', {
      caller: caller(holder),
      baseUrl: s.config.baseUrl,
      at: now(s),
    })
  ).filter((c) => c.stale_items > 0);
  const done = await Promise.all(
    stale.map((c) =>
      ask(s, c.id, {
        kind: 'refresh',
        caller: caller(holder),
        at: now(s),
        menus: currentSessions(menuSnapshots(s)),
      }),
    ),
  );
  return {
    remapped: done.reduce((n, r) => n + r.remapped.length, 0),
    still_stale: done.reduce((n, r) => n + r.still_stale.length, 0),
  };
}

async function checkOutCart(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, CheckoutForm>,
): Promise<CheckedOut> {
  const payment = paymentOf(body, new Date(now(s) * 1000));
  return ask(
    s,
    await cartIdOr(s, holder, body.cart_id),
    { kind: 'checkout', caller: caller(holder), payment, at: now(s), baseUrl: s.config.baseUrl },
    idem,
  );
}

/** A trade cart's orders are followed on the console, which says what was paid; own goods are on /cart. */
function checkoutReply(s: Services, req: RequestInfo, paid: CheckedOut): Reply {
  return paid.kind === 'own'
    ? formReply(req, '/cart', paidPayload(paid))
    : consoleReply(
        req,
        '/console/orders',
        paidPayload(paid),
        {
          kind: 'cart_paid',
          orders: paid.orders.length,
          charged_cents: numberToCents(paid.charged),
          fee_cents: numberToCents(paid.fee),
        },
        s.config.baseUrl,
      );
}

/**
 * Rows are checked against the current menu here; the cart's actor adds them in one turn that
 * stores the answer under the Idempotency-Key: a retried upload is answered, never added twice.
 */
async function uploadCart(
  s: Services,
  holder: HolderPrincipal,
  { req, bytes, idem }: Context<unknown, unknown, unknown>,
): Promise<LinesAdded> {
  const rows = csvRows(await uploadedFile(bytes, req.headers['content-type'] ?? ''));
  const cartId = (await ownCart(s, holder)).id;
  const { lines, skipped } = menuLines(s, rows);
  for (const { line } of lines) await recordOpen(s, line);
  return ask(
    s,
    cartId,
    { kind: 'addMany', caller: caller(holder), lines, skipped, at: now(s) },
    idem,
  );
}

/** The CSV's rows as lines of the current menu, and the rows refused with why. */
function menuLines(
  s: Services,
  rows: ReturnType<typeof csvRows>,
): { lines: { row: number; line: NewLine }[]; skipped: { row: number; detail: string }[] } {
  const skipped: { row: number; detail: string }[] = [];
  const lines: { row: number; line: NewLine }[] = [];
  for (const r of rows) {
    try {
      const want = rowRequest(r);
      if (typeof want === 'string') throw new HttpError(400, want);
      lines.push({ row: r.row, line: currentLine(s, menuSnapshots(s), want) });
    } catch (err) {
      // A row refused (unknown market or deal, a bad qty) is reported; anything else fails the upload.
      const p = problemOf(err);
      if (!p) throw err;
      skipped.push({ row: r.row, detail: p.message });
    }
  }
  return { lines, skipped };
}
