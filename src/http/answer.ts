// The last steps of a request: the reply it gets (error answers, response checks, a browser's error
// page), its head and bytes on the socket (src/http/reply-writer.ts paces them), and its count and
// log line.
import { performance } from 'node:perf_hooks';
import { ActorError, safeError } from '../../actors/runtime/client.js';
import { HttpError, type Reply } from './route.js';
import type { HttpResponse } from './uws.js';
import { prefersJson } from '../web/answers.js';
import { openStream, sendBody, settle, statusLine, type Exchange } from './reply-writer.js';
import { isRecord, type Front } from './front.js';
import type { Compiled } from './compiled-route.js';

/** The route name under which requests the table does not know are counted. */
export const UNMATCHED = '(unmatched)';

/** An exchange on the network: where its answer goes, and what it is counted under. */
export type Outgoing = {
  res: HttpResponse;
  x: Exchange;
  route: string;
  method: string;
  /** performance.now() when the request arrived. */
  started: number;
};

const INTERNAL = JSON.stringify({ detail: 'internal error' });
/**
 * Sent with every HTML page: no inline script or style, no framing. Referrer `same-origin`: links
 * carry tokens, so no other site sees a path; not `no-referrer`, which makes browsers send
 * `Origin: null` on the site's own form posts (refused as cross-site).
 */
const PAGE_HEADERS: [string, string][] = [
  [
    'content-security-policy',
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  ],
  ['x-frame-options', 'DENY'],
  ['referrer-policy', 'same-origin'],
];
/**
 * The head of an answer as one writeStatus's text: the status, then on the following lines
 * (`200 OK\r\nname: value`...) its headers, so uWS writes the very bytes of one call per line in
 * one call. Content type (when the answer has a body), nosniff, the page headers of HTML (unless
 * the reply sets its own), then the reply's headers in their order.
 */
function headText(
  status: number,
  type: string | undefined,
  headers: Readonly<Record<string, string>> | undefined,
): string {
  const lines = [statusLine(status)];
  if (type !== undefined) lines.push(`content-type: ${type}`);
  lines.push('x-content-type-options: nosniff');
  if (type?.startsWith('text/html'))
    for (const [k, v] of PAGE_HEADERS) if (headers?.[k] === undefined) lines.push(`${k}: ${v}`);
  if (headers) for (const k in headers) lines.push(`${k}: ${headers[k]}`);
  return lines.join('\r\n');
}

/** No reply headers: their key in `heads`. */
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** A handful of content types and statuses per header object; more (made up per answer) are not kept. */
const HEADS_KEPT = 16;
/**
 * Heads built once per frozen header object (a snapshot's `etag` and `cache-control`, shared by
 * every answer of its session), content type and status; other replies' are built per answer.
 */
const heads = new WeakMap<object, Map<string | undefined, Map<number, string>>>();
function head(
  status: number,
  type: string | undefined,
  headers: Readonly<Record<string, string>> | undefined,
): string {
  const h = headers ?? NO_HEADERS;
  if (!Object.isFrozen(h)) return headText(status, type, h);
  let byType = heads.get(h);
  if (!byType) heads.set(h, (byType = new Map()));
  let byStatus = byType.get(type);
  if (!byStatus) {
    byStatus = new Map();
    if (byType.size < HEADS_KEPT) byType.set(type, byStatus);
  }
  let text = byStatus.get(status);
  if (text === undefined) {
    text = headText(status, type, headers);
    if (byStatus.size < HEADS_KEPT) byStatus.set(status, text);
  }
  return text;
}

/**
 * Answers the exchange once: counts and logs it, then sends the reply (its head and body, or its
 * stream), unless the client went away. `close`: a refused oversized upload, answered and dropped
 * rather than read to its end.
 */
export function finish(f: Front, o: Outgoing, reply: Reply, close = false): void {
  const { res, x } = o;
  if (x.done) return;
  x.done = true;
  if (o.route !== UNMATCHED) f.inflight--;
  if (x.aborted) {
    // Nobody to answer: account for the request only.
    account(f, o.route, o.method, reply.status ?? 200, o.started);
    return settle(x);
  }
  const { status, payload, type } = encode(f, reply, o.route);
  account(f, o.route, o.method, status, o.started);
  if (reply.stream && status === 200) return openStream(res, x, reply, reply.stream);
  const typed = payload.length || reply.json !== undefined ? type : undefined;
  res.cork(() => {
    res.writeStatus(head(status, typed, reply.headers));
    // A refused oversized upload: answer and drop the connection rather than read the rest (a short body).
    if (close) res.writeHeader('connection', 'close');
    // 304 and 204 carry no body (and no Content-Length: 0).
    if (status === 304 || status === 204) res.endWithoutBody(undefined, close);
    else if (close) res.end(payload, close);
    else return sendBody(res, x, payload);
    settle(x);
  });
}

/** A reply's bytes and their type; a JSON value that cannot be serialised is a 500 (logged). */
function encode(
  f: Front,
  reply: Reply,
  route: string,
): { status: number; payload: string | Uint8Array; type: string } {
  const status = reply.status ?? 200;
  if (reply.body !== undefined)
    return { status, payload: reply.body, type: reply.contentType ?? 'application/octet-stream' };
  if (reply.json === undefined) return { status, payload: '', type: 'application/json' };
  try {
    return { status, payload: JSON.stringify(reply.json), type: 'application/json' };
  } catch (err) {
    f.opts.log.error({ err, route }, 'answer not serialisable');
    return { status: 500, payload: INTERNAL, type: 'application/json' };
  }
}

/** A request answered: counted (onRequest) and, at the info level, one log line. */
export function account(
  f: Front,
  route: string,
  method: string,
  status: number,
  started: number,
  internal = false,
): void {
  const seconds = (performance.now() - started) / 1000;
  f.opts.onRequest?.(route, method, status, seconds);
  if (!f.logRequests) return;
  const line: Record<string, unknown> = {
    method,
    route,
    status,
    ms: Math.round(seconds * 1e4) / 10,
  };
  if (internal) line.internal = true;
  f.opts.log.info(line, 'request');
}

/** An answer whose client went away (or asked again, and uWS closed it) before reading all of it. */
export function cut(f: Front, route: string, method: string): void {
  f.opts.onCut?.(route);
  f.opts.log.info({ method, route }, 'answer cut: the client went away before reading all of it');
}

/** The reply, or a 500 when it is not what the route declares (SVC_RESPONSE_CHECKS). */
export function checked(f: Front, c: Compiled, reply: Reply): Reply {
  let wrong: string | undefined;
  try {
    wrong = c.checkReply!(reply);
  } catch (err) {
    wrong = `unreadable answer: ${(err as Error).message}`;
  }
  if (wrong === undefined) return reply;
  f.opts.log.error(
    { route: `${c.route.method} ${c.route.path}`, status: reply.status ?? 200, mismatch: wrong },
    'answer does not match its declared schema',
  );
  return { status: 500, json: { detail: 'internal error' } };
}

/**
 * A JSON error for a browser on a page of the site becomes the error page (JSON stays under /api/,
 * and for a client whose Accept prefers JSON, as web.ts's wantsJson decides for the pages).
 */
export function asPage(f: Front, reply: Reply, url: string, accept: string | undefined): Reply {
  const status = reply.status ?? 200;
  if (
    !f.opts.errorPage ||
    status < 400 ||
    url.startsWith('/api/') ||
    !accept?.includes('text/html') ||
    prefersJson(accept)
  )
    return reply;
  const detail = isRecord(reply.json) ? reply.json.detail : undefined;
  if (detail === undefined) return reply;
  const message = Array.isArray(detail)
    ? detail
        .map((d) => (isRecord(d) ? `${String(d.loc ?? '')}: ${String(d.msg ?? '')}` : String(d)))
        .join('; ')
    : String(detail);
  const page = f.opts.errorPage(status, message);
  return { ...page, status, headers: { ...reply.headers, ...page.headers } };
}

/** What a step's error answers: its own status and words, or a logged 500. */
export function errorReply(f: Front, err: unknown): Reply {
  if (err instanceof HttpError)
    return { status: err.status, json: { detail: bounded(err.detail) }, headers: err.headers };
  if (err instanceof ActorError) {
    const headers: Record<string, string> = err.retryAfter
      ? { 'retry-after': String(err.retryAfter) }
      : {};
    return { status: err.status, json: { ...err.facts, detail: bounded(err.detail) }, headers };
  }
  f.opts.log.error({ err: safeError(err) }, 'unhandled error'); // never a statement's values, whatever the logger
  return { status: 500, json: { detail: 'internal error' } };
}

/** A refusal's text may quote the request (a deal key of any length): cut it, never echo a megabyte. */
const DETAIL_MAX = 1000;
function bounded(detail: unknown): unknown {
  return typeof detail === 'string' && detail.length > DETAIL_MAX
    ? `${detail.slice(0, DETAIL_MAX).replace(/[\ud800-\udbff]$/, '')}…`
    : detail;
}

export function tooLarge(): Reply {
  return { status: 413, json: { detail: 'request body too large' } };
}
