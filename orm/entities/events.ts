// The event log (migration 0015, CONTRACT.md "Events"): what an agent learns without polling.
import { EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt } from './columns.js';
import { AccountSchema, ref, type Account } from './trading.js';

/** One event of an account: its id is the account's own gap-free sequence (account.event_seq). */
export type AccountEvent = { account: Ref<Account>; id: number; type: string; data: unknown; createdAt: Opt<Date> };
// Owner: whichever turn makes the change (actors/events/log.ts appends in that turn's transaction:
// the order batch, the pay turn, the close, carts, grants, the funding switch, every posting); the
// answers actor sweeps events past their retention.
export const AccountEventSchema = new EntitySchema<AccountEvent>({
  name: 'AccountEvent',
  tableName: 'account_event',
  properties: {
    // No foreign key (migration 18): the append inserts events only joined to the head rows its own
    // statement upserted (the head keeps its key to `account`); the per-row check was half the insert.
    account: ref(() => AccountSchema, 'account_id', 'account_event', { primary: true, foreignKey: false }),
    id: { type: bigint(), primary: true },
    type: { type: 'text' },
    // json, not jsonb: served whole, never queried inside; stored as built (migration 18).
    data: { type: 'json', columnType: 'json' },
    createdAt: createdAt(),
  },
  checks: [{ name: 'account_event_id_check', expression: 'id > 0' }],
  indexes: [{ name: 'account_event_created', properties: ['createdAt'] }],
});

/** An account's last event id: an append moves it by the events it adds (gap-free ids). */
export type AccountEventHead = { account: Ref<Account>; lastId: number };
// Owner: the same appends (actors/events/log.ts).
export const AccountEventHeadSchema = new EntitySchema<AccountEventHead>({
  name: 'AccountEventHead',
  tableName: 'account_event_head',
  properties: {
    account: ref(() => AccountSchema, 'account_id', 'account_event_head', { primary: true, deleteRule: 'cascade' }),
    lastId: { type: bigint(), fieldName: 'last_id' },
  },
  checks: [{ name: 'account_event_head_last_id_check', expression: 'last_id > 0' }],
});

export const eventEntities = [AccountEventSchema, AccountEventHeadSchema];
