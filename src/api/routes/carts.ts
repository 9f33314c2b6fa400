// An agent's carts (SPEC.md "Carts (key required)"): it proposes deals of the current menu as cart
// lines, hands the checkout_url to its holder, and may check a cart out itself only under
// autonomous funding with an execute grant (or its own cart from its own balance). Every change is
// a turn of the cart's actor ("cart:<id>"), which decides the caller's rights (actors/cart/permissions.ts).
import Type, { type Static } from 'typebox';
import { agentRef, type CartMade } from '../../../actors/agent/messages.js';
import { cartRef, type Caller, type LineAdded } from '../../../actors/cart/messages.js';
import { read } from '../../../actors/runtime/client.js';
import type { AgentPrincipal } from '../../http/authenticators/agent-key.js';
import {
  HttpError,
  json,
  route,
  type AgentContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import {
  CartCheckout,
  CartCheckoutAnswer,
  CartCreate,
  CartCreatedAnswer,
  CartDetail,
  CartItemCreate,
  CartItemUpdate,
  CartLinkAnswer,
  CartsAnswer,
  DefaultCartAnswer,
  LineAddedAnswer,
  LineChangedAnswer,
  rowId,
  FundingRefused,
} from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { menuSnapshots, recordOpen } from '../../market-data/live-session.js';
import { currentLine } from '../cart-line.js';

const CartParams = Type.Object({ cart_id: rowId('cart id') });
type CartParams = Static<typeof CartParams>;
const ItemParams = Type.Object({ item_id: rowId('cart line id') });
type ItemParams = Static<typeof ItemParams>;
const CartItemParams = Type.Object({ cart_id: rowId('cart id'), item_id: rowId('cart line id') });
type CartItemParams = Static<typeof CartItemParams>;
const SinceQuery = Type.Object({
  since: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 1e11,
      description: 'unix seconds (0..1e11): only carts created, connected or changed after it',
    }),
  ),
});
type SinceQuery = Static<typeof SinceQuery>;

const agentOf = (principal: AgentPrincipal): Caller => ({
  kind: 'agent',
  agentId: principal.agentId,
});
/** Which cart a line route adds to: the default cart, or the one its path names. */
type CartOf = (ctx: { params: any; principal: AgentPrincipal }) => Promise<number>;

/** The cart routes, in the order OpenAPI, the MCP tools and the docs list them. */
export function cartRoutes(s: Services): Route[] {
  return [
    ...defaultCartRoutes(s),
    ...cartCollectionRoutes(s),
    ...cartLineRoutes(s),
    ...cartCheckoutRoutes(s),
  ];
}

/** The route that proposes a line of the cart `cartOf` names, at `path`. */
function addLineRoute(s: Services, path: string, operationId: string, cartOf: CartOf): Route {
  return route<any, unknown, CartItemCreate>({
    method: 'POST',
    path,
    operationId,
    auth: 'key',
    summary: 'Propose a deal of the current menu as a cart line (qty clamped to max_qty)',
    params: path.includes('{cart_id}') ? CartParams : undefined,
    body: CartItemCreate,
    response: { 201: LineAddedAnswer },
    responses: {
      403: { description: 'the cart is not yours and you have no write grant' },
      404: { description: 'unknown market, deal not on the current menu, or no such cart' },
    },
    handler: (c) => addCartLine(s, cartOf, c),
    replay: (r: LineAdded) => added(s, r),
  });
}

/** /cart: the agent's default cart, its lines and its links. */
function defaultCartRoutes(s: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/v1/cart',
      operationId: 'get_default_cart',
      auth: 'key',
      summary:
        'My default cart: its lines with their status, its checkout_url, and the other carts I see',
      response: { 200: DefaultCartAnswer },
      handler: (c) => getDefaultCart(s, c),
    }),
    addLineRoute(
      s,
      '/api/v1/cart/items',
      'add_cart_item',
      async ({ principal }) => (await defaultCart(s, principal)).id,
    ),
    route<ItemParams>({
      method: 'DELETE',
      path: '/api/v1/cart/items/{item_id}',
      operationId: 'remove_cart_item',
      auth: 'key',
      summary: 'Withdraw a line of my default cart (only while not ordered)',
      params: ItemParams,
      response: { 200: LineChangedAnswer },
      responses: {
        404: { description: 'no such line in my default cart' },
        409: { description: 'the line is ordered already' },
      },
      handler: (c) => removeCartItem(s, c),
    }),
    route({
      method: 'POST',
      path: '/api/v1/cart/link',
      operationId: 'create_cart_link',
      auth: 'key',
      summary: 'The links of my default cart to hand to a holder',
      response: { 201: CartLinkAnswer },
      handler: (c) => createCartLink(s, c),
    }),
  ];
}

/** /carts and /carts/{cart_id}: every cart the agent sees, a new one, one with its lines. */
function cartCollectionRoutes(s: Services): Route[] {
  return [
    route<unknown, SinceQuery>({
      method: 'GET',
      path: '/api/v1/carts',
      operationId: 'list_carts',
      auth: 'key',
      summary: "Every cart I can see: mine, and once connected my holder's and its other agents'",
      query: SinceQuery,
      response: { 200: CartsAnswer },
      handler: (c) => listCarts(s, c),
    }),
    route<unknown, unknown, CartCreate>({
      method: 'POST',
      path: '/api/v1/carts',
      operationId: 'create_cart',
      auth: 'key',
      summary: 'Another cart of my own',
      body: CartCreate,
      response: { 201: CartCreatedAnswer },
      responses: { 409: { description: 'the most carts an agent may have' } },
      handler: (c) => createCart(s, c),
      replay: (r: CartMade) => made(s, r),
    }),
    route<CartParams>({
      method: 'GET',
      path: '/api/v1/carts/{cart_id}',
      operationId: 'get_cart',
      auth: 'key',
      summary: 'One cart with its lines and my permissions',
      params: CartParams,
      response: { 200: CartDetail },
      responses: { 404: { description: 'no cart I can see' } },
      handler: (c) => getCart(s, c),
    }),
  ];
}

/** /carts/{cart_id}/items: the line changes of a cart the path names. */
function cartLineRoutes(s: Services): Route[] {
  return [
    addLineRoute(
      s,
      '/api/v1/carts/{cart_id}/items',
      'add_item_to_cart',
      async ({ params }) => params.cart_id,
    ),
    route<CartItemParams, unknown, CartItemUpdate>({
      method: 'PUT',
      path: '/api/v1/carts/{cart_id}/items/{item_id}',
      operationId: 'update_cart_item',
      auth: 'key',
      summary: "Change a line's qty (clamped to max_qty; 0 removes it)",
      params: CartItemParams,
      body: CartItemUpdate,
      response: { 200: LineChangedAnswer },
      responses: {
        403: { description: 'no write permission' },
        404: { description: 'no such cart or line' },
        409: { description: 'the line is ordered already' },
      },
      handler: (c) => updateCartItem(s, c),
    }),
    route<CartItemParams>({
      method: 'DELETE',
      path: '/api/v1/carts/{cart_id}/items/{item_id}',
      operationId: 'remove_item_from_cart',
      auth: 'key',
      summary: 'Remove a line (only while not ordered)',
      params: CartItemParams,
      response: { 200: LineChangedAnswer },
      responses: {
        403: { description: 'no write permission' },
        404: { description: 'no such cart or line' },
        409: { description: 'the line is ordered already' },
      },
      handler: (c) => removeItemFromCart(s, c),
    }),
  ];
}

/** A named cart's checkout by the agent itself, and its checkout link. */
function cartCheckoutRoutes(s: Services): Route[] {
  return [
    route<CartParams, unknown, CartCheckout>({
      method: 'POST',
      path: '/api/v1/carts/{cart_id}/checkout',
      operationId: 'checkout_cart',
      auth: 'key',
      summary:
        'Check a cart out myself: needs autonomous funding on, then an execute grant (card or balance) or my own cart paid from my own balance',
      params: CartParams,
      body: CartCheckout,
      optionalBody: true,
      // 403: autonomous funding is off, no execute grant covers this cart and payment, or a line is over a limit.
      response: { 200: CartCheckoutAnswer, 403: FundingRefused },
      responses: {
        400: {
          description:
            "a balance does not cover the lines, or the grant's card expired (nothing charged)",
        },
        404: { description: 'no cart I can see' },
        409: {
          description:
            'nothing to pay: every line is ordered or its session closed (nothing charged)',
        },
      },
      handler: (c) => checkoutCart(s, c),
    }),
    route<CartParams>({
      method: 'POST',
      path: '/api/v1/carts/{cart_id}/link',
      operationId: 'create_link_for_cart',
      auth: 'key',
      summary: 'The checkout link of a cart I can see',
      params: CartParams,
      response: { 201: CartLinkAnswer },
      responses: { 404: { description: 'no cart I can see' } },
      handler: (c) => createLinkForCart(s, c),
    }),
  ];
}

/** Adds a deal of the current menu as a line of the cart `cartOf` names: a turn of the cart's actor. */
async function addCartLine(
  s: Services,
  cartOf: CartOf,
  ctx: AgentContext<unknown, unknown, CartItemCreate>,
): Promise<Reply> {
  const line = currentLine(s, menuSnapshots(s), ctx.body);
  await recordOpen(s, line);
  const cartId = await cartOf(ctx);
  return added(
    s,
    await s.runtime.ask(
      cartRef(cartId),
      { kind: 'add', caller: agentOf(ctx.principal), line, at: s.clock.realNow() },
      { idem: ctx.idem },
    ),
  );
}

async function getDefaultCart(s: Services, { principal }: AgentContext): Promise<Reply> {
  const at = s.clock.realNow();
  const { id } = await defaultCart(s, principal);
  const [cart, all] = await Promise.all([
    cartDetail(s, principal, id),
    read(s.runtime, 'cart.list', { caller: agentOf(principal), baseUrl: s.config.baseUrl, at }),
  ]);
  return json({
    id,
    kind: cart.kind,
    paired: cart.associated,
    checkout_url: cart.checkout_url,
    items: cart.items,
    holder_pays: cart.holder_pays,
    permissions: cart.permissions,
    other_carts: all.filter((c) => c.id !== id),
  });
}

async function removeCartItem(
  s: Services,
  { params, principal, idem }: AgentContext<ItemParams>,
): Promise<Reply> {
  const { id } = await defaultCart(s, principal);
  return json(
    await s.runtime.ask(
      cartRef(id),
      { kind: 'remove', caller: agentOf(principal), itemId: params.item_id, at: s.clock.realNow() },
      { idem },
    ),
  );
}

async function createCartLink(s: Services, { principal }: AgentContext): Promise<Reply> {
  const c = await defaultCart(s, principal);
  return json(
    {
      cart_id: c.id,
      checkout_url: checkoutUrl(s, c.token),
      pairing_url: `${s.config.baseUrl}/link/${c.token}`,
    },
    201,
  );
}

async function listCarts(
  s: Services,
  { query, principal }: AgentContext<unknown, SinceQuery>,
): Promise<Reply> {
  return json({
    carts: await read(s.runtime, 'cart.list', {
      caller: agentOf(principal),
      since: query.since,
      baseUrl: s.config.baseUrl,
      at: s.clock.realNow(),
    }),
  });
}

async function createCart(
  s: Services,
  { body, principal, idem }: AgentContext<unknown, unknown, CartCreate>,
): Promise<Reply> {
  return made(
    s,
    await s.runtime.ask(agentRef(principal.keyId), { kind: 'newCart', name: body.name }, { idem }),
  );
}

async function getCart(
  s: Services,
  { params, principal }: AgentContext<CartParams>,
): Promise<Reply> {
  return json(await cartDetail(s, principal, params.cart_id));
}

async function updateCartItem(
  s: Services,
  { params, body, principal, idem }: AgentContext<CartItemParams, unknown, CartItemUpdate>,
): Promise<Reply> {
  return json(
    await s.runtime.ask(
      cartRef(params.cart_id),
      {
        kind: 'setQty',
        caller: agentOf(principal),
        itemId: params.item_id,
        qty: body.qty,
        at: s.clock.realNow(),
      },
      { idem },
    ),
  );
}

async function removeItemFromCart(
  s: Services,
  { params, principal, idem }: AgentContext<CartItemParams>,
): Promise<Reply> {
  return json(
    await s.runtime.ask(
      cartRef(params.cart_id),
      { kind: 'remove', caller: agentOf(principal), itemId: params.item_id, at: s.clock.realNow() },
      { idem },
    ),
  );
}

async function checkoutCart(
  s: Services,
  { params, body, principal, idem }: AgentContext<CartParams, unknown, CartCheckout>,
): Promise<Reply> {
  // An empty selection names no line: said so here, not mistaken for lines whose session closed.
  if (body.item_ids?.length === 0) {
    throw new HttpError(422, [
      {
        loc: ['body', 'item_ids'],
        msg: 'no line was selected: name at least one line, or leave item_ids out to pay every current line; nothing was charged',
        type: 'too_short',
        input: [],
      },
    ]);
  }
  return json(
    await s.runtime.ask(
      cartRef(params.cart_id),
      {
        kind: 'checkout',
        caller: agentOf(principal),
        payment: { method: 'grant', payWith: body.pay_with },
        itemIds: body.item_ids,
        at: s.clock.realNow(),
        baseUrl: s.config.baseUrl,
      },
      { idem },
    ),
  );
}

async function createLinkForCart(
  s: Services,
  { params, principal }: AgentContext<CartParams>,
): Promise<Reply> {
  const c = await cartDetail(s, principal, params.cart_id);
  return json({ cart_id: c.id, checkout_url: c.checkout_url }, 201);
}

const checkoutUrl = (s: Services, token: string) => `${s.config.baseUrl}/carts/${token}`;

function defaultCart(s: Services, principal: AgentPrincipal) {
  return read(s.runtime, 'cart.agentDefault', { agentId: principal.agentId });
}

async function cartDetail(s: Services, principal: AgentPrincipal, cartId: number) {
  const c = await read(s.runtime, 'cart.detail', {
    caller: agentOf(principal),
    cartId,
    baseUrl: s.config.baseUrl,
    at: s.clock.realNow(),
  });
  if (!c) throw new HttpError(404, `no cart ${cartId} you can see`);
  return c;
}

function added(s: Services, r: LineAdded): Reply {
  return json(
    {
      item_id: r.item_id,
      cart_id: r.cart_id,
      status: r.status,
      qty: r.qty,
      clamped: r.clamped,
      paired: r.paired,
      checkout_url: checkoutUrl(s, r.checkout_url_token),
      ...(r.paired ? { other_carts: r.other_carts } : {}),
      note: r.paired
        ? 'Your holder sees this line now on the checkout_url; nothing is charged until they pay (or you check out under an execute grant).'
        : 'No account holder is connected yet: hand checkout_url to a human, who connects by opening it (logged in) or paying on it.',
    },
    201,
  );
}

function made(s: Services, r: CartMade): Reply {
  return json({ id: r.id, name: r.name, kind: r.kind, checkout_url: checkoutUrl(s, r.token) }, 201);
}
