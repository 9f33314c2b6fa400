// The holder's carts on the web (SPEC.md "Web routes": GET /cart and the /cart form posts; CONTRACT.md
// "Carts" for the CSV): their own cart and their agents' carts with lines, totals and stale marks,
// and the forms that change them. Every change is a turn of the cart's actor, which checks that the
// holder may make it: a cart or line id from a form is only ever a question to that actor.
import Type, { type Static } from 'typebox';
import { cartRef, type Caller, type CartDetail, type CartMessage, type CartReplies, type CheckedOut, type Cleared, type LineAdded, type LineChanged, type LinesAdded, type NewLine } from '../../../actors/cart/messages.js';
import { read, type IdemTicket } from '../../../actors/runtime/client.js';
import type { HolderPrincipal } from '../../http/authenticators/holder-session.js';
import { csvRows, rowRequest, templateCsv, uploadedFile } from '../../api/cart-csv.js';
import { cartSummary, currentSessions, linesView, paidPayload, sampleDeal } from '../cart-view.js';
import { renderPage } from '../pages.js';
import { PayFields, cardOptions, paymentOf } from '../pay-form.js';
import { HttpError, htmlPage, media, route, type Reply, type RequestInfo, type Route } from '../../http/route.js';
import { CartClearedForm, CartLineForm, CartPaidForm, CartRefreshedForm, CartUploadForm, rowId } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { formReply, holderFormRoute, problemOf, type HolderForm, type Problem } from '../answers.js';
import { menuSnapshots, recordOpen } from '../../market-data/live-session.js';
import { currentLine } from '../../api/cart-line.js';
import { MARKET_IDS, numberToCents } from '../../engine/index.js';
import { consoleReply } from '../console-notice.js';

/** Carts the page shows with their lines (a holder with more finds the rest through their links). */
const PAGE_CARTS = 50;

const Next = Type.String({ default: '/cart', description: 'page to go to afterwards (a path of this site)' });
const Id = rowId;
const CartIdOrOwn = Type.Union([Id('the cart'), Type.Null()], { default: null, description: 'the cart; empty: your own cart' });

const AddForm = Type.Object({
  market: Type.String({ maxLength: 16 }), offer_key: Type.String({ maxLength: 200 }),
  qty: Type.Integer({ minimum: 1, default: 1 }), note: Type.String({ maxLength: 255, default: '' }), next: Next,
});
// `cart_id` is a hint (the line's cart); the cart's actor refuses a line that is not in it.
const LineForm = Type.Object({ item_id: Id('the line'), cart_id: Type.Union([Id('the line\'s cart'), Type.Null()], { default: null }), next: Next });
const UpdateForm = Type.Object({ ...LineForm.properties, qty: Type.Integer({ minimum: 0, description: 'units (clamped to max_qty); 0 removes the line' }) });
const ClearForm = Type.Object({ cart_id: CartIdOrOwn, next: Next });
const NextForm = Type.Object({ next: Next });
const CheckoutForm = Type.Object({ ...PayFields, cart_id: CartIdOrOwn });
const CartQuery = Type.Object({ added: Type.Optional(Type.Integer({ minimum: 0 })), skipped: Type.Optional(Type.Integer({ minimum: 0 })) });


const WORDS = { qty: 'qty is a whole number (at least 1 to add, 0 removes)', item_id: 'which line? (item_id)', market: 'choose a market', offer_key: 'enter a deal key (offer_key)' };

/** A form post of the cart: its one effect (`run`, a turn or a few) and its answer, fresh or replayed (`reply`). */
type CartPost<B, R> = Omit<HolderForm<B, R>, 'words'>;

export function webCartPageRoutes(s: Services): Route[] {
  const base = s.config.baseUrl;
  const snapshots = menuSnapshots(s);
  const now = () => s.clock.realNow();
  const caller = (h: HolderPrincipal): Caller => ({ kind: 'holder', holderId: h.holderId });
  const ask = <K extends CartMessage['kind']>(cartId: number, msg: CartMessage & { kind: K }, idem?: IdemTicket) =>
    s.runtime.ask<CartMessage, CartReplies, K>(cartRef(cartId), msg, { idem });

  /** The holder's carts with their lines, their own first. */
  async function cartsOf(holder: HolderPrincipal): Promise<CartDetail[]> {
    const at = now();
    const entries = await read(s.runtime, 'cart.list', { caller: caller(holder), baseUrl: base, at });
    const details = await Promise.all(entries.slice(0, PAGE_CARTS).map((e) => read(s.runtime, 'cart.detail', { caller: caller(holder), cartId: e.id, baseUrl: base, at })));
    return details.filter((c): c is CartDetail => c !== null).sort((a, b) => Number(b.owner.kind === 'holder') - Number(a.owner.kind === 'holder'));
  }

  async function cartPage(holder: HolderPrincipal, p?: Problem, upload?: Static<typeof CartQuery>): Promise<Reply> {
    const [carts, cards] = await Promise.all([cartsOf(holder), read(s.runtime, 'holder.cards', { holderId: holder.holderId })]);
    const at = now();
    return renderPage('carts', {
      title: 'Your carts', holder, error: p?.message,
      carts: carts.map((c) => ({ ...cartSummary(c), owner_name: c.owner.kind === 'agent' ? c.owner.name : 'you', mine: true, lines: linesView(c, at, true, '/cart') })),
      has_carts: carts.length > 0, markets: MARKET_IDS, cards: cardOptions(cards), has_cards: cards.length > 0,
      uploaded: upload?.added !== undefined ? { added: upload.added, skipped: upload.skipped ?? 0 } : undefined,
      scripts: ['/static/countdown.js'],
    }, p?.status ?? 200);
  }

  const ownCart = (holder: HolderPrincipal) => read(s.runtime, 'cart.holderCart', { holderId: holder.holderId });
  const cartIdOr = async (holder: HolderPrincipal, cartId: number | null) => cartId ?? (await ownCart(holder)).id;

  /** The cart a line is in, among the holder's (the form's hint first: the actor checks it). */
  async function cartOfItem(holder: HolderPrincipal, itemId: number, hint: number | null): Promise<number> {
    if (hint !== null) return hint;
    const cart = (await cartsOf(holder)).find((c) => c.items.some((l) => l.id === itemId));
    if (!cart) throw new HttpError(404, `no line ${itemId} in your carts`);
    return cart.id;
  }

  const cartPost = <B, R>(d: CartPost<B, R>): Route => holderFormRoute({ ...d, words: WORDS }, cartPage);

  const lineReply = (req: RequestInfo, c: LineChanged, body: { next: string }) =>
    formReply(req, body.next, { cart_id: c.cart_id, item_id: c.removed ? null : c.item_id, qty: c.qty });

  return [
    route<unknown, Static<typeof CartQuery>>({
      method: 'GET', path: '/cart', auth: 'holder', summary: 'Your carts: your own and your agents\', with their lines and totals', query: CartQuery,
      response: { 200: htmlPage('the holder\'s carts') },
      handler: ({ principal, query }) => cartPage(principal, undefined, query),
    }),

    route({
      method: 'GET', path: '/cart/template.csv', auth: 'none', summary: 'The CSV template of POST /cart/upload: market,offer_key,qty,note',
      response: { 200: media('text/csv; charset=utf-8', 'the header and a sample row') },
      handler: () => {
        const d = sampleDeal(snapshots, 'm15');
        return { body: templateCsv(d && { market: 'm15', key: d.key }), contentType: 'text/csv; charset=utf-8', headers: { 'content-disposition': 'attachment; filename="cart-template.csv"' } };
      },
    }),

    cartPost<Static<typeof AddForm>, LineAdded>({
      path: '/cart/add', summary: 'Add a deal of the current menu to your own cart', body: AddForm, answer: CartLineForm,
      run: async (holder, { body, idem }) => {
        const line = currentLine(s, snapshots, body);
        await recordOpen(s, line);
        return ask((await ownCart(holder)).id, { kind: 'add', caller: caller(holder), line, at: now() }, idem);
      },
      reply: (req, a, body) => formReply(req, body.next, { cart_id: a.cart_id, item_id: a.item_id, qty: a.qty }),
    }),

    cartPost<Static<typeof UpdateForm>, LineChanged>({
      path: '/cart/update', summary: 'Change a line\'s qty (0 removes it), while not ordered', body: UpdateForm, answer: CartLineForm,
      run: async (holder, { body, idem }) =>
        ask((await cartOfItem(holder, body.item_id, body.cart_id)), { kind: 'setQty', caller: caller(holder), itemId: body.item_id, qty: body.qty, at: now() }, idem),
      reply: lineReply,
    }),

    cartPost<Static<typeof LineForm>, LineChanged>({
      path: '/cart/remove', summary: 'Remove a line, while not ordered', body: LineForm, answer: CartLineForm,
      run: async (holder, { body, idem }) =>
        ask((await cartOfItem(holder, body.item_id, body.cart_id)), { kind: 'remove', caller: caller(holder), itemId: body.item_id, at: now() }, idem),
      reply: lineReply,
    }),

    cartPost<Static<typeof ClearForm>, Cleared>({
      path: '/cart/clear', summary: 'Remove every line not yet ordered from a cart (empty cart_id: your own)', body: ClearForm, answer: CartClearedForm,
      run: async (holder, { body, idem }) => ask(await cartIdOr(holder, body.cart_id), { kind: 'clear', caller: caller(holder), at: now() }, idem),
      reply: (req, c, body) => formReply(req, body.next, { cart_id: c.cart_id, removed: c.removed }),
    }),

    cartPost<Static<typeof NextForm>, { remapped: number; still_stale: number }>({
      path: '/cart/refresh', summary: 'Move the stale lines of every cart of yours to the closest deal of their family on the current menu', body: NextForm, answer: CartRefreshedForm,
      // One turn per cart with stale lines, without the key: a repeat finds nothing stale left to move, so it is safe as it is.
      run: async (holder) => {
        const stale = (await read(s.runtime, 'cart.list', { caller: caller(holder), baseUrl: base, at: now() })).filter((c) => c.stale_items > 0);
        const done = await Promise.all(stale.map((c) => ask(c.id, { kind: 'refresh', caller: caller(holder), at: now(), menus: currentSessions(snapshots) })));
        return { remapped: done.reduce((n, r) => n + r.remapped.length, 0), still_stale: done.reduce((n, r) => n + r.still_stale.length, 0) };
      },
      reply: (req, r, body) => formReply(req, body.next, r),
    }),

    cartPost<Static<typeof CheckoutForm>, CheckedOut>({
      path: '/cart/checkout', summary: 'Pay a cart\'s lines (empty cart_id: your own cart) by card or from balances', body: CheckoutForm, answer: CartPaidForm,
      run: async (holder, { body, idem }) => {
        const payment = paymentOf(body, new Date(now() * 1000));
        return ask(await cartIdOr(holder, body.cart_id), { kind: 'checkout', caller: caller(holder), payment, at: now(), baseUrl: base }, idem);
      },
      // A trade cart's orders are followed on the console, which says what was paid; own goods are on /cart.
      reply: (req, paid) => paid.kind === 'own' ? formReply(req, '/cart', paidPayload(paid)) : consoleReply(req, '/console/orders', paidPayload(paid), {
        kind: 'cart_paid', orders: paid.orders.length, charged_cents: numberToCents(paid.charged), fee_cents: numberToCents(paid.fee),
      }, base),
    }),

    cartPost<unknown, LinesAdded>({
      path: '/cart/upload', summary: 'Add the rows of a CSV (multipart field file; columns market,offer_key,qty,note) to your own cart', answer: CartUploadForm,
      // Rows are checked against the current menu here; the cart's actor adds them in one turn that
      // stores the answer under the Idempotency-Key: a retried upload is answered, never added twice.
      run: async (holder, { req, bytes, idem }) => {
        const rows = csvRows(await uploadedFile(bytes, req.headers['content-type'] ?? ''));
        const cartId = (await ownCart(holder)).id;
        const skipped: { row: number; detail: string }[] = [];
        const lines: { row: number; line: NewLine }[] = [];
        for (const r of rows) {
          try {
            const want = rowRequest(r);
            if (typeof want === 'string') throw new HttpError(400, want);
            lines.push({ row: r.row, line: currentLine(s, snapshots, want) });
          } catch (err) {
            // A row refused (unknown market or deal, a bad qty) is reported; anything else fails the upload.
            const p = problemOf(err);
            if (!p) throw err;
            skipped.push({ row: r.row, detail: p.message });
          }
        }
        for (const { line } of lines) await recordOpen(s, line);
        return ask(cartId, { kind: 'addMany', caller: caller(holder), lines, skipped, at: now() }, idem);
      },
      reply: (req, u) => formReply(req, `/cart?added=${u.added}&skipped=${u.skipped.length}`, u),
    }),
  ];
}
