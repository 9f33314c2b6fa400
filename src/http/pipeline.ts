// A request's way through its route, step by step: read what uWS lends synchronously (the request
// object dies at the first await), refuse a cross-site form post, stream the body under its size
// limit, authenticate, validate path, query and body against the route's schemas (422 otherwise),
// run the handler (once per Idempotency-Key), then answer (answer.ts) unless the client went away.
// A request run inside the process (Context.dispatch) takes the same steps from authentication on.
import { performance } from 'node:perf_hooks';
import {
  HttpError,
  type Auth,
  type InternalRequest,
  type Method,
  type Reply,
  type RequestInfo,
} from './route.js';
import type { Principals } from './principal.js';
import { parseJson, validationError, type ValidationIssue } from './validation.js';
import type { HttpRequest, HttpResponse } from './uws.js';
import { answerOnce, ticketOf } from './idempotency-key.js';
import { holdFor, settle, type Exchange } from './reply-writer.js';
import { clientAddress } from './client-address.js';
import { isRecord, type Front } from './front.js';
import { HAS_BODY, type Compiled } from './compiled-route.js';
import { rateLimitedDetail, type KeyRateLimit } from './rate-limit.js';
import {
  asPage,
  checked,
  cut,
  errorReply,
  finish,
  account,
  tooLarge,
  UNMATCHED,
  type Outgoing,
} from './answer.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
/** Most fields a query string or form may have (repeats count), so parsing one stays cheap. */
const MAX_FIELDS = 1000;

/** A request from the network: what uWS lent, copied out, and the exchange it is answered on. */
type Incoming = Outgoing & { c: Compiled; info: RequestInfo; rawParams: Record<string, string> };

/** A request as the route's steps take it, from the network or from inside the process. */
type Call = {
  c: Compiled;
  req: RequestInfo;
  rawParams: Record<string, string>;
  body: Buffer | null;
  /** Context.hold of the request's exchange. */
  hold: (release: () => void) => void;
};

/** A route's request from the network, through every step. */
export function serveRequest(f: Front, res: HttpResponse, req: HttpRequest, c: Compiled): void {
  f.inflight++;
  const started = performance.now();
  const x: Exchange = { aborted: false, done: false, started: false };
  watchAbort(f, res, x, c, started);
  const r = receive(f, res, req, c, x, started);
  if (c.guardOrigin && crossSite(r.info.headers, f.opts.siteOrigin)) return refuseCrossSite(f, r);
  if (!HAS_BODY.has(c.route.method)) return run(f, r, null);
  readBody(f, r, (body) => run(f, r, body));
}

/** Anything the table does not know: 405 when the path exists under another method, else 404. */
export function serveUnmatched(
  f: Front,
  known: { method: Method; re: RegExp }[],
  res: HttpResponse,
  req: HttpRequest,
): void {
  const started = performance.now();
  const x: Exchange = { aborted: false, done: false, started: true };
  res.onAborted(() => (x.aborted = true));
  const url = req.getUrl();
  const method = req.getMethod().toUpperCase();
  const other = known.some((k) => k.method !== method && k.re.test(url));
  const status = other ? 405 : 404;
  const reply = asPage(
    f,
    { status, json: { detail: other ? 'Method Not Allowed' : 'Not Found' } },
    url,
    req.getHeader('accept'),
  );
  finish(f, { res, x, route: UNMATCHED, method, started }, reply);
}

/** The client going away: whatever stage the exchange is at, it ends (and is counted) once. */
function watchAbort(f: Front, res: HttpResponse, x: Exchange, c: Compiled, started: number): void {
  const { path: route, method } = c.route;
  res.onAborted(() => {
    x.aborted = true;
    // Gone while its body was still arriving: no handler will ever finish this exchange.
    if (!x.started) finish(f, { res, x, route, method, started }, { status: 499 });
    x.onAbort?.();
    // Gone while its answer was being sent (a handler still running settles when it finishes).
    if (x.sending) cut(f, route, method);
    if (x.done) settle(x);
  });
}

/** What uWS lends only during its callback, copied: the headers, the URL, the path parameters. */
function receive(
  f: Front,
  res: HttpResponse,
  req: HttpRequest,
  c: Compiled,
  x: Exchange,
  started: number,
): Incoming {
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
            f.opts.trustedProxies ?? [],
          ),
  };
  const rawParams: Record<string, string> = {};
  for (let i = 0; i < c.paramNames.length; i++)
    rawParams[c.paramNames[i]] = safeDecode(req.getParameter(i) ?? '');
  return { res, x, route: c.route.path, method: c.route.method, started, c, info, rawParams };
}

function refuseCrossSite(f: Front, r: Incoming): void {
  const reply = asPage(
    f,
    { status: 403, json: { detail: 'cross-site request refused' } },
    r.info.url,
    r.info.headers['accept'],
  );
  finish(f, r, reply, HAS_BODY.has(r.c.route.method));
}

/**
 * The body, at most bodyLimitBytes of it: a larger one (declared, or as it arrives) is answered
 * 413 and its connection closed.
 */
function readBody(f: Front, r: Incoming, then: (body: Buffer) => void): void {
  const declared = Number(r.info.headers['content-length'] ?? 0);
  if (declared > f.opts.bodyLimitBytes) return finish(f, r, tooLarge(), true);
  const chunks: Buffer[] = [];
  let size = 0;
  r.res.onData((chunk, isLast) => {
    if (r.x.done) return;
    size += chunk.byteLength;
    if (size > f.opts.bodyLimitBytes) return finish(f, r, tooLarge(), true);
    // uWS reuses the chunk's memory after this callback: copy it.
    chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
    if (isLast) then(Buffer.concat(chunks));
  });
}

/**
 * Runs the route's steps on the whole request. A pipeline that answers at once (no
 * authentication, a synchronous handler: the menu, the catalog) is answered here, inside uWS's
 * callback: no promise and no microtask between the request and its bytes. One that waits answers
 * when its promise settles.
 */
function run(f: Front, r: Incoming, body: Buffer | null): void {
  r.x.started = true;
  let reply: Reply | PromiseLike<Reply>;
  try {
    reply = handle(f, { c: r.c, req: r.info, rawParams: r.rawParams, body, hold: holdFor(r.x) });
  } catch (err) {
    reply = errorReply(f, err);
  }
  if (isThenable(reply))
    void Promise.resolve(reply)
      .catch((err) => errorReply(f, err))
      .then((settled) => answer(f, r, settled));
  else answer(f, r, reply);
}

/** The route's reply to the network: checked (SVC_RESPONSE_CHECKS), a page for a browser's error. */
function answer(f: Front, r: Incoming, reply: Reply): void {
  try {
    const sent = r.c.checkReply ? checked(f, r.c, reply) : reply;
    finish(f, r, asPage(f, sent, r.info.url, r.info.headers['accept']));
  } catch (err) {
    f.opts.log.error({ err }, 'answer failed');
  }
}

/**
 * The route's steps from authentication on: a Reply when every step answered at once, else its
 * promise; a step's error is thrown (or rejects the promise), and the caller answers it
 * (errorReply).
 */
function handle(f: Front, call: Call): Reply | PromiseLike<Reply> {
  // Who is asking comes first: a caller without a valid key learns nothing about the request's shape.
  const auth = call.c.route.auth;
  if (auth === 'none') return proceed(f, call, undefined);
  return authenticate(f, auth, call.req).then((principal) =>
    auth === 'key' && f.opts.rateLimit
      ? counted(f, f.opts.rateLimit, call, principal as Principals['key'])
      : proceed(f, call, principal),
  );
}

/** A key's request counted against its rate limit: refused past it (429), else answered with the headers, errors too. */
async function counted(
  f: Front,
  limit: KeyRateLimit,
  call: Call,
  principal: Principals['key'],
): Promise<Reply> {
  const c = limit.take(String(principal.agentId));
  if (!c.allowed)
    throw new HttpError(429, rateLimitedDetail(limit.policy, c.retryAfter), {
      ...c.headers,
      'retry-after': String(c.retryAfter),
    });
  let reply: Reply;
  try {
    reply = await proceed(f, call, principal);
  } catch (err) {
    reply = errorReply(f, err);
  }
  return { ...reply, headers: { ...reply.headers, ...c.headers } };
}

function authenticate(
  f: Front,
  auth: Exclude<Auth, 'none'>,
  req: RequestInfo,
): Promise<Principals[Auth]> {
  const a = f.opts.authenticators[auth];
  if (!a) throw new Error(`no authenticator for ${auth} routes`);
  return a(req);
}

function proceed(
  f: Front,
  call: Call,
  principal: Principals[Auth] | undefined,
): Reply | PromiseLike<Reply> {
  const input = validate(call);
  if (input.issues.length) return invalid(call, input, principal);
  return runHandler(f, call, input, principal);
}

/** A request's path, query and body, validated (and coerced); `issues` says what is wrong. */
type Input = {
  params: unknown;
  query: unknown;
  body: unknown;
  issues: ValidationIssue[];
  /** What the request sent, for a form shown again (RawInput). */
  rawQuery: Record<string, string | string[]>;
  rawBody: unknown;
};

/**
 * Validates the request against the route's schemas. Throws the 415 of an API body that is not
 * JSON, and the 404 of a path id that names nothing; every other problem is an issue.
 */
function validate({ c, req, rawParams, body }: Call): Input {
  const contentType = req.headers['content-type'] ?? '';
  const leftOut = !!c.route.optionalBody && (!body || body.length === 0);
  if (c.jsonOnly && !leftOut && !JSON_TYPE.test(contentType))
    throw new HttpError(415, 'request body must be JSON (Content-Type: application/json)');
  const issues: ValidationIssue[] = [];
  const rawQuery = parseQuery(req.query) ?? (issues.push(tooManyFields('query')), {});
  const params = check(c.params, rawParams, issues);
  const unknown = issues.length ? unknownId(issues, rawParams) : undefined;
  if (unknown) throw unknown;
  // No query string (what pollers send): the validated defaults, worked out once, in a fresh object.
  const query = req.query === '' && c.noQuery ? { ...c.noQuery } : check(c.query, rawQuery, issues);
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
  return { params, query, body: parsed, issues, rawQuery, rawBody };
}

/** A request that did not validate: the route's own page for it (a form again), else the 422. */
function invalid(
  { c, req, rawParams }: Call,
  input: Input,
  principal: Principals[Auth] | undefined,
): Reply | PromiseLike<Reply> {
  const { issues } = input;
  const raw = {
    params: rawParams,
    query: input.rawQuery,
    body: isRecord(input.rawBody) ? input.rawBody : {},
  };
  const or422 = (page: Reply | undefined): Reply =>
    page ?? { status: 422, json: validationError(issues) };
  const page = c.route.onInvalid?.(req, issues, raw, principal);
  return isThenable(page) ? Promise.resolve(page).then(or422) : or422(page);
}

/** The route's handler on the validated input; a state-changing request with an Idempotency-Key runs once. */
function runHandler(
  f: Front,
  { c, req, body, hold }: Call,
  input: Input,
  principal: Principals[Auth] | undefined,
): Reply | PromiseLike<Reply> {
  const ctx = {
    params: input.params,
    query: input.query,
    body: input.body,
    req,
    principal,
    bytes: c.body ? undefined : body,
    dispatch: f.dispatch,
    hold,
  };
  const answers = f.opts.answers;
  const ticket =
    c.route.method !== 'GET' && answers
      ? ticketOf(req.headers, c.route.method, req.url, principal, body)
      : undefined;
  return ticket ? answerOnce(c.route, ctx, ticket, answers!) : c.route.handler(ctx);
}

/** A compiled route and its path pattern with each parameter captured. */
export type InternalRoute = { c: Compiled; re: RegExp };

/**
 * A request run inside the process through the same pipeline as one from the network (the route's
 * authentication, validation, Idempotency-Key, handler, error answers and response checks); the
 * matched route is counted in the request metrics like any other. Streamed answers are not for it.
 */
export async function dispatch(
  f: Front,
  table: InternalRoute[],
  r: InternalRequest,
): Promise<Reply> {
  const started = performance.now();
  // A static segment wins over a parameter, as uWS routes it.
  const hit = table
    .filter((x) => x.c.route.method === r.method && x.re.test(r.path))
    .sort((a, b) => a.c.paramNames.length - b.c.paramNames.length)[0];
  if (!hit) return { status: 404, json: { detail: 'Not Found' } };
  const { c } = hit;
  const m = hit.re.exec(r.path)!;
  const rawParams: Record<string, string> = {};
  c.paramNames.forEach((n, i) => (rawParams[n] = safeDecode(m[i + 1] ?? '')));
  const req: RequestInfo = {
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
    reply = await handle(f, { c, req, rawParams, body: r.body ?? null, hold: holdFor(x) });
  } catch (err) {
    reply = errorReply(f, err);
  }
  settle(x);
  const answer = c.checkReply ? checked(f, c, reply) : reply;
  account(f, c.route.path, c.route.method, answer.status ?? 200, started, true);
  return answer;
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

function check(v: Compiled['params'], value: unknown, issues: ValidationIssue[]): any {
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
