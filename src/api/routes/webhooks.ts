// An agent's webhooks (CONTRACT.md "Events" → Webhooks): register a URL for its account's events
// (the URL checked here: http(s), no private, loopback or link-local address as written or as it
// resolves, unless SVC_WEBHOOK_ALLOW_PRIVATE=1), list, delete, and each webhook's deliveries.
// Changes are turns of "webhooks:<agent id>"; delivery is the webhooks actor's own pass, asked by
// the supervisor (actors/webhooks/).
import Type, { type Static } from 'typebox';
import { read } from '../../../actors/runtime/client.js';
import {
  DELIVERIES_LISTED,
  webhooksRef,
  type WebhookCreated as Created,
} from '../../../actors/webhooks/messages.js';
import { checkWebhookUrl } from '../../net/webhook-address.js';
import {
  HttpError,
  json,
  route,
  type AgentContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import {
  DeliveriesAnswer,
  WebhookCreate,
  WebhookCreated,
  WebhookDeleted,
  WebhooksAnswer,
  rowId,
} from '../../schemas/index.js';
import type { Services } from '../../http/services.js';

const Params = Type.Object({ id: rowId('webhook id') });
type Params = Static<typeof Params>;
const noWebhook = (id: number) => new HttpError(404, `no webhook ${id} of yours`);
const created = (r: Created): Reply =>
  json({ id: r.id, url: r.url, types: r.types, secret: r.secret }, 201);

export function webhookRoutes(s: Services): Route[] {
  return [
    route<unknown, unknown, WebhookCreate>({
      method: 'POST',
      path: '/api/v1/webhooks',
      operationId: 'create_webhook',
      auth: 'key',
      summary:
        'Register a webhook: each event of my account (or of `types`) is POSTed to `url`, signed per Standard Webhooks with the `secret` answered once',
      body: WebhookCreate,
      response: { 201: WebhookCreated },
      responses: {
        409: { description: 'the most webhooks an agent may have (10): delete one first' },
        422: {
          description:
            'not an http(s) URL, or its host is (or resolves to) a private, loopback or link-local address',
        },
      },
      handler: (c) => createWebhook(s, c),
      replay: created,
    }),
    route({
      method: 'GET',
      path: '/api/v1/webhooks',
      operationId: 'list_webhooks',
      auth: 'key',
      summary:
        'My webhooks (without their secrets), each with how its endpoint is answering (consecutive failures, slowed until)',
      response: { 200: WebhooksAnswer },
      handler: (c) => listWebhooks(s, c),
    }),
    route<Params>({
      method: 'DELETE',
      path: '/api/v1/webhooks/{id}',
      operationId: 'delete_webhook',
      auth: 'key',
      summary: 'Delete a webhook: nothing more is sent to it (its pending deliveries fail)',
      params: Params,
      response: { 200: WebhookDeleted },
      responses: { 404: { description: 'no webhook of mine with this id' } },
      handler: (c) => deleteWebhook(s, c),
    }),
    route<Params>({
      method: 'GET',
      path: '/api/v1/webhooks/{id}/deliveries',
      operationId: 'list_webhook_deliveries',
      auth: 'key',
      summary: `A webhook's deliveries, newest first (at most ${DELIVERIES_LISTED}): pending, delivered or failed, with attempts and the last HTTP status; and the webhook, with how its endpoint is answering (slowed while it keeps failing)`,
      params: Params,
      response: { 200: DeliveriesAnswer },
      responses: { 404: { description: 'no webhook of mine with this id' } },
      handler: (c) => listWebhookDeliveries(s, c),
    }),
  ];
}

async function createWebhook(
  s: Services,
  { body, principal, idem }: AgentContext<unknown, unknown, WebhookCreate>,
): Promise<Reply> {
  const verdict = await checkWebhookUrl(body.url, s.config.webhookAllowPrivate);
  if (!verdict.ok)
    throw new HttpError(422, [
      { loc: ['body', 'url'], msg: verdict.refused, type: 'value_error', input: body.url },
    ]);
  const agentId = principal.agentId;
  const types = body.types ? [...new Set(body.types)] : null;
  return created(
    await s.runtime.ask(
      webhooksRef(agentId),
      { kind: 'register', agentId, url: body.url, types },
      { idem },
    ),
  );
}

async function listWebhooks(s: Services, { principal }: AgentContext): Promise<Reply> {
  return json({ webhooks: await read(s.runtime, 'webhooks.list', { agentId: principal.agentId }) });
}

async function deleteWebhook(
  s: Services,
  { params, principal, idem }: AgentContext<Params>,
): Promise<Reply> {
  const agentId = principal.agentId;
  return json(
    await s.runtime.ask(
      webhooksRef(agentId),
      { kind: 'remove', agentId, webhookId: params.id },
      { idem },
    ),
  );
}

async function listWebhookDeliveries(
  s: Services,
  { params, principal }: AgentContext<Params>,
): Promise<Reply> {
  const answer = await read(s.runtime, 'webhooks.deliveries', {
    agentId: principal.agentId,
    webhookId: params.id,
    limit: DELIVERIES_LISTED,
  });
  if (!answer) throw noWebhook(params.id);
  return json(answer);
}
