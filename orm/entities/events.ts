// The event log (migration 0015, CONTRACT.md "Events"): what an agent learns without polling.
import { EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt } from './columns.js';
import { AccountSchema, ref, type Account } from './trading.js';

/**
 * One event of an account: its id is the account's own gap-free sequence (account.event_seq). A
 * position event keeps its position and the figures its close moved instead of `data` (migration 19,
 * actors/events/position-events.ts).
 */
export type AccountEvent = {
  account: Ref<Account>;
  id: number;
  type: string;
  data: Opt<unknown> | null;
  createdAt: Date;
  positionId: number | null;
  sessionTick: number | null;
  sessionSold: number | null;
  sessionRevenueCents: number | null;
  sessionHoldingCents: number | null;
  revealedTicks: number | null;
  qtyLeft: number | null;
  unitsSold: number | null;
  revenueCents: number | null;
  holdingCostCents: number | null;
};
// Owner: whichever turn makes the change (actors/events/log.ts appends in that turn's transaction:
// the order batch, the pay turn, the close, carts, grants, the funding switch, every posting); the
// answers actor sweeps events past their retention.
export const AccountEventSchema = new EntitySchema<AccountEvent>({
  name: 'AccountEvent',
  tableName: 'account_event',
  properties: {
    // No foreign key (migration 18): the append inserts events only joined to the head rows its own
    // statement upserted (the head keeps its key to `account`); the per-row check would be a large
    // share of the insert.
    account: ref(() => AccountSchema, 'account_id', 'account_event', {
      primary: true,
      foreignKey: false,
    }),
    id: { type: bigint(), primary: true },
    type: { type: 'text' },
    // json, not jsonb: served whole, never queried inside; stored as built (migration 18).
    data: { type: 'json', columnType: 'json', nullable: true },
    createdAt: createdAt(),
    positionId: { type: bigint(), fieldName: 'position_id', nullable: true },
    sessionTick: { type: bigint(), fieldName: 'session_tick', nullable: true },
    sessionSold: { type: 'integer', fieldName: 'session_sold', nullable: true },
    sessionRevenueCents: { type: bigint(), fieldName: 'session_revenue_cents', nullable: true },
    sessionHoldingCents: { type: bigint(), fieldName: 'session_holding_cents', nullable: true },
    revealedTicks: { type: 'integer', fieldName: 'revealed_ticks', nullable: true },
    qtyLeft: { type: 'integer', fieldName: 'qty_left', nullable: true },
    unitsSold: { type: 'integer', fieldName: 'units_sold', nullable: true },
    revenueCents: { type: bigint(), fieldName: 'revenue_cents', nullable: true },
    holdingCostCents: { type: bigint(), fieldName: 'holding_cost_cents', nullable: true },
  },
  checks: [
    { name: 'account_event_id_check', expression: 'id > 0' },
    { name: 'account_event_data_check', expression: 'data is not null or position_id is not null' },
  ],
  indexes: [{ name: 'account_event_created', properties: ['createdAt'] }],
});

/** An account's last event id: an append moves it by the events it adds (gap-free ids). */
export type AccountEventHead = { account: Ref<Account>; lastId: number };
// Owner: the same appends (actors/events/log.ts).
export const AccountEventHeadSchema = new EntitySchema<AccountEventHead>({
  name: 'AccountEventHead',
  tableName: 'account_event_head',
  properties: {
    account: ref(() => AccountSchema, 'account_id', 'account_event_head', {
      primary: true,
      deleteRule: 'cascade',
    }),
    lastId: { type: bigint(), fieldName: 'last_id' },
  },
  checks: [{ name: 'account_event_head_last_id_check', expression: 'last_id > 0' }],
});

export const eventEntities = [AccountEventSchema, AccountEventHeadSchema];
