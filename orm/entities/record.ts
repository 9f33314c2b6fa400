// The public record (migrations 0001 and 0002): sessions, their menus, the trades that executed
// them, the tape, and the history-load progress per market. Every table here is written by the
// market actor (actors/market): its close and its history backfill.
import { EntitySchema, type Opt } from '@mikro-orm/core';
import { bigint, createdAt, instant, intArray, timestampNull } from './columns.js';

export const SESSION_SOURCES = ['live', 'backfill'] as const;
export const TRADE_ACTORS = ['house', 'user'] as const;
export type TradeActor = (typeof TRADE_ACTORS)[number];

/** One row per (market, tick) ever opened; closed_at set exactly once by the market's close. */
export type MarketSession = {
  market: string;
  tick: number;
  openedAt: Date;
  closedAt?: Date | null;
  closeMs?: number | null;
  source: Opt<(typeof SESSION_SOURCES)[number]>;
  recorded: Opt<boolean>;
};
// Owner: market (actors/market/actor.ts opens and closes sessions; the backfill records old ones).
export const MarketSessionSchema = new EntitySchema<MarketSession>({
  name: 'MarketSession',
  tableName: 'market_session',
  properties: {
    market: { type: 'text', primary: true },
    tick: { type: bigint(), primary: true },
    openedAt: instant('opened_at'),
    closedAt: timestampNull('closed_at'),
    closeMs: { type: 'integer', fieldName: 'close_ms', nullable: true },
    source: { enum: true, items: [...SESSION_SOURCES], columnType: 'text', default: 'live' },
    recorded: { type: 'boolean', default: false },
  },
  indexes: [
    {
      name: 'market_session_open',
      expression:
        'create index market_session_open on market_session (market) where closed_at is null',
    },
  ],
});

/** A menu row of a recorded session: the deal the house offered at `idx`. */
export type MenuRow = {
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  cluster: number;
  unitCostCents: number;
  listPriceCents: number;
  listedAt: number;
  maxQty: number;
  houseAccepted: boolean;
  houseQty: number;
  deal: Record<string, unknown>;
};
// Owner: market (actors/market/store.ts writes the menu at the close or the backfill).
export const MenuRowSchema = new EntitySchema<MenuRow>({
  name: 'MenuRow',
  tableName: 'menu_row',
  properties: {
    market: { type: 'text', primary: true },
    tick: { type: bigint(), primary: true },
    idx: { type: 'integer', primary: true },
    offerKey: { type: 'text', fieldName: 'offer_key', unique: 'menu_row_offer_key' },
    cluster: { type: 'integer' },
    unitCostCents: { type: 'integer', fieldName: 'unit_cost_cents' },
    listPriceCents: { type: 'integer', fieldName: 'list_price_cents' },
    listedAt: { type: 'double', runtimeType: 'number', fieldName: 'listed_at' },
    maxQty: { type: 'integer', fieldName: 'max_qty' },
    houseAccepted: { type: 'boolean', fieldName: 'house_accepted' },
    houseQty: { type: 'integer', fieldName: 'house_qty' },
    deal: { type: 'json', columnType: 'jsonb' },
  },
});

/**
 * A trade of the record: the house's (one per menu row at most) or a holder's position (actor
 * 'user', position_id set). State columns advance at each close until `settled`. account_id and
 * position_id carry no foreign key (the record is written by the close, in bulk).
 */
export type Trade = {
  id: number;
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  cluster: number;
  actor: (typeof TRADE_ACTORS)[number];
  accountId?: number | null;
  positionId?: number | null;
  qty: number;
  unitCostCents: number;
  listPriceCents: number;
  feeCents: number;
  holdingCents: number;
  costBasisCents: number;
  horizon: Opt<number>;
  revealedTicks: Opt<number>;
  salesByTick: Opt<number[]>;
  unitsSold: Opt<number>;
  qtyLeft: number;
  revenueCents: Opt<number>;
  holdingCostCents: Opt<number>;
  settled: Opt<boolean>;
  soldOut?: boolean | null;
  regime?: boolean | null;
  surchargeCents?: number | null;
  writeoffCents?: number | null;
  realizedPnlCents?: number | null;
  priceByTickCents?: number[] | null;
  nsellersByTick?: number[] | null;
  createdAt: Date;
  settledAt?: Date | null;
};
// Owner: market (actors/market/store.ts: the house's trades at the close, holders' at their fill, settlement).
export const TradeSchema = new EntitySchema<Trade>({
  name: 'Trade',
  tableName: 'trade',
  properties: {
    id: { type: bigint(), primary: true, autoincrement: true },
    market: { type: 'text' },
    tick: { type: bigint() },
    idx: { type: 'integer' },
    offerKey: { type: 'text', fieldName: 'offer_key' },
    cluster: { type: 'integer' },
    actor: { enum: true, items: [...TRADE_ACTORS], columnType: 'text' },
    accountId: { type: bigint(), fieldName: 'account_id', nullable: true },
    positionId: { type: bigint(), fieldName: 'position_id', nullable: true },
    qty: { type: 'integer' },
    unitCostCents: { type: 'integer', fieldName: 'unit_cost_cents' },
    listPriceCents: { type: 'integer', fieldName: 'list_price_cents' },
    feeCents: { type: 'integer', fieldName: 'fee_cents' },
    holdingCents: { type: 'integer', fieldName: 'holding_cents' },
    costBasisCents: { type: bigint(), fieldName: 'cost_basis_cents' },
    horizon: { type: 'integer', default: 8 },
    revealedTicks: { type: 'integer', fieldName: 'revealed_ticks', default: 0 },
    salesByTick: {
      type: intArray(),
      columnType: 'integer[]',
      fieldName: 'sales_by_tick',
      defaultRaw: `'{}'`,
    },
    unitsSold: { type: 'integer', fieldName: 'units_sold', default: 0 },
    qtyLeft: { type: 'integer', fieldName: 'qty_left' },
    revenueCents: { type: bigint(), fieldName: 'revenue_cents', default: 0 },
    holdingCostCents: { type: bigint(), fieldName: 'holding_cost_cents', default: 0 },
    settled: { type: 'boolean', default: false },
    soldOut: { type: 'boolean', fieldName: 'sold_out', nullable: true },
    regime: { type: 'boolean', nullable: true },
    surchargeCents: { type: bigint(), fieldName: 'surcharge_cents', nullable: true },
    writeoffCents: { type: bigint(), fieldName: 'writeoff_cents', nullable: true },
    realizedPnlCents: { type: bigint(), fieldName: 'realized_pnl_cents', nullable: true },
    priceByTickCents: {
      type: intArray(),
      columnType: 'integer[]',
      fieldName: 'price_by_tick_cents',
      nullable: true,
    },
    nsellersByTick: {
      type: intArray(),
      columnType: 'integer[]',
      fieldName: 'nsellers_by_tick',
      nullable: true,
    },
    createdAt: createdAt(),
    settledAt: timestampNull('settled_at'),
  },
  checks: [
    { name: 'trade_qty_check', expression: 'qty > 0' },
    { name: 'trade_check', expression: 'units_sold + qty_left = qty' },
  ],
  indexes: [
    { name: 'trade_market_tick', properties: ['market', 'tick'] },
    {
      name: 'trade_open',
      expression: 'create index trade_open on trade (market, tick) where not settled',
    },
    {
      name: 'trade_account',
      expression: 'create index trade_account on trade (account_id) where account_id is not null',
    },
  ],
  uniques: [
    // The house executes a menu row at most once, whatever replays or processes run the close.
    {
      name: 'trade_house_once',
      expression: `create unique index trade_house_once on trade (market, tick, idx) where actor = 'house'`,
    },
    {
      name: 'trade_position',
      expression:
        'create unique index trade_position on trade (position_id) where position_id is not null',
    },
  ],
});

/** A tape row of a session and family (cluster -1 is the whole market). */
export type Tape = { market: string; tick: number; cluster: number; row: Record<string, unknown> };
// Owner: market (actors/market/store.ts writes the tape at the close or the backfill).
export const TapeSchema = new EntitySchema<Tape>({
  name: 'Tape',
  tableName: 'tape',
  properties: {
    market: { type: 'text', primary: true },
    tick: { type: bigint(), primary: true },
    cluster: { type: 'integer', primary: true },
    row: { type: 'json', columnType: 'jsonb' },
  },
});

/** The history-load progress of one market. */
export type HistoryLoad = {
  market: string;
  liveStart: number;
  fromTick: number;
  sessionsTotal: number;
  sessionsLoaded: Opt<number>;
  engine: Record<string, unknown>;
  startedAt: Date;
  finishedAt?: Date | null;
};
// Owner: market (actors/market/actor.ts: the history backfill's progress).
export const HistoryLoadSchema = new EntitySchema<HistoryLoad>({
  name: 'HistoryLoad',
  tableName: 'history_load',
  properties: {
    market: { type: 'text', primary: true },
    liveStart: { type: bigint(), fieldName: 'live_start' },
    fromTick: { type: bigint(), fieldName: 'from_tick' },
    sessionsTotal: { type: 'integer', fieldName: 'sessions_total' },
    sessionsLoaded: { type: 'integer', fieldName: 'sessions_loaded', default: 0 },
    engine: { type: 'json', columnType: 'jsonb' },
    startedAt: instant('started_at'),
    finishedAt: timestampNull('finished_at'),
  },
});

export const recordEntities = [
  MarketSessionSchema,
  MenuRowSchema,
  TradeSchema,
  TapeSchema,
  HistoryLoadSchema,
];
