// CartActor's messages and replies ("cart:<id>"), and the arguments and replies of the cart read
// tasks (reads.ts): what the front end may know of this actor kind. Served shapes are typed by
// their schemas (src/schemas/cart.ts), the one definition.
import type { Static } from 'typebox';
import type * as schemas from '../../src/schemas/index.js';
import type { Payment } from '../money/messages.js';
import { actorRef } from '../runtime/protocol.js';

/** Who acts on a cart: an agent (by its key) or a logged-in holder (on the web). */
export type Caller = { kind: 'agent'; agentId: number } | { kind: 'holder'; holderId: number };

/** A deal of the current menu as the front end found it in its snapshot (the actor re-reads nothing of it but the row). */
export type NewLine = {
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  qty: number;
  maxQty: number;
  note: string;
  closesAt: number;
};

/** A market's open session: its tick and when it closes (real unix seconds). */
export type CurrentSession = { market: string; tick: number; closesAt: number };

/** How a checkout pays: as the holder chose (a new card, a stored card, balances), or as an agent's grant allows. */
export type CheckoutPayment =
  | Payment
  /** An agent's execute checkout: what its grant allows (`pay_with` of the request, or the grant's default). */
  | { method: 'grant'; payWith?: 'card' | 'balance' };

/**
 * `at` on the turns that change lines: now on the service clock (real unix seconds), for the lines'
 * stale flag in the cart's events (CONTRACT.md "Events": cart.line_added, cart.line_removed).
 */
export type CartMessage =
  /** Adds a line (a repeat of the same deal by the same proposer adds to its qty, clamped to max_qty). */
  | { kind: 'add'; caller: Caller; line: NewLine; at: number }
  /**
   * Adds many lines in one turn (a CSV upload): each as `add` does, those past a full cart reported
   * in `skipped` with the rows the front end refused already (`skipped`), so a retried upload with
   * its Idempotency-Key is answered, not added again.
   */
  | {
      kind: 'addMany';
      caller: Caller;
      lines: { row: number; line: NewLine }[];
      skipped: { row: number; detail: string }[];
      at: number;
    }
  /** Sets a line's qty (clamped to its deal's max_qty); 0 removes it. Only while not ordered. */
  | { kind: 'setQty'; caller: Caller; itemId: number; qty: number; at: number }
  /** Removes a line. Only while not ordered. */
  | { kind: 'remove'; caller: Caller; itemId: number; at: number }
  /** Removes every line not yet ordered. */
  | { kind: 'clear'; caller: Caller; at: number }
  /**
   * Re-maps the stale lines to the closest deal of the same family on the current menu. `menus`: each
   * market's current session as the front end's clock has it (`at`, real unix seconds, is now).
   */
  | { kind: 'refresh'; caller: Caller; at: number; menus: CurrentSession[] }
  /** Pays the cart's current lines (or `itemIds`): orders on each line's account, or goods bought outright (own carts). */
  | {
      kind: 'checkout';
      caller: Caller;
      payment: CheckoutPayment;
      itemIds?: number[];
      at: number;
      baseUrl: string;
    }
  /** The holder asks for another kind on an unpaid cart (CONTRACT.md "Carts": `POST /carts/{token}/kind`). */
  | { kind: 'setKind'; holderId: number; cartKind: 'trade' | 'own' }
  /** A logged-in holder opened the cart's link (or paid on it): connects the cart and its agent. */
  | { kind: 'open'; holderId: number; at: number };

export type LineAdded = {
  item_id: number;
  cart_id: number;
  status: 'pending_pairing' | 'in_cart';
  qty: number;
  clamped: boolean;
  paired: boolean;
  /** Other carts the proposer now sees (connected agents only). */
  other_carts: number;
  checkout_url_token: string;
};
export type LinesAdded = {
  cart_id: number;
  added: number;
  skipped: { row: number; detail: string }[];
};
export type LineChanged = {
  item_id: number;
  cart_id: number;
  qty: number;
  removed: boolean;
  clamped: boolean;
};
export type Cleared = { cart_id: number; removed: number };
export type Refreshed = {
  cart_id: number;
  remapped: { item_id: number; from: string; to: string }[];
  still_stale: number[];
};
export type KindSet = { cart_id: number; kind: 'trade' | 'own' };
/** `connected`: the cart is this holder's now (or was); false when another holder has its agent. */
export type Opened = { cart_id: number; connected: boolean; connected_now: boolean };

/** The served checkout answer (SPEC.md "Checkout response" and CONTRACT.md "Carts"). */
export type CheckedOut = Static<typeof schemas.CartCheckoutAnswer>;

/** The reply to each message kind (actor.ts's handlers answer these). */
export type CartReplies = {
  add: LineAdded;
  addMany: LinesAdded;
  setQty: LineChanged;
  remove: LineChanged;
  clear: Cleared;
  refresh: Refreshed;
  checkout: CheckedOut;
  setKind: KindSet;
  open: Opened;
};
/** The address of cart `id`'s actor. */
export const cartRef = (id: number) => actorRef<CartMessage, CartReplies>('cart', id);

// Read tasks (reads.ts).

export type CartListArgs = { caller: Caller; since?: number; baseUrl: string; at: number };
export type CartArgs = { caller: Caller; cartId: number; baseUrl: string; at: number };
/** The cart behind a link token, as the holder (or a visitor: null) sees it. */
export type CartByTokenArgs = {
  token: string;
  holderId: number | null;
  baseUrl: string;
  at: number;
};
export type CartEntry = Static<typeof schemas.CartEntry>;
export type CartDetail = Static<typeof schemas.CartDetail>;
/** The agent behind a cart (its declared identity) for the holder's page; null on a holder's own cart. */
export type CartAgent = {
  id: number;
  name: string;
  key_id: string;
  identity: Record<string, unknown> | null;
  operator: Record<string, unknown> | null;
  purpose: string | null;
  contact: string | null;
  holder_id: number | null;
  account_id: number;
};
export type CartByToken = {
  cart: CartDetail;
  agent: CartAgent | null;
  holder_id: number | null;
  token: string;
  paid: boolean;
} | null;
/** A grant as the console lists it. */
export type GrantView = Static<typeof schemas.CartGrantView>;
