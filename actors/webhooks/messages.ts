// The webhooks actor's contract (CONTRACT.md "Events" → Webhooks): an agent's webhooks are turns of
// "webhooks:<agent id>" (register, remove); delivering is the turn "webhooks:deliver" the supervisor
// asks every second; the read tasks (reads.ts) list webhooks and deliveries.
import type { EventType } from '../events/messages.js';
import { actorRef } from '../runtime/protocol.js';

/** Live webhooks an agent may have (a 409 beyond). */
export const MAX_WEBHOOKS_PER_AGENT = 10;
/** How long a delivery attempt may take unless told (SVC_WEBHOOK_TIMEOUT_MS): connection to the end of the answer's head and the bytes read. */
export const SEND_TIMEOUT_MS = 5000;
/** The most SVC_WEBHOOK_TIMEOUT_MS may be: an attempt ends well within its claim's lease (60 s). */
export const SEND_TIMEOUT_MAX_MS = 30_000;
/** Deliveries GET /webhooks/{id}/deliveries answers, newest first. */
export const DELIVERIES_LISTED = 100;

export type WebhooksMessage =
  /** Registers `url` for the agent's account's events of `types` (null: every type); the URL was checked by the caller. */
  | { kind: 'register'; agentId: number; url: string; types: EventType[] | null }
  /** Deletes the agent's webhook `webhookId` (404 when the agent has no such live webhook); its pending deliveries fail. */
  | { kind: 'remove'; agentId: number; webhookId: number }
  /**
   * One delivery pass at `at` (real unix seconds, the service clock): record the attempts that
   * ended, enqueue the events after each webhook's cursor, claim due deliveries into the free places
   * (fairly: caps per endpoint and per account), start them (each within `timeoutMs`), then wait at
   * most `waitMs` for one to end and record what ended. Never waits for the slowest attempt.
   */
  | { kind: 'deliver'; at: number; allowPrivate: boolean; timeoutMs: number; waitMs: number };

/** A webhook as made (CONTRACT.md: the 201 answer adds its secret). */
export type WebhookMade = { id: number; url: string; types: EventType[] | null };
/**
 * A webhook as served (never with its secret but in the answer that made it), with its endpoint's
 * health: failed attempts in a row, until when nothing is sent to it (null: not slowed), the last
 * failure's reason.
 */
export type WebhookView = WebhookMade & {
  consecutive_failures: number;
  slowed_until: number | null;
  last_error: string | null;
};
export type WebhookCreated = WebhookMade & { secret: string };
export type WebhookRemoved = { id: number; deleted: true };

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export type DeliveryView = {
  id: number;
  event_id: number;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  /** Pending: not attempted before this instant (real unix seconds); null once delivered or failed. */
  next_attempt_at: number | null;
};
/** A webhook's deliveries, newest first, and the webhook with its health. */
export type DeliveriesView = { webhook: WebhookView; deliveries: DeliveryView[] };

/**
 * What a pass did: deliveries enqueued, sent (attempts started), and of the attempts that ended:
 * delivered, retried (to be tried again), failed for good (with those whose 24 hours ran out);
 * `inFlight`: attempts still running; `more`: a bound was reached, another pass is due at once;
 * `live`: some webhook exists (else a NOTIFY wakes no pass); `backlog`: deliveries due and not yet
 * sent after the pass, and how long ago the earliest fell due (measured at most once a second).
 */
export type DeliverReport = {
  enqueued: number;
  sent: number;
  delivered: number;
  retried: number;
  failed: number;
  inFlight: number;
  more: boolean;
  live: boolean;
  backlog: { due: number; oldestSeconds: number };
};

export type WebhookListArgs = { agentId: number };
/** Null when the agent has no live webhook `webhookId` (a 404). */
export type DeliveriesArgs = { agentId: number; webhookId: number; limit: number };

export type WebhooksReplies = {
  register: WebhookCreated;
  remove: WebhookRemoved;
  deliver: DeliverReport;
};
/** The actor that registers and deletes agent `agentId`'s webhooks. */
export const webhooksRef = (agentId: number) =>
  actorRef<WebhooksMessage, WebhooksReplies>('webhooks', agentId);
/** The actor that delivers (one per process; processes share the work through row locks). */
export const delivererRef = actorRef<WebhooksMessage, WebhooksReplies>('webhooks', 'deliver');
