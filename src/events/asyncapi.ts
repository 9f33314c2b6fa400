// /api/asyncapi.json (issue 27 item 7): the AsyncAPI 3.0 document of what the service pushes, built
// from the same TypeBox schemas the routes validate and serve (src/schemas/events.ts), so it cannot
// drift from the payloads: the account's Server-Sent Events stream (one message per event type),
// the public market stream, the WebSocket (the `account` and `market:{market_id}` channels, and the
// `auth` / `subscribe` messages a client sends) and the webhook deliveries with their Standard
// Webhooks headers. Operations are the service's own: `send` is what it sends you, `receive` what
// it takes from you (AsyncAPI 3 describes the application's side).
import type { TSchema } from 'typebox';
import { MARKET_IDS } from '../engine/index.js';
import {
  EVENT_DATA,
  EVENT_TYPES,
  Event,
  EventsQuery,
  NAMED_SCHEMAS,
  SessionClosed,
  type EventType,
} from '../schemas/index.js';
import { SERVICE_NAME } from '../docs/manifest.js';
import { EVENT_RETENTION_DAYS, EVENT_WHEN, WEBHOOK_RETRY_HOURS } from '../docs/events.js';
import { STREAMS_PER_KEY } from '../http/limits.js';
import { KEEPALIVE_MS } from './hub.js';
import { API_PREFIX } from '../docs/route-paths.js';
import { WS_CLOSE } from './websocket.js';

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
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'Authorization: Bearer <API key> (the 80-character key the agent registered)',
  },
  apiToken: {
    type: 'httpApiKey',
    in: 'header',
    name: 'X-API-Token',
    description: 'the API key in X-API-Token',
  },
};
const KEYED = [
  { $ref: '#/components/securitySchemes/bearer' },
  { $ref: '#/components/securitySchemes/apiToken' },
];

/** The query of GET /events/stream (Last-Event-ID, when sent, wins over `after`). */
const STREAM_QUERY = {
  type: 'object',
  properties: {
    after: {
      type: 'integer',
      minimum: 0,
      description: 'the last event id you have; the header Last-Event-ID, when sent, wins',
    },
    types: { ...EventsQuery.properties.types },
  },
  additionalProperties: false,
};

/** What the WebSocket takes and sends (CONTRACT.md "Events"), as JSON Schema. */
const WS_CHANNEL_NAME = `^(account|market:(${MARKET_IDS.join('|')}))$`;
const WS_SCHEMAS: Record<string, Json> = {
  AuthCommand: {
    type: 'object',
    description:
      'authenticate the connection (unless the upgrade carried the key in its Authorization header)',
    required: ['op', 'key'],
    properties: {
      op: { type: 'string', const: 'auth' },
      key: { type: 'string', description: 'your API key' },
    },
    additionalProperties: false,
  },
  SubscribeCommand: {
    type: 'object',
    description:
      'subscribe to channels; `after` resumes the account channel after that event id (every later event exactly once); `types` keeps only those types on it',
    required: ['op', 'channels'],
    properties: {
      op: { type: 'string', const: 'subscribe' },
      channels: {
        type: 'array',
        minItems: 1,
        items: { type: 'string', pattern: WS_CHANNEL_NAME },
        description: '"account" and/or "market:<market_id>"',
      },
      after: {
        type: 'integer',
        minimum: 0,
        description: 'the last account event id you have (account channel only; default 0)',
      },
      types: {
        type: 'array',
        items: { type: 'string', enum: [...EVENT_TYPES] },
        description: 'only these event types on the account channel',
      },
    },
    additionalProperties: false,
  },
  UnsubscribeCommand: {
    type: 'object',
    description: 'stop channels',
    required: ['op', 'channels'],
    properties: {
      op: { type: 'string', const: 'unsubscribe' },
      channels: { type: 'array', minItems: 1, items: { type: 'string', pattern: WS_CHANNEL_NAME } },
    },
    additionalProperties: false,
  },
  PingCommand: {
    type: 'object',
    required: ['op'],
    properties: { op: { type: 'string', const: 'ping' } },
    additionalProperties: false,
    description: 'answered by pong',
  },
  Authenticated: {
    type: 'object',
    description: "the key is good: the connection is the agent's",
    required: ['op', 'agent_id'],
    properties: { op: { type: 'string', const: 'authenticated' }, agent_id: { type: 'integer' } },
  },
  Subscribed: {
    type: 'object',
    description:
      'the channels are on; `after` (with the account channel) is where its events resume',
    required: ['op', 'channels'],
    properties: {
      op: { type: 'string', const: 'subscribed' },
      channels: { type: 'array', items: { type: 'string' } },
      after: { type: 'integer', minimum: 0 },
    },
  },
  Unsubscribed: {
    type: 'object',
    description: 'the channels are off',
    required: ['op', 'channels'],
    properties: {
      op: { type: 'string', const: 'unsubscribed' },
      channels: { type: 'array', items: { type: 'string' } },
    },
  },
  Pong: {
    type: 'object',
    required: ['op'],
    properties: { op: { type: 'string', const: 'pong' } },
    description: 'the answer to ping',
  },
  WsError: {
    type: 'object',
    description:
      'a subscribe or unsubscribe that cannot be honoured changed nothing (the connection stays; a 410 is followed by close 4410)',
    required: ['op', 'status', 'detail'],
    properties: {
      op: { type: 'string', const: 'error' },
      status: { type: 'integer', enum: [409, 410, 422] },
      detail: { type: 'string' },
    },
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
        description: "`type` session.closed with the fields of the market stream's data",
        required: ['type'],
        properties: {
          type: { type: 'string', const: 'session.closed' },
          ...(SessionClosed.properties as Json),
        },
      },
    },
  },
  WebhookHeaders: {
    type: 'object',
    description: 'the Standard Webhooks headers of a delivery',
    required: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    properties: {
      'webhook-id': {
        type: 'string',
        pattern: '^evt_[0-9]+_[0-9]+$',
        description: 'evt_<account_id>_<event id>: the same on every attempt; deduplicate by it',
      },
      'webhook-timestamp': {
        type: 'string',
        pattern: '^[0-9]+$',
        description: 'when this attempt was signed (unix seconds)',
      },
      'webhook-signature': {
        type: 'string',
        pattern: '^v1,',
        description:
          'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" under your whsec_ secret> (space-separated when several)',
      },
    },
  },
};

/** The WebSocket's own messages (op), each with its payload schema and what it is; `auth` to `ping` are the client's. */
const WS_MESSAGES: Record<string, [schema: string, summary: string]> = {
  auth: ['AuthCommand', 'client: authenticate the connection'],
  subscribe: [
    'SubscribeCommand',
    "client: subscribe to channels, the account's resuming after an id",
  ],
  unsubscribe: ['UnsubscribeCommand', 'client: stop channels'],
  ping: ['PingCommand', 'client: is the connection alive'],
  authenticated: ['Authenticated', 'service: the key is good'],
  subscribed: ['Subscribed', 'service: the channels are on'],
  unsubscribed: ['Unsubscribed', 'service: the channels are off'],
  pong: ['Pong', 'service: the answer to ping'],
  error: ['WsError', 'service: a request it cannot honour (nothing changed)'],
};
const WS_OPS = Object.keys(WS_MESSAGES);

/** Why the WebSocket closes a connection (src/events/websocket.ts WS_CLOSE), and what the client does. */
const WS_CLOSE_WHY: Record<keyof typeof WS_CLOSE, string> = {
  stopping: 'the service is stopping: reconnect and subscribe with after = your last id',
  binary: 'a binary frame: the protocol is JSON text',
  tooBig: 'a message too big',
  full: 'this process holds as many streams as it may: retry in a few seconds',
  badFrame: 'a bad frame: not JSON, no op, or an unknown op',
  unauthorized: 'unauthorized: no key, a wrong key, or no auth in time',
  gone: `after is older than the ${EVENT_RETENTION_DAYS} days kept (after an error message with the 410 detail)`,
  behind: 'too slow to read: the reason says after=N; reconnect and subscribe with it',
  keyStreams: `the key of the auth message holds as many streams as it may (${STREAMS_PER_KEY}, with /api/v1/events/stream): close one, or retry in a few seconds`,
};
/** The close codes, in order, with why. */
export const WS_CLOSE_CODES: [number, string][] = [
  ...(Object.keys(WS_CLOSE) as (keyof typeof WS_CLOSE)[]).reduce(
    (codes, k) => codes.set(WS_CLOSE[k], [...(codes.get(WS_CLOSE[k]) ?? []), WS_CLOSE_WHY[k]]),
    new Map<number, string[]>(),
  ),
]
  .map(([code, why]): [number, string] => [code, why.join('; or ')]) // one code, several causes: the reason tells which
  .sort((a, b) => a[0] - b[0]);

/** A WebSocket message the service receives, with the replies it answers on the same connection. */
function wsOp(title: string, message: string, replies: string[], keyed = false): Json {
  const on = (m: string) => ({ $ref: `#/channels/wsConnection/messages/${m}` });
  return {
    action: 'receive',
    channel: channelRef('wsConnection'),
    title,
    ...(keyed ? { security: KEYED } : {}),
    messages: [on(message)],
    reply: { channel: channelRef('wsConnection'), messages: replies.map(on) },
  };
}

/** The name of an event type's envelope schema. */
const eventSchemaName = (type: EventType) => `event.${type}`;

/**
 * A plain-JSON copy of a TypeBox schema: TypeBox's `~` markers dropped; a schema met by identity in
 * `names` (other than `root`) becomes a `$ref`, its name noted in `used`.
 */
function plain(
  v: unknown,
  names: Map<unknown, string>,
  used: Set<string>,
  root?: unknown,
): unknown {
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
  return Object.fromEntries(
    Object.keys(all)
      .sort()
      .map((n) => [n, all[n]]),
  );
}

/** One message per event type: its envelope as payload; the SSE framing in its description. */
function eventMessages(): Json {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        name: type,
        title: type,
        summary: EVENT_WHEN[type],
        description: `Sent when ${EVENT_WHEN[type]}. On the Server-Sent Events stream: \`id:\` the event id, \`event:\` ${type}, \`data:\` this payload. \`data\` is ${(EVENT_DATA[type] as { description?: string }).description}.`,
        contentType: 'application/json',
        payload: schemaRef(eventSchemaName(type)),
      },
    ]),
  );
}

/** The AsyncAPI 3.0 document of the service at `baseUrl`. */
export function asyncApiDocument(baseUrl: string): Json {
  const url = new URL(baseUrl);
  const secure = url.protocol === 'https:';
  const basePath = url.pathname.replace(/\/$/, '');
  const byType = (channel: string) =>
    EVENT_TYPES.map((type) => ({ $ref: `#/channels/${channel}/messages/${token(type)}` }));
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
        "Operations are the service's: `send` is what the service sends to you, `receive` what it takes from you.",
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
        description:
          "The WebSocket: the key in the upgrade's Authorization header, or a first `auth` message; then `subscribe`. Every frame is JSON.",
      },
      receiver: {
        host: '{receiver}',
        protocol: 'https',
        description:
          'Your webhook receiver: the URL you registered with POST /api/v1/webhooks (http is taken too)',
        variables: { receiver: { description: 'the host (and port) of your registered URL' } },
      },
    },
    channels: {
      accountEvents: {
        address: '/events/stream',
        title: "Your account's events (Server-Sent Events)",
        description:
          'GET with your key and Accept: text/event-stream: every event after Last-Event-ID (or ?after=), exactly once, then each as it is committed. ?types=a,b keeps only those types. 410 at the start when the id to resume from is older than what is kept. Without that Accept the route answers the events after the resume point as JSON (as GET /events does) and ends.',
        servers: [serverRef('api')],
        messages: eventsMap,
      },
      marketSessions: {
        address: '/markets/{market_id}/stream',
        title: "A market's session closes (Server-Sent Events, public)",
        description:
          'GET, no key, Accept: text/event-stream: `session.closed` at each close of the market; `id:` the closed tick, so Last-Event-ID (or ?after=) replays the closes since. Without that Accept the route answers the closes after the resume point as JSON and ends.',
        servers: [serverRef('api')],
        parameters: { market_id: MARKET_PARAM },
        messages: { 'session.closed': messageRef('session.closed') },
      },
      wsConnection: {
        address: '/',
        title: 'The WebSocket connection',
        description: [
          "JSON text frames. The client sends `auth` (unless the upgrade carried the key), then `subscribe`; `unsubscribe` and `ping` at any time. The service answers each, and sends the subscribed channels' frames.",
          `Close codes: ${WS_CLOSE_CODES.map(([code, why]) => `${code} ${why}`).join('; ')}.`,
        ].join('\n\n'),
        servers: [serverRef('websocket')],
        messages: Object.fromEntries(WS_OPS.map((m) => [m, messageRef(m)])),
        bindings: {
          ws: {
            method: 'GET',
            headers: {
              type: 'object',
              properties: {
                authorization: {
                  type: 'string',
                  description: 'Bearer <API key> (or send an auth message first)',
                },
              },
            },
            bindingVersion: '0.1.0',
          },
        },
      },
      wsAccount: {
        address: 'account',
        title: 'WebSocket channel `account`',
        description:
          'Your account\'s events on the WebSocket, each frame {"channel": "account", "event": {...}}; subscribe with "after" to resume.',
        servers: [serverRef('websocket')],
        messages: { accountFrame: messageRef('accountFrame') },
      },
      wsMarket: {
        address: 'market:{market_id}',
        title: 'WebSocket channel `market:{market_id}`',
        description:
          'A market\'s session closes on the WebSocket, each frame {"channel": "market:<id>", "event": {"type": "session.closed", ...}}.',
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
        title: "Stream your account's events",
        summary: `GET ${API_PREFIX}/events/stream`,
        security: KEYED,
        messages: byType('accountEvents'),
        bindings: { http: { method: 'GET', query: STREAM_QUERY, bindingVersion: '0.3.0' } },
      },
      sendMarketSessions: {
        action: 'send',
        channel: channelRef('marketSessions'),
        title: "Stream a market's session closes",
        summary: `GET ${API_PREFIX}/markets/{market_id}/stream`,
        messages: [{ $ref: '#/channels/marketSessions/messages/session.closed' }],
        bindings: {
          http: {
            method: 'GET',
            query: {
              type: 'object',
              properties: {
                after: {
                  type: 'integer',
                  minimum: 0,
                  description: 'the last closed tick you have',
                },
              },
              additionalProperties: false,
            },
            bindingVersion: '0.3.0',
          },
        },
      },
      receiveAuth: wsOp('Authenticate the WebSocket', 'auth', ['authenticated'], true),
      receiveSubscribe: wsOp('Subscribe to WebSocket channels', 'subscribe', [
        'subscribed',
        'error',
      ]),
      receiveUnsubscribe: wsOp('Unsubscribe from WebSocket channels', 'unsubscribe', [
        'unsubscribed',
        'error',
      ]),
      receivePing: wsOp('Ping', 'ping', ['pong']),
      sendAccountFrames: {
        action: 'send',
        channel: channelRef('wsAccount'),
        title: "Your account's events on the WebSocket",
        security: KEYED,
        messages: [{ $ref: '#/channels/wsAccount/messages/accountFrame' }],
      },
      sendMarketFrames: {
        action: 'send',
        channel: channelRef('wsMarket'),
        title: "A market's session closes on the WebSocket",
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
          description:
            'On the market stream: `id:` the closed tick, `event:` session.closed, `data:` this payload.',
          contentType: 'application/json',
          payload: schemaRef('SessionClosed'),
        },
        ...Object.fromEntries(
          WS_OPS.map((m) => [
            m,
            {
              name: m,
              title: m,
              summary: WS_MESSAGES[m][1],
              contentType: 'application/json',
              payload: schemaRef(WS_MESSAGES[m][0]),
            },
          ]),
        ),
        accountFrame: {
          name: 'accountFrame',
          title: 'account frame',
          summary: 'an event of your account',
          contentType: 'application/json',
          payload: schemaRef('AccountFrame'),
        },
        marketFrame: {
          name: 'marketFrame',
          title: 'market frame',
          summary: 'a session close of a market',
          contentType: 'application/json',
          payload: schemaRef('MarketFrame'),
        },
        webhookDelivery: {
          name: 'webhookDelivery',
          title: 'webhook delivery',
          summary: 'an event POSTed to your URL, signed',
          description:
            'Verify the signature over the raw body before trusting it (the standardwebhooks library does), answer 2xx quickly, and skip a webhook-id you have handled.',
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
