// SPEC.md "Cart, cart line, permissions" and CONTRACT.md "Carts": what an agent proposes, what the
// holder sees and pays, and what each caller may do with a cart.
import Type, { type Static } from 'typebox';
import { CART_KINDS, GRANT_LEVELS, GRANT_PAY_WITH } from '../../orm/entities/carts.js';
import {
  bool,
  int,
  intOrNull,
  list,
  num,
  numOrNull,
  obj,
  oneOf,
  rowId,
  str,
  strOrNull,
  requestBody,
} from './common.js';
import { MARKET_ID } from './market.js';
import { HolderPays, Order } from './order.js';

export { CART_KINDS, GRANT_LEVELS, GRANT_PAY_WITH };
export const LINE_STATUSES = ['pending_pairing', 'in_cart', 'ordered'] as const;

/** POST /cart/items and POST /carts/{id}/items. */
export const CartItemCreate = requestBody({
  market: Type.String({ description: MARKET_ID }),
  offer_key: Type.String({ description: "a deal key of the market's current menu" }),
  qty: Type.Integer({
    minimum: 1,
    description: "units; more than the deal's max_qty is clamped to it",
  }),
  note: Type.Optional(
    Type.String({ maxLength: 255, description: 'your rationale, shown to the holder' }),
  ),
});
export type CartItemCreate = Static<typeof CartItemCreate>;

/** PUT /carts/{id}/items/{item_id}. */
export const CartItemUpdate = requestBody({
  qty: Type.Integer({ minimum: 0, description: 'units (clamped to max_qty); 0 removes the line' }),
});
export type CartItemUpdate = Static<typeof CartItemUpdate>;

/** POST /carts. */
export const CartCreate = requestBody({
  name: Type.String({ minLength: 1, maxLength: 120, description: 'a name the holder sees' }),
});
export type CartCreate = Static<typeof CartCreate>;

/** POST /carts/{id}/checkout (the body is optional). */
export const CartCheckout = requestBody({
  pay_with: Type.Optional(
    oneOf(
      GRANT_PAY_WITH,
      "card: the holder's stored card named in your grant; balance: each line's own account (default: what your grant allows)",
    ),
  ),
  item_ids: Type.Optional(
    Type.Array(rowId('a line'), {
      maxItems: 500,
      description: 'the lines to pay, at least one (default: every current line)',
    }),
  ),
});
export type CartCheckout = Static<typeof CartCheckout>;

export const CartOwner = obj(
  {
    kind: oneOf(
      ['agent', 'holder'] as const,
      "agent: an agent's cart; holder: the holder's own cart",
    ),
    agent_id: intOrNull("the agent whose cart it is; null on the holder's own cart"),
    name: str("the agent's name, or the holder's display name"),
  },
  'whose cart it is',
);

export const CartPermissions = obj(
  {
    read: bool('you may read the cart'),
    write: bool('you may add, change and remove lines'),
    execute: bool('you may check the cart out yourself (POST /carts/{id}/checkout)'),
    execute_pay_with: Type.Union([oneOf(GRANT_PAY_WITH, 'how'), Type.Null()], {
      description:
        "how an execute checkout of yours pays: balance or the holder's card; null when you may not execute",
    }),
    execute_card_id: intOrNull(
      "the holder's stored card an execute checkout charges (pay_with card)",
    ),
    autonomous_funding: bool('your holder switched autonomous funding on for you'),
    execute_note: str('why you may or may not execute this cart'),
  },
  'what the caller may do with the cart, and why not',
);

const entryFields = {
  id: int('cart id'),
  name: str('cart name'),
  kind: oneOf(
    CART_KINDS,
    "trade: paying places and funds orders; own: paying buys the goods outright into the holder's inventory",
  ),
  owner: CartOwner,
  mine: bool('the cart is yours'),
  associated: bool('the cart is connected to an account holder'),
  checkout_url: str('the link the holder opens to review and pay'),
  open_items: int('lines not yet ordered whose session is still open'),
  stale_items: int('lines not yet ordered whose session closed'),
  total: num('what paying the open lines costs now (USD, without the participation fee)'),
  paid: bool('the cart was checked out at least once'),
  permissions: CartPermissions,
};

export const CartEntry = obj(entryFields, 'a cart you can see');

export const CartLine = obj(
  {
    id: int('line id (item_id)'),
    market: str('market id'),
    tick: int('the session of the deal'),
    offer_key: str("the deal's key"),
    deal_title: str("the bundle's title"),
    qty: int('units'),
    max_qty: int("the deal's most units"),
    unit_cost: num('landed cost per unit'),
    list_price: num('resale price per unit'),
    sales_velocity: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description:
          "the deal's quoted velocity (markets with quotes_velocity: true; absent on ranking markets)",
      }),
    ),
    note: str("the proposer's rationale"),
    proposed_by: obj(
      {
        kind: oneOf(['agent', 'holder'] as const, 'who'),
        agent_id: intOrNull('the agent'),
        name: str('its name'),
      },
      'who proposed the line',
    ),
    status: oneOf(LINE_STATUSES, 'pending_pairing (no holder yet), in_cart, or ordered'),
    stale: bool(
      "the deal's session closed: checkout skips the line; a refresh on the web re-maps it",
    ),
    closes_at: num("when the deal's session closes (real unix seconds)"),
    fee: num('qty x fulfilment fee per unit'),
    total: num('qty x unit_cost + fee'),
    order_id: intOrNull('the order the line became (trade carts)'),
    inventory_item_id: intOrNull('the goods the line became (own carts)'),
  },
  'a cart line',
);

/** holder_pays of a cart (CONTRACT.md "What the holder will pay"). */
const CartHolderPays = Type.Union([HolderPays, Type.Null()], {
  description:
    "what a card payment of the current lines made now would charge the holder (their total and the month's participation fee unless paid); null without a current line",
});

export const CartDetail = obj(
  { ...entryFields, items: list(CartLine, 'the lines, oldest first'), holder_pays: CartHolderPays },
  'a cart with its lines',
);

export const CartsAnswer = obj(
  { carts: list(CartEntry, 'every cart you can see, oldest first') },
  'carts',
);

export const DefaultCartAnswer = obj(
  {
    id: int('your default cart (the one registration made)'),
    kind: oneOf(CART_KINDS, 'trade or own'),
    paired: bool('an account holder is connected'),
    checkout_url: str('the link the holder opens to review and pay'),
    items: list(CartLine, 'its lines'),
    holder_pays: CartHolderPays,
    permissions: CartPermissions,
    other_carts: list(CartEntry, 'the other carts you can see'),
  },
  'your default cart',
);

export const LineAddedAnswer = obj(
  {
    item_id: int('the line'),
    cart_id: int('its cart'),
    status: oneOf(
      ['pending_pairing', 'in_cart'] as const,
      'pending_pairing until a holder connects, then in_cart',
    ),
    qty: int('units (clamped to max_qty)'),
    clamped: bool('the qty asked for exceeded max_qty'),
    paired: bool('an account holder is connected and sees the line now'),
    checkout_url: str('the link to hand to the holder'),
    other_carts: Type.Optional(
      Type.Integer({ description: 'connected: the number of other carts you now see' }),
    ),
    note: str('what happens next'),
  },
  'the line is in the cart',
);

export const LineChangedAnswer = obj(
  {
    item_id: int('the line'),
    cart_id: int('its cart'),
    qty: int('units now (0: removed)'),
    removed: bool('the line is gone'),
    clamped: bool('the qty asked for exceeded max_qty'),
  },
  'the line is changed',
);

export const CartCreatedAnswer = obj(
  {
    id: int('cart id'),
    name: str('cart name'),
    kind: oneOf(CART_KINDS, 'trade or own'),
    checkout_url: str('the link the holder opens'),
  },
  'a new cart of yours',
);

export const CartLinkAnswer = obj(
  {
    cart_id: int('the cart'),
    checkout_url: str('the link the holder opens to review and pay'),
    pairing_url: Type.Optional(
      Type.String({ description: 'the older pairing link (/link/{token})' }),
    ),
  },
  "the cart's links",
);

export const CartCheckoutAnswer = obj(
  {
    cart_id: int('the cart'),
    kind: oneOf(CART_KINDS, 'trade or own'),
    paid_with: oneOf(['card', 'balance'] as const, 'how it was paid'),
    total: num('the lines paid (USD)'),
    fee: num('the participation fee of the month, when this checkout carried it'),
    charged: num('total + fee'),
    skipped_stale: int('lines skipped because their session closed (never charged)'),
    skipped_item_ids: list(Type.Integer(), 'those lines'),
    ordered_item_ids: list(Type.Integer(), 'the lines paid'),
    orders: list(Order, 'the orders placed and funded (trade carts; empty on own carts)'),
    bought_outright: bool(
      "own cart: the goods went into the holder's inventory; no order, position or trade was opened",
    ),
    inventory_item_ids: list(Type.Integer(), 'own cart: the goods bought'),
    receipt: strOrNull(
      'the signed approval receipt of the orders funded (trade carts; verify it against GET /.well-known/jwks.json); null on own carts',
    ),
    note: str('what happened'),
  },
  'the cart is paid',
);

export const CartGrantView = obj(
  {
    id: int('grant id'),
    agent_id: intOrNull('the agent; null: every agent of yours'),
    agent_name: strOrNull('its name'),
    cart_id: intOrNull('the cart; null: every cart'),
    cart_name: strOrNull('its name'),
    level: oneOf(
      GRANT_LEVELS,
      'write: add and change lines; execute: also check out (with autonomous funding on)',
    ),
    pay_with: oneOf(GRANT_PAY_WITH, 'how an execute checkout pays'),
    card_id: intOrNull('the stored card it charges'),
    note: str('your note'),
    created_at: num('when (unix seconds)'),
    expires_at: numOrNull(
      'after this instant (unix seconds) it allows nothing; null: until revoked',
    ),
    expired: bool('it has expired: it allows nothing (grant again to renew it)'),
  },
  'a grant not revoked',
);

/** Holder form answers (CONTRACT.md "Web form posts"). */
const ok = Type.Literal(true, { description: 'the post succeeded' });
export const CartLineForm = obj(
  {
    ok,
    cart_id: int('the cart'),
    item_id: intOrNull('the line (null: removed)'),
    qty: int('units now'),
  },
  'the cart line is changed',
);
export const CartClearedForm = obj(
  { ok, cart_id: int('the cart'), removed: int('lines removed') },
  'the cart is cleared',
);
export const CartRefreshedForm = obj(
  {
    ok,
    remapped: int('stale lines moved to the current menu'),
    still_stale: int('stale lines with no deal of their family on the menu'),
  },
  'stale lines re-mapped',
);
export const CartUploadForm = obj(
  {
    ok,
    cart_id: int('the cart'),
    added: int('rows added as lines'),
    skipped: list(
      obj({ row: int('CSV row (1 = first data row)'), detail: str('why') }, 'a skipped row'),
      'rows not added',
    ),
  },
  'the CSV is read',
);
export const CartPaidForm = obj(
  {
    ok,
    cart_id: int('the cart'),
    order_ids: list(Type.Integer(), 'the orders placed and funded'),
    inventory_item_ids: list(Type.Integer(), 'goods bought outright (own carts)'),
    bought_outright: bool('own cart'),
    charged: num('what was charged'),
    fee: num('of it, the participation fee'),
    skipped_stale: int('stale lines skipped'),
    receipt: strOrNull(
      'the signed approval receipt of the orders funded (GET /.well-known/jwks.json); null on own carts',
    ),
  },
  'the cart is paid',
);
export const CartKindForm = obj(
  { ok, cart_id: int('the cart'), kind: oneOf(CART_KINDS, "the cart's kind now") },
  "the cart's kind is set",
);
export const GrantForm = obj({ ok, grant_id: int('the grant') }, 'the grant is made');
export const RevokedForm = obj(
  { ok, grant_id: int('the grant'), revoked: bool('it was live and is revoked now') },
  'the grant is revoked',
);
