// Answers of the holder's web pages (CONTRACT.md "Web form posts"): a browser that posts a form is
// sent on with 303 See Other; a client that asks for JSON gets the same outcome as a JSON object.
// Failures: JSON clients get `{detail}` with the status, browsers get the page again, with the message.
import type { TObject, TSchema } from 'typebox';
import { ActorError } from '../../actors/runtime/client.js';
import type { HolderPrincipal } from '../http/authenticators/holder-session.js';
import {
  HttpError,
  route,
  type Context,
  type RawInput,
  type Reply,
  type RequestInfo,
  type Route,
} from '../http/route.js';
import type { ValidationIssue } from '../http/validation.js';

export const DEFAULT_NEXT = '/console';

/**
 * The q-value an Accept header gives the media type `type` (`text/html`): that of the most specific
 * range matching it (RFC 9110 section 12.5.1: `text/html` over `text/*` over any type), 0 when none does.
 * A range with a malformed q is skipped; other parameters are ignored.
 */
export function acceptQ(accept: string, type: string): number {
  const main = type.slice(0, type.indexOf('/'));
  let best = -1;
  let q = 0;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const rank = range === type ? 2 : range === `${main}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (rank < 0 || rank < best) continue;
    const qParam = params.find((p) => /^q\s*=/.test(p));
    const raw = qParam?.replace(/^q\s*=\s*/, '') ?? '1';
    if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(raw)) continue;
    if (rank > best || Number(raw) > q) [best, q] = [rank, Number(raw)];
  }
  return q;
}

/** An Accept header that prefers JSON to HTML: a higher q (JSON listed, HTML absent counts). Equal or no header: HTML. */
export const prefersJson = (accept: string | undefined) =>
  !!accept && acceptQ(accept, 'application/json') > acceptQ(accept, 'text/html');

/**
 * A client whose Accept header prefers JSON to HTML gets JSON instead of redirects and pages (a
 * browser's, listing JSON below HTML, gets the page); so does one that posts a JSON body (no HTML form can).
 */
export const wantsJson = (req: RequestInfo) =>
  prefersJson(req.headers['accept']) ||
  /^application\/json\b/i.test(req.headers['content-type'] ?? '');

/**
 * `next` only ever names a page of this site: a path starting with one `/`. `//evil.example` and
 * `/\evil.example` (which browsers read as another host), absolute URLs and anything with control
 * characters or non-ASCII (header injection) fall back to the console.
 */
export function safeNext(next: unknown, fallback = DEFAULT_NEXT): string {
  if (typeof next !== 'string') return fallback;
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(next) && !next.includes('\\') ? next : fallback;
}

/** Success of a form post: 303 to `next` for browsers, `{ok: true, ...payload}` for JSON clients. */
export function formReply(
  req: RequestInfo,
  next: unknown,
  payload: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Reply {
  if (wantsJson(req)) return { status: 200, json: { ok: true, ...payload }, headers };
  return { status: 303, headers: { ...headers, location: safeNext(next) } };
}

/** What the holder typed into a refused form, so the page shows it again (never the stored value): the form's action and its fields as text. */
export type Entered = { action: string; values: Record<string, string> };

/** An expected refusal a person should read: status and a sentence. */
export type Problem = {
  status: number;
  message: string;
  /** `Retry-After` of a throttled (429) refusal, for the page too. */
  retryAfter?: number;
  /** The field at fault, when one is (the form marks it). */
  field?: string;
  /** The refused form's values, to fill it in again. */
  entered?: Entered;
};

/** Fields never written back into a page: what a card or a password was. */
const NOT_REFILLED = new Set(['number', 'cvc', 'exp', 'password', 'password2']);

/** A form's values (raw or validated) as the text its fields show again. */
export function enteredOf(action: string, body: unknown): Entered {
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(body && typeof body === 'object' ? body : {})) {
    // A field sent once per choice (the markets ticked) comes back as its choices, comma-separated.
    const text: unknown = Array.isArray(v) ? v.join(',') : v;
    if (!NOT_REFILLED.has(k) && (typeof text === 'string' || typeof text === 'number'))
      values[k] = String(text);
  }
  return { action, values };
}

/**
 * The values a form shows: what was typed into it when it was just refused (never the stored value
 * it replaced), otherwise `stored`; `invalid` marks the field at fault.
 */
export function refill<K extends string>(
  action: string,
  stored: Record<K, string>,
  p?: Problem,
): Record<K, string> & { invalid: Partial<Record<K, true>> } {
  const typed = p?.entered?.action === action ? p.entered.values : undefined;
  if (!typed) return { ...stored, invalid: {} };
  const values = Object.fromEntries(Object.keys(stored).map((k) => [k, typed[k] ?? ''])) as Record<
    K,
    string
  >;
  return {
    ...values,
    invalid: (p?.field && p.field in stored ? { [p.field]: true } : {}) as Partial<Record<K, true>>,
  };
}

/** The field the first validation issue names (`loc` is `['body', field]`). */
const fieldOf = (issues: ValidationIssue[]) =>
  issues.length ? String(issues[0].loc[1] ?? issues[0].loc[0] ?? '') || undefined : undefined;

/** The readable form of a 4xx (HttpError or an actor's refusal); undefined for anything else. */
export function problemOf(err: unknown, words: Record<string, string> = {}): Problem | undefined {
  const e = err instanceof HttpError || err instanceof ActorError ? err : undefined;
  if (!e || e.status < 400 || e.status >= 500) return undefined;
  const retryAfter = e instanceof ActorError ? e.retryAfter : undefined;
  if (Array.isArray(e.detail))
    return {
      status: e.status,
      message: issuesMessage(e.detail, words),
      field: fieldOf(e.detail),
      retryAfter,
    };
  return { status: e.status, message: String(e.detail), retryAfter };
}

/**
 * Runs a web request's work (a form post, or a page that may not exist). A refusal goes to a JSON
 * client as it is (the server answers `{detail}`) and to a browser as `page(problem)`: the form or a
 * message page, with the message, under the refusal's status.
 */
export async function webAction(
  req: RequestInfo,
  work: () => Promise<Reply>,
  page: (p: Problem) => Reply | Promise<Reply>,
  words: Record<string, string> = {},
): Promise<Reply> {
  try {
    return await work();
  } catch (err) {
    const p = problemOf(err, words);
    if (!p || wantsJson(req)) throw err;
    return page(p);
  }
}

/** Validation issues as one sentence for a person, using the form's own words where it has them. */
export function issuesMessage(
  issues: ValidationIssue[],
  words: Record<string, string> = {},
): string {
  return issues
    .map((i) => {
      const field = String(i.loc[1] ?? i.loc[0] ?? '');
      return (
        words[field] ??
        (i.type === 'missing'
          ? `${field.replace(/_/g, ' ')} is required`
          : `${field.replace(/_/g, ' ')}: ${i.msg}`)
      );
    })
    .filter((m, k, all) => all.indexOf(m) === k)
    .join('; ');
}

/**
 * A route's `onInvalid` for a form: JSON clients keep the standard 422; browsers get `page` with the
 * message at 422, the field at fault and what was typed. `words` maps a field to what a person is
 * told when it is wrong (naming the field as its form labels it).
 */
export function invalidForm<T>(
  words: Record<string, string>,
  page: (req: RequestInfo, p: Problem, raw: RawInput, principal: T) => Reply | Promise<Reply>,
) {
  return (req: RequestInfo, issues: ValidationIssue[], raw: RawInput, principal: T) =>
    wantsJson(req)
      ? undefined
      : page(
          req,
          {
            status: 422,
            message: issuesMessage(issues, words),
            field: fieldOf(issues),
            entered: enteredOf(req.url, raw.body),
          },
          raw,
          principal,
        );
}

/**
 * A form post of a logged-in holder: its one effect (`run`: a turn, or a few, given the request's
 * Idempotency-Key) and its answer, fresh or replayed from the stored reply (`reply`).
 */
export type HolderForm<B, R> = {
  path: string;
  summary: string;
  body?: TObject;
  /** The JSON answer (the schema of `{ok: true, ...}`). */
  answer: TSchema;
  /** Field → what a person is told when it is wrong. */
  words?: Record<string, string>;
  run: (holder: HolderPrincipal, ctx: Context<unknown, unknown, B>) => Promise<R>;
  reply: (req: RequestInfo, r: R, body: B) => Reply;
};

/**
 * The route of a holder's form post (CONTRACT.md "Web form posts"): a refusal, or a form that fails
 * validation, shows a browser `page` again with the message; JSON clients get `{detail}`.
 */
export function holderFormRoute<B, R>(
  d: HolderForm<B, R>,
  page: (holder: HolderPrincipal, p: Problem) => Reply | Promise<Reply>,
): Route {
  return route<unknown, unknown, B>({
    method: 'POST',
    path: d.path,
    auth: 'holder',
    summary: d.summary,
    body: d.body,
    response: { 200: d.answer },
    responses: { 303: { description: 'browsers: sent on to the next page' } },
    onInvalid: invalidForm<HolderPrincipal>(d.words ?? {}, (_req, p, _raw, holder) =>
      page(holder, p),
    ),
    handler: (ctx) => {
      const holder = ctx.principal;
      return webAction(
        ctx.req,
        async () => d.reply(ctx.req, await d.run(holder, ctx), ctx.body),
        (p) => page(holder, { ...p, entered: enteredOf(ctx.req.url, ctx.body) }),
        d.words,
      );
    },
    replay: (r: R, { req, body }) => d.reply(req, r, body),
  });
}

/** A raw form value as a string (a repeated field's last value). */
export function field(raw: Record<string, unknown>, key: string): string {
  const v = raw[key];
  const last = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof last === 'string' ? last : '';
}

/** USD amounts are shown with 2 decimals. */
export const usd = (amount: number | null | undefined) =>
  amount === null || amount === undefined ? '' : amount.toFixed(2);
