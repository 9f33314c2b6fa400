// Carts (migrations 0003 and 0008): an agent's proposals to its holder (or the holder's own picks),
// their lines, and the holder's grants letting agents write to or execute carts. Written only by the
// cart actor (actors/cart), except the registration's first cart (actors/agent/actor.ts).
import { EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt, instant, serialId, timestampNull } from './columns.js';
import {
  AgentSchema,
  CardSchema,
  HolderSchema,
  InventoryItemSchema,
  OrderSchema,
  ref,
  type Agent,
  type Card,
  type Holder,
  type InventoryItem,
  type Order,
} from './trading.js';

export const CART_KINDS = ['trade', 'own'] as const;
export const GRANT_LEVELS = ['write', 'execute'] as const;
export const GRANT_PAY_WITH = ['balance', 'card'] as const;

/** A cart: an agent's (agent set; holder set once connected) or a holder's own (agent null). */
export type Cart = {
  id: number;
  agent?: Ref<Agent> | null;
  holder?: Ref<Holder> | null;
  name: string;
  kind: (typeof CART_KINDS)[number];
  token: string;
  paid: Opt<boolean>;
  createdAt: Date;
  updatedAt: Date;
};
// Owner: cart (actors/cart/actor.ts); the agent actor creates the registration's cart.
export const CartSchema = new EntitySchema<Cart>({
  name: 'Cart',
  tableName: 'cart',
  properties: {
    id: serialId(),
    agent: ref(() => AgentSchema, 'agent_id', 'cart', { nullable: true }),
    holder: ref(() => HolderSchema, 'holder_id', 'cart', { nullable: true }),
    name: { type: 'text' },
    kind: { enum: true, items: [...CART_KINDS], columnType: 'text' },
    token: { type: 'text', unique: 'cart_token_key' },
    paid: { type: 'boolean', default: false },
    createdAt: createdAt(),
    updatedAt: instant('updated_at'),
  },
  indexes: [
    {
      name: 'cart_agent',
      expression: 'create index cart_agent on cart (agent_id) where agent_id is not null',
    },
    {
      name: 'cart_holder',
      expression: 'create index cart_holder on cart (holder_id) where holder_id is not null',
    },
    {
      name: 'cart_holder_own',
      expression: 'create unique index cart_holder_own on cart (holder_id) where agent_id is null',
    },
  ],
});

/** A cart line: a deal of a recorded menu (market, tick, idx), its qty, who proposed it, what it became. */
export type CartItem = {
  id: number;
  cart: Ref<Cart>;
  /** The proposing agent; null when the holder picked the line (it goes to the holder's Manual desk). */
  agent?: Ref<Agent> | null;
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  qty: number;
  note: Opt<string>;
  closesAt: number;
  order?: Ref<Order> | null;
  item?: Ref<InventoryItem> | null;
  createdAt: Date;
};
// Owner: cart (actors/cart/actor.ts).
export const CartItemSchema = new EntitySchema<CartItem>({
  name: 'CartItem',
  tableName: 'cart_item',
  properties: {
    id: serialId(),
    cart: ref(() => CartSchema, 'cart_id', 'cart_item', { deleteRule: 'cascade' }),
    agent: ref(() => AgentSchema, 'agent_id', 'cart_item', { nullable: true }),
    market: { type: 'text' },
    tick: { type: bigint() },
    idx: { type: 'integer' },
    offerKey: { type: 'text', fieldName: 'offer_key' },
    qty: { type: 'integer' },
    note: { type: 'text', default: '' },
    closesAt: { type: 'double', runtimeType: 'number', fieldName: 'closes_at' },
    order: ref(() => OrderSchema, 'order_id', 'cart_item', {
      nullable: true,
      unique: 'cart_item_order_id_key',
    }),
    item: ref(() => InventoryItemSchema, 'item_id', 'cart_item', {
      nullable: true,
      unique: 'cart_item_item_id_key',
    }),
    createdAt: createdAt(),
  },
  checks: [
    { name: 'cart_item_qty_check', expression: 'qty > 0' },
    { name: 'cart_item_note_check', expression: 'length(note) <= 255' },
    { name: 'cart_item_checked_out_once', expression: 'order_id is null or item_id is null' },
  ],
  indexes: [{ name: 'cart_item_cart', properties: ['cart', 'id'] }],
});

/** A holder's grant: `write` or `execute` for one agent (or all), on one cart (or all). */
export type CartGrant = {
  id: number;
  holder: Ref<Holder>;
  agent?: Ref<Agent> | null;
  cart?: Ref<Cart> | null;
  level: (typeof GRANT_LEVELS)[number];
  payWith: Opt<(typeof GRANT_PAY_WITH)[number]>;
  card?: Ref<Card> | null;
  note: Opt<string>;
  createdAt: Date;
  revokedAt?: Date | null;
  /** After it the grant allows nothing (null: until revoked). */
  expiresAt?: Date | null;
};
// Owner: cart (actors/cart/grants.ts, turns of the holder's grants actor).
export const CartGrantSchema = new EntitySchema<CartGrant>({
  name: 'CartGrant',
  tableName: 'cart_grant',
  properties: {
    id: serialId(),
    holder: ref(() => HolderSchema, 'holder_id', 'cart_grant'),
    agent: ref(() => AgentSchema, 'agent_id', 'cart_grant', { nullable: true }),
    cart: ref(() => CartSchema, 'cart_id', 'cart_grant', { nullable: true, deleteRule: 'cascade' }),
    level: { enum: true, items: [...GRANT_LEVELS], columnType: 'text' },
    payWith: {
      enum: true,
      items: [...GRANT_PAY_WITH],
      columnType: 'text',
      fieldName: 'pay_with',
      default: 'balance',
    },
    card: ref(() => CardSchema, 'card_id', 'cart_grant', {
      nullable: true,
      deleteRule: 'set null',
    }),
    note: { type: 'text', default: '' },
    createdAt: createdAt(),
    revokedAt: timestampNull('revoked_at'),
    expiresAt: timestampNull('expires_at'),
  },
  checks: [
    { name: 'cart_grant_note_check', expression: 'length(note) <= 255' },
    {
      name: 'cart_grant_card',
      expression: `pay_with = 'balance' or card_id is not null or revoked_at is not null`,
    },
  ],
  indexes: [
    {
      name: 'cart_grant_live',
      expression: 'create index cart_grant_live on cart_grant (holder_id) where revoked_at is null',
    },
  ],
});

export const cartEntities = [CartSchema, CartItemSchema, CartGrantSchema];
