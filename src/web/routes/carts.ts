// A cart's link (SPEC.md "Web routes": GET /carts/{token}, POST .../pay; CONTRACT.md "Carts": POST
// .../kind; GET /link/{token}, the older pairing link). The holder sees who proposes (the agent's
// declared identity) and what (each line with note, price, fee, stale mark and the countdown to its
// close, and what each open line bets on: src/web/deal-facts.ts), and approves by paying, logged in or signing in on the pay form itself. Opening the link
// logged in, or signing in on it, connects the cart and its agent (a turn of the cart actor).
import Type, { type Static } from 'typebox';
import {
  cartRef,
  type CartByToken,
  type CheckedOut,
  type KindSet,
} from '../../../actors/cart/messages.js';
import type { HolderSession } from '../../../actors/holder/messages.js';
import { ActorError, read } from '../../../actors/runtime/client.js';
import {
  holderOf,
  sessionCookie,
  type HolderPrincipal,
} from '../../http/authenticators/holder-session.js';
import { cartSummary, linesView, paidPayload } from '../cart-view.js';
import { cartFacts, cartRiskFirst, payableLines } from '../deal-facts.js';
import {
  DoneCardFields,
  cardOf,
  cartConfirmationView,
  cartDonePath,
  paidByBalance,
  paidCardView,
} from '../checkout-view.js';
import { numberToCents } from '../../engine/index.js';
import { renderPage } from '../pages.js';
import { PayFields, cardOptions, paymentOf } from '../pay-form.js';
import {
  HttpError,
  htmlPage,
  route,
  type HolderContext,
  type PublicContext,
  type RawInput,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import { CartKindForm, CartPaidForm } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { WORDS, signIn, signInInline } from '../sign-in.js';
import { TokenParams, identityView, utc } from '../link-view.js';
import { field, formReply, invalidForm, usd, webAction, type Problem } from '../answers.js';

const CartPayForm = Type.Object({
  auth: Type.Union([Type.Literal('session'), Type.Literal('login'), Type.Literal('register')], {
    default: 'session',
    description: 'session (logged in already), or log in or register with the fields below',
  }),
  email: Type.String({ maxLength: 254, default: '' }),
  password: Type.String({ maxLength: 1024, default: '' }),
  password2: Type.String({ maxLength: 1024, default: '' }),
  display_name: Type.String({ maxLength: 120, default: '' }),
  ...PayFields,
});
type CartPayForm = Static<typeof CartPayForm>;

const CartDoneQuery = Type.Object({
  orders: Type.String({
    pattern: '^[0-9]{1,12}(,[0-9]{1,12}){0,99}$',
    description: 'the orders the checkout placed',
  }),
  ...DoneCardFields,
  fee: Type.Optional(
    Type.Literal('1', { description: "the checkout carried the month's participation fee" }),
  ),
});
type CartDoneQuery = Static<typeof CartDoneQuery>;

type KindForm = Static<typeof KindForm>;
const KindForm = Type.Object({
  kind: Type.Union([Type.Literal('trade'), Type.Literal('own')], {
    description: 'trade (orders) or own (buy the goods outright)',
  }),
});

type Found = NonNullable<CartByToken>;

export function webCartRoutes(s: Services): Route[] {
  return [
    route<{ token: string }, CartDoneQuery>({
      method: 'GET',
      path: '/carts/{token}/done',
      auth: 'holder',
      summary:
        'The confirmation after paying a cart: its orders, what was charged, what happens next and when',
      params: TokenParams,
      query: CartDoneQuery,
      response: { 200: htmlPage("the confirmation of the cart's payment") },
      responses: { 303: { description: 'nothing of this cart paid: back to the cart' } },
      handler: (c) => showCartDone(s, c),
    }),
    cartLinkRoute(
      s,
      '/carts/{token}',
      "A cart's link: review the lines and who proposes them, and pay; connects the cart to the logged-in holder",
    ),
    cartLinkRoute(
      s,
      '/link/{token}',
      'The older pairing link of a cart: connects the agent like the cart link and shows its cart',
    ),

    route<{ token: string }, unknown, CartPayForm>({
      method: 'POST',
      path: '/carts/{token}/pay',
      auth: 'none',
      summary: "Pay a cart's lines by card or from balances, logged in or signing in on the form",
      params: TokenParams,
      body: CartPayForm,
      response: { 200: CartPaidForm },
      responses: {
        303: { description: 'browsers: sent on to the orders (trade cart) or the cart (own cart)' },
      },
      onInvalid: invalidForm(WORDS, (req, p, raw) => payFormAgain(s, req, p, raw)),
      handler: (c) => submitCartPayment(s, c),
      replay: (paid: CheckedOut, c) => replayCartPayment(s, paid, c),
    }),

    route<{ token: string }, unknown, KindForm>({
      method: 'POST',
      path: '/carts/{token}/kind',
      auth: 'holder',
      summary: 'Ask for another kind on an unpaid cart: trade (orders) or own (buy outright)',
      params: TokenParams,
      body: KindForm,
      response: { 200: CartKindForm },
      responses: { 303: { description: 'browsers: back to the cart' } },
      onInvalid: invalidForm<HolderPrincipal>(
        { kind: 'choose trade or own' },
        (req, p, raw, holder) => pageOrMessage(s, req, raw.params.token, holder, p),
      ),
      handler: (c) => setCartKind(s, c),
      replay: (set: KindSet, { req, params }) => kindReply(req, params.token, set),
    }),
  ];
}

/** GET of a link: the cart page (both links show it; opening either logged in connects). */
function cartLinkRoute(s: Services, path: string, summary: string): Route {
  return route<{ token: string }>({
    method: 'GET',
    path,
    auth: 'none',
    summary,
    params: TokenParams,
    response: { 200: htmlPage("the cart, its agent's declared identity, and the payment form") },
    handler: (c) => showCart(s, c),
  });
}

async function showCart(
  s: Services,
  { req, params }: PublicContext<{ token: string }>,
): Promise<Reply> {
  return pageOrMessage(s, req, params.token, await holderOf(s, req));
}

async function showCartDone(
  s: Services,
  { req, params, query, principal }: HolderContext<{ token: string }, CartDoneQuery>,
): Promise<Reply> {
  return webAction(
    req,
    () => donePage(s, params.token, principal, query),
    (q) =>
      renderPage(
        'message',
        {
          title: 'Cart not found',
          heading: 'Cart not found',
          message: q.message,
          is_error: true,
          holder: principal,
        },
        q.status,
      ),
  );
}

/** A pay form that fails validation: the page again, with what was typed. */
async function payFormAgain(
  s: Services,
  req: RequestInfo,
  p: Problem,
  raw: RawInput,
): Promise<Reply> {
  return pageOrMessage(s, req, raw.params.token, await holderOf(s, req), p, {
    email: field(raw.body, 'email'),
    auth: field(raw.body, 'auth') === 'login' ? 'login' : undefined,
  });
}

async function submitCartPayment(
  s: Services,
  { req, params, body, idem }: PublicContext<{ token: string }, unknown, CartPayForm>,
): Promise<Reply> {
  let signedIn: HolderSession | undefined;
  return webAction(
    req,
    async () => {
      const now = new Date(s.clock.realNow() * 1000);
      // The method and card first: crypto, or a declined or mistyped card, registers nobody and charges nothing.
      const payment = paymentOf(body, now);
      const { holder, session } = await payer(s, req, body);
      signedIn = session;
      const { found } = await openCart(s, params.token, holder);
      const paid = await s.runtime.ask(
        cartRef(found.cart.id),
        {
          kind: 'checkout',
          caller: { kind: 'holder', holderId: holder.holderId },
          payment,
          at: s.clock.realNow(),
          baseUrl: s.config.baseUrl,
        },
        { idem },
      );
      return paidReply(s, req, params.token, paid, session, body);
    },
    async (p) => {
      // Signed in on the form but not paid: the page again, logged in from now on.
      const holder = signedIn
        ? {
            holderId: signedIn.holder_id,
            email: signedIn.email,
            displayName: signedIn.display_name,
          }
        : await holderOf(s, req);
      const reply = await pageOrMessage(s, req, params.token, holder, p, body);
      return signedIn
        ? {
            ...reply,
            headers: { ...reply.headers, 'set-cookie': sessionCookie(s, signedIn.token) },
          }
        : reply;
    },
  );
}

/** A stored payment is answered again; signing in on the form signs in again (same body, same password). */
async function replayCartPayment(
  s: Services,
  paid: CheckedOut,
  { req, params, body }: PublicContext<{ token: string }, unknown, CartPayForm>,
): Promise<Reply> {
  return paidReply(
    s,
    req,
    params.token,
    paid,
    body.auth === 'session' ? undefined : await signIn(s, req, 'login', body),
    body,
  );
}

async function setCartKind(
  s: Services,
  {
    req,
    params,
    body,
    principal: holder,
    idem,
  }: HolderContext<{ token: string }, unknown, KindForm>,
): Promise<Reply> {
  return webAction(
    req,
    async () => {
      const { found } = await openCart(s, params.token, holder);
      const set = await s.runtime.ask(
        cartRef(found.cart.id),
        { kind: 'setKind', holderId: holder.holderId, cartKind: body.kind },
        { idem },
      );
      return kindReply(req, params.token, set);
    },
    (p) => pageOrMessage(s, req, params.token, holder, p),
  );
}

async function findCart(
  s: Services,
  token: string,
  holder: HolderPrincipal | null,
): Promise<Found> {
  const found = await read(s.runtime, 'cart.byToken', {
    token,
    holderId: holder?.holderId ?? null,
    baseUrl: s.config.baseUrl,
    at: s.clock.realNow(),
  });
  if (!found)
    throw new HttpError(404, 'no cart has this link: check the address the agent gave you');
  return found;
}

/**
 * The cart, connected first when a logged-in holder opens it and nobody holds it yet (SPEC.md
 * "Cart connection"): read again then, as its lines and permissions are the holder's now.
 */
async function openCart(
  s: Services,
  token: string,
  holder: HolderPrincipal | null,
): Promise<{ found: Found; connectedNow: boolean }> {
  const found = await findCart(s, token, holder);
  if (!holder || found.holder_id !== null) return { found, connectedNow: false };
  const opened = await s.runtime.ask(cartRef(found.cart.id), {
    kind: 'open',
    holderId: holder.holderId,
    at: s.clock.realNow(),
  });
  return {
    found: opened.connected ? await findCart(s, token, holder) : found,
    connectedNow: opened.connected_now,
  };
}

/** The pay form's holder-specific part: stored cards, the monthly fee and the one total (holder_pays, src/payments/fee.ts). */
async function payView(s: Services, holder: HolderPrincipal, total: number) {
  const [cards, { fee, pays }] = await Promise.all([
    read(s.runtime, 'holder.cards', { holderId: holder.holderId }),
    read(s.runtime, 'account.payNow', {
      holderId: holder.holderId,
      at: s.clock.realNow(),
      goodsCents: numberToCents(total),
    }),
  ]);
  return {
    cards: cardOptions(cards),
    has_cards: cards.length > 0,
    fee_due: fee.due,
    fee_amount_month: usd(fee.amount),
    fee_month: fee.month,
    pay_total: usd(pays.total),
    pay_amount: pays.total,
  };
}

/** The agent's orders (POST /orders) still waiting for a payment in an open session: each has its own purchase link. */
async function waitingOrders(s: Services, accountId: number) {
  const now = s.clock.realNow();
  const rows = await read(s.runtime, 'account.orders', {
    accountIds: [accountId],
    status: 'awaiting_payment',
    limit: 100,
    baseUrl: s.config.baseUrl,
  });
  return rows
    .filter((o) => o.closes_at > now && o.purchase_url)
    .map((o) => ({
      deal_title: o.deal_title,
      market: o.market,
      tick: o.tick,
      qty: o.qty,
      total: usd(o.total_amount),
      closes: utc(o.closes_at),
      pay_path: new URL(o.purchase_url!).pathname,
    }));
}

async function page(
  s: Services,
  token: string,
  holder: HolderPrincipal | null,
  p?: Problem,
  typed?: Partial<CartPayForm>,
): Promise<Reply> {
  const { found, connectedNow } = await openCart(s, token, holder);
  const { cart, agent } = found;
  const mine = !!holder && found.holder_id === holder.holderId;
  const otherHolder = !!holder && found.holder_id !== null && !mine;
  const here = `/carts/${token}`;
  const canPay = cart.open_items > 0 && !otherHolder;
  const [orders, facts] = await Promise.all([
    mine && agent ? waitingOrders(s, agent.account_id) : [],
    cartFacts(s, cart),
  ]);
  const pay =
    canPay && holder
      ? await payView(s, holder, cart.total)
      : { pay_total: usd(cart.total), pay_amount: cart.total };
  // The risk before the pay button (a trade cart: its orders can lose what they cost).
  const riskFirst =
    canPay && cart.kind === 'trade'
      ? cartRiskFirst(
          pay.pay_amount,
          payableLines(cart),
          facts.facts.flatMap((f) => ('outcome' in f && f.outcome ? [f.outcome] : [])),
        )
      : null;
  return renderPage(
    'cart',
    {
      title: agent ? `${agent.name}'s cart` : cart.name,
      holder,
      error: p?.message,
      token,
      here,
      here_q: encodeURIComponent(here),
      ...cartSummary(cart),
      ...(agent ? { agent: true, ...identityView(agent) } : {}),
      lines: linesView(cart, s.clock.realNow(), mine, here),
      ...facts,
      connected_now: connectedNow,
      other_holder: otherHolder,
      mine,
      orders,
      has_orders: orders.length > 0,
      can_switch_kind: mine && !found.paid,
      can_pay: canPay,
      one_line: cart.open_items === 1,
      form_email: typed?.email ?? '',
      login_chosen: typed?.auth === 'login',
      ...pay,
      risk_first: riskFirst,
      scripts: ['/static/countdown.js', '/static/card-input.js'],
    },
    p?.status ?? 200,
  );
}

/** The page, or for an unknown link a message page (`{detail}` for JSON clients). */
async function pageOrMessage(
  s: Services,
  req: RequestInfo,
  token: string,
  holder: HolderPrincipal | null,
  p?: Problem,
  typed?: Partial<CartPayForm>,
): Promise<Reply> {
  return webAction(
    req,
    () => page(s, token, holder, p, typed),
    (q) =>
      renderPage(
        'message',
        {
          title: 'Cart not found',
          heading: 'Cart not found',
          message: q.message,
          is_error: true,
          holder,
        },
        q.status,
      ),
  );
}

/**
 * The holder who pays: the session's, or one signing in on the form. An inline registration whose
 * e-mail is taken logs in with the same password instead, so a retry after a refused payment does
 * not fail on the account its first attempt opened.
 */
async function payer(
  s: Services,
  req: RequestInfo,
  body: CartPayForm,
): Promise<{ holder: HolderPrincipal; session?: HolderSession }> {
  if (body.auth === 'session') {
    const holder = await holderOf(s, req);
    if (!holder)
      throw new HttpError(
        401,
        'log in first, or choose auth=login or auth=register with your e-mail and password',
      );
    return { holder };
  }
  let session: HolderSession;
  try {
    session = await signInInline(s, req, body.auth, body);
  } catch (err) {
    if (body.auth !== 'register' || !(err instanceof ActorError) || err.status !== 409) throw err;
    session = await signIn(s, req, 'login', body).catch(() => Promise.reject(err));
  }
  return {
    holder: {
      holderId: session.holder_id,
      email: session.email,
      displayName: session.display_name,
    },
    session,
  };
}

/** Browsers go on to the confirmation of a trade cart's orders (an own cart's page says the goods are in the inventory); JSON clients get the checkout. */
function paidReply(
  s: Services,
  req: RequestInfo,
  token: string,
  paid: CheckedOut,
  session?: HolderSession,
  body?: CartPayForm,
): Reply {
  return formReply(
    req,
    paid.kind === 'own' || paid.orders.length === 0
      ? `/carts/${token}`
      : cartDonePath(
          token,
          paid.orders.map((o) => o.id),
          cardOf(body),
          paid.fee > 0,
        ),
    paidPayload(paid),
    session ? { 'set-cookie': sessionCookie(s, session.token) } : {},
  );
}

/** The confirmation of a paid trade cart: its orders named by the redirect, for the holder the cart is connected to. */
async function donePage(
  s: Services,
  token: string,
  holder: HolderPrincipal,
  q: CartDoneQuery,
): Promise<Reply> {
  const found = await findCart(s, token, holder);
  if (found.holder_id !== holder.holderId)
    throw new HttpError(404, 'no cart of yours has this link');
  const named = new Set(q.orders.split(',').map(Number));
  const ofCart = new Set(
    found.cart.items
      .map((l) => l.order_id)
      .filter((id): id is number => id !== null && named.has(id)),
  );
  if (ofCart.size === 0)
    return { status: 303, headers: { location: `/carts/${encodeURIComponent(token)}` } };
  const [rows, ledger, cards] = await Promise.all([
    read(s.runtime, 'account.orders', {
      holderId: holder.holderId,
      limit: 100,
      baseUrl: s.config.baseUrl,
    }),
    q.fee
      ? read(s.runtime, 'account.ledger', { holderId: holder.holderId, limit: 100 })
      : Promise.resolve([]),
    q.card_id === undefined && q.card === undefined
      ? Promise.resolve([])
      : read(s.runtime, 'holder.cards', { holderId: holder.holderId }),
  ]);
  const orders = rows.filter(
    (o) => ofCart.has(o.id) && (o.status === 'paid' || o.status === 'filled'),
  );
  const card = paidCardView(paidByBalance(orders) ? {} : q, cards);
  // The fee the redirect says this checkout carried, as the ledger booked it under the cart's ref.
  const fee = ledger.find((e) => e.kind === 'monthly_fee' && e.ref === `cart:${found.cart.id}`);
  const feeCents = fee ? -Math.round(fee.amount * 100) : 0;
  return renderPage('cart-done', {
    title: `${found.agent ? `${found.agent.name}'s cart` : found.cart.name} is paid`,
    holder,
    token,
    cart_name: found.agent ? `${found.agent.name}'s cart` : found.cart.name,
    ...cartConfirmationView(orders, feeCents, card.card, s.clock),
    ...card,
    scripts: [],
  });
}

function kindReply(req: RequestInfo, token: string, set: KindSet): Reply {
  return formReply(req, `/carts/${token}`, { cart_id: set.cart_id, kind: set.kind });
}
