// Trading (migrations 0003 and 0005): holders and their web sessions, agents (one key = one agent =
// one trading account), carts, stored cards, trade rounds, orders, positions, the ledger, the
// monthly participation fee and owned goods. Money in integer cents. Foreign keys are ManyToOne
// references named as PostgreSQL named them; columns without a foreign key in the migrations
// (orders.paid_by_holder, orders.position_id, position.item_id, monthly_fee.round_id) stay scalars.
import { EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt, serialId, timestampNull } from './columns.js';

export const PAYMENT_SOURCES = ['card', 'balance'] as const;
export const ROUND_STATUSES = [
  'awaiting_payment',
  'funded',
  'expired',
  'completed',
  'refunded',
  'cancelled',
] as const;
export const ORDER_STATUSES = [
  'awaiting_payment',
  'paid',
  'filled',
  'expired',
  'refunded',
  'cancelled',
] as const;
/** Who withdrew an order awaiting payment: its agent (DELETE /orders/{id}) or the holder (declined). */
export const CANCELLED_BY = ['agent', 'holder'] as const;
export const LEDGER_KINDS = [
  'card_charge',
  'crypto_payment',
  'order_debit',
  'monthly_fee',
  'sale_credit',
  'holding_fee',
  'surcharge',
  'payout',
  'topup',
  'refund',
  'exchange_purchase',
  'exchange_sale',
  'prize',
] as const;

/** A foreign key as the migrations declare it: `on update/delete no action` unless `deleteRule` says otherwise. */
export function ref<T>(
  entity: () => EntitySchema<T, never>,
  fieldName: string,
  table: string,
  opts: {
    nullable?: boolean;
    deleteRule?: 'cascade' | 'set null';
    primary?: boolean;
    unique?: string;
    foreignKey?: false;
  } = {},
) {
  return {
    kind: 'm:1',
    entity,
    ref: true,
    fieldName,
    foreignKeyName: `${table}_${fieldName}_fkey`,
    updateRule: 'no action',
    deleteRule: opts.deleteRule ?? 'no action',
    nullable: opts.nullable ?? false,
    ...(opts.primary ? { primary: true } : {}),
    ...(opts.unique ? { unique: opts.unique } : {}),
    ...(opts.foreignKey === false ? { createForeignKeyConstraint: false } : {}),
  } as const;
}

/** A person with a web login who pairs agents and funds them. */
export type Holder = {
  id: number;
  email: string;
  passwordHash: string;
  displayName: Opt<string>;
  gcBalanceHundredths: Opt<number>;
  createdAt: Date;
};
// Owner: holder (actors/holder/actor.ts registers holders).
export const HolderSchema = new EntitySchema<Holder>({
  name: 'Holder',
  tableName: 'holder',
  properties: {
    id: serialId(),
    email: { type: 'text', unique: 'holder_email_key' },
    passwordHash: { type: 'text', fieldName: 'password_hash' },
    displayName: { type: 'text', fieldName: 'display_name', default: '' },
    // Gold Coins in hundredths, moved only by actors/holder/coins.ts.
    gcBalanceHundredths: { type: bigint(), fieldName: 'gc_balance_hundredths', default: 0 },
    createdAt: createdAt(),
  },
  checks: [
    { name: 'holder_email_check', expression: 'email = lower(email)' },
    { name: 'holder_gc_balance_check', expression: 'gc_balance_hundredths >= 0' },
  ],
});

/** A web session: only a hash of the cookie's token is stored. */
export type HolderSession = {
  tokenHash: string;
  holder: Ref<Holder>;
  createdAt: Date;
  expiresAt: Date;
};
// Owner: holder (actors/holder/actor.ts signs in and out).
export const HolderSessionSchema = new EntitySchema<HolderSession>({
  name: 'HolderSession',
  tableName: 'holder_session',
  properties: {
    tokenHash: { type: 'text', primary: true, fieldName: 'token_hash' },
    holder: ref(() => HolderSchema, 'holder_id', 'holder_session', { deleteRule: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: { type: 'Date', columnType: 'timestamptz', fieldName: 'expires_at' },
  },
});

/** A trading account (one per agent); balance = Σ ledger, moved only by actors/account/ledger.ts. */
export const ACCOUNT_KINDS = ['agent', 'manual', 'competition'] as const;

/** A trading account: an agent's (one per agent), or a holder's Manual desk (`manual`, one per holder). */
export type Account = {
  id: number;
  balanceCents: Opt<number>;
  holder?: Ref<Holder> | null;
  kind: Opt<(typeof ACCOUNT_KINDS)[number]>;
  createdAt: Date;
};
// Owner: account (actors/account: pairing sets holder_id, ledger.ts moves the balance); the agent
// actor inserts the row when it registers the agent.
export const AccountSchema = new EntitySchema<Account>({
  name: 'Account',
  tableName: 'account',
  properties: {
    id: serialId(),
    balanceCents: { type: bigint(), fieldName: 'balance_cents', default: 0 },
    holder: ref(() => HolderSchema, 'holder_id', 'account', { nullable: true }),
    kind: { enum: true, items: [...ACCOUNT_KINDS], columnType: 'text', default: 'agent' },
    createdAt: createdAt(),
  },
  indexes: [
    {
      name: 'account_holder',
      expression: 'create index account_holder on account (holder_id) where holder_id is not null',
    },
    {
      name: 'account_manual_desk',
      expression: `create unique index account_manual_desk on account (holder_id) where kind = 'manual'`,
    },
  ],
});

/** An agent: its key (key_id in clear, the whole key hashed), who it says it is, its account. */
export type Agent = {
  id: number;
  keyId: string;
  keyHash: string;
  name: string;
  recallPhrase: string;
  identity?: unknown;
  operator?: unknown;
  purpose?: string | null;
  contact?: string | null;
  account: Ref<Account>;
  holder?: Ref<Holder> | null;
  pairedAt?: Date | null;
  autonomousFunding: Opt<boolean>;
  fundingChangedAt?: Date | null;
  createdAt: Date;
  /** The holder's spending limits (CONTRACT.md "Spending limits"): null, no limit. */
  limitMaxOrderCents?: number | null;
  limitMaxDayCents?: number | null;
  limitMarkets?: string[] | null;
  limitMaxWeekCents?: number | null;
  /** Real unix seconds (service clock): from it the agent funds nothing without its holder. */
  limitExpiresAt?: number | null;
  /** When its holder revoked its key for good (null: live). */
  revokedAt?: Date | null;
};
// Owner: agent (actors/agent/actor.ts registers agents); the account actor sets the pairing and the
// funding switch (actors/account/actor.ts).
export const AgentSchema = new EntitySchema<Agent>({
  name: 'Agent',
  tableName: 'agent',
  properties: {
    id: serialId(),
    keyId: { type: 'text', fieldName: 'key_id', unique: 'agent_key_id_key' },
    keyHash: { type: 'text', fieldName: 'key_hash' },
    name: { type: 'text' },
    recallPhrase: { type: 'text', fieldName: 'recall_phrase' },
    identity: { type: 'json', columnType: 'jsonb', nullable: true },
    operator: { type: 'json', columnType: 'jsonb', nullable: true },
    purpose: { type: 'text', nullable: true },
    contact: { type: 'text', nullable: true },
    account: ref(() => AccountSchema, 'account_id', 'agent', { unique: 'agent_account_id_key' }),
    holder: ref(() => HolderSchema, 'holder_id', 'agent', { nullable: true }),
    pairedAt: timestampNull('paired_at'),
    autonomousFunding: { type: 'boolean', fieldName: 'autonomous_funding', default: false },
    fundingChangedAt: timestampNull('funding_changed_at'),
    limitMaxOrderCents: { type: bigint(), fieldName: 'limit_max_order_cents', nullable: true },
    limitMaxDayCents: { type: bigint(), fieldName: 'limit_max_day_cents', nullable: true },
    limitMarkets: { type: 'text[]', fieldName: 'limit_markets', nullable: true },
    limitMaxWeekCents: { type: bigint(), fieldName: 'limit_max_week_cents', nullable: true },
    limitExpiresAt: {
      type: 'double',
      runtimeType: 'number',
      fieldName: 'limit_expires_at',
      nullable: true,
    },
    revokedAt: timestampNull('revoked_at'),
    createdAt: createdAt(),
  },
  checks: [
    { name: 'agent_key_id_check', expression: 'length(key_id) = 20' },
    {
      name: 'agent_limits_check',
      expression:
        'coalesce(limit_max_order_cents, 0) >= 0 and coalesce(limit_max_day_cents, 0) >= 0',
    },
    { name: 'agent_limit_max_week_check', expression: 'coalesce(limit_max_week_cents, 0) >= 0' },
  ],
  indexes: [
    {
      name: 'agent_holder',
      expression: 'create index agent_holder on agent (holder_id) where holder_id is not null',
    },
  ],
});

/** A stored card: brand, last 4 digits and expiry only (CONTRACT.md "Test cards"). */
export type Card = {
  id: number;
  holder: Ref<Holder>;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  createdAt: Date;
};
// Owner: account (actors/account/actor.ts stores the card a holder pays an order with).
export const CardSchema = new EntitySchema<Card>({
  name: 'Card',
  tableName: 'card',
  properties: {
    id: serialId(),
    holder: ref(() => HolderSchema, 'holder_id', 'card'),
    brand: { type: 'text' },
    last4: { type: 'text' },
    expMonth: { type: 'integer', fieldName: 'exp_month' },
    expYear: { type: 'integer', fieldName: 'exp_year' },
    createdAt: createdAt(),
  },
  uniques: [
    {
      name: 'card_holder_id_brand_last4_exp_month_exp_year_key',
      properties: ['holder', 'brand', 'last4', 'expMonth', 'expYear'],
    },
  ],
});

/** A trade round: the funding of one order (amount, fee, what was charged, transferred, refunded). */
export type TradeRound = {
  id: number;
  account: Ref<Account>;
  status: Opt<(typeof ROUND_STATUSES)[number]>;
  source?: (typeof PAYMENT_SOURCES)[number] | null;
  amountCents: number;
  feeAmountCents: Opt<number>;
  chargedCents: Opt<number>;
  transferredUnits: Opt<number>;
  refundedCents: Opt<number>;
  createdAt: Date;
  fundedAt?: Date | null;
  completedAt?: Date | null;
};
// Owner: account (actors/account: order-batch.ts creates rounds, actor.ts funds them); the market's
// close completes, expires or refunds them (actors/market/holder-orders.ts).
export const TradeRoundSchema = new EntitySchema<TradeRound>({
  name: 'TradeRound',
  tableName: 'trade_round',
  properties: {
    id: serialId(),
    account: ref(() => AccountSchema, 'account_id', 'trade_round'),
    status: {
      enum: true,
      items: [...ROUND_STATUSES],
      columnType: 'text',
      default: 'awaiting_payment',
    },
    source: { enum: true, items: [...PAYMENT_SOURCES], columnType: 'text', nullable: true },
    amountCents: { type: bigint(), fieldName: 'amount_cents' },
    feeAmountCents: { type: bigint(), fieldName: 'fee_amount_cents', default: 0 },
    chargedCents: { type: bigint(), fieldName: 'charged_cents', default: 0 },
    transferredUnits: { type: 'integer', fieldName: 'transferred_units', default: 0 },
    refundedCents: { type: bigint(), fieldName: 'refunded_cents', default: 0 },
    createdAt: createdAt(),
    fundedAt: timestampNull('funded_at'),
    completedAt: timestampNull('completed_at'),
  },
  indexes: [{ name: 'trade_round_account', properties: ['account', 'id'] }],
});

/** An order: the deal terms copied at creation (the order is what the caller saw). */
export type Order = {
  id: number;
  account: Ref<Account>;
  /** Null on an order of a holder's Manual desk. */
  agent?: Ref<Agent> | null;
  round: Ref<TradeRound>;
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  qty: number;
  unitCostCents: number;
  listPriceCents: number;
  feeCents: number;
  holdingCents: number;
  grossCents: number;
  feeAmountCents: number;
  totalCents: number;
  status: Opt<(typeof ORDER_STATUSES)[number]>;
  paymentSource?: (typeof PAYMENT_SOURCES)[number] | null;
  paidByHolder?: number | null;
  token: string;
  closesAt: number;
  createdAt: Date;
  paidAt?: Date | null;
  filledAt?: Date | null;
  positionId?: number | null;
  refundReason?: string | null;
  refundedAt?: Date | null;
  cancelledBy?: (typeof CANCELLED_BY)[number] | null;
  cancelledAt?: Date | null;
  /** The agent that funded it without the holder present (its spending limits count it). */
  standingAgentId?: number | null;
  /** The signed approval receipt (compact JWS) when the holder's hand or grant funded it. */
  receipt?: string | null;
};
// Owner: account (actors/account: order-batch.ts places orders, actor.ts records a payment); the
// market's close fills, expires or refunds them (actors/market/holder-orders.ts).
export const OrderSchema = new EntitySchema<Order>({
  name: 'Order',
  tableName: 'orders',
  properties: {
    id: serialId(),
    account: ref(() => AccountSchema, 'account_id', 'orders'),
    agent: ref(() => AgentSchema, 'agent_id', 'orders', { nullable: true }),
    round: ref(() => TradeRoundSchema, 'round_id', 'orders'),
    market: { type: 'text' },
    tick: { type: bigint() },
    idx: { type: 'integer' },
    offerKey: { type: 'text', fieldName: 'offer_key' },
    qty: { type: 'integer' },
    unitCostCents: { type: 'integer', fieldName: 'unit_cost_cents' },
    listPriceCents: { type: 'integer', fieldName: 'list_price_cents' },
    feeCents: { type: 'integer', fieldName: 'fee_cents' },
    holdingCents: { type: 'integer', fieldName: 'holding_cents' },
    grossCents: { type: bigint(), fieldName: 'gross_cents' },
    feeAmountCents: { type: bigint(), fieldName: 'fee_amount_cents' },
    totalCents: { type: bigint(), fieldName: 'total_cents' },
    status: {
      enum: true,
      items: [...ORDER_STATUSES],
      columnType: 'text',
      default: 'awaiting_payment',
    },
    paymentSource: {
      enum: true,
      items: [...PAYMENT_SOURCES],
      columnType: 'text',
      fieldName: 'payment_source',
      nullable: true,
    },
    // No foreign key: a holder funding a fleet would have every order key-share-lock one holder row.
    paidByHolder: { type: bigint(), fieldName: 'paid_by_holder', nullable: true },
    token: { type: 'text', unique: 'orders_token_key' },
    closesAt: { type: 'double', runtimeType: 'number', fieldName: 'closes_at' },
    createdAt: createdAt(),
    paidAt: timestampNull('paid_at'),
    filledAt: timestampNull('filled_at'),
    positionId: { type: bigint(), fieldName: 'position_id', nullable: true },
    refundReason: { type: 'text', fieldName: 'refund_reason', nullable: true },
    refundedAt: timestampNull('refunded_at'),
    cancelledBy: {
      enum: true,
      items: [...CANCELLED_BY],
      columnType: 'text',
      fieldName: 'cancelled_by',
      nullable: true,
    },
    cancelledAt: timestampNull('cancelled_at'),
    standingAgentId: { type: bigint(), fieldName: 'standing_agent_id', nullable: true },
    receipt: { type: 'text', nullable: true },
  },
  checks: [
    { name: 'orders_qty_check', expression: 'qty > 0' },
    { name: 'orders_check', expression: 'total_cents = gross_cents + fee_amount_cents' },
    {
      name: 'orders_refund_reason',
      expression: `(status = 'refunded') = (refund_reason is not null and refunded_at is not null)`,
    },
    {
      name: 'orders_cancelled',
      expression: `(status = 'cancelled') = (cancelled_by is not null and cancelled_at is not null)`,
    },
  ],
  indexes: [
    { name: 'orders_account', properties: ['account', 'id'] },
    {
      name: 'orders_session',
      expression: `create index orders_session on orders (market, tick) where status in ('awaiting_payment', 'paid')`,
    },
    {
      name: 'orders_standing',
      expression:
        'create index orders_standing on orders (standing_agent_id, paid_at) where standing_agent_id is not null',
    },
  ],
});

/** A position: a filled order; its moving state is the user trade of the record (trade.position_id). */
export type Position = {
  id: number;
  order: Ref<Order>;
  account: Ref<Account>;
  market: string;
  tick: number;
  createdAt: Date;
  transferredUnits?: number | null;
  itemId?: number | null;
  transferredAt?: Date | null;
};
// Owner: market (actors/market/holder-orders.ts: the close fills orders into positions and transfers goods).
export const PositionSchema = new EntitySchema<Position>({
  name: 'Position',
  tableName: 'position',
  properties: {
    id: serialId(),
    order: ref(() => OrderSchema, 'order_id', 'position', { unique: 'position_order_id_key' }),
    account: ref(() => AccountSchema, 'account_id', 'position'),
    market: { type: 'text' },
    tick: { type: bigint() },
    createdAt: createdAt(),
    transferredUnits: { type: 'integer', fieldName: 'transferred_units', nullable: true },
    itemId: { type: bigint(), fieldName: 'item_id', nullable: true },
    transferredAt: timestampNull('transferred_at'),
  },
  indexes: [{ name: 'position_account', properties: ['account', 'id'] }],
});

/** A ledger entry: every movement of an account's balance, with the balance after it. */
export type LedgerEntry = {
  id: number;
  account: Ref<Account>;
  kind: (typeof LEDGER_KINDS)[number];
  amountCents: number;
  balanceAfterCents: number;
  ref: string;
  tick?: number | null;
  createdAt: Date;
};
// Owner: account (actors/account/ledger.ts, the one place money moves, also for the market's close).
export const LedgerEntrySchema = new EntitySchema<LedgerEntry>({
  name: 'LedgerEntry',
  tableName: 'ledger',
  properties: {
    id: serialId(),
    // No foreign key (migration 13): the posting inserts an entry only joined to the account row it
    // updated in the same statement (actors/account/ledger.ts), and accounts are never deleted; the
    // per-row check would cost the close once per entry (20k entries with 10k open positions).
    account: ref(() => AccountSchema, 'account_id', 'ledger', { foreignKey: false }),
    kind: { enum: true, items: [...LEDGER_KINDS], columnType: 'text' },
    amountCents: { type: bigint(), fieldName: 'amount_cents' },
    balanceAfterCents: { type: bigint(), fieldName: 'balance_after_cents' },
    ref: { type: 'text' },
    tick: { type: bigint(), nullable: true },
    createdAt: createdAt(),
  },
  indexes: [{ name: 'ledger_account', properties: ['account', 'id'] }],
  // Entries of a session close carry its tick: a close books a position's session once, whatever replays it.
  uniques: [
    {
      name: 'ledger_close_once',
      expression:
        'create unique index ledger_close_once on ledger (ref, kind, tick) where tick is not null',
    },
  ],
});

/** The participation fee: the primary key makes "once per holder and calendar month" a fact. */
export type MonthlyFee = {
  holder: Ref<Holder>;
  month: string;
  account: Ref<Account>;
  roundId?: number | null;
  amountCents: number;
  createdAt: Date;
};
// Owner: account (actors/account/ledger.ts charges it with the order that first needs it).
export const MonthlyFeeSchema = new EntitySchema<MonthlyFee>({
  name: 'MonthlyFee',
  tableName: 'monthly_fee',
  properties: {
    holder: ref(() => HolderSchema, 'holder_id', 'monthly_fee', { primary: true }),
    month: { type: 'text', primary: true },
    account: ref(() => AccountSchema, 'account_id', 'monthly_fee'),
    roundId: { type: bigint(), fieldName: 'round_id', nullable: true },
    amountCents: { type: bigint(), fieldName: 'amount_cents' },
    createdAt: createdAt(),
  },
});

/** Owned goods: what a position's unsold units became at the end of its horizon. */
export type InventoryItem = {
  id: number;
  account: Ref<Account>;
  holder?: Ref<Holder> | null;
  /** Null on goods bought outright (an own cart). */
  position?: Ref<Position> | null;
  market: string;
  cluster: number;
  title: string;
  qty: number;
  story: string;
  rarity: string;
  rarityScore: number;
  history: unknown;
  economy: unknown;
  source: string;
  /** Bought with a competition account's simulated USD (source `competition`): never sold on the exchange. */
  simulated: Opt<boolean>;
  provenance: unknown;
  createdAt: Date;
};
// Owner: market (actors/market/holder-orders.ts with goods.ts: the close turns unsold units into goods).
export const InventoryItemSchema = new EntitySchema<InventoryItem>({
  name: 'InventoryItem',
  tableName: 'inventory_item',
  properties: {
    id: serialId(),
    account: ref(() => AccountSchema, 'account_id', 'inventory_item'),
    holder: ref(() => HolderSchema, 'holder_id', 'inventory_item', { nullable: true }),
    position: ref(() => PositionSchema, 'position_id', 'inventory_item', {
      nullable: true,
      unique: 'inventory_item_position_id_key',
    }),
    market: { type: 'text' },
    cluster: { type: 'integer' },
    title: { type: 'text' },
    qty: { type: 'integer' },
    story: { type: 'text' },
    rarity: { type: 'text' },
    rarityScore: { type: 'double', runtimeType: 'number', fieldName: 'rarity_score' },
    history: { type: 'json', columnType: 'jsonb' },
    economy: { type: 'json', columnType: 'jsonb' },
    source: { type: 'text' },
    simulated: { type: 'boolean', default: false },
    provenance: { type: 'json', columnType: 'jsonb' },
    createdAt: createdAt(),
  },
  checks: [
    { name: 'inventory_item_qty_check', expression: 'qty > 0' },
    // Written source-first: MikroORM reads a check starting `simulated = '...` as an enum of that column.
    { name: 'inventory_item_simulated_check', expression: "(source = 'competition') = simulated" },
  ],
  indexes: [{ name: 'inventory_account', properties: ['account', 'id'] }],
});

export const tradingEntities = [
  HolderSchema,
  HolderSessionSchema,
  AccountSchema,
  AgentSchema,
  CardSchema,
  TradeRoundSchema,
  OrderSchema,
  PositionSchema,
  LedgerEntrySchema,
  MonthlyFeeSchema,
  InventoryItemSchema,
];
