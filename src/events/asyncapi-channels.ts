// The AsyncAPI document's declarations (src/events/asyncapi.ts assembles them): what the service
// pushes, channel by channel, each with the messages it carries and the operations on it, as data.
// Payloads name their schemas: the TypeBox schemas the routes validate and serve (each event type's
// envelope, Event, SessionClosed: PAYLOAD_SCHEMAS), or the WebSocket's frames (WS_SCHEMAS).
import type { TSchema } from 'typebox';
import { MARKET_IDS } from '../engine/index.js';
import { EVENT_DATA, EVENT_TYPES, Event, EventsQuery, SessionClosed } from '../schemas/index.js';
import { EVENT_RETENTION_DAYS, EVENT_WHEN, WEBHOOK_RETRY_HOURS } from '../docs/events.js';
import { STREAMS_PER_KEY } from '../http/limits.js';
import { API_PREFIX } from '../docs/route-paths.js';
import { WS_CLOSE } from './ws-protocol.js';

type Json = Record<string, unknown>;

export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The servers a channel is on (asyncapi.ts `servers`). */
export type ServerName = 'api' | 'websocket' | 'receiver';

/** A message (components.messages); `payload` and `headers` name schemas of components.schemas. */
export type MessageDecl = {
  name: string;
  /** Default: the name. */
  title?: string;
  summary: string;
  description?: string;
  headers?: string;
  payload: string;
  bindings?: Json;
};

/** An operation on its channel: `send` is what the service sends, `receive` what it takes. */
export type OperationDecl = {
  id: string;
  action: 'send' | 'receive';
  title: string;
  summary?: string;
  /** Needs the API key. */
  keyed?: boolean;
  /** The channel's messages it carries (default: all of them). */
  messages?: string[];
  /** The channel's messages the service answers with on the same channel. */
  reply?: string[];
  bindings?: Json;
};

/** A channel: its address (a `{name}` in it is one of PARAMETERS), its messages and operations. */
export type ChannelDecl = {
  name: string;
  address: string | null;
  title: string;
  description: string;
  server: ServerName;
  messages: MessageDecl[];
  bindings?: Json;
  operations: OperationDecl[];
};

/** The parameters a channel's address may hold. */
export const PARAMETERS: Record<string, Json> = {
  market_id: { enum: [...MARKET_IDS], description: 'the market' },
};

/** The name of an event type's envelope schema. */
const eventSchemaName = (type: string) => `event.${type}`;

/** The TypeBox schemas payloads name: each event type's envelope, `Event` (any of them), SessionClosed. */
export const PAYLOAD_SCHEMAS: Record<string, TSchema> = {
  Event,
  SessionClosed,
  ...Object.fromEntries(
    (Event as unknown as { anyOf: TSchema[] }).anyOf.map((m, i) => [
      eventSchemaName(EVENT_TYPES[i]),
      m,
    ]),
  ),
};

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
export const WS_SCHEMAS: Record<string, Json> = {
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

/** The WebSocket's own messages (op): `auth` to `ping` are the client's, the others the service's. */
const WS_MESSAGES: MessageDecl[] = [
  { name: 'auth', summary: 'client: authenticate the connection', payload: 'AuthCommand' },
  {
    name: 'subscribe',
    summary: "client: subscribe to channels, the account's resuming after an id",
    payload: 'SubscribeCommand',
  },
  { name: 'unsubscribe', summary: 'client: stop channels', payload: 'UnsubscribeCommand' },
  { name: 'ping', summary: 'client: is the connection alive', payload: 'PingCommand' },
  { name: 'authenticated', summary: 'service: the key is good', payload: 'Authenticated' },
  { name: 'subscribed', summary: 'service: the channels are on', payload: 'Subscribed' },
  { name: 'unsubscribed', summary: 'service: the channels are off', payload: 'Unsubscribed' },
  { name: 'pong', summary: 'service: the answer to ping', payload: 'Pong' },
  {
    name: 'error',
    summary: 'service: a request it cannot honour (nothing changed)',
    payload: 'WsError',
  },
];

/** Why the WebSocket closes a connection (src/events/websocket.ts WS_CLOSE), and what the client does. */
const WS_CLOSE_WHY: Record<keyof typeof WS_CLOSE, string> = {
  stopping: 'the service is stopping: reconnect and subscribe with after = your last id',
  binary: 'a binary frame: the protocol is JSON text',
  tooBig: 'a message too big',
  full: 'this process holds as many streams as it may: retry in a few seconds',
  badFrame: 'a bad frame: not JSON, no op, or an unknown op',
  unauthorized:
    'unauthorized: no key, a wrong key, or no auth in time; or the key was revoked by its holder (the reason starts revoked:): do not reconnect with it',
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

/** One message per event type: its envelope as payload; the SSE framing in its description. */
const eventMessage = (type: (typeof EVENT_TYPES)[number]): MessageDecl => ({
  name: type,
  summary: EVENT_WHEN[type],
  description: `Sent when ${EVENT_WHEN[type]}. On the Server-Sent Events stream: \`id:\` the event id, \`event:\` ${type}, \`data:\` this payload. \`data\` is ${(EVENT_DATA[type] as { description?: string }).description}.`,
  payload: eventSchemaName(type),
});

/** A WebSocket message the service receives, with the replies it answers on the same connection. */
const wsOp = (
  id: string,
  title: string,
  message: string,
  reply: string[],
  keyed = false,
): OperationDecl => ({ id, action: 'receive', title, keyed, messages: [message], reply });

/** An HTTP binding of a GET with its query. */
const httpGet = (query: Json) => ({ http: { method: 'GET', query, bindingVersion: '0.3.0' } });

/** What the service pushes, channel by channel (the document lists them, their operations and their messages in this order). */
export const EVENT_CHANNELS: ChannelDecl[] = [
  {
    name: 'accountEvents',
    address: '/events/stream',
    title: "Your account's events (Server-Sent Events)",
    description:
      'GET with your key and Accept: text/event-stream: every event after Last-Event-ID (or ?after=), exactly once, then each as it is committed. ?types=a,b keeps only those types. 410 at the start when the id to resume from is older than what is kept. Without that Accept the route answers the events after the resume point as JSON (as GET /events does) and ends.',
    server: 'api',
    messages: EVENT_TYPES.map(eventMessage),
    operations: [
      {
        id: 'sendAccountEvents',
        action: 'send',
        title: "Stream your account's events",
        summary: `GET ${API_PREFIX}/events/stream`,
        keyed: true,
        bindings: httpGet(STREAM_QUERY),
      },
    ],
  },
  {
    name: 'marketSessions',
    address: '/markets/{market_id}/stream',
    title: "A market's session closes (Server-Sent Events, public)",
    description:
      'GET, no key, Accept: text/event-stream: `session.closed` at each close of the market; `id:` the closed tick, so Last-Event-ID (or ?after=) replays the closes since. Without that Accept the route answers the closes after the resume point as JSON and ends.',
    server: 'api',
    messages: [
      {
        name: 'session.closed',
        summary: 'a session of the market closed',
        description:
          'On the market stream: `id:` the closed tick, `event:` session.closed, `data:` this payload.',
        payload: 'SessionClosed',
      },
    ],
    operations: [
      {
        id: 'sendMarketSessions',
        action: 'send',
        title: "Stream a market's session closes",
        summary: `GET ${API_PREFIX}/markets/{market_id}/stream`,
        bindings: httpGet({
          type: 'object',
          properties: {
            after: { type: 'integer', minimum: 0, description: 'the last closed tick you have' },
          },
          additionalProperties: false,
        }),
      },
    ],
  },
  {
    name: 'wsConnection',
    address: '/',
    title: 'The WebSocket connection',
    description: [
      "JSON text frames. The client sends `auth` (unless the upgrade carried the key), then `subscribe`; `unsubscribe` and `ping` at any time. The service answers each, and sends the subscribed channels' frames.",
      `Close codes: ${WS_CLOSE_CODES.map(([code, why]) => `${code} ${why}`).join('; ')}.`,
    ].join('\n\n'),
    server: 'websocket',
    messages: WS_MESSAGES,
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
    operations: [
      wsOp('receiveAuth', 'Authenticate the WebSocket', 'auth', ['authenticated'], true),
      wsOp('receiveSubscribe', 'Subscribe to WebSocket channels', 'subscribe', [
        'subscribed',
        'error',
      ]),
      wsOp('receiveUnsubscribe', 'Unsubscribe from WebSocket channels', 'unsubscribe', [
        'unsubscribed',
        'error',
      ]),
      wsOp('receivePing', 'Ping', 'ping', ['pong']),
    ],
  },
  {
    name: 'wsAccount',
    address: 'account',
    title: 'WebSocket channel `account`',
    description:
      'Your account\'s events on the WebSocket, each frame {"channel": "account", "event": {...}}; subscribe with "after" to resume.',
    server: 'websocket',
    messages: [
      {
        name: 'accountFrame',
        title: 'account frame',
        summary: 'an event of your account',
        payload: 'AccountFrame',
      },
    ],
    operations: [
      {
        id: 'sendAccountFrames',
        action: 'send',
        title: "Your account's events on the WebSocket",
        keyed: true,
      },
    ],
  },
  {
    name: 'wsMarket',
    address: 'market:{market_id}',
    title: 'WebSocket channel `market:{market_id}`',
    description:
      'A market\'s session closes on the WebSocket, each frame {"channel": "market:<id>", "event": {"type": "session.closed", ...}}.',
    server: 'websocket',
    messages: [
      {
        name: 'marketFrame',
        title: 'market frame',
        summary: 'a session close of a market',
        payload: 'MarketFrame',
      },
    ],
    operations: [
      {
        id: 'sendMarketFrames',
        action: 'send',
        title: "A market's session closes on the WebSocket",
      },
    ],
  },
  {
    name: 'webhookDeliveries',
    address: null,
    title: 'Webhook deliveries',
    description: `A POST of each event (of the types you registered) to your URL, signed per the Standard Webhooks specification; a non-2xx answer or none is retried with backoff for ${WEBHOOK_RETRY_HOURS} hours. At least once: deduplicate by webhook-id.`,
    server: 'receiver',
    messages: [
      {
        name: 'webhookDelivery',
        title: 'webhook delivery',
        summary: 'an event POSTed to your URL, signed',
        description:
          'Verify the signature over the raw body before trusting it (the standardwebhooks library does), answer 2xx quickly, and skip a webhook-id you have handled.',
        headers: 'WebhookHeaders',
        payload: 'Event',
        bindings: { http: { bindingVersion: '0.3.0' } },
      },
    ],
    operations: [{ id: 'sendWebhook', action: 'send', title: 'Deliver an event to your webhook' }],
  },
];
