// MCP (CONTRACT.md "MCP"): the API's operations as tools of the Model Context Protocol, served at
// POST /mcp over Streamable HTTP, stateless, JSON answers, on the SDK's low-level `Server` and its
// web-standard transport (this file is the small adapter from the route table and uWS to them).
// One tool per JSON operation under /api/v1, generated from the route table: name = operationId,
// description = summary, input = one flat object of path, query and body fields (and `api_key` on
// the key's tools, `idempotency_key` on those that change state). A call runs the real route through
// the server's own pipeline (Context.dispatch: auth, validation, Idempotency-Key, limits), never a
// copy of a handler.
// Light enough for a model's context (limits.ts MCP_TOOLS_LIST_BYTES, MCP_LIST_DEFAULT,
// MCP_TOOL_ANSWER_BYTES): no output schemas (most of a tools/list's bytes; the spec makes them
// optional, and a result's structuredContent needs none), short descriptions, list tools' pages of
// MCP_LIST_DEFAULT by default, and the JSON a second time as structuredContent only while it fits.
// Bounded: one JSON-RPC message per POST (a batch is refused before anything is built),
// a request without a valid key holds a place of its client address until its answer is sent
// (limits.ts UNAUTHENTICATED_PER_ADDRESS, 429 beyond), and answers are built within a byte budget
// (MCP_RESULT_BYTES per tool result, MCP_ANSWER_BYTES per answer).
import { API_TAG_NAMES, apiTag, type ApiTag } from '../api/tags.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Resource,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { TSchema } from 'typebox';
import { isApiRoute, standaloneSchema } from '../api/openapi.js';
import {
  HttpError,
  Media,
  type Context,
  type InternalRequest,
  type Method,
  type Reply,
  type RequestInfo,
  type Route,
} from '../http/route.js';
import { SERVICE_NAME } from '../docs/manifest.js';
import { keyFromHeaders } from '../auth/api-keys.js';
import {
  MCP_ANSWER_BYTES,
  MCP_LIST_DEFAULT,
  MCP_RESULT_BYTES,
  MCP_TOOL_ANSWER_BYTES,
  UNAUTHENTICATED_RETRY_AFTER_S,
  addressKey,
  unauthenticatedDetail,
  type Places,
} from '../http/limits.js';

/** The oldest protocol version served: the first with structured tool output (2025-06-18). */
export const MIN_PROTOCOL_VERSION = '2025-06-18';

/** Where a tool's argument goes in the request (`credential`: api_key, as Authorization when the request has none). */
type Place = 'path' | 'query' | 'body' | 'header' | 'credential';

export type McpTool = {
  tool: Tool;
  route: Route;
  /** Each argument's place, in the order the request is built (the body's keys in its schema's order). */
  places: Map<string, Place>;
  /** Changes state (POST, PUT, DELETE): takes `idempotency_key`. */
  mutates: boolean;
  /** Arguments the tool gives the request when the call leaves them out (a list's page of MCP_LIST_DEFAULT). */
  defaults: Record<string, unknown>;
  /** The operation's OpenAPI tag (src/api/tags.ts): what `POST /mcp?tags=` filters by. */
  tag: ApiTag;
};

const IDEMPOTENCY_KEY = 'idempotency_key';
const API_KEY = 'api_key';
/** The fields a link for the holder comes in (CONTRACT.md: the agent hands it over). */
const HOLDER_LINKS = ['purchase_url', 'checkout_url', 'pairing_url'];
const HAND_OVER =
  ' The answer carries a link for your human account holder ({links}): hand it to them (they approve and pay there, or connect to you); nothing is charged until they do.';
const KEY_NOTE = ' Needs your API key (Authorization: Bearer, or api_key).';

type JsonObject = { type?: unknown; properties?: Record<string, TSchema>; required?: string[] };
const objectSchema = (s: unknown): s is JsonObject & { properties: Record<string, TSchema> } =>
  typeof s === 'object' &&
  s !== null &&
  !(s instanceof Media) &&
  !!(s as JsonObject).properties &&
  (s as JsonObject).type === 'object';

/** The lowest 2xx answer of a route when it is JSON (a TSchema), else undefined. */
function jsonAnswer(r: Route): TSchema | undefined {
  const ok = Object.keys(r.response)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort((a, b) => a - b)[0];
  const body = ok === undefined ? undefined : r.response[ok];
  return body === undefined || body instanceof Media ? undefined : body;
}

/** Links for the holder the answer's schema has at its top level. */
function holderLinks(answer: TSchema | undefined): string[] {
  const props = objectSchema(answer) ? answer.properties : {};
  return HOLDER_LINKS.filter((k) => k in props);
}

/** The tools of a route table: every JSON API operation under /api/v1 (no pages, forms or streams). */
export function mcpTools(routes: Route[]): McpTool[] {
  const out: McpTool[] = [];
  for (const r of routes) {
    if (!isApiRoute(r) || !r.path.startsWith('/api/v1/') || !r.operationId) continue;
    const answer = jsonAnswer(r);
    if (!answer) continue;
    out.push(toolOf(r, answer));
  }
  return out;
}

/** A tool's arguments as they are collected: each one's schema, place, and whether it is required. */
type Arguments = {
  properties: Record<string, unknown>;
  required: string[];
  places: Map<string, Place>;
  defaults: Record<string, unknown>;
};
type AddArgument = (name: string, schema: unknown, place: Place, isRequired: boolean) => void;

/** The argument of the tools that change state. */
const IDEMPOTENCY_ARGUMENT = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]+$',
  description:
    'Idempotency-Key: a retry with the same key and arguments gets the first answer (24 h), no second effect',
};
/** The argument of the key's tools. */
const API_KEY_ARGUMENT = {
  type: 'string',
  description: 'your API key, when this request has no Authorization header',
};

function toolOf(r: Route, answer: TSchema): McpTool {
  const mutates = r.method !== 'GET';
  const { properties, required, places, defaults } = argumentsOf(r, mutates);
  const inputSchema = lean(
    standaloneSchema({
      type: 'object',
      properties,
      ...(required.length ? { required } : {}),
      additionalProperties: false,
    }),
  ) as Tool['inputSchema'];
  const tool: Tool = {
    name: r.operationId!,
    description: toolDescription(r, answer),
    inputSchema,
    annotations: toolAnnotations(r, mutates),
  };
  return { tool, route: r, places, mutates, defaults, tag: apiTag(r.path) };
}

/** The route's path, query and body fields as one flat list of arguments, then idempotency_key and api_key. */
function argumentsOf(r: Route, mutates: boolean): Arguments {
  const args: Arguments = { properties: {}, required: [], places: new Map(), defaults: {} };
  const add: AddArgument = (name, schema, place, isRequired) => {
    if (args.places.has(name))
      throw new Error(
        `MCP tool ${r.operationId}: argument ${name} is both a ${args.places.get(name)} and a ${place} field`,
      );
    args.places.set(name, place);
    args.properties[name] = schema;
    if (isRequired) args.required.push(name);
  };
  pathArguments(r, add);
  queryArguments(r, add, args.defaults);
  bodyArguments(r, add);
  if (mutates) add(IDEMPOTENCY_KEY, IDEMPOTENCY_ARGUMENT, 'header', false);
  if (r.auth === 'key') add(API_KEY, API_KEY_ARGUMENT, 'credential', false);
  return args;
}

/** Every `{name}` of the path, required. */
function pathArguments(r: Route, add: AddArgument): void {
  const params = (r.params as JsonObject | undefined)?.properties ?? {};
  for (const name of [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]))
    add(name, params[name] ?? { type: 'string' }, 'path', true);
}

function queryArguments(r: Route, add: AddArgument, defaults: Record<string, unknown>): void {
  const query = r.query as JsonObject | undefined;
  for (const [name, s] of Object.entries(query?.properties ?? {})) {
    // A list's page: MCP_LIST_DEFAULT items unless the call asks for more (the API's own default may be larger).
    const page =
      name === 'limit' &&
      typeof (s as { default?: unknown }).default === 'number' &&
      (s as { default: number }).default > MCP_LIST_DEFAULT;
    if (page) defaults[name] = MCP_LIST_DEFAULT;
    add(
      name,
      page ? { ...s, default: MCP_LIST_DEFAULT } : s,
      'query',
      (query!.required ?? []).includes(name) && !('default' in s),
    );
  }
}

/** The body's fields (a body that is not an object cannot be arguments: nothing starts). */
function bodyArguments(r: Route, add: AddArgument): void {
  if (!r.body) return;
  if (!objectSchema(r.body))
    throw new Error(
      `MCP tool ${r.operationId}: its body is not an object; its fields cannot be arguments`,
    );
  const body = r.body as JsonObject & { properties: Record<string, TSchema> };
  for (const [name, s] of Object.entries(body.properties))
    add(name, s, 'body', (body.required ?? []).includes(name) && !('default' in s));
}

/** The route's summary, then whether it needs the key and the links for the holder its answer carries. */
function toolDescription(r: Route, answer: TSchema): string {
  const links = holderLinks(answer);
  return [
    r.summary.endsWith('.') ? r.summary : `${r.summary}.`,
    r.auth === 'key' ? KEY_NOTE : '',
    links.length ? HAND_OVER.replace('{links}', links.join(', ')) : '',
  ].join('');
}

/** Hints only where they differ from the spec's defaults (not read-only, destructive, not idempotent, open world). */
function toolAnnotations(r: Route, mutates: boolean): Tool['annotations'] {
  return {
    ...(mutates ? {} : { readOnlyHint: true }),
    ...(mutates && r.method !== 'DELETE' ? { destructiveHint: false } : {}),
    ...(r.method === 'GET' || r.method === 'PUT' || r.method === 'DELETE'
      ? { idempotentHint: true }
      : {}),
    openWorldHint: false,
  };
}

type Schema = Record<string, unknown>;
const isNull = (x: unknown) => (x as Schema)?.type === 'null';

/**
 * An input schema as a model needs it, the same values accepted: a choice of string constants as
 * one `enum`; `X or null` as X (a model has no reason to send null: leaving the argument out means
 * the same); a description said once.
 */
export function lean(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lean);
  if (typeof schema !== 'object' || schema === null) return schema;
  const s = schema as Schema;
  if (Array.isArray(s.anyOf)) {
    const { anyOf, ...rest } = s;
    const branches = (anyOf as Schema[]).filter((b) => !isNull(b));
    if (
      branches.length &&
      branches.every((b) => b.type === 'string' && 'const' in b && Object.keys(b).length === 2)
    ) {
      return { type: 'string', enum: branches.map((b) => b.const), ...rest };
    }
    if (branches.length === 1) {
      const only = lean(branches[0]) as Schema;
      return {
        ...only,
        ...(rest.description !== undefined ? { description: rest.description } : {}),
      };
    }
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(s))
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as Schema).map(([n, p]) => [n, lean(p)]))
        : lean(v);
  return out;
}

/** The credentials of the MCP request that the API reads (CONTRACT.md: the agent's key). */
const CREDENTIALS = ['authorization', 'x-api-token'];

const textResult = (
  value: unknown,
  isError: boolean,
  meta?: Record<string, unknown>,
): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  ...(isError ? { isError: true } : {}),
  ...(meta ? { _meta: meta } : {}),
});

/** A refusal shaped as the API's own (a 422's issues, a sentence otherwise), as a tool error. */
const toolError = (status: number, detail: unknown): CallToolResult =>
  textResult({ status, detail }, true);

/** A tool result over MCP_RESULT_BYTES: what the tool error says instead. */
const tooLarge = (name: string, bytes: number) =>
  `${name} answered ${bytes} bytes of JSON, more than the ${MCP_RESULT_BYTES} an MCP tool result may carry: ` +
  'ask for less (a smaller limit, a later after, a narrower range of ticks), or read it from the HTTP API';

/** Whether `v` is a plain JSON object (not an array, not null). */
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The same JSON value with every array of two or more objects of the same keys (in the same order)
 * written once as `{"$columns": [keys], "$rows": [[values], ...]}`: a series of 48 sessions of 30
 * fields each says its 30 names once instead of 48 times. Nothing is lost (the API's keys never
 * start with `$`); a model reads it as a table.
 */
export function columnar(value: unknown): unknown {
  if (Array.isArray(value)) {
    const rows = value.map(columnar);
    const first = value[0];
    if (value.length < 2 || !isObject(first)) return rows;
    const keys = Object.keys(first);
    const same = value.every(
      (v) =>
        isObject(v) &&
        Object.keys(v).length === keys.length &&
        Object.keys(v).every((k, i) => k === keys[i]),
    );
    return same
      ? {
          $columns: keys,
          $rows: value.map((v) => keys.map((k) => columnar((v as Record<string, unknown>)[k]))),
        }
      : rows;
  }
  if (!isObject(value)) return value;
  // fromEntries defines own properties: a "__proto__" key of the JSON stays a key (an assignment would set the prototype).
  return Object.fromEntries(Object.keys(value).map((k) => [k, columnar(value[k])]));
}

/**
 * The API's answer as a tool result. While twice its JSON fits in MCP_TOOL_ANSWER_BYTES: the JSON
 * as one text item and, for an object, as structuredContent. Larger: one text item only, the
 * JSON in columnar form (a model reads the text; a second copy would double a large answer).
 * An error status is a tool error, and so is an answer whose text would pass MCP_RESULT_BYTES.
 */
export function resultOf(reply: Reply, name = 'the tool'): CallToolResult {
  const status = reply.status ?? 200;
  let value: unknown = reply.json;
  if (value === undefined && reply.body !== undefined) {
    const text = Buffer.from(reply.body as string | Uint8Array).toString('utf8');
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
  }
  if (status >= 400) {
    // The API's refusal object as it is (its detail, and a limit refusal's fields beside it).
    const refusal =
      typeof value === 'object' && value !== null && 'detail' in value
        ? (value as Record<string, unknown>)
        : { detail: value };
    const retry = reply.headers?.['retry-after'];
    return textResult(
      { status, ...refusal, ...(retry ? { retry_after_seconds: Number(retry) } : {}) },
      true,
    );
  }
  const meta: Record<string, unknown> = {
    status,
    ...(reply.headers?.['idempotent-replayed'] === 'true' ? { idempotent_replayed: true } : {}),
  };
  const result = textResult(value ?? null, false, meta);
  const bytes = Buffer.byteLength((result.content[0] as { text: string }).text);
  if (bytes > MCP_RESULT_BYTES) return toolError(413, tooLarge(name, bytes));
  // Twice the JSON (the text, then structuredContent) and the envelope's few hundred bytes.
  if (2 * bytes + 512 <= MCP_TOOL_ANSWER_BYTES) {
    if (isObject(value)) result.structuredContent = value;
    return result;
  }
  meta.form =
    'columnar: each {"$columns": [...], "$rows": [[...]]} is a list of objects with those keys';
  return textResult(columnar(value), false, meta);
}

/**
 * Runs one tool: checks the arguments' names (their values are the API's to judge: its 422), the
 * key where one is needed, builds the request and dispatches it through the route's pipeline.
 */
export async function callTool(
  t: McpTool,
  args: unknown,
  headers: Record<string, string>,
  dispatch: (r: InternalRequest) => Promise<Reply>,
  remoteAddress?: () => string,
): Promise<CallToolResult> {
  const a = (args ?? {}) as Record<string, unknown>;
  const refused = namesRefusal(t, a) ?? stringRefusal(a, API_KEY);
  if (refused) return refused;
  const credentials = credentialsOf(t, a, headers);
  const missing =
    keyRefusal(t, credentials) ?? pathRefusal(t, a) ?? stringRefusal(a, IDEMPOTENCY_KEY);
  if (missing) return missing;
  return resultOf(await dispatch(requestOf(t, a, credentials, remoteAddress)), t.tool.name);
}

/** The arguments are one object, of the tool's names only. */
function namesRefusal(t: McpTool, a: Record<string, unknown>): CallToolResult | undefined {
  if (typeof a !== 'object' || Array.isArray(a))
    return toolError(422, 'the arguments must be one object');
  const unknown = Object.keys(a).filter((k) => !t.places.has(k));
  if (!unknown.length) return undefined;
  return toolError(
    422,
    `unknown argument${unknown.length > 1 ? 's' : ''} ${unknown
      .slice(0, 10)
      .map((k) => JSON.stringify(k.slice(0, 60)))
      .join(', ')}; ${t.tool.name} takes ${[...t.places.keys()].join(', ') || 'none'}`,
  );
}

/** An argument the tool itself reads (api_key, idempotency_key) is a string when given. */
function stringRefusal(a: Record<string, unknown>, name: string): CallToolResult | undefined {
  if (a[name] === undefined || typeof a[name] === 'string') return undefined;
  return toolError(422, [
    { loc: ['arguments', name], msg: 'Input should be a string', type: 'string_type' },
  ]);
}

/** The MCP request's own credentials; CONTRACT.md "MCP": api_key is used when it carries none. */
function credentialsOf(
  t: McpTool,
  a: Record<string, unknown>,
  headers: Record<string, string>,
): Record<string, string> {
  const credentials: Record<string, string> = {};
  for (const h of CREDENTIALS) if (headers[h]) credentials[h] = headers[h];
  if (t.route.auth === 'key' && !Object.keys(credentials).length && a[API_KEY])
    credentials.authorization = `Bearer ${a[API_KEY] as string}`;
  return credentials;
}

function keyRefusal(t: McpTool, credentials: Record<string, string>): CallToolResult | undefined {
  if (t.route.auth !== 'key' || Object.keys(credentials).length) return undefined;
  return toolError(
    401,
    `${t.tool.name} needs the agent's API key: send it as Authorization: Bearer <key> on the MCP request, or as the api_key argument (a new agent makes one with create_token and registers it with register_agent, both without a key)`,
  );
}

/** Every path argument is given (the route could not be named without it). */
function pathRefusal(t: McpTool, a: Record<string, unknown>): CallToolResult | undefined {
  const missing = [...t.places].filter(
    ([k, p]) => p === 'path' && (a[k] === undefined || a[k] === null || a[k] === ''),
  );
  if (!missing.length) return undefined;
  return toolError(
    422,
    missing.map(([k]) => ({ loc: ['path', k], msg: 'Field required', type: 'missing' })),
  );
}

/** The route's request of the arguments: each in its place (path, query, body, header). */
function requestOf(
  t: McpTool,
  a: Record<string, unknown>,
  credentials: Record<string, string>,
  remoteAddress?: () => string,
): InternalRequest {
  const path = t.route.path.replace(/\{([^}]+)\}/g, (_, k: string) =>
    encodeURIComponent(String(a[k])),
  );
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [k, place] of t.places) {
    const v = a[k] ?? t.defaults[k];
    if (v === undefined || place === 'header' || place === 'credential') continue;
    if (place === 'query' && v !== null)
      for (const x of Array.isArray(v) ? v : [v])
        query.append(k, typeof x === 'object' ? JSON.stringify(x) : String(x));
    if (place === 'body') body[k] = v;
  }
  const req: InternalRequest = {
    method: t.route.method as Method,
    path,
    query: query.toString(),
    headers: { accept: 'application/json', ...credentials },
    remoteAddress,
  };
  if (typeof a[IDEMPOTENCY_KEY] === 'string') req.headers['idempotency-key'] = a[IDEMPOTENCY_KEY];
  if (t.route.body && (Object.keys(body).length || !t.route.optionalBody)) {
    req.body = Buffer.from(JSON.stringify(body));
    req.headers['content-type'] = 'application/json';
  }
  return req;
}

/** A text of the service offered as an MCP resource, read through its own route. */
export type McpResource = { resource: Resource; path: string };

export function mcpResources(baseUrl: string): McpResource[] {
  return [
    {
      path: '/llms.txt',
      resource: {
        uri: `${baseUrl}/llms.txt`,
        name: 'llms.txt',
        title: 'The service for language models',
        description: 'What the service is and how an agent uses it, in plain text',
        mimeType: 'text/plain',
      },
    },
    {
      path: '/api/v1/agents/protocol',
      resource: {
        uri: `${baseUrl}/api/v1/agents/protocol`,
        name: 'protocol',
        title: "The agent's working protocol",
        description: 'The steps an agent follows, as data (get_protocol answers the same)',
        mimeType: 'application/json',
      },
    },
    {
      path: '/docs/agents',
      resource: {
        uri: `${baseUrl}/docs/agents`,
        name: 'docs-agents',
        title: 'For agents',
        description: "The agents' guide: every step with a command that runs as shown",
        mimeType: 'text/html',
      },
    },
  ];
}

const INSTRUCTIONS =
  'Simulated markets run in numbered sessions; each session has a menu of deals. Study a market (list_markets, list_deals, get_deal, ' +
  'get_history, get_stats), order a deal (create_order) or propose it in a cart (add_cart_item), then follow it (list_orders, ' +
  'list_positions, get_account, list_events). Tools marked as needing the key read Authorization: Bearer <key> of this request, or their api_key argument. ' +
  'An order or cart line is paid by your human holder: hand them the purchase_url or checkout_url the answer carries. ' +
  'Tools that change state take idempotency_key: retry with the same key after a failure, never without one.';

export type McpEndpoint = {
  tools: McpTool[];
  resources: McpResource[];
  /** Answers one POST /mcp (the route's handler). */
  handle: (ctx: Context) => Promise<Reply>;
};

/** What the endpoint needs of the service to count unauthenticated work. */
export type McpOptions = {
  /** The `key` routes' authenticator: a request whose key it accepts is not counted as unauthenticated. */
  authenticate: (req: RequestInfo) => Promise<unknown>;
  /** Unauthenticated work per client address (shared with the WebSocket's connections before their auth). */
  unauthenticated: Places;
};

/** The refusal of a JSON-RPC batch (CONTRACT.md "MCP"). */
const BATCH_REFUSED =
  'Invalid Request: one JSON-RPC message per POST (protocol 2025-06-18 dropped batching); send each request on its own';

/** What a request's server serves: the tools by name, their listing, the resources. */
type Catalogue = { byName: Map<string, McpTool>; list: Tool[]; resources: McpResource[] };

const catalogueOf = (tools: McpTool[], resources: McpResource[]): Catalogue => ({
  byName: new Map(tools.map((t) => [t.tool.name, t])),
  list: tools.map((t) => t.tool),
  resources,
});

/** The MCP endpoint over a finished route table. */
export function mcpEndpoint(routes: Route[], baseUrl: string, opts: McpOptions): McpEndpoint {
  const tools = mcpTools(routes);
  const resources = mcpResources(baseUrl);
  const all = catalogueOf(tools, resources);
  // One catalogue per set of tags asked for (at most one per subset of API_TAG_NAMES).
  const byTags = new Map<string, Catalogue>();
  const catalogue = (tags: ApiTag[] | undefined) => {
    if (!tags) return all;
    const key = [...tags].sort().join(',');
    let c = byTags.get(key);
    if (!c)
      byTags.set(
        key,
        (c = catalogueOf(
          tools.filter((t) => tags.includes(t.tag)),
          resources,
        )),
      );
    return c;
  };
  return {
    tools,
    resources,
    handle: async (ctx) => {
      const tags = tagsOf(ctx.req.query);
      if (typeof tags === 'string') return rpcError(400, -32602, tags);
      return handle(ctx, catalogue(tags), baseUrl, opts);
    },
  };
}

/** `?tags=a,b`: the tags asked for (undefined: every tool), or why one is unknown. */
function tagsOf(query: string): ApiTag[] | undefined | string {
  const raw = new URLSearchParams(query).get('tags');
  if (raw === null || raw.trim() === '') return undefined;
  const asked = [
    ...new Set(
      raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = asked.filter((x) => !(API_TAG_NAMES as readonly string[]).includes(x));
  if (unknown.length)
    return `Invalid params: unknown tag ${JSON.stringify(unknown[0].slice(0, 40))}; tags are ${API_TAG_NAMES.join(', ')}`;
  return asked as ApiTag[];
}

/** One request's server: stateless, so each POST gets its own Server and transport (the SDK's rule). */
function serverFor(catalogue: Catalogue, ctx: Context): Server {
  const server = new Server(
    { name: 'agent-market', title: SERVICE_NAME, version: '1.0.0' },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: INSTRUCTIONS,
    },
  );
  const dispatch = ctx.dispatch!;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: catalogue.list }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const t = catalogue.byName.get(req.params.name);
    if (!t)
      return toolError(
        404,
        `no tool ${JSON.stringify(req.params.name.slice(0, 100))}; tools/list names them`,
      );
    return callTool(t, req.params.arguments, ctx.req.headers, dispatch, ctx.req.remoteAddress);
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: catalogue.resources.map((r) => r.resource),
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const r = catalogue.resources.find((x) => x.resource.uri === req.params.uri);
    if (!r) throw resourceNotFound(req.params.uri);
    return readResource(r, dispatch);
  });
  return server;
}

/** A resource's text, read through its route. */
async function readResource(
  r: McpResource,
  dispatch: (r: InternalRequest) => Promise<Reply>,
): Promise<{ contents: { uri: string; mimeType?: string; text: string }[] }> {
  const reply = await dispatch({
    method: 'GET',
    path: r.path,
    headers: { accept: r.resource.mimeType ?? '*/*' },
  });
  const text =
    reply.body !== undefined
      ? Buffer.from(reply.body as string | Uint8Array).toString('utf8')
      : JSON.stringify(reply.json);
  return { contents: [{ uri: r.resource.uri, mimeType: r.resource.mimeType, text }] };
}

/**
 * A request without a key the service accepts takes a place of its client address, held until
 * its answer is sent (Context.hold) or given back when the answer is built (no server: a unit
 * test); over the cap, 429. Answers what gives the place back early, if anything.
 */
async function admit(opts: McpOptions, ctx: Context): Promise<(() => void) | undefined> {
  if (
    keyFromHeaders(ctx.req.headers) !== null &&
    (await opts.authenticate(ctx.req).then(
      () => true,
      () => false,
    ))
  )
    return undefined;
  const release = opts.unauthenticated.take(addressKey(ctx.req.remoteAddress()));
  if (!release)
    throw new HttpError(429, unauthenticatedDetail('this MCP request'), {
      'retry-after': String(UNAUTHENTICATED_RETRY_AFTER_S),
    });
  if (!ctx.hold) return release;
  ctx.hold(release);
  return undefined;
}

/** Answers one POST /mcp: refusals first, then the SDK's transport on a server of its own. */
async function handle(
  ctx: Context,
  catalogue: Catalogue,
  baseUrl: string,
  opts: McpOptions,
): Promise<Reply> {
  const headers = transportHeaders(ctx);
  const version = headers.get('mcp-protocol-version');
  if (version !== null && version < MIN_PROTOCOL_VERSION) {
    return rpcError(
      400,
      -32000,
      `Bad Request: unsupported protocol version ${version.slice(0, 40)} (this server speaks ${MIN_PROTOCOL_VERSION} and later)`,
    );
  }
  const bytes = ctx.bytes ?? Buffer.alloc(0);
  // Read once, here: a batch is refused before any server, transport or answer is built.
  const message = parseMessage(bytes);
  if (message && Array.isArray(message.value)) return rpcError(400, -32600, BATCH_REFUSED);
  const early = await admit(opts, ctx);
  const server = serverFor(catalogue, ctx);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  try {
    await server.connect(transport);
    const request = new Request(`${baseUrl}/mcp`, {
      method: 'POST',
      headers,
      body: new Uint8Array(bytes),
    });
    // Unreadable JSON is left to the SDK (its -32700).
    const res = await transport.handleRequest(
      request,
      message && { parsedBody: initializeAtLeastMin(message.value) },
    );
    return await replyOf(res, message);
  } finally {
    early?.();
    await server.close().catch(() => {});
  }
}

/** The request's headers as the transport is handed them. */
function transportHeaders(ctx: Context): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(ctx.req.headers)) headers.set(k, v);
  // Every answer is JSON (enableJsonResponse) whatever the client accepts: the transport's Accept
  // check (both application/json and text/event-stream named) would only refuse clients that leave it out.
  headers.set('accept', 'application/json, text/event-stream');
  return headers;
}

/** The transport's answer as the route's reply, unless it is over MCP_ANSWER_BYTES. */
async function replyOf(res: Response, message: { value: unknown } | undefined): Promise<Reply> {
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (k !== 'content-type' && k !== 'content-length') out[k] = v;
  });
  const text = await res.text();
  if (Buffer.byteLength(text) > MCP_ANSWER_BYTES)
    return answerTooLarge(message?.value, Buffer.byteLength(text));
  return text
    ? {
        status: res.status,
        body: text,
        contentType: res.headers.get('content-type') ?? 'application/json',
        headers: out,
      }
    : { status: res.status, headers: out };
}

/** resources/read of a URI the server does not list: the spec's -32002. */
const resourceNotFound = (uri: string) =>
  new McpError(-32002, `Resource not found: ${uri.slice(0, 200)}`, { uri: uri.slice(0, 200) });

function rpcError(status: number, code: number, message: string): Reply {
  return {
    status,
    contentType: 'application/json',
    body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }),
  };
}

/** The body as JSON (any JSON value), or undefined when it is not JSON (too deep for the parser included). */
function parseMessage(bytes: Buffer): { value: unknown } | undefined {
  if (bytes.length === 0) return undefined;
  try {
    return { value: JSON.parse(bytes.toString('utf8')) };
  } catch {
    return undefined;
  }
}

/** An answer over MCP_ANSWER_BYTES: a JSON-RPC error for the request's id instead. */
function answerTooLarge(message: unknown, bytes: number): Reply {
  const id =
    typeof message === 'object' && message !== null && 'id' in message
      ? (message as { id: unknown }).id
      : null;
  const answer = {
    jsonrpc: '2.0',
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    error: {
      code: -32603,
      message: `Internal error: the answer would be ${bytes} bytes, more than the ${MCP_ANSWER_BYTES} an MCP answer may carry`,
    },
  };
  return { status: 200, contentType: 'application/json', body: JSON.stringify(answer) };
}

/**
 * An initialize asking for a version older than MIN_PROTOCOL_VERSION is answered with the newest
 * one (the client then decides whether it can go on), as for a version the server does not know:
 * the message with its version replaced; any other message as it is.
 */
function initializeAtLeastMin(msg: unknown): unknown {
  const m = msg as { method?: unknown; params?: { protocolVersion?: unknown } };
  if (
    typeof m !== 'object' ||
    m === null ||
    m.method !== 'initialize' ||
    typeof m.params?.protocolVersion !== 'string'
  )
    return msg;
  if (m.params.protocolVersion >= MIN_PROTOCOL_VERSION) return msg;
  return { ...m, params: { ...m.params, protocolVersion: LATEST_PROTOCOL_VERSION } };
}
