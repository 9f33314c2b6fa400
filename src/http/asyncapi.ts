// /api/asyncapi.json (issue 27 item 7): the AsyncAPI 3.0 document of what the service pushes, built
// from the same TypeBox schemas the routes validate and serve (src/schemas/events.ts), so it cannot
// drift from the payloads: the account's Server-Sent Events stream (one message per event type),
// the public market stream, the WebSocket (the `account` and `market:{market_id}` channels, and the
// `auth` / `subscribe` messages a client sends) and the webhook deliveries with their Standard
// Webhooks headers. Operations are the service's own: `send` is what it sends you, `receive` what
// it takes from you (AsyncAPI 3 describes the application's side).
import type { TSchema } from 'typebox';
import { MARKET_IDS } from '../engine/index.js';
import { EVENT_DATA, EVENT_TYPES, Event, EventsQuery, NAMED_SCHEMAS, SessionClosed, type EventType } from '../schemas/index.js';
import { SERVICE_NAME } from './content/manifest.js';
import { EVENT_RETENTION_DAYS, EVENT_WHEN, WEBHOOK_RETRY_HOURS } from './content/events.js';
import { KEEPALIVE_MS } from './event-hub.js';
import { API_PREFIX } from './content/route-paths.js';

type Json = Record<string, unknown>;

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const messageRef = (name: string) => ({ $ref: `#/components/messages/${name}` });
const channelRef = (name: string) => ({ $ref: `#/channels/${name}` });
const serverRef = (name: string) => ({ $ref: `#/servers/${name}` });
/** A JSON Pointer token (`/` and `~` escaped). */
const token = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** The markets a `market:{market_id}` channel or stream takes. */
const MARKET_PARAM = { enum: [...MARKET_IDS], description: 'the market' };

/** The API key on a stream or WebSocket upgrade: CONTRACT.md's two headers. */
const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key> (the 80-character key the agent registered)' },
  apiToken: { type: 'httpApiKey', in: 'header', name: 'X-API-Token', description: 'the API key in X-API-Token' },
};
const KEYED = [{ $ref: '#/components/securitySchemes/bearer' }, { $ref: '#/components/securitySchemes/apiToken' }];

/** The query of GET /events/stream (Last-Event-ID, when sent, wins over `after`). */
const STREAM_QUERY = {
  type: 'object',
  properties: {
    after: { type: 'integer', minimum: 0, description: 'the last event id you have; the header Last-Event-ID, when sent, wins' },
    types: { ...EventsQuery.properties.types },
  },
  additionalProperties: false,
};

/** What the WebSocket takes and sends (CONTRACT.md "Events"), as JSON Schema. */
const WS_CHANNEL_NAME = `^(account|market:(${MARKET_IDS.join('|')}))$`;
const WS_SCHEMAS: Record<string, Json> = {
  AuthCommand: {
    type: 'object',
    description: 'authenticate the connection (unless the upgrade carried the key in its Authorization header)',
    required: ['op', 'key'],
    properties: { op: { type: 'string', const: 'auth' }, key: { type: 'string', description: 'your API key' } },
    additionalProperties: false,
  },
  SubscribeCommand: {
    type: 'object',
    description: 'subscribe to channels; `after` resumes the account channel after that event id (every later event exactly once)',
    required: ['op', 'channels'],
    properties: {
      op: { type: 'string', const: 'subscribe' },
      channels: { type: 'array', minItems: 1, items: { type: 'string', pattern: WS_CHANNEL_NAME }, description: '"account" and/or "market:<market_id>"' },
      after: { type: 'integer', minimum: 0, description: 'the last account event id you have' },
    },
    additionalProperties: false,
  },
  AccountFrame: {
    type: 'object',
    description: 'an event of your account',
    required: ['channel', 'event'],
    properties: { channel: { type: 'string', const: 'account' }, event: schemaRef('Event') },
  },
  MarketFrame: {
    type: 'object',
    description: 'a session close of a subscribed market',
    required: ['channel', 'event'],
    properties: {
      channel: { type: 'string', pattern: `^market:(${MARKET_IDS.join('|')})$` },
      event: {
        type: 'object',
        description: '`type` session.closed with the fields of the market stream\'s data',
        required: ['type'],
        properties: { type: { type: 'string', const: 'session.closed' }, ...(SessionClosed.properties as Json) },
      },
    },
  },
  WebhookHeaders: {
    type: 'object',
    description: 'the Standard Webhooks headers of a delivery',
    required: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    properties: {
      'webhook-id': { type: 'string', pattern: '^evt_[0-9]+_[0-9]+$', description: 'evt_<account_id>_<event id>: the same on every attempt; deduplicate by it' },
      'webhook-timestamp': { type: 'string', pattern: '^[0-9]+$', description: 'when this attempt was signed (unix seconds)' },
      'webhook-signature': { type: 'string', pattern: '^v1,', description: 'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" under your whsec_ secret> (space-separated when several)' },
    },
  },
};

/** The name of an event type's envelope schema. */
const eventSchemaName = (type: EventType) => `event.${type}`;

/**
 * A plain-JSON copy of a TypeBox schema: TypeBox's `~` markers dropped; a schema met by identity in
 * `names` (other than `root`) becomes a `$ref`, its name noted in `used`.
 */
function plain(v: unknown, names: Map<unknown, string>, used: Set<string>, root?: unknown): unknown {
  if (v !== root && names.has(v)) {
    const n = names.get(v)!;
    used.add(n);
    return schemaRef(n);
  }
  if (Array.isArray(v)) return v.map((x) => plain(x, names, used, root));
  if (v instanceof RegExp) return v.source;
  if (typeof v !== 'object' || v === null) return v;
  const out: Json = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('~') || x === undefined || typeof x === 'function') continue;
    out[k] = plain(x, names, used, root);
  }
  return out;
}

/** components.schemas: the event envelopes, `Event` (any of them), SessionClosed and what they refer to. */
function componentSchemas(): Json {
  const members = (Event as unknown as { anyOf: TSchema[] }).anyOf;
  const named: Record<string, unknown> = { ...NAMED_SCHEMAS, Event, SessionClosed };
  members.forEach((m, i) => (named[eventSchemaName(EVENT_TYPES[i])] = m));
  const names = new Map<unknown, string>(Object.entries(named).map(([n, s]) => [s, n]));
  const used = new Set<string>(['Event', 'SessionClosed', ...EVENT_TYPES.map(eventSchemaName)]);
  const out: Json = {};
  for (let todo = [...used]; todo.length; todo = [...used].filter((n) => !(n in out))) {
    for (const n of todo) out[n] = plain(named[n], names, used, named[n]);
  }
  const all: Json = { ...out, ...WS_SCHEMAS };
  return Object.fromEntries(Object.keys(all).sort().map((n) => [n, all[n]]));
}

/** One message per event type: its envelope as payload; the SSE framing in its description. */
function eventMessages(): Json {
  return Object.fromEntries(EVENT_TYPES.map((type) => [type, {
    name: type,
    title: type,
    summary: EVENT_WHEN[type],
    description: `Sent when ${EVENT_WHEN[type]}. On the Server-Sent Events stream: \`id:\` the event id, \`event:\` ${type}, \`data:\` this payload. \`data\` is ${(EVENT_DATA[type] as { description?: string }).description}.`,
    contentType: 'application/json',
    payload: schemaRef(eventSchemaName(type)),
  }]));
}

/** The AsyncAPI 3.0 document of the service at `baseUrl`. */
export function asyncApiDocument(baseUrl: string): Json {
  const url = new URL(baseUrl);
  const secure = url.protocol === 'https:';
  const basePath = url.pathname.replace(/\/$/, '');
  const byType = (channel: string) => EVENT_TYPES.map((type) => ({ $ref: `#/channels/${channel}/messages/${token(type)}` }));
  const eventsMap = Object.fromEntries(EVENT_TYPES.map((type) => [type, messageRef(type)]));

  return {
    asyncapi: '3.0.0',
    info: {
      title: `${SERVICE_NAME}: events`,
      version: '1.0.0',
      description: [
        'What the service pushes (CONTRACT.md "Events"): subscribe, don\'t poll.',
        `Every event of an account has an id of the account's own sequence, gap-free (1, 2, 3, ...); events are kept ${EVENT_RETENTION_DAYS} days. Resume with Last-Event-ID (or after=): every later event exactly once; an id older than what is kept answers 410.`,
        `The same events as a page: GET ${API_PREFIX}/events?after=&limit=&types= (the OpenAPI document).`,
        'Operations are the service\'s: `send` is what the service sends to you, `receive` what it takes from you.',
      ].join('\n\n'),
    },
    defaultContentType: 'application/json',
    servers: {
      api: {
        host: url.host,
        protocol: secure ? 'https' : 'http',
        pathname: `${basePath}${API_PREFIX}`,
        description: `The HTTP API: Server-Sent Events streams (text/event-stream; a \`: keep-alive\` comment at least every ${KEEPALIVE_MS / 1000} s)`,
      },
      websocket: {
        host: url.host,
        protocol: secure ? 'wss' : 'ws',
        pathname: `${basePath}${API_PREFIX}/ws`,
        description: 'The WebSocket: the key in the upgrade\'s Authorization header, or a first `auth` message; then `subscribe`. Every frame is JSON.',
      },
      receiver: {
        host: '{receiver}',
        protocol: 'https',
        description: 'Your webhook receiver: the URL you registered with POST /api/v1/webhooks (http is taken too)',
        variables: { receiver: { description: 'the host (and port) of your registered URL' } },
      },
    },
    channels: {
      accountEvents: {
        address: '/events/stream',
        title: 'Your account\'s events (Server-Sent Events)',
        description: 'GET with your key: every event after Last-Event-ID (or ?after=), exactly once, then each as it is committed. ?types=a,b keeps only those types. 410 at the start when the id to resume from is older than what is kept.',
        servers: [serverRef('api')],
        messages: eventsMap,
      },
      marketSessions: {
        address: '/markets/{market_id}/stream',
        title: 'A market\'s session closes (Server-Sent Events, public)',
        description: 'GET, no key: `session.closed` at each close of the market; `id:` the closed tick, so Last-Event-ID (or ?after=) replays the closes since.',
        servers: [serverRef('api')],
        parameters: { market_id: MARKET_PARAM },
        messages: { 'session.closed': messageRef('session.closed') },
      },
      wsConnection: {
        address: '/',
        title: 'The WebSocket connection',
        description: 'What the client sends on the connection: `auth` (unless the upgrade carried the key), then `subscribe`.',
        servers: [serverRef('websocket')],
        messages: { auth: messageRef('auth'), subscribe: messageRef('subscribe') },
        bindings: {
          ws: {
            method: 'GET',
            headers: { type: 'object', properties: { authorization: { type: 'string', description: 'Bearer <API key> (or send an auth message first)' } } },
            bindingVersion: '0.1.0',
          },
        },
      },
      wsAccount: {
        address: 'account',
        title: 'WebSocket channel `account`',
        description: 'Your account\'s events on the WebSocket, each frame {"channel": "account", "event": {...}}; subscribe with "after" to resume.',
        servers: [serverRef('websocket')],
        messages: { accountFrame: messageRef('accountFrame') },
      },
      wsMarket: {
        address: 'market:{market_id}',
        title: 'WebSocket channel `market:{market_id}`',
        description: 'A market\'s session closes on the WebSocket, each frame {"channel": "market:<id>", "event": {"type": "session.closed", ...}}.',
        servers: [serverRef('websocket')],
        parameters: { market_id: MARKET_PARAM },
        messages: { marketFrame: messageRef('marketFrame') },
      },
      webhookDeliveries: {
        address: null,
        title: 'Webhook deliveries',
        description: `A POST of each event (of the types you registered) to your URL, signed per the Standard Webhooks specification; a non-2xx answer or none is retried with backoff for ${WEBHOOK_RETRY_HOURS} hours. At least once: deduplicate by webhook-id.`,
        servers: [serverRef('receiver')],
        messages: { webhookDelivery: messageRef('webhookDelivery') },
      },
    },
    operations: {
      sendAccountEvents: {
        action: 'send',
        channel: channelRef('accountEvents'),
        title: 'Stream your account\'s events',
        summary: `GET ${API_PREFIX}/events/stream`,
        security: KEYED,
        messages: byType('accountEvents'),
        bindings: { http: { method: 'GET', query: STREAM_QUERY, bindingVersion: '0.3.0' } },
      },
      sendMarketSessions: {
        action: 'send',
        channel: channelRef('marketSessions'),
        title: 'Stream a market\'s session closes',
        summary: `GET ${API_PREFIX}/markets/{market_id}/stream`,
        messages: [{ $ref: '#/channels/marketSessions/messages/session.closed' }],
        bindings: {
          http: {
            method: 'GET',
            query: { type: 'object', properties: { after: { type: 'integer', minimum: 0, description: 'the last closed tick you have' } }, additionalProperties: false },
            bindingVersion: '0.3.0',
          },
        },
      },
      receiveAuth: {
        action: 'receive',
        channel: channelRef('wsConnection'),
        title: 'Authenticate the WebSocket',
        security: KEYED,
        messages: [{ $ref: '#/channels/wsConnection/messages/auth' }],
      },
      receiveSubscribe: {
        action: 'receive',
        channel: channelRef('wsConnection'),
        title: 'Subscribe to WebSocket channels',
        messages: [{ $ref: '#/channels/wsConnection/messages/subscribe' }],
      },
      sendAccountFrames: {
        action: 'send',
        channel: channelRef('wsAccount'),
        title: 'Your account\'s events on the WebSocket',
        security: KEYED,
        messages: [{ $ref: '#/channels/wsAccount/messages/accountFrame' }],
      },
      sendMarketFrames: {
        action: 'send',
        channel: channelRef('wsMarket'),
        title: 'A market\'s session closes on the WebSocket',
        messages: [{ $ref: '#/channels/wsMarket/messages/marketFrame' }],
      },
      sendWebhook: {
        action: 'send',
        channel: channelRef('webhookDeliveries'),
        title: 'Deliver an event to your webhook',
        messages: [{ $ref: '#/channels/webhookDeliveries/messages/webhookDelivery' }],
      },
    },
    components: {
      schemas: componentSchemas(),
      messages: {
        ...eventMessages(),
        'session.closed': {
          name: 'session.closed',
          title: 'session.closed',
          summary: 'a session of the market closed',
          description: 'On the market stream: `id:` the closed tick, `event:` session.closed, `data:` this payload.',
          contentType: 'application/json',
          payload: schemaRef('SessionClosed'),
        },
        auth: { name: 'auth', title: 'auth', summary: 'authenticate the connection', contentType: 'application/json', payload: schemaRef('AuthCommand') },
        subscribe: { name: 'subscribe', title: 'subscribe', summary: 'subscribe to channels, resuming after an id', contentType: 'application/json', payload: schemaRef('SubscribeCommand') },
        accountFrame: { name: 'accountFrame', title: 'account frame', summary: 'an event of your account', contentType: 'application/json', payload: schemaRef('AccountFrame') },
        marketFrame: { name: 'marketFrame', title: 'market frame', summary: 'a session close of a market', contentType: 'application/json', payload: schemaRef('MarketFrame') },
        webhookDelivery: {
          name: 'webhookDelivery',
          title: 'webhook delivery',
          summary: 'an event POSTed to your URL, signed',
          description: 'Verify the signature over the raw body before trusting it (the standardwebhooks library does), answer 2xx quickly, and skip a webhook-id you have handled.',
          contentType: 'application/json',
          headers: schemaRef('WebhookHeaders'),
          payload: schemaRef('Event'),
          bindings: { http: { bindingVersion: '0.3.0' } },
        },
      },
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}
