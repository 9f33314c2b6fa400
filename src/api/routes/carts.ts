// An agent's carts (SPEC.md "Carts (key required)"): it proposes deals of the current menu as cart
// lines, hands the checkout_url to its holder, and may check a cart out itself only under
// autonomous funding with an execute grant (or its own cart from its own balance). Every change is
// a turn of the cart's actor ("cart:<id>"), which decides the caller's rights (actors/cart/permissions.ts).
import Type, { type Static } from 'typebox';
import { agentRef, type CartMade } from '../../../actors/agent/messages.js';
import { cartRef, type Caller, type CheckedOut, type LineAdded, type LineChanged } from '../../../actors/cart/messages.js';
import { read } from '../../../actors/runtime/client.js';
import type { AgentPrincipal } from '../../http/authenticators/agent-key.js';
import { HttpError, json, route, type Reply, type Route } from '../../http/route.js';
import {
  CartCheckout, CartCheckoutAnswer, CartCreate, CartCreatedAnswer, CartDetail, CartItemCreate, CartItemUpdate, CartLinkAnswer, CartsAnswer,
  DefaultCartAnswer, LineAddedAnswer, LineChangedAnswer, rowId,
} from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { menuSnapshots, recordOpen } from '../../market-data/live-session.js';
import { currentLine } from '../cart-line.js';

const CartParams = Type.Object({ cart_id: rowId('cart id') });
const ItemParams = Type.Object({ item_id: rowId('cart line id') });
const CartItemParams = Type.Object({ cart_id: rowId('cart id'), item_id: rowId('cart line id') });
const SinceQuery = Type.Object({ since: Type.Optional(Type.Number({ minimum: 0, maximum: 1e11, description: 'unix seconds (0..1e11): only carts created, connected or changed after it' })) });

const agentOf = (principal: AgentPrincipal): Caller => ({ kind: 'agent', agentId: principal.agentId });

export function cartRoutes(s: Services): Route[] {
  const base = s.config.baseUrl;
  const snapshots = menuSnapshots(s);
  const url = (token: string) => `${base}/carts/${token}`;
  const defaultCart = (principal: AgentPrincipal) => read(s.runtime, 'cart.agentDefault', { agentId: principal.agentId });
  const detail = async (principal: AgentPrincipal, cartId: number) => {
    const c = await read(s.runtime, 'cart.detail', { caller: agentOf(principal), cartId, baseUrl: base, at: s.clock.realNow() });
    if (!c) throw new HttpError(404, `no cart ${cartId} you can see`);
    return c;
  };

  const added = (r: LineAdded): Reply => json({
    item_id: r.item_id, cart_id: r.cart_id, status: r.status, qty: r.qty, clamped: r.clamped, paired: r.paired, checkout_url: url(r.checkout_url_token),
    ...(r.paired ? { other_carts: r.other_carts } : {}),
    note: r.paired
      ? 'Your holder sees this line now on the checkout_url; nothing is charged until they pay (or you check out under an execute grant).'
      : 'No account holder is connected yet: hand checkout_url to a human, who connects by opening it (logged in) or paying on it.',
  }, 201);
  const lineRoutes = (path: string, operationId: string, cartOf: (ctx: { params: any; principal: AgentPrincipal }) => Promise<number>) => [
    route<any, unknown, CartItemCreate>({
      method: 'POST', path, operationId, auth: 'key', summary: 'Propose a deal of the current menu as a cart line (qty clamped to max_qty)',
      params: path.includes('{cart_id}') ? CartParams : undefined, body: CartItemCreate, response: { 201: LineAddedAnswer },
      responses: { 403: { description: 'the cart is not yours and you have no write grant' }, 404: { description: 'unknown market, deal not on the current menu, or no such cart' } },
      handler: async (ctx) => {
        const line = currentLine(s, snapshots, ctx.body);
        await recordOpen(s, line);
        const cartId = await cartOf(ctx);
        return added(await s.runtime.ask(cartRef(cartId), { kind: 'add', caller: agentOf(ctx.principal), line, at: s.clock.realNow() }, { idem: ctx.idem }));
      },
      replay: added,
    }),
  ];

  return [
    route({
      method: 'GET', path: '/api/v1/cart', operationId: 'get_default_cart', auth: 'key', summary: 'My default cart: its lines with their status, its checkout_url, and the other carts I see',
      response: { 200: DefaultCartAnswer },
      handler: async ({ principal }) => {
        const at = s.clock.realNow();
        const { id } = await defaultCart(principal);
        const [cart, all] = await Promise.all([detail(principal, id), read(s.runtime, 'cart.list', { caller: agentOf(principal), baseUrl: base, at })]);
        return json({ id, kind: cart.kind, paired: cart.associated, checkout_url: cart.checkout_url, items: cart.items, holder_pays: cart.holder_pays, permissions: cart.permissions, other_carts: all.filter((c) => c.id !== id) });
      },
    }),
    ...lineRoutes('/api/v1/cart/items', 'add_cart_item', async ({ principal }) => (await defaultCart(principal)).id),
    route<{ item_id: number }>({
      method: 'DELETE', path: '/api/v1/cart/items/{item_id}', operationId: 'remove_cart_item', auth: 'key', summary: 'Withdraw a line of my default cart (only while not ordered)',
      params: ItemParams, response: { 200: LineChangedAnswer },
      responses: { 404: { description: 'no such line in my default cart' }, 409: { description: 'the line is ordered already' } },
      handler: async ({ params, principal, idem }) => {
        const { id } = await defaultCart(principal);
        return json(await s.runtime.ask(cartRef(id), { kind: 'remove', caller: agentOf(principal), itemId: params.item_id, at: s.clock.realNow() }, { idem }));
      },
    }),
    route({
      method: 'POST', path: '/api/v1/cart/link', operationId: 'create_cart_link', auth: 'key', summary: 'The links of my default cart to hand to a holder',
      response: { 201: CartLinkAnswer },
      handler: async ({ principal }) => {
        const c = await defaultCart(principal);
        return json({ cart_id: c.id, checkout_url: url(c.token), pairing_url: `${base}/link/${c.token}` }, 201);
      },
    }),
    route<unknown, Static<typeof SinceQuery>>({
      method: 'GET', path: '/api/v1/carts', operationId: 'list_carts', auth: 'key', summary: 'Every cart I can see: mine, and once connected my holder\'s and its other agents\'',
      query: SinceQuery, response: { 200: CartsAnswer },
      handler: async ({ query, principal }) => json({ carts: await read(s.runtime, 'cart.list', { caller: agentOf(principal), since: query.since, baseUrl: base, at: s.clock.realNow() }) }),
    }),
    route<unknown, unknown, CartCreate>({
      method: 'POST', path: '/api/v1/carts', operationId: 'create_cart', auth: 'key', summary: 'Another cart of my own',
      body: CartCreate, response: { 201: CartCreatedAnswer }, responses: { 409: { description: 'the most carts an agent may have' } },
      handler: async ({ body, principal, idem }) => made(await s.runtime.ask(agentRef(principal.keyId), { kind: 'newCart', name: body.name }, { idem })),
      replay: (r: CartMade) => made(r),
    }),
    route<{ cart_id: number }>({
      method: 'GET', path: '/api/v1/carts/{cart_id}', operationId: 'get_cart', auth: 'key', summary: 'One cart with its lines and my permissions',
      params: CartParams, response: { 200: CartDetail }, responses: { 404: { description: 'no cart I can see' } },
      handler: async ({ params, principal }) => json(await detail(principal, params.cart_id)),
    }),
    ...lineRoutes('/api/v1/carts/{cart_id}/items', 'add_item_to_cart', async ({ params }) => params.cart_id),
    route<{ cart_id: number; item_id: number }, unknown, CartItemUpdate>({
      method: 'PUT', path: '/api/v1/carts/{cart_id}/items/{item_id}', operationId: 'update_cart_item', auth: 'key', summary: 'Change a line\'s qty (clamped to max_qty; 0 removes it)',
      params: CartItemParams, body: CartItemUpdate, response: { 200: LineChangedAnswer },
      responses: { 403: { description: 'no write permission' }, 404: { description: 'no such cart or line' }, 409: { description: 'the line is ordered already' } },
      handler: async ({ params, body, principal, idem }) =>
        json(await s.runtime.ask(cartRef(params.cart_id), { kind: 'setQty', caller: agentOf(principal), itemId: params.item_id, qty: body.qty, at: s.clock.realNow() }, { idem })),
    }),
    route<{ cart_id: number; item_id: number }>({
      method: 'DELETE', path: '/api/v1/carts/{cart_id}/items/{item_id}', operationId: 'remove_item_from_cart', auth: 'key', summary: 'Remove a line (only while not ordered)',
      params: CartItemParams, response: { 200: LineChangedAnswer },
      responses: { 403: { description: 'no write permission' }, 404: { description: 'no such cart or line' }, 409: { description: 'the line is ordered already' } },
      handler: async ({ params, principal, idem }) =>
        json(await s.runtime.ask(cartRef(params.cart_id), { kind: 'remove', caller: agentOf(principal), itemId: params.item_id, at: s.clock.realNow() }, { idem })),
    }),
    route<{ cart_id: number }, unknown, CartCheckout>({
      method: 'POST', path: '/api/v1/carts/{cart_id}/checkout', operationId: 'checkout_cart', auth: 'key',
      summary: 'Check a cart out myself: needs autonomous funding on, then an execute grant (card or balance) or my own cart paid from my own balance',
      params: CartParams, body: CartCheckout, optionalBody: true, response: { 200: CartCheckoutAnswer },
      responses: {
        400: { description: 'a balance does not cover the lines, or the grant\'s card expired (nothing charged)' },
        403: { description: 'autonomous funding is off, or no execute grant covers this cart and payment' },
        404: { description: 'no cart I can see' },
        409: { description: 'nothing to pay: every line is ordered or its session closed (nothing charged)' },
      },
      handler: async ({ params, body, principal, idem }) => {
        // An empty selection names no line: said so here, not mistaken for lines whose session closed.
        if (body.item_ids?.length === 0) {
          throw new HttpError(422, [{
            loc: ['body', 'item_ids'], msg: 'no line was selected: name at least one line, or leave item_ids out to pay every current line; nothing was charged',
            type: 'too_short', input: [],
          }]);
        }
        return json(await s.runtime.ask(cartRef(params.cart_id), {
          kind: 'checkout', caller: agentOf(principal), payment: { method: 'grant', payWith: body.pay_with }, itemIds: body.item_ids,
          at: s.clock.realNow(), baseUrl: base,
        }, { idem }));
      },
    }),
    route<{ cart_id: number }>({
      method: 'POST', path: '/api/v1/carts/{cart_id}/link', operationId: 'create_link_for_cart', auth: 'key', summary: 'The checkout link of a cart I can see',
      params: CartParams, response: { 201: CartLinkAnswer }, responses: { 404: { description: 'no cart I can see' } },
      handler: async ({ params, principal }) => {
        const c = await detail(principal, params.cart_id);
        return json({ cart_id: c.id, checkout_url: c.checkout_url }, 201);
      },
    }),
  ];

  function made(r: CartMade): Reply {
    return json({ id: r.id, name: r.name, kind: r.kind, checkout_url: url(r.token) }, 201);
  }
}
