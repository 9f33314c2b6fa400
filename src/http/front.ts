// The front end's options and the state its request pipeline shares (src/http/server.ts wires them;
// src/http/pipeline.ts and answer.ts are the steps that read them).
import type { Logger } from 'pino';
import type { Auth, InternalRequest, Reply, RequestInfo, Route } from './route.js';
import type { Principals } from './principal.js';
import type { AnswerStore } from './idempotency-key.js';
import type { TrustedProxies } from './client-address.js';
import type { KeyRateLimit } from './rate-limit.js';

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
  /** Counts the requests of each agent key (routes with `auth: 'key'`); unset: no limit (unit tests). */
  rateLimit?: KeyRateLimit;
};

/** What every step of a request reads: the options, and what the front end counts. */
export type Front = {
  readonly opts: ServerOptions;
  /** The info level is on: one log line per request. */
  readonly logRequests: boolean;
  /** Requests received and not yet answered. */
  inflight: number;
  /** Runs a request inside the process through a route's pipeline (Context.dispatch). */
  readonly dispatch: (req: InternalRequest) => Promise<Reply>;
};

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
