// /api/asyncapi.json: the AsyncAPI 3.0 document of what the service pushes, assembled from the
// declarations of src/events/asyncapi-channels.ts (channels, their messages and operations) and
// the same TypeBox schemas the routes validate and serve (src/schemas/events.ts), so it cannot
// drift from the payloads: the account's Server-Sent Events stream (one message per event type),
// the public market stream, the WebSocket (the `account` and `market:{market_id}` channels, and the
// `auth` / `subscribe` messages a client sends) and the webhook deliveries with their Standard
// Webhooks headers. Operations are the service's own: `send` is what it sends you, `receive` what
// it takes from you (AsyncAPI 3 describes the application's side).
import { NAMED_SCHEMAS } from '../schemas/index.js';
import { SERVICE_NAME } from '../docs/manifest.js';
import { EVENT_RETENTION_DAYS } from '../docs/events.js';
import { KEEPALIVE_MS } from './hub.js';
import { API_PREFIX } from '../docs/route-paths.js';
import {
  EVENT_CHANNELS,
  PARAMETERS,
  PAYLOAD_SCHEMAS,
  WS_SCHEMAS,
  schemaRef,
  type ChannelDecl,
  type MessageDecl,
  type OperationDecl,
  type ServerName,
} from './asyncapi-channels.js';

export { WS_CLOSE_CODES } from './asyncapi-channels.js';

type Json = Record<string, unknown>;

const messageRef = (name: string) => ({ $ref: `#/components/messages/${name}` });
const channelRef = (name: string) => ({ $ref: `#/channels/${name}` });
const serverRef = (name: string) => ({ $ref: `#/servers/${name}` });
/** A JSON Pointer token (`/` and `~` escaped). */
const token = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

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

const INFO = {
  title: `${SERVICE_NAME}: events`,
  version: '1.0.0',
  description: [
    'What the service pushes (CONTRACT.md "Events"): subscribe, don\'t poll.',
    `Every event of an account has an id of the account's own sequence, gap-free (1, 2, 3, ...); events are kept ${EVENT_RETENTION_DAYS} days. Resume with Last-Event-ID (or after=): every later event exactly once; an id older than what is kept answers 410.`,
    `The same events as a page: GET ${API_PREFIX}/events?after=&limit=&types= (the OpenAPI document).`,
    "Operations are the service's: `send` is what the service sends to you, `receive` what it takes from you.",
  ].join('\n\n'),
};

/** The AsyncAPI 3.0 document of the service at `baseUrl`. */
export function asyncApiDocument(baseUrl: string): Json {
  return buildAsyncApi(EVENT_CHANNELS, baseUrl);
}

/** The document of `channels`: each with its messages and operations, in their order. */
function buildAsyncApi(channels: ChannelDecl[], baseUrl: string): Json {
  const messages = channels.flatMap((c) => c.messages);
  return {
    asyncapi: '3.0.0',
    info: INFO,
    defaultContentType: 'application/json',
    servers: servers(baseUrl),
    channels: Object.fromEntries(channels.map((c) => [c.name, channel(c)])),
    operations: Object.fromEntries(
      channels.flatMap((c) => c.operations.map((op) => [op.id, operation(c, op)])),
    ),
    components: {
      schemas: componentSchemas(messages),
      messages: Object.fromEntries(messages.map((m) => [m.name, message(m)])),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

/** The HTTP API and the WebSocket where the service is, and the agent's own webhook receiver. */
function servers(baseUrl: string): Record<ServerName, Json> {
  const url = new URL(baseUrl);
  const secure = url.protocol === 'https:';
  const basePath = url.pathname.replace(/\/$/, '');
  return {
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
  };
}

/** A channel: its address's parameters declared, its messages referred to. */
function channel(c: ChannelDecl): Json {
  const params = [...(c.address ?? '').matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  return {
    address: c.address,
    title: c.title,
    description: c.description,
    servers: [serverRef(c.server)],
    ...(params.length
      ? { parameters: Object.fromEntries(params.map((p) => [p, parameter(c, p)])) }
      : {}),
    messages: Object.fromEntries(c.messages.map((m) => [m.name, messageRef(m.name)])),
    ...(c.bindings ? { bindings: c.bindings } : {}),
  };
}

function parameter(c: ChannelDecl, name: string): Json {
  if (!Object.hasOwn(PARAMETERS, name))
    throw new Error(`AsyncAPI: channel ${c.name}'s address has {${name}}, which is no parameter`);
  return PARAMETERS[name];
}

/** An operation: its messages (and replies) referred to in its channel. */
function operation(c: ChannelDecl, op: OperationDecl): Json {
  const on = (m: string) => ({ $ref: `#/channels/${c.name}/messages/${token(m)}` });
  return {
    action: op.action,
    channel: channelRef(c.name),
    title: op.title,
    ...(op.summary ? { summary: op.summary } : {}),
    ...(op.keyed ? { security: KEYED } : {}),
    messages: (op.messages ?? c.messages.map((m) => m.name)).map(on),
    ...(op.reply ? { reply: { channel: channelRef(c.name), messages: op.reply.map(on) } } : {}),
    ...(op.bindings ? { bindings: op.bindings } : {}),
  };
}

function message(m: MessageDecl): Json {
  return {
    name: m.name,
    title: m.title ?? m.name,
    summary: m.summary,
    ...(m.description ? { description: m.description } : {}),
    contentType: 'application/json',
    ...(m.headers ? { headers: schemaRef(m.headers) } : {}),
    payload: schemaRef(m.payload),
    ...(m.bindings ? { bindings: m.bindings } : {}),
  };
}

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

/**
 * components.schemas, sorted: the WebSocket's frames and the TypeBox schemas the messages name,
 * with the named schemas they refer to.
 */
function componentSchemas(messages: MessageDecl[]): Json {
  const named: Record<string, unknown> = { ...NAMED_SCHEMAS, ...PAYLOAD_SCHEMAS };
  const names = new Map<unknown, string>(Object.entries(named).map(([n, s]) => [s, n]));
  const roots = messages
    .flatMap((m) => (m.headers ? [m.headers, m.payload] : [m.payload]))
    .filter((n) => !(n in WS_SCHEMAS));
  for (const n of roots)
    if (!(n in named)) throw new Error(`AsyncAPI: a message names ${n}, which is no schema`);
  const used = new Set<string>(roots);
  const out: Json = {};
  // Schemas refer to each other too: write them until no new name turns up.
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
