// The operators' pages (CONTRACT.md "Operators"): GET /ops (this process's live figures and the
// charts of the last 15 minutes), its feed GET /ops/feed (Server-Sent Events: `history` on
// connecting, `figures` a second, `point` per chart point; the figures as JSON once without
// `Accept: text/event-stream`), GET /ops/bench (the load benchmarks' results as charts) and the
// /ops/login form. Who may open them: src/ops/access.ts (route auth `ops`). Never linked from
// the public pages.
import Type, { type Static } from 'typebox';
import {
  formAnswer,
  HttpError,
  htmlPage,
  Media,
  route,
  type OpsContext,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import { renderPage } from '../../web/pages.js';
import type { Services } from '../../http/services.js';
import { performance } from 'node:perf_hooks';
import { LoginThrottle, opsAccess, opsCookie, opsExistOr404, sameSecret } from '../access.js';
import { BENCH_RESULTS_DIR, readBenchResults } from '../bench.js';
import { MAX_FOLLOWERS } from '../feed.js';
import { benchView, opsView } from '../view.js';
import { wantsJson } from '../../web/answers.js';
import { EVENT_STREAM, sseReply } from '../../events/sse.js';
import { FiguresJson } from '../../schemas/ops.js';

const NO_STORE = { 'cache-control': 'no-store' };

const LoginBody = Type.Object({
  token: Type.String({ default: '', maxLength: 512, description: 'the ops token (SVC_OPS_TOKEN)' }),
  next: Type.String({
    default: '/ops',
    maxLength: 200,
    description: 'the page to go to afterwards (under /ops)',
  }),
});
type LoginBody = Static<typeof LoginBody>;
const LoginQuery = Type.Object({ next: Type.String({ default: '/ops', maxLength: 200 }) });
type LoginQuery = Static<typeof LoginQuery>;
const LoginAnswer = Type.Object(
  { ok: Type.Literal(true) },
  { description: 'logged in: the cookie is set' },
);

/** `next` stays on the operators' pages. */
const opsNext = (next: string) =>
  /^\/ops(?:\/[a-z]*)?$/.test(next) && next !== '/ops/login' ? next : '/ops';

function loginPage(
  s: Services,
  next: string,
  problem?: { status: number; message: string },
): Reply {
  const open = opsAccess(s.config) === 'open';
  return {
    ...renderPage(
      'ops-login',
      { title: 'Operators: log in', next: opsNext(next), open, error: problem?.message },
      problem?.status ?? 200,
    ),
    headers: NO_STORE,
  };
}

export function opsPageRoutes(s: Services): Route[] {
  return [...opsViewRoutes(s), ...loginRoutes(s)];
}

/** The pages behind the ops token: the live figures, their feed, the benchmarks. */
function opsViewRoutes(s: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/ops',
      auth: 'ops',
      summary: "Operators: this process's live figures",
      response: { 200: htmlPage("the process's figures, kept current by /static/ops.js") },
      responses: {
        401: { description: 'the ops token is required' },
        404: { description: 'no ops token configured off loopback' },
      },
      handler: () => getOpsPage(s),
    }),
    route({
      method: 'GET',
      path: '/ops/feed',
      auth: 'ops',
      summary: "Operators: this process's figures every second (Server-Sent Events)",
      response: {
        200: new Media(
          '`history` (src/schemas/ops.ts HistoryJson), then `figures` and `point` events (Accept: text/event-stream), else the figures now as JSON',
          { [EVENT_STREAM]: undefined, 'application/json': FiguresJson },
        ),
      },
      responses: {
        401: { description: 'the ops token is required' },
        404: { description: 'no ops token configured off loopback' },
        503: { description: 'too many followers: retry' },
      },
      handler: (c) => getOpsFeed(s, c),
    }),
    route({
      method: 'GET',
      path: '/ops/bench',
      auth: 'ops',
      summary: "Operators: the load benchmarks' results as charts",
      response: {
        200: htmlPage(
          'each scenario against its same-run baseline over time, the latest run, the targets',
        ),
      },
      responses: {
        401: { description: 'the ops token is required' },
        404: { description: 'no ops token configured off loopback' },
      },
      handler: () => getOpsBench(),
    }),
  ];
}

/** The login form and its post (wrong tokens throttled per address). */
function loginRoutes(s: Services): Route[] {
  const throttle = new LoginThrottle(() => performance.now() / 1000);
  return [
    route<unknown, LoginQuery>({
      method: 'GET',
      path: '/ops/login',
      auth: 'none',
      summary: 'Operators: the login form (the ops token)',
      query: LoginQuery,
      response: { 200: htmlPage('the form') },
      responses: { 404: { description: 'no ops token configured off loopback' } },
      handler: (c) => getLoginForm(s, c),
    }),
    route<unknown, unknown, LoginBody>({
      method: 'POST',
      path: '/ops/login',
      auth: 'none',
      summary: 'Operators: log in with the ops token (sets a cookie for /ops)',
      body: LoginBody,
      response: { 200: formAnswer(LoginAnswer) },
      responses: {
        303: { description: "browsers: on to the operators' page" },
        401: { description: 'wrong token' },
        404: { description: 'no ops token configured off loopback' },
        429: { description: 'too many wrong tokens from this address in a minute' },
      },
      onInvalid: (req) => loginFormAgain(s, req),
      handler: (c) => logIn(s, throttle, c),
    }),
  ];
}

async function getOpsPage(s: Services): Promise<Reply> {
  const f = await s.opsFeed.current();
  const view = opsView(f, s.opsFeed.history());
  // Which node runs the closes: read from the lease's holder, so a page on any node names it.
  const holder = await s.closesHolder().catch(() => null);
  const closes = { node: s.node(), closes_here: s.supervisor.holdsCloses, closes_holder: holder };
  return {
    ...renderPage('ops', {
      title: 'Operators: live',
      nav_live: true,
      ...view,
      ...closes,
      scripts: ['/static/ops.js'],
    }),
    headers: NO_STORE,
  };
}

async function getOpsFeed(s: Services, { req }: OpsContext): Promise<Reply> {
  if (!/\btext\/event-stream\b/i.test(req.headers['accept'] ?? ''))
    return { json: await s.opsFeed.current(), headers: NO_STORE };
  if (s.opsFeed.followerCount() >= MAX_FOLLOWERS)
    throw new HttpError(503, `at most ${MAX_FOLLOWERS} follow the feed at once: retry shortly`, {
      'retry-after': '5',
    });
  return sseReply((write, end) => {
    const stop = s.opsFeed.follow(write, end);
    if (!stop) end();
    return stop ?? (() => {});
  });
}

function getOpsBench(): Reply {
  return {
    ...renderPage('ops-bench', {
      title: 'Operators: load benchmarks',
      nav_bench: true,
      ...benchView(readBenchResults(BENCH_RESULTS_DIR)),
    }),
    headers: NO_STORE,
  };
}

function getLoginForm(s: Services, { query }: PublicContext<unknown, LoginQuery>): Reply {
  opsExistOr404(s.config);
  return loginPage(s, query.next);
}

/** A malformed login form: the form again (JSON clients: the standard 422). Where the pages do not exist, a malformed form does not say otherwise. */
function loginFormAgain(s: Services, req: RequestInfo): Reply | undefined {
  opsExistOr404(s.config);
  return wantsJson(req)
    ? undefined
    : loginPage(s, '/ops', { status: 422, message: 'Enter the token.' });
}

function logIn(
  s: Services,
  throttle: LoginThrottle,
  { req, body }: PublicContext<unknown, unknown, LoginBody>,
): Reply {
  const access = opsExistOr404(s.config);
  const next = opsNext(body.next);
  if (access === 'token') {
    const refused = tokenRefused(s, throttle, req, body.token, next);
    if (refused) return refused;
  }
  const headers: Record<string, string> =
    access === 'token' ? { 'set-cookie': opsCookie(s.config) } : {};
  if (wantsJson(req)) return { json: { ok: true }, headers };
  return { status: 303, headers: { ...headers, location: next } };
}

/** The answer to a token refused (too many wrong ones from the address, or a wrong one); undefined when it is right. */
function tokenRefused(
  s: Services,
  throttle: LoginThrottle,
  req: RequestInfo,
  token: string,
  next: string,
): Reply | undefined {
  const address = req.remoteAddress();
  const wait = throttle.waitOf(address);
  if (wait > 0) {
    const message = `Too many wrong tokens from this address: try again in ${wait} s.`;
    if (wantsJson(req)) throw new HttpError(429, message, { 'retry-after': String(wait) });
    return {
      ...loginPage(s, next, { status: 429, message }),
      headers: { ...NO_STORE, 'retry-after': String(wait) },
    };
  }
  if (!sameSecret(token, s.config.opsToken!)) {
    throttle.failed(address);
    if (wantsJson(req)) throw new HttpError(401, 'wrong token');
    return loginPage(s, next, { status: 401, message: 'That is not the token.' });
  }
  return undefined;
}
