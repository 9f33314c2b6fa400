// Read tasks of the webhooks: an agent's live webhooks (never their secrets) and one webhook's
// deliveries, newest first (bounded). Another agent's webhook, or a deleted one, is none (404).
import { defineReads } from '../runtime/read.js';
import type { DeliveriesArgs, DeliveryView, WebhookListArgs, WebhookView } from './messages.js';

export const webhookReads = defineReads({
  'webhooks.list': async ({ em }, a: WebhookListArgs): Promise<WebhookView[]> =>
    em.execute<WebhookView[]>(
      'select id::float8 as id, url, types from webhook where agent_id = ? and deleted_at is null order by id',
      [a.agentId],
    ),
  'webhooks.deliveries': async ({ em }, a: DeliveriesArgs): Promise<DeliveryView[] | null> => {
    const [w] = await em.execute('select 1 from webhook where id = ? and agent_id = ? and deleted_at is null', [a.webhookId, a.agentId]);
    if (!w) return null;
    return em.execute<DeliveryView[]>(
      `select id::float8 as id, event_id::float8 as event_id, status, attempts, last_status_code
         from webhook_delivery where webhook_id = ? order by event_id desc limit ?`,
      [a.webhookId, a.limit],
    );
  },
});
