// The one route table's vocabulary. A route declares its method, path, auth and TypeBox schemas
// once; the server validates with them, the 422 answer is shaped from them and /api/openapi.json
// is generated from them. Handlers receive already-validated, already-coerced input.
import type { TSchema, TObject } from 'typebox';
import type { ValidationIssue } from './validation.js';
import type { IdemTicket } from '../../actors/runtime/client.js';
import type { Principals } from './principal.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
/** `ops`: the operators' pages (CONTRACT.md "Operators"): loopback only, or the ops token. */
export type Auth = 'none' | 'key' | 'holder' | 'ops';

/** What a handler returns; `json` is serialised, `body` is sent as is. */
export type Reply = {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string | Uint8Array;
  contentType?: string;
  /** A response that stays open (Server-Sent Events) instead of a body: see ReplyStream. */
  stream?: ReplyStream;
};

/**
 * A streamed answer: the server sends the status and headers (no length), then calls `open` with
 * `write` (sends a chunk, text or bytes: bytes shared by many streams are not copied for each; false
 * when it was not sent: the client has gone, or reads so slowly that what waits for it would pass
 * STREAM_BUFFER_BYTES), `end` (finishes the answer, after `last` when given: a short chunk sent
 * whatever waits, to say why) and `onRoom` (registers what to call once a client whose chunk was
 * refused has read what waited: the stream may write again). `open` returns what to call when the
 * client goes away first. `filler`: a chunk that means nothing to the client (an SSE comment), sent
 * to flush what waited once the client reads again. The request counts as answered when the head is
 * sent.
 */
export type ReplyStream = {
  open: (
    write: (chunk: string | Uint8Array) => boolean,
    end: (last?: string) => void,
    onRoom: (listener: () => void) => void,
  ) => () => void;
  filler?: string;
};

export type RequestInfo = {
  method: Method;
  /** Path without the query string. */
  url: string;
  /** The raw query string (no leading `?`), empty when there is none. */
  query: string;
  headers: Record<string, string>;
  /** The peer's address (computed on demand: most requests never need it). */
  remoteAddress: () => string;
};

export type Context<P = any, Q = any, B = any, W = unknown> = {
  params: P;
  query: Q;
  body: B;
  req: RequestInfo;
  /** The authenticated caller: typed by the route's auth kind (Principals), undefined on `none` routes. */
  principal: W;
  /**
   * The request's bytes as received, for a route that declares no `body` and reads its own (a
   * multipart upload); null without a body.
   */
  bytes?: Buffer | null;
  /**
   * The request's Idempotency-Key (state-changing routes): pass it with the one turn that has the
   * effect (`runtime.ask(..., { idem })`), which stores its reply with the effect.
   */
  idem?: IdemTicket;
  /**
   * Runs another route of this table through the same pipeline as an HTTP request of its own
   * (authentication, validation and its 422s, Idempotency-Key, response checks): the MCP
   * endpoint's tools call the API this way. Undefined outside the server (unit tests).
   */
  dispatch?: (req: InternalRequest) => Promise<Reply>;
  /**
   * Keeps `release` until the exchange is over: its answer all sent (at the pace the client reads
   * it) or its client gone; then calls it once. A place taken for the request (a per-address count)
   * is held this way. Undefined outside the server (unit tests).
   */
  hold?: (release: () => void) => void;
};

/**
 * A handler's context by its route's auth kind, for handlers written as named functions beside
 * their route table (the table then only routes): `async function getOrder(s: Services, ctx:
 * AgentContext<OrderParams>)`, bound in the table as `handler: (c) => getOrder(s, c)`.
 */
export type AgentContext<P = unknown, Q = unknown, B = unknown> = Context<
  P,
  Q,
  B,
  Principals['key']
>;
export type HolderContext<P = unknown, Q = unknown, B = unknown> = Context<
  P,
  Q,
  B,
  Principals['holder']
>;
export type OpsContext<P = unknown, Q = unknown, B = unknown> = Context<P, Q, B, Principals['ops']>;
export type PublicContext<P = unknown, Q = unknown, B = unknown> = Context<P, Q, B, undefined>;

/** A request run inside the process (Context.dispatch): what an HTTP request would carry. */
export type InternalRequest = {
  method: Method;
  /** The path with its parameters filled in (percent-encoded), without the query string. */
  path: string;
  /** The raw query string (no leading `?`). */
  query?: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body?: Buffer | null;
  /** The address of the request that caused this one (per-address limits count it): default none. */
  remoteAddress?: () => string;
};

/** A documented answer without a body of its own schema: 304, or an error (its body is the Problem schema). */
export type ResponseDoc = { description: string };

/**
 * An answer that is not (only) JSON: an HTML page, CSV, text, or a web form post's answer, which is
 * a page (or a redirect) for browsers and a JSON object for clients that ask for JSON.
 * `content` maps a media type to the schema of its body (undefined: not JSON, no schema).
 */
export class Media {
  constructor(
    readonly description: string,
    readonly content: Record<string, TSchema | undefined>,
  ) {}
}

/** A 2xx body: a TSchema is JSON (its `description` documents it); a Media names its media types. */
export type Body = TSchema | Media;

export const HTML = 'text/html; charset=utf-8';
export const htmlPage = (description: string) => new Media(description, { [HTML]: undefined });
export const media = (contentType: string, description: string) =>
  new Media(description, { [contentType]: undefined });
/** A web form post: a page or 303 for browsers, `schema` as JSON for clients that ask for JSON. */
export const formAnswer = (
  schema: TSchema,
  description = (schema as { description?: string }).description ?? 'done',
) => new Media(description, { 'application/json': schema, [HTML]: undefined });

/** A route of one auth kind: its handler's principal is that kind's (Principals). */
type RouteOf<P, Q, B, A extends Auth> = {
  method: Method;
  /** OpenAPI style: `/api/v1/markets/{market_id}`. */
  path: string;
  /**
   * The operation's stable, readable name (snake_case, verb first: `list_deals`, `get_order`,
   * `create_order`, `add_cart_item`): its OpenAPI `operationId`, its MCP tool's name and the typed
   * client's. Required on every route listed in /api/openapi.json (start-up fails without it,
   * `checkOperationIds`); unique across the table.
   */
  operationId?: string;
  auth: A;
  summary: string;
  /** Listed in /api/openapi.json; site routes (pages, robots.txt) are not. */
  api?: boolean;
  params?: TObject;
  query?: TObject;
  body?: TSchema;
  /** The body may be left out (no bytes at all): it is then validated as `{}`, defaults filled in. */
  optionalBody?: boolean;
  /**
   * The body of each success status (SVC_RESPONSE_CHECKS checks JSON replies against it; the
   * OpenAPI document carries it). Every route declares at least one.
   */
  response: Record<number, Body>;
  /** Other documented answers (304, errors) beyond those derived from the route. */
  responses?: Record<number, ResponseDoc>;
  handler: (ctx: Context<P, Q, B, Principals[A]>) => Reply | Promise<Reply>;
  /**
   * How a stored reply (what the effectful turn answered under an Idempotency-Key) is answered
   * again: the same rendering the handler applies to a fresh reply. Default: the reply as JSON.
   */
  replay?: (reply: any, ctx: Context<P, Q, B, Principals[A]>) => Reply | Promise<Reply>;
  /**
   * Web forms: how a failed validation is shown to a browser (the form again, with the message).
   * Undefined, or a result of undefined, keeps the standard 422 JSON answer. `input` holds the raw
   * (uncoerced) path, query and body values, for refilling the form.
   */
  onInvalid?: (
    req: RequestInfo,
    issues: ValidationIssue[],
    input: RawInput,
    principal: Principals[A],
  ) => Reply | undefined | Promise<Reply | undefined>;
};

/**
 * A route: one of the auth kinds' (a union on `auth`, so a route literal's handler is typed by the
 * `auth` it declares).
 */
export type Route<P = any, Q = any, B = any> = { [A in Auth]: RouteOf<P, Q, B, A> }[Auth];

/**
 * The route as the server runs any of them: its principal whatever its kind's is (the server
 * authenticates with the route's own kind, so the principal it passes is that kind's).
 */
export type AnyRoute = Omit<Route, 'handler' | 'replay' | 'onInvalid'> & {
  handler: (ctx: Context) => Reply | Promise<Reply>;
  replay?: (reply: any, ctx: Context) => Reply | Promise<Reply>;
  onInvalid?: (
    req: RequestInfo,
    issues: ValidationIssue[],
    input: RawInput,
    principal: unknown,
  ) => Reply | undefined | Promise<Reply | undefined>;
};

export type RawInput = {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
};

/** The route as the server runs it (the one place a route's principal type is widened). */
export const runnable = (route: Route): AnyRoute => route as AnyRoute;

/** Identity helper that keeps a route's declaration typed at its definition site. */
export function route<P = any, Q = any, B = any>(r: Route<P, Q, B>): Route<P, Q, B> {
  return r;
}

/** An expected failure with a status and a `detail` the client reads. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : `HTTP ${status}`);
  }
}

export const json = (value: unknown, status = 200, headers?: Record<string, string>): Reply => ({
  status,
  json: value,
  headers,
});
export const text = (
  body: string,
  contentType = 'text/plain; charset=utf-8',
  status = 200,
): Reply => ({ status, body, contentType });
