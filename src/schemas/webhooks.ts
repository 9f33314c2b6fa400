// CONTRACT.md "Events" → Webhooks: an agent's webhooks and their deliveries.
import Type, { type Static } from 'typebox';
import {
  int,
  intOrNull,
  list,
  nullable,
  numOrNull,
  obj,
  oneOf,
  requestBody,
  str,
  strOrNull,
} from './common.js';
import { EVENT_TYPES } from './events.js';

const EventTypeName = oneOf(EVENT_TYPES, 'an event type');
const Types = nullable(Type.Array(EventTypeName), 'the event types delivered; null: every type');

/** POST /webhooks body. */
export const WebhookCreate = requestBody(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'where each event is POSTed: http:// or https://, not a private, loopback or link-local address',
    }),
    types: Type.Optional(
      Type.Array(EventTypeName, {
        minItems: 1,
        maxItems: 100,
        description: 'only these event types (absent: every type)',
      }),
    ),
  },
  { description: 'a webhook to register' },
);
export type WebhookCreate = Static<typeof WebhookCreate>;

const WebhookMade = { id: int('the webhook'), url: str('where events are POSTed'), types: Types };
export const WebhookView = obj(
  {
    ...WebhookMade,
    consecutive_failures: int(
      'attempts in a row that got no 2xx answer (0 after any 2xx); from 3 the endpoint is slowed',
    ),
    slowed_until: numOrNull(
      'while the endpoint keeps failing, nothing is sent to it before this instant (unix seconds), then one attempt at a time: the wait doubles with each further failure (5 s to an hour) and ends at the first 2xx; null: not slowed',
    ),
    last_error: strOrNull(
      'why the last attempt failed (an HTTP status, a time-out, a refused address), null after a 2xx',
    ),
  },
  'a webhook of yours, with how its endpoint is answering',
);
export const WebhookCreated = obj(
  {
    ...WebhookMade,
    secret: str(
      "the signing secret (`whsec_` + base64), shown only in this answer: verify each delivery's `webhook-signature` with it (Standard Webhooks)",
    ),
  },
  'the webhook registered, with its secret',
);
export const WebhooksAnswer = obj(
  { webhooks: list(WebhookView, 'your webhooks, oldest first') },
  'your webhooks',
);
export const WebhookDeleted = obj(
  {
    id: int('the webhook'),
    deleted: Type.Literal(true, { description: 'it receives nothing more' }),
  },
  'the webhook deleted',
);

export const Delivery = obj(
  {
    id: int('the delivery'),
    event_id: int(
      "the event delivered (your account's event id; `webhook-id` is `evt_<account_id>_<event_id>`)",
    ),
    status: oneOf(
      ['pending', 'delivered', 'failed'] as const,
      'pending (being tried), delivered (a 2xx answer), failed (no 2xx within 24 hours of the event)',
    ),
    attempts: int('attempts so far'),
    last_status_code: intOrNull(
      'the HTTP status of the last attempt, null when there was no answer (or no attempt yet)',
    ),
    last_error: strOrNull(
      'why the last attempt failed, null when it did not (or none was made yet)',
    ),
    next_attempt_at: numOrNull(
      "pending: not attempted before this instant (unix seconds; moved to the webhook's slowed_until while its endpoint is slowed; while an attempt is under way, when it may be tried again should that attempt never be recorded); null once delivered or failed",
    ),
  },
  "one event's delivery to the webhook",
);
export const DeliveriesAnswer = obj(
  { webhook: WebhookView, deliveries: list(Delivery, 'the newest deliveries first (at most 100)') },
  'a webhook (with how its endpoint is answering) and its deliveries',
);
