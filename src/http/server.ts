// The front end: registers the route table on uWebSockets.js. Per request: read what uWS lends
// synchronously (the request object dies at the first await), stream the body under a size limit,
// validate path, query and body against the route's schemas (422 otherwise), authenticate, run
// the handler, and answer unless the client went away. One log line per request.
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ActorError, safeError } from '../../actors/runtime/client.js';
import { Compile } from 'typebox/compile';
import {
  HttpError,
  Media,
  type Auth,
  type InternalRequest,
  type Method,
  type Reply,
  type RequestInfo,
  type Route,
  type AnyRoute,
  runnable,
} from './route.js';
import type { Principals } from './principal.js';
import { Problem } from '../schemas/common.js';
import {
  compileFormValidator,
  compileValidator,
  parseJson,
  validationError,
  type ValidationIssue,
} from './validation.js';
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp } from './uws.js';
import { prefersJson } from '../web/answers.js';
import { answerOnce, ticketOf, type AnswerStore } from './idempotency-key.js';
import {
  holdFor,
  openStream,
  sendBody,
  settle,
  statusLine,
  type Exchange,
} from './reply-writer.js';
import { clientAddress, type TrustedProxies } from './client-address.js';

export type Authenticator<A extends Exclude<Auth, 'none'> = Exclude<Auth, 'none'>> = (
  req: RequestInfo,
) => Promise<Principals[A]>;

export type ServerOptions = {
  routes: Route[];
  log: Logger;
  bodyLimitBytes: number;
  /** Peers whose X-Forwarded-For names the client (SVC_TRUSTED_PROXIES): RequestInfo.remoteAddress is then the client's. */
  trustedProxies?: TrustedProxies;
  /** Resolves the caller for `key` and `holder` routes; throws HttpError(401) when absent or wrong. */
  authenticators: { [A in Exclude<Auth, 'none'>]?: Authenticator<A> };
  /** Stored answers of Idempotency-Key requests; without it the header is ignored (unit tests). */
  answers?: AnswerStore;
  onRequest?: (route: string, method: string, status: number, seconds: number) => void;
  /** An answer was cut: its client went away, or was closed for sending another request, before it had read all of it (logged too). */
  onCut?: (route: string) => void;
  /**
   * The site's own origin (`new URL(config.baseUrl).origin`): state-changing web requests from any
   * other origin are refused. Unset: the request's own Host stands in for it.
   */
  siteOrigin?: string;
  /**
   * Check every reply against the route's declared answer and answer 500 (logged) on a mismatch, so
   * a field no schema describes cannot ship. On in tests (`SVC_RESPONSE_CHECKS=1`, as
   * test/helpers/db.ts sets); off, nothing is compiled and a request pays one boolean test.
   */
  responseChecks?: boolean;
  /**
   * The page a browser gets instead of a JSON error outside `/api/` (a request whose Accept names
   * text/html): the status stays, the words are the error's. Unset: errors are JSON everywhere.
   */
  errorPage?: (status: number, message: string) => Reply;
};

type Compiled = {
  route: AnyRoute;
  paramNames: string[];
  params?: ReturnType<typeof compileValidator>;
  query?: ReturnType<typeof compileValidator>;
  body?: ReturnType<typeof compileValidator>;
  /** The body validator for urlencoded forms (values are strings, coerced like a query string). */
  form?: ReturnType<typeof compileValidator>;
  /** A state-changing web route: cross-site requests are refused before anything else. */
  guardOrigin: boolean;
  /** An API route that takes a body: JSON only (CONTRACT.md "Retries and idempotency"), else 415. */
  jsonOnly: boolean;
  /** With responseChecks: what is wrong with a reply (undefined: nothing). */
  checkReply?: (reply: Reply) => string | undefined;
  /**
   * What the query validator makes of an empty query string, when that is valid and holds only
   * primitives (a shallow copy is then a whole new value): undefined otherwise.
   */
  noQuery?: Readonly<Record<string, unknown>>;
};

const HAS_BODY = new Set<Method>(['POST', 'PUT']);
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
/** Most fields a query string or form may have (repeats count), so parsing one stays cheap. */
const MAX_FIELDS = 1000;
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

/** `/markets/{market_id}` → `/markets/:market_id`, with the parameter names in order. */
function toUwsPath(path: string): { uwsPath: string; names: string[] } {
  const names: string[] = [];
  const uwsPath = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    names.push(name);
    return `:${name}`;
  });
  return { uwsPath, names };
}

/** A path's pattern; `capture`: each parameter's segment is a group, in order. */
function patternRegex(path: string, capture = false): RegExp {
  const escaped = path
    .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
    .replace(/\{[^}]+\}/g, capture ? '([^/]+)' : '[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

/** A query string or urlencoded form; undefined when it has more than MAX_FIELDS fields. */
function parseQuery(qs: string): Record<string, string | string[]> | undefined {
  const out: Record<string, string | string[]> = {};
  if (!qs) return out;
  let fields = 1;
  for (let i = qs.indexOf('&'); i !== -1; i = qs.indexOf('&', i + 1))
    if (++fields > MAX_FIELDS) return undefined;
  for (const [k, v] of new URLSearchParams(qs)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

const tooManyFields = (where: 'query' | 'body'): ValidationIssue => ({
  loc: [where],
  msg: `At most ${MAX_FIELDS} fields are accepted`,
  type: 'too_many_fields',
});

function safeDecode(s: string): string {
  // Nothing percent-encoded: the text itself (decodeURIComponent would return it unchanged).
  if (!s.includes('%')) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export type FrontEnd = {
  app: TemplatedApp;
  /** Requests received and not yet answered. */
  inflight: () => number;
  /** Runs a request inside the process through a route's pipeline (Context.dispatch). */
  dispatch: (req: InternalRequest) => Promise<Reply>;
};

export function createApp(opts: ServerOptions): FrontEnd {
  const app = uws.App();
  let inflight = 0;
  const logRequests = opts.log.isLevelEnabled('info');
  const known: { method: Method; re: RegExp }[] = [];
  /** The compiled routes by method, for requests run inside the process (Context.dispatch). */
  const internal: { c: Compiled; re: RegExp }[] = [];
  const checks = opts.responseChecks ?? process.env.SVC_RESPONSE_CHECKS === '1';
  const problemCheck = checks ? Compile(Problem) : undefined;

  for (const route of opts.routes) {
    const { uwsPath, names } = toUwsPath(route.path);
    const c: Compiled = {
      route: runnable(route),
      paramNames: names,
      params: route.params && compileValidator('path', route.params),
      query: route.query && compileValidator('query', route.query),
      body: route.body && compileValidator('body', route.body),
      form: route.body && compileFormValidator(route.body),
      guardOrigin: route.method !== 'GET' && !route.path.startsWith('/api/'),
      jsonOnly: !!route.body && HAS_BODY.has(route.method) && route.path.startsWith('/api/'),
      checkReply: problemCheck && replyChecker(route, problemCheck),
    };
    c.noQuery = c.query && noQueryValue(c.query);
    known.push({ method: route.method, re: patternRegex(route.path) });
    internal.push({ c, re: patternRegex(route.path, true) });
    const handler = (res: HttpResponse, req: HttpRequest) => serve(res, req, c);
    const register = { GET: app.get, POST: app.post, PUT: app.put, DELETE: app.del }[route.method];
    register.call(app, uwsPath, handler);
  }

  // Anything the table does not know: 405 when the path exists under another method, else 404.
  app.any('/*', (res, req) => {
    const started = performance.now();
    const x: Exchange = { aborted: false, done: false, started: true };
    res.onAborted(() => (x.aborted = true));
    const url = req.getUrl();
    const method = req.getMethod().toUpperCase();
    const other = known.some((k) => k.method !== method && k.re.test(url));
    const status = other ? 405 : 404;
    const reply = asPage(
      { status, json: { detail: other ? 'Method Not Allowed' : 'Not Found' } },
      url,
      req.getHeader('accept'),
    );
    finish(res, x, reply, '(unmatched)', method, started);
  });

  function serve(res: HttpResponse, req: HttpRequest, c: Compiled): void {
    inflight++;
    const started = performance.now();
    const x: Exchange = { aborted: false, done: false, started: false };
    res.onAborted(() => {
      x.aborted = true;
      // Gone while its body was still arriving: no handler will ever finish this exchange.
      if (!x.started) finish(res, x, { status: 499 }, c.route.path, c.route.method, started);
      x.onAbort?.();
      // Gone while its answer was being sent (a handler still running settles when it finishes).
      if (x.sending) cut(c.route.path, c.route.method);
      if (x.done) settle(x);
    });
    const headers: Record<string, string> = {};
    req.forEach((k, v) => (headers[k] = v));
    const info: RequestInfo = {
      method: c.route.method,
      url: req.getUrl(),
      query: req.getQuery() ?? '',
      headers,
      remoteAddress: () =>
        x.aborted || x.done
          ? ''
          : clientAddress(
              Buffer.from(res.getRemoteAddressAsText()).toString(),
              headers['x-forwarded-for'],
              opts.trustedProxies ?? [],
            ),
    };
    const rawParams: Record<string, string> = {};
    for (let i = 0; i < c.paramNames.length; i++)
      rawParams[c.paramNames[i]] = safeDecode(req.getParameter(i) ?? '');
    const rawQuery = info.query;

    if (c.guardOrigin && crossSite(headers, opts.siteOrigin)) {
      finish(
        res,
        x,
        asPage(
          { status: 403, json: { detail: 'cross-site request refused' } },
          info.url,
          headers['accept'],
        ),
        c.route.path,
        c.route.method,
        started,
        HAS_BODY.has(c.route.method),
      );
      return;
    }

    const answer = (reply: Reply) => {
      try {
        finish(
          res,
          x,
          asPage(c.checkReply ? checked(c, reply) : reply, info.url, headers['accept']),
          c.route.path,
          c.route.method,
          started,
        );
      } catch (err) {
        opts.log.error({ err }, 'answer failed');
      }
    };
    // A pipeline that answers at once (no authentication, a synchronous handler: the menu, the
    // catalog) is answered here, inside uWS's callback: no promise and no microtask between the
    // request and its bytes. One that waits answers when its promise settles, as before.
    const run = (body: Buffer | null) => {
      x.started = true;
      let reply: Reply | PromiseLike<Reply>;
      try {
        reply = handle(c, info, rawParams, rawQuery, body, holdFor(x));
      } catch (err) {
        reply = errorReply(err);
      }
      if (isThenable(reply))
        void Promise.resolve(reply)
          .catch((err) => errorReply(err))
          .then(answer);
      else answer(reply);
    };

    if (!HAS_BODY.has(c.route.method)) {
      run(null);
      return;
    }
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > opts.bodyLimitBytes) {
      finish(res, x, tooLarge(), c.route.path, c.route.method, started, true);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (x.done) return;
      size += chunk.byteLength;
      if (size > opts.bodyLimitBytes) {
        finish(res, x, tooLarge(), c.route.path, c.route.method, started, true);
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
      if (isLast) run(Buffer.concat(chunks));
    });
  }

  /**
   * The route's pipeline: a Reply when every step answered at once, else its promise; a step's
   * error is thrown (or rejects the promise), and the caller answers it (errorReply).
   */
  function handle(
    c: Compiled,
    req: RequestInfo,
    rawParams: Record<string, string>,
    rawQuery: string,
    body: Buffer | null,
    hold: (release: () => void) => void,
  ): Reply | PromiseLike<Reply> {
    // Who is asking comes first: a caller without a valid key learns nothing about the request's shape.
    if (c.route.auth === 'none') return proceed(c, req, rawParams, rawQuery, body, hold, undefined);
    return authenticate(c.route.auth, req).then((principal) =>
      proceed(c, req, rawParams, rawQuery, body, hold, principal),
    );
  }

  function proceed(
    c: Compiled,
    req: RequestInfo,
    rawParams: Record<string, string>,
    rawQuery: string,
    body: Buffer | null,
    hold: (release: () => void) => void,
    principal: Principals[Auth] | undefined,
  ): Reply | PromiseLike<Reply> {
    const contentType = req.headers['content-type'] ?? '';
    const leftOut = !!c.route.optionalBody && (!body || body.length === 0);
    if (c.jsonOnly && !leftOut && !JSON_TYPE.test(contentType))
      throw new HttpError(415, 'request body must be JSON (Content-Type: application/json)');
    const issues: ValidationIssue[] = [];
    const rawQueryValues = parseQuery(rawQuery) ?? (issues.push(tooManyFields('query')), {});
    const params = check(c.params, rawParams, issues);
    const unknown = issues.length ? unknownId(issues, rawParams) : undefined;
    if (unknown) throw unknown;
    // No query string (what pollers send): the validated defaults, worked out once, in a fresh object.
    const query =
      rawQuery === '' && c.noQuery ? { ...c.noQuery } : check(c.query, rawQueryValues, issues);
    let parsed: unknown;
    let rawBody: unknown;
    if (c.body) {
      const decoded = leftOut ? { value: {} } : decodeBody(body, contentType);
      if ('issue' in decoded) issues.push(decoded.issue);
      else {
        rawBody = decoded.value;
        // A form's values are all strings: it gets the coercing validator when it can have one.
        parsed = check(decoded.form && c.form ? c.form : c.body, decoded.value, issues);
      }
    }
    if (issues.length) {
      const raw = {
        params: rawParams,
        query: rawQueryValues,
        body: isRecord(rawBody) ? rawBody : {},
      };
      const invalid = (page: Reply | undefined): Reply =>
        page ?? { status: 422, json: validationError(issues) };
      const page = c.route.onInvalid?.(req, issues, raw, principal);
      return isThenable(page) ? Promise.resolve(page).then(invalid) : invalid(page);
    }
    const ctx = {
      params,
      query,
      body: parsed,
      req,
      principal,
      bytes: c.body ? undefined : body,
      dispatch,
      hold,
    };
    const ticket =
      c.route.method !== 'GET' && opts.answers
        ? ticketOf(req.headers, c.route.method, req.url, principal, body)
        : undefined;
    return ticket ? answerOnce(c.route, ctx, ticket, opts.answers!) : c.route.handler(ctx);
  }

  /**
   * A request run inside the process through the same pipeline as one from the network (the route's
   * authentication, validation, Idempotency-Key, handler, error answers and response checks); the
   * matched route is counted in the request metrics like any other. Streamed answers are not for it.
   */
  async function dispatch(r: InternalRequest): Promise<Reply> {
    const started = performance.now();
    // A static segment wins over a parameter, as uWS routes it.
    const hit = internal
      .filter((x) => x.c.route.method === r.method && x.re.test(r.path))
      .sort((a, b) => a.c.paramNames.length - b.c.paramNames.length)[0];
    if (!hit) return { status: 404, json: { detail: 'Not Found' } };
    const { c } = hit;
    const m = hit.re.exec(r.path)!;
    const rawParams: Record<string, string> = {};
    c.paramNames.forEach((n, i) => (rawParams[n] = safeDecode(m[i + 1] ?? '')));
    const info: RequestInfo = {
      method: r.method,
      url: r.path,
      query: r.query ?? '',
      headers: r.headers,
      remoteAddress: r.remoteAddress ?? (() => ''),
    };
    // An answer inside the process is in memory once it is returned: what its handler held ends then.
    const x: Exchange = { aborted: false, done: true, started: true };
    let reply: Reply;
    try {
      reply = await handle(c, info, rawParams, info.query, r.body ?? null, holdFor(x));
    } catch (err) {
      reply = errorReply(err);
    }
    settle(x);
    const answer = c.checkReply ? checked(c, reply) : reply;
    const seconds = (performance.now() - started) / 1000;
    opts.onRequest?.(c.route.path, c.route.method, answer.status ?? 200, seconds);
    if (logRequests)
      opts.log.info(
        {
          method: c.route.method,
          route: c.route.path,
          status: answer.status ?? 200,
          ms: Math.round(seconds * 1e4) / 10,
          internal: true,
        },
        'request',
      );
    return answer;
  }

  function authenticate(auth: Exclude<Auth, 'none'>, req: RequestInfo): Promise<Principals[Auth]> {
    const a = opts.authenticators[auth];
    if (!a) throw new Error(`no authenticator for ${auth} routes`);
    return a(req);
  }

  function finish(
    res: HttpResponse,
    x: Exchange,
    reply: Reply,
    route: string,
    method: string,
    started: number,
    close = false,
  ): void {
    if (x.done) return;
    x.done = true;
    if (route !== '(unmatched)') inflight--;
    let status = reply.status ?? 200;
    let payload: string | Uint8Array = '';
    let type = 'application/json';
    if (x.aborted) {
      // Nobody to answer: account for the request only.
    } else if (reply.body !== undefined) {
      payload = reply.body;
      type = reply.contentType ?? 'application/octet-stream';
    } else if (reply.json !== undefined) {
      try {
        payload = JSON.stringify(reply.json);
      } catch (err) {
        opts.log.error({ err, route }, 'answer not serialisable');
        status = 500;
        payload = INTERNAL;
      }
    }
    const seconds = (performance.now() - started) / 1000;
    opts.onRequest?.(route, method, status, seconds);
    if (logRequests)
      opts.log.info({ method, route, status, ms: Math.round(seconds * 1e4) / 10 }, 'request');
    if (x.aborted) return settle(x);
    if (reply.stream && status === 200) return openStream(res, x, reply, reply.stream);
    res.cork(() => {
      res.writeStatus(
        head(status, payload.length || reply.json !== undefined ? type : undefined, reply.headers),
      );
      // A refused oversized upload: answer and drop the connection rather than read the rest (a short body).
      if (close) res.writeHeader('connection', 'close');
      // 304 and 204 carry no body (and no Content-Length: 0).
      if (status === 304 || status === 204) res.endWithoutBody(undefined, close);
      else if (close) res.end(payload, close);
      else return sendBody(res, x, payload);
      settle(x);
    });
  }

  /** An answer whose client went away (or asked again, and uWS closed it) before reading all of it. */
  function cut(route: string, method: string): void {
    opts.onCut?.(route);
    opts.log.info({ method, route }, 'answer cut: the client went away before reading all of it');
  }

  /** The reply, or a 500 when it is not what the route declares (SVC_RESPONSE_CHECKS). */
  function checked(c: Compiled, reply: Reply): Reply {
    let wrong: string | undefined;
    try {
      wrong = c.checkReply!(reply);
    } catch (err) {
      wrong = `unreadable answer: ${(err as Error).message}`;
    }
    if (wrong === undefined) return reply;
    opts.log.error(
      { route: `${c.route.method} ${c.route.path}`, status: reply.status ?? 200, mismatch: wrong },
      'answer does not match its declared schema',
    );
    return { status: 500, json: { detail: 'internal error' } };
  }

  /**
   * A JSON error for a browser on a page of the site becomes the error page (JSON stays under /api/,
   * and for a client whose Accept prefers JSON, as web.ts's wantsJson decides for the pages).
   */
  function asPage(reply: Reply, url: string, accept: string | undefined): Reply {
    const status = reply.status ?? 200;
    if (
      !opts.errorPage ||
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
    const page = opts.errorPage(status, message);
    return { ...page, status, headers: { ...reply.headers, ...page.headers } };
  }

  function errorReply(err: unknown): Reply {
    if (err instanceof HttpError)
      return { status: err.status, json: { detail: bounded(err.detail) }, headers: err.headers };
    if (err instanceof ActorError) {
      const headers: Record<string, string> = err.retryAfter
        ? { 'retry-after': String(err.retryAfter) }
        : {};
      return { status: err.status, json: { detail: bounded(err.detail) }, headers };
    }
    opts.log.error({ err: safeError(err) }, 'unhandled error'); // never a statement's values, whatever the logger
    return { status: 500, json: { detail: 'internal error' } };
  }

  return { app, inflight: () => inflight, dispatch };
}

type Checker = ReturnType<typeof Compile>;
const mediaType = (contentType: string) => contentType.split(';')[0].trim().toLowerCase();

/**
 * What a route's replies must look like: per declared status, its media types and their compiled
 * schemas; an error (>= 400) in JSON has the Problem body unless the route declares that status.
 * Replies without a body (204), redirects and 304 pass; so do error pages for browsers.
 */
function replyChecker(route: Route, problem: Checker): (reply: Reply) => string | undefined {
  const declared = new Map<number, Map<string, Checker | undefined>>();
  for (const [status, body] of Object.entries(route.response ?? {})) {
    const content = body instanceof Media ? body.content : { 'application/json': body };
    declared.set(
      Number(status),
      new Map(
        Object.entries(content).map(([t, schema]) => [mediaType(t), schema && Compile(schema)]),
      ),
    );
  }
  return (reply) => {
    const status = reply.status ?? 200;
    const type =
      reply.body !== undefined
        ? mediaType(reply.contentType ?? 'application/octet-stream')
        : reply.json !== undefined
          ? 'application/json'
          : undefined;
    // No body, or a redirect's (a 303 to the login form carries its reason): nothing a client reads.
    if (type === undefined || (status >= 300 && status < 400)) return undefined;
    const media = declared.get(status);
    let checker: Checker | undefined;
    if (media) {
      if (!media.has(type))
        return `${type} is not a declared answer of status ${status} (${[...media.keys()].join(', ')})`;
      checker = media.get(type);
    } else if (status >= 400) {
      checker = type === 'application/json' ? problem : undefined;
    } else {
      return `status ${status} is not a declared answer`;
    }
    if (!checker) return undefined;
    const value =
      reply.json !== undefined
        ? reply.json
        : JSON.parse(Buffer.from(reply.body as string | Uint8Array).toString('utf8'));
    if (checker.Check(value)) return undefined;
    return [...checker.Errors(value)]
      .slice(0, 5)
      .map(
        (e) =>
          `${e.instancePath || '/'}: ${e.message}${e.keyword === 'additionalProperties' ? ` ${JSON.stringify(e.params)}` : ''}`,
      )
      .join('; ');
  };
}

const PATH_ID = /(?:^|_)id$/;
const INTEGER = /^[+-]?\d+$/;
/**
 * CONTRACT.md "Strict requests": an id in the path that is an integer but outside what any row can
 * have (0, negative, beyond a bigint) names nothing: 404, as an unknown id in range does; a
 * non-integer stays the 422 at the path.
 */
function unknownId(
  issues: ValidationIssue[],
  rawParams: Record<string, string>,
): HttpError | undefined {
  for (const i of issues) {
    const name = i.loc[0] === 'path' && i.loc.length === 2 ? String(i.loc[1]) : undefined;
    if (name === undefined || !PATH_ID.test(name) || !INTEGER.test(rawParams[name] ?? '')) continue;
    const what = name === 'id' ? 'such id' : name.slice(0, -3).replace(/_/g, ' ');
    return new HttpError(404, `no ${what} ${rawParams[name].slice(0, 40)}`);
  }
  return undefined;
}

function noQueryValue(
  v: ReturnType<typeof compileValidator>,
): Readonly<Record<string, unknown>> | undefined {
  const r = v({});
  if (!r.ok || !isRecord(r.value)) return undefined;
  for (const k in r.value)
    if (typeof r.value[k] === 'object' && r.value[k] !== null) return undefined;
  return Object.freeze({ ...r.value });
}

function check(
  v: ReturnType<typeof compileValidator> | undefined,
  value: unknown,
  issues: ValidationIssue[],
): any {
  if (!v) return undefined;
  const r = v(value);
  if (r.ok) return r.value;
  issues.push(...r.issues);
  return undefined;
}

/**
 * JSON bodies (the API) and urlencoded forms (web pages). An empty JSON body is a missing one; an
 * empty form is a form with no fields (each field then has its default or is reported missing).
 */
function decodeBody(
  body: Buffer | null,
  contentType: string,
): { value: unknown; form?: boolean } | { issue: ValidationIssue } {
  if (/^application\/x-www-form-urlencoded\b/i.test(contentType)) {
    const form = parseQuery(body ? body.toString('utf8') : '');
    return form ? { value: form, form: true } : { issue: tooManyFields('body') };
  }
  if (!body || body.length === 0)
    return { issue: { loc: ['body'], msg: 'Field required', type: 'missing' } };
  return parseJson(body.toString('utf8'));
}

const isThenable = <T>(v: T | PromiseLike<T>): v is PromiseLike<T> =>
  typeof (v as { then?: unknown } | undefined)?.then === 'function';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * CONTRACT.md "Web form posts", the way Go's http.CrossOriginProtection decides: a browser marks a
 * request from another site with `Sec-Fetch-Site: cross-site`, and older browsers still send an
 * `Origin` we can compare. A request with neither header (a script, curl) is not a browser's and passes.
 */
export function crossSite(headers: Record<string, string>, siteOrigin?: string): boolean {
  if (headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = headers['origin'];
  if (origin === undefined) return false;
  if (siteOrigin !== undefined) return origin !== siteOrigin;
  try {
    return new URL(origin).host !== headers['host'];
  } catch {
    return true; // "null" (sandboxed or privacy-sensitive contexts) and garbage are not our origin
  }
}

/** A refusal's text may quote the request (a deal key of any length): cut it, never echo a megabyte. */
const DETAIL_MAX = 1000;
function bounded(detail: unknown): unknown {
  return typeof detail === 'string' && detail.length > DETAIL_MAX
    ? `${detail.slice(0, DETAIL_MAX).replace(/[\ud800-\udbff]$/, '')}…`
    : detail;
}

function tooLarge(): Reply {
  return { status: 413, json: { detail: 'request body too large' } };
}

export type Listening = { port: number; close: () => void };

export function listen(app: TemplatedApp, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${host}:${port}`));
      resolve({
        port: uws.us_socket_local_port(socket),
        close: () => uws.us_listen_socket_close(socket),
      });
    });
  });
}
