// CONTRACT.md "Events" → Webhooks: an agent's webhooks and their deliveries.
import Type, { type Static } from 'typebox';
import { int, intOrNull, list, nullable, obj, oneOf, requestBody, str } from './common.js';
import { EVENT_TYPES } from './events.js';

const EventTypeName = oneOf(EVENT_TYPES, 'an event type');
const Types = nullable(Type.Array(EventTypeName), 'the event types delivered; null: every type');

/** POST /webhooks body. */
export const WebhookCreate = requestBody({
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'where each event is POSTed: http:// or https://, not a private, loopback or link-local address' }),
  types: Type.Optional(Type.Array(EventTypeName, { minItems: 1, maxItems: 100, description: 'only these event types (absent: every type)' })),
}, { description: 'a webhook to register' });
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookView = obj(
  { id: int('the webhook'), url: str('where events are POSTed'), types: Types },
  'a webhook of yours',
);
export const WebhookCreated = obj(
  {
    ...WebhookView.properties,
    secret: str('the signing secret (`whsec_` + base64), shown only in this answer: verify each delivery\'s `webhook-signature` with it (Standard Webhooks)'),
  },
  'the webhook registered, with its secret',
);
export const WebhooksAnswer = obj({ webhooks: list(WebhookView, 'your webhooks, oldest first') }, 'your webhooks');
export const WebhookDeleted = obj({ id: int('the webhook'), deleted: Type.Literal(true, { description: 'it receives nothing more' }) }, 'the webhook deleted');

export const Delivery = obj(
  {
    id: int('the delivery'),
    event_id: int('the event delivered (your account\'s event id; `webhook-id` is `evt_<account_id>_<event_id>`)'),
    status: oneOf(['pending', 'delivered', 'failed'] as const, 'pending (being tried), delivered (a 2xx answer), failed (no 2xx within 24 hours of the event)'),
    attempts: int('attempts so far'),
    last_status_code: intOrNull('the HTTP status of the last attempt, null when there was no answer (or no attempt yet)'),
  },
  'one event\'s delivery to the webhook',
);
export const DeliveriesAnswer = obj({ deliveries: list(Delivery, 'the newest deliveries first (at most 100)') }, 'a webhook\'s deliveries');
