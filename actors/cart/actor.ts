// CartActor ("cart:<id>"): owns a cart's lines. Its turns add, change and remove lines, re-map stale
// ones, switch the kind, connect the cart to the holder who opens its link, and check it out
// (checkout.ts). Every turn locks the cart's row (so two processes' turns on one cart do not
// interleave either) and decides the caller's right with permissions.ts, the one definition.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CartItemSchema, CartSchema } from '../../orm/entities/index.js';
import { ActorError, defineActor } from '../runtime/actor.js';
import { connectAgent } from '../account/pairing.js';
import { instantDate } from '../runtime/sql.js';
import { checkout, lockCart } from './checkout.js';
import {
  MAX_OPEN_LINES,
  callerFacts,
  cartFacts,
  cartsSeen,
  isCheckedOut,
  isStale,
  lineOf,
  linesOf,
  type CartRow,
  type LineRow,
} from './lines.js';
import { permissionsOf } from './permissions.js';
import { appendLineEvents, appendLineEventsOf } from './events.js';
import type {
  Caller,
  CartMessage,
  CartReplies,
  Cleared,
  KindSet,
  LineAdded,
  LineChanged,
  LinesAdded,
  NewLine,
  Opened,
  Refreshed,
} from './messages.js';

type CartState = { cartId: number };

export const cartActor = defineActor<CartState, CartMessage, CartReplies>({
  kind: 'cart',

  async activate(ctx) {
    const id = Number(ctx.id);
    if (!Number.isSafeInteger(id) || !(await ctx.em.count(CartSchema, { id })))
      throw new ActorError(404, `no cart ${ctx.id}`);
    return { cartId: id };
  },

  handlers: {
    async add(state, msg, ctx): Promise<LineAdded> {
      return ctx.em.transactional(async (em) => {
        const cart = await forWrite(em, state.cartId, msg.caller, ctx.at);
        const { itemId, qty, clamped } = await addLine(em, cart, msg.caller, msg.line, ctx.at);
        await touch(em, cart.id, ctx.at);
        await appendLineEventsOf(em, cart, 'cart.line_added', [itemId], msg.at);
        const paired = cart.holder_id !== null;
        return {
          item_id: itemId,
          cart_id: cart.id,
          status: paired ? 'in_cart' : 'pending_pairing',
          qty,
          clamped,
          paired,
          other_carts: paired ? await otherCarts(em, msg.caller, cart.id, ctx.at) : 0,
          checkout_url_token: cart.token,
        };
      });
    },

    async addMany(state, msg, ctx): Promise<LinesAdded> {
      return ctx.em.transactional(async (em) => {
        const cart = await forWrite(em, state.cartId, msg.caller, ctx.at);
        const skipped = [...msg.skipped];
        const added: number[] = [];
        for (const { row, line } of msg.lines) {
          try {
            added.push((await addLine(em, cart, msg.caller, line, ctx.at)).itemId);
          } catch (err) {
            // A full cart refuses the rest of the rows, each reported; the rows before it stay added.
            if (!(err instanceof ActorError) || err.status !== 409) throw err;
            skipped.push({ row, detail: err.detail });
          }
        }
        if (added.length) await touch(em, cart.id, ctx.at);
        await appendLineEventsOf(em, cart, 'cart.line_added', [...new Set(added)], msg.at);
        return {
          cart_id: cart.id,
          added: added.length,
          skipped: skipped.sort((a, b) => a.row - b.row),
        };
      });
    },

    async setQty(state, msg, ctx): Promise<LineChanged> {
      return ctx.em.transactional(async (em) => {
        const cart = await forWrite(em, state.cartId, msg.caller, ctx.at);
        const line = await openLine(em, cart, msg.itemId);
        const qty = Math.min(msg.qty, line.max_qty);
        if (qty === 0) await em.nativeDelete(CartItemSchema, { id: line.id });
        else await em.nativeUpdate(CartItemSchema, { id: line.id }, { qty });
        await touch(em, cart.id, ctx.at);
        if (qty === 0) await appendLineEvents(em, cart, 'cart.line_removed', [line], msg.at);
        return {
          item_id: line.id,
          cart_id: cart.id,
          qty,
          removed: qty === 0,
          clamped: msg.qty > line.max_qty,
        };
      });
    },

    async remove(state, msg, ctx): Promise<LineChanged> {
      return ctx.em.transactional(async (em) => {
        const cart = await forWrite(em, state.cartId, msg.caller, ctx.at);
        const line = await openLine(em, cart, msg.itemId);
        await em.nativeDelete(CartItemSchema, { id: line.id });
        await touch(em, cart.id, ctx.at);
        await appendLineEvents(em, cart, 'cart.line_removed', [line], msg.at);
        return { item_id: line.id, cart_id: cart.id, qty: 0, removed: true, clamped: false };
      });
    },

    async clear(state, msg, ctx): Promise<Cleared> {
      return ctx.em.transactional(async (em) => {
        const cart = await forWrite(em, state.cartId, msg.caller, ctx.at);
        const lines = await linesOf(em, [cart.id]);
        const removed = await em.nativeDelete(CartItemSchema, {
          cart: cart.id,
          order: null,
          item: null,
        });
        if (removed) await touch(em, cart.id, ctx.at);
        await appendLineEvents(em, cart, 'cart.line_removed', lines, msg.at);
        return { cart_id: cart.id, removed };
      });
    },

    async refresh(state, msg, ctx): Promise<Refreshed> {
      return ctx.em.transactional(async (em) => {
        const cart = await forWrite(em, state.cartId, msg.caller, ctx.at);
        const stale = (await linesOf(em, [cart.id])).filter(
          (l) => !isCheckedOut(l) && isStale(l, msg.at),
        );
        const remapped: Refreshed['remapped'] = [];
        const still: number[] = [];
        for (const l of stale) {
          const now = msg.menus.find((m) => m.market === l.market && m.closesAt > msg.at);
          const to = now && (await closestOfFamily(em, l, now.tick));
          if (!now || !to) {
            still.push(l.id);
            continue;
          }
          await em.nativeUpdate(
            CartItemSchema,
            { id: l.id },
            {
              tick: to.tick,
              idx: to.idx,
              offerKey: to.offer_key,
              closesAt: now.closesAt,
              qty: Math.min(l.qty, to.max_qty),
            },
          );
          remapped.push({ item_id: l.id, from: l.offer_key, to: to.offer_key });
        }
        if (remapped.length) await touch(em, cart.id, ctx.at);
        return { cart_id: cart.id, remapped, still_stale: still };
      });
    },

    async checkout(state, msg, ctx) {
      return ctx.em.transactional(async (em) => {
        const cart = await lockCart(em, state.cartId);
        if (!cart) throw new ActorError(404, `no cart ${state.cartId}`);
        return checkout(em, cart, msg);
      });
    },

    async setKind(state, msg, ctx): Promise<KindSet> {
      return ctx.em.transactional(async (em) => {
        const cart = await lockCart(em, state.cartId);
        if (!cart || cart.holder_id !== msg.holderId)
          throw new ActorError(404, `no cart ${state.cartId} of yours`);
        if (cart.kind === msg.cartKind) return { cart_id: cart.id, kind: cart.kind };
        // SPEC.md: the kind changes only while the cart has not been paid.
        if (cart.paid)
          throw new ActorError(
            400,
            `cart ${cart.id} was paid already: its kind stays ${cart.kind}`,
          );
        await em.nativeUpdate(
          CartSchema,
          { id: cart.id },
          { kind: msg.cartKind, updatedAt: instantDate(ctx.at) },
        );
        return { cart_id: cart.id, kind: msg.cartKind };
      });
    },

    async open(state, msg, ctx): Promise<Opened> {
      return ctx.em.transactional(async (em) => {
        const cart = await lockCart(em, state.cartId);
        if (!cart) throw new ActorError(404, `no cart ${state.cartId}`);
        if (cart.holder_id === msg.holderId)
          return { cart_id: cart.id, connected: true, connected_now: false };
        if (cart.holder_id !== null || cart.agent_id === null)
          return { cart_id: cart.id, connected: false, connected_now: false };
        try {
          const now = await connectAgent(em, cart.agent_id, msg.holderId, ctx.at);
          return { cart_id: cart.id, connected: true, connected_now: now };
        } catch (err) {
          // The agent is another holder's: the page says so; nothing changes.
          if (err instanceof ActorError && err.status === 403)
            return { cart_id: cart.id, connected: false, connected_now: false };
          throw err;
        }
      });
    },
  },
});

/** Adds a line (at `at`), or adds to the same deal's line of the same proposer; qty clamped to max_qty; 409 when the cart is full. */
async function addLine(
  em: EntityManager,
  cart: CartRow,
  caller: Caller,
  line: NewLine,
  at: number,
): Promise<{ itemId: number; qty: number; clamped: boolean }> {
  const open = (await linesOf(em, [cart.id])).filter((l) => !isCheckedOut(l));
  const proposer = caller.kind === 'agent' ? caller.agentId : null;
  const same = open.find(
    (l) =>
      l.market === line.market &&
      l.tick === line.tick &&
      l.idx === line.idx &&
      l.agent_id === proposer,
  );
  if (!same && open.length >= MAX_OPEN_LINES)
    throw new ActorError(
      409,
      `cart ${cart.id} holds ${MAX_OPEN_LINES} open lines, the most it can: remove some first`,
    );
  const wanted = (same?.qty ?? 0) + line.qty;
  const qty = Math.min(wanted, line.maxQty);
  if (same) {
    await em.nativeUpdate(
      CartItemSchema,
      { id: same.id },
      { qty, ...(line.note ? { note: line.note } : {}) },
    );
    return { itemId: same.id, qty, clamped: wanted > line.maxQty };
  }
  const item = em.create(CartItemSchema, {
    cart: cart.id,
    agent: proposer,
    market: line.market,
    tick: line.tick,
    idx: line.idx,
    offerKey: line.offerKey,
    qty,
    note: line.note,
    closesAt: line.closesAt,
    createdAt: instantDate(at),
  });
  await em.flush();
  return { itemId: item.id, qty, clamped: wanted > line.maxQty };
}

/** The cart locked for a change by `caller`: 404 when the caller cannot see it, 403 when it may not write. */
async function forWrite(
  em: EntityManager,
  cartId: number,
  caller: Caller,
  at: number,
): Promise<CartRow> {
  const cart = await lockCart(em, cartId);
  if (!cart) throw new ActorError(404, `no cart ${cartId}`);
  const { agent, grants } = await callerFacts(em, caller, at);
  const p = permissionsOf(cartFacts(cart), caller, agent, grants);
  if (!p.read) throw new ActorError(404, `no cart ${cartId} you can see`);
  if (!p.write)
    throw new ActorError(
      403,
      `cart ${cartId} is not yours: writing to it needs a write grant from your holder`,
    );
  return cart;
}

/** A line of this cart that is not checked out: 404 when it is not in the cart, 409 once ordered. */
async function openLine(em: EntityManager, cart: CartRow, itemId: number): Promise<LineRow> {
  const line = await lineOf(em, cart.id, itemId);
  if (!line) throw new ActorError(404, `no line ${itemId} in cart ${cart.id}`);
  if (isCheckedOut(line))
    throw new ActorError(409, `line ${itemId} is ordered already: it can no longer change`);
  return line;
}

/** The cart changed at `at` (the turn's instant). */
const touch = (em: EntityManager, cartId: number, at: number) =>
  em.nativeUpdate(CartSchema, { id: cartId }, { updatedAt: instantDate(at) });

/** How many carts besides this one the caller sees. */
async function otherCarts(
  em: EntityManager,
  caller: Caller,
  cartId: number,
  at: number,
): Promise<number> {
  const { agent } = await callerFacts(em, caller, at);
  return (await cartsSeen(em, caller, agent)).filter((c) => c.id !== cartId).length;
}

/** The deal of the line's family on the market's current menu closest to its landed cost, if any. */
async function closestOfFamily(em: EntityManager, l: LineRow, tick: number) {
  if (!l.sku_family) return undefined;
  const [row] = await em.execute<
    { tick: number; idx: number; offer_key: string; max_qty: number }[]
  >(
    `select tick::float8 as tick, idx, offer_key, max_qty from menu_row
      where market = ? and tick = ? and deal->>'sku_family' = ? order by abs(unit_cost_cents - ?), idx limit 1`,
    [l.market, tick, l.sku_family, l.unit_cost_cents],
  );
  return row;
}
