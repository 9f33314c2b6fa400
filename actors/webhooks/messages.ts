// The webhooks actor's contract (CONTRACT.md "Events" → Webhooks): an agent's webhooks are turns of
// "webhooks:<agent id>" (register, remove); delivering is the turn "webhooks:deliver" the supervisor
// asks every second; the read tasks (reads.ts) list webhooks and deliveries.
import type { EventType } from '../events/messages.js';
import { actorRef } from '../runtime/protocol.js';

/** Live webhooks an agent may have (a 409 beyond). */
export const MAX_WEBHOOKS_PER_AGENT = 10;
/** Deliveries GET /webhooks/{id}/deliveries answers, newest first. */
export const DELIVERIES_LISTED = 100;

export type WebhooksMessage =
  /** Registers `url` for the agent's account's events of `types` (null: every type); the URL was checked by the caller. */
  | { kind: 'register'; agentId: number; url: string; types: EventType[] | null }
  /** Deletes the agent's webhook `webhookId` (404 when the agent has no such live webhook); its pending deliveries fail. */
  | { kind: 'remove'; agentId: number; webhookId: number }
  /**
   * One delivery pass at `at` (real unix seconds, the service clock): enqueue the events after each
   * webhook's cursor, claim the due deliveries, send them, record the results.
   */
  | { kind: 'deliver'; at: number; allowPrivate: boolean };

/** A webhook as served (never with its secret but in the answer that made it). */
export type WebhookView = { id: number; url: string; types: EventType[] | null };
export type WebhookCreated = WebhookView & { secret: string };
export type WebhookRemoved = { id: number; deleted: true };

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type DeliveryView = { id: number; event_id: number; status: DeliveryStatus; attempts: number; last_status_code: number | null };

/**
 * What a pass did: deliveries enqueued, sent (claimed), delivered, failed for good; `more`: a bound
 * was reached, another pass is due at once; `live`: some webhook exists (else a NOTIFY wakes no pass).
 */
export type DeliverReport = { enqueued: number; sent: number; delivered: number; failed: number; more: boolean; live: boolean };

export type WebhookListArgs = { agentId: number };
/** Null when the agent has no live webhook `webhookId` (a 404). */
export type DeliveriesArgs = { agentId: number; webhookId: number; limit: number };

export type WebhooksReplies = { register: WebhookCreated; remove: WebhookRemoved; deliver: DeliverReport };
/** The actor that registers and deletes agent `agentId`'s webhooks. */
export const webhooksRef = (agentId: number) => actorRef<WebhooksMessage, WebhooksReplies>('webhooks', agentId);
/** The actor that delivers (one per process; processes share the work through row locks). */
export const delivererRef = actorRef<WebhooksMessage, WebhooksReplies>('webhooks', 'deliver');
