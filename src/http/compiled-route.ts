// A route of the table as the front end runs it: its validators and reply checks compiled once, at
// start-up, so a request does no schema work but the compiled checks.
import { Compile } from 'typebox/compile';
import { Media, runnable, type AnyRoute, type Method, type Reply, type Route } from './route.js';
import { compileFormValidator, compileValidator } from './validation.js';
import { isRecord } from './front.js';

export type Compiled = {
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

export const HAS_BODY = new Set<Method>(['POST', 'PUT']);

type Checker = ReturnType<typeof Compile>;

/**
 * A route's validators and flags; `problemCheck`: the Problem schema's checker when replies are
 * checked (an undeclared error is checked against it), undefined when they are not.
 */
export function compileRoute(
  route: Route,
  paramNames: string[],
  problemCheck: Checker | undefined,
): Compiled {
  const c: Compiled = {
    route: runnable(route),
    paramNames,
    params: route.params && compileValidator('path', route.params),
    query: route.query && compileValidator('query', route.query),
    body: route.body && compileValidator('body', route.body),
    form: route.body && compileFormValidator(route.body),
    guardOrigin: route.method !== 'GET' && !route.path.startsWith('/api/'),
    jsonOnly: !!route.body && HAS_BODY.has(route.method) && route.path.startsWith('/api/'),
    checkReply: problemCheck && replyChecker(route, problemCheck),
  };
  c.noQuery = c.query && noQueryValue(c.query);
  return c;
}

/** `/markets/{market_id}` → `/markets/:market_id`, with the parameter names in order. */
export function toUwsPath(path: string): { uwsPath: string; names: string[] } {
  const names: string[] = [];
  const uwsPath = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    names.push(name);
    return `:${name}`;
  });
  return { uwsPath, names };
}

/** A path's pattern; `capture`: each parameter's segment is a group, in order. */
export function patternRegex(path: string, capture = false): RegExp {
  const escaped = path
    .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
    .replace(/\{[^}]+\}/g, capture ? '([^/]+)' : '[^/]+');
  return new RegExp(`^${escaped}/?$`);
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
