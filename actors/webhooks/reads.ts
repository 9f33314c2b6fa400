// Read tasks of the webhooks: an agent's live webhooks (never their secrets), each with its
// endpoint's health, and one webhook's deliveries, newest first (bounded), with the webhook.
// Another agent's webhook, or a deleted one, is none (404).
import { defineReads } from '../runtime/read.js';
import type {
  DeliveriesArgs,
  DeliveriesView,
  DeliveryView,
  WebhookListArgs,
  WebhookView,
} from './messages.js';

const WEBHOOK_COLUMNS =
  'id::float8 as id, url, types, consecutive_failures, slowed_until, last_error';

export const webhookReads = defineReads({
  'webhooks.list': async ({ em }, a: WebhookListArgs): Promise<WebhookView[]> =>
    em.execute<WebhookView[]>(
      `select ${WEBHOOK_COLUMNS} from webhook where agent_id = ? and deleted_at is null order by id`,
      [a.agentId],
    ),
  'webhooks.deliveries': async ({ em }, a: DeliveriesArgs): Promise<DeliveriesView | null> => {
    const [webhook] = await em.execute<WebhookView[]>(
      `select ${WEBHOOK_COLUMNS} from webhook where id = ? and agent_id = ? and deleted_at is null`,
      [a.webhookId, a.agentId],
    );
    if (!webhook) return null;
    const deliveries = await em.execute<DeliveryView[]>(
      `select id::float8 as id, event_id::float8 as event_id, status, attempts, last_status_code, last_error,
              case when status = 'pending' then next_attempt_at end as next_attempt_at
         from webhook_delivery where webhook_id = ? order by event_id desc limit ?`,
      [a.webhookId, a.limit],
    );
    return { webhook, deliveries };
  },
});
