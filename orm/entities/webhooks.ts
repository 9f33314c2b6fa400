// Webhooks (migration 0016, CONTRACT.md "Events" → Webhooks): an agent's endpoints and the
// deliveries of its account's events to them.
import { ArrayType, EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt, serialId, timestampNull } from './columns.js';
import { AccountSchema, AgentSchema, ref, type Account, type Agent } from './trading.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

/** An agent's webhook: `types` null is every type; `lastEventId` the cursor (the last event enqueued). */
export type Webhook = {
  id: number;
  agent: Ref<Agent>;
  account: Ref<Account>;
  url: string;
  types?: string[] | null;
  secret: string;
  lastEventId: Opt<number>;
  createdAt: Date;
  deletedAt?: Date | null;
  /** Attempts in a row with no 2xx (0 after any 2xx). */
  consecutiveFailures: Opt<number>;
  /** Real unix seconds (the service clock): a failing endpoint gets nothing before it; null when healthy. */
  slowedUntil?: number | null;
  /** Why the last attempt failed (null after a 2xx). */
  lastError?: string | null;
};
// Owner: webhooks (actors/webhooks/actor.ts: `register` and `remove`, a turn of webhooks:<agent id>;
// the delivery turn, webhooks:deliver, moves the cursor as it enqueues and keeps the endpoint's
// health: consecutive failures, slowed until, last error).
export const WebhookSchema = new EntitySchema<Webhook>({
  name: 'Webhook',
  tableName: 'webhook',
  properties: {
    id: serialId(),
    agent: ref(() => AgentSchema, 'agent_id', 'webhook', { deleteRule: 'cascade' }),
    account: ref(() => AccountSchema, 'account_id', 'webhook', { deleteRule: 'cascade' }),
    url: { type: 'text' },
    types: { type: new ArrayType<string>(), columnType: 'text[]', nullable: true },
    secret: { type: 'text' },
    lastEventId: { type: bigint(), fieldName: 'last_event_id', default: 0 },
    createdAt: createdAt(),
    deletedAt: timestampNull('deleted_at'),
    consecutiveFailures: { type: 'integer', fieldName: 'consecutive_failures', default: 0 },
    slowedUntil: {
      type: 'double',
      runtimeType: 'number',
      fieldName: 'slowed_until',
      nullable: true,
    },
    lastError: { type: 'text', fieldName: 'last_error', nullable: true },
  },
  checks: [
    { name: 'webhook_url_check', expression: 'length(url) <= 2048' },
    { name: 'webhook_last_event_id_check', expression: 'last_event_id >= 0' },
    { name: 'webhook_consecutive_failures_check', expression: 'consecutive_failures >= 0' },
  ],
  indexes: [
    {
      name: 'webhook_agent',
      expression: 'create index webhook_agent on webhook (agent_id, id) where deleted_at is null',
    },
    {
      name: 'webhook_live',
      expression: 'create index webhook_live on webhook (account_id) where deleted_at is null',
    },
  ],
});

/** One event to one webhook: pending until a 2xx (delivered) or until `expiresAt` passes (failed). */
export type WebhookDelivery = {
  id: number;
  webhook: Ref<Webhook>;
  account: Ref<Account>;
  eventId: number;
  status: Opt<(typeof DELIVERY_STATUSES)[number]>;
  attempts: Opt<number>;
  lastStatusCode?: number | null;
  lastError?: string | null;
  /** Real unix seconds (the service clock): when it is due; a claim pushes it forward by the lease. */
  nextAttemptAt: number;
  /** Real unix seconds: 24 hours after the event; no attempt is made after it. */
  expiresAt: number;
  createdAt: Date;
  deliveredAt?: Date | null;
};
// Owner: webhooks (actors/webhooks/actor.ts `deliver`: enqueued from the log, claimed with
// FOR UPDATE SKIP LOCKED, results recorded; `remove` fails a deleted webhook's pending ones).
export const WebhookDeliverySchema = new EntitySchema<WebhookDelivery>({
  name: 'WebhookDelivery',
  tableName: 'webhook_delivery',
  properties: {
    id: serialId(),
    webhook: ref(() => WebhookSchema, 'webhook_id', 'webhook_delivery', { deleteRule: 'cascade' }),
    account: ref(() => AccountSchema, 'account_id', 'webhook_delivery', { deleteRule: 'cascade' }),
    eventId: { type: bigint(), fieldName: 'event_id' },
    status: { enum: true, items: [...DELIVERY_STATUSES], columnType: 'text', default: 'pending' },
    attempts: { type: 'integer', default: 0 },
    lastStatusCode: { type: 'integer', fieldName: 'last_status_code', nullable: true },
    lastError: { type: 'text', fieldName: 'last_error', nullable: true },
    nextAttemptAt: { type: 'double', runtimeType: 'number', fieldName: 'next_attempt_at' },
    expiresAt: { type: 'double', runtimeType: 'number', fieldName: 'expires_at' },
    createdAt: createdAt(),
    deliveredAt: timestampNull('delivered_at'),
  },
  uniques: [{ name: 'webhook_delivery_once', properties: ['webhook', 'eventId'] }],
  checks: [
    { name: 'webhook_delivery_attempts_check', expression: 'attempts >= 0' },
    {
      name: 'webhook_delivery_delivered',
      expression: `(status = 'delivered') = (delivered_at is not null)`,
    },
  ],
  indexes: [
    {
      name: 'webhook_delivery_due',
      expression: `create index webhook_delivery_due on webhook_delivery (next_attempt_at) where status = 'pending'`,
    },
    {
      name: 'webhook_delivery_pending',
      expression: `create index webhook_delivery_pending on webhook_delivery (webhook_id) where status = 'pending'`,
    },
    { name: 'webhook_delivery_created', properties: ['createdAt'] },
  ],
});

export const webhookEntities = [WebhookSchema, WebhookDeliverySchema];
