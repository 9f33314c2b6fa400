// The WebSocket's upgrade and authentication (src/events/websocket.ts): the key on the upgrade, or
// in a first `auth` message within the time allowed. Until its key is accepted a connection holds a
// place of its client's address (unauthenticated work); from then on, a stream place of its key.
import { STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse, us_socket_context_t } from 'uWebSockets.js';
import { keyFromHeaders } from '../auth/api-keys.js';
import type { AgentPrincipal } from '../http/authenticators/agent-key.js';
import { HttpError, type RequestInfo } from '../http/route.js';
import { clientAddress } from '../http/client-address.js';
import {
  AUTH_TIMEOUT_MS,
  KEY_STREAMS_DETAIL,
  STREAM_LIMIT_RETRY_AFTER_S,
  UNAUTHENTICATED_RETRY_AFTER_S,
  addressKey,
  unauthenticatedDetail,
} from '../http/limits.js';
import { end, sendOp } from './ws-delivery.js';
import {
  FULL_DETAIL,
  KEY_UNCHECKED_DETAIL,
  WS_CLOSE,
  WS_PATH,
  type Conn,
  type Message,
  type WsOptions,
} from './ws-protocol.js';

/** An upgrade request as read in uWS's upgrade handler (its request is gone once that returns). */
type Upgrade = {
  res: HttpResponse;
  context: us_socket_context_t;
  secKey: string;
  extensions: string;
  headers: Record<string, string>;
  query: string;
  /** Accounts for the upgrade with its answer's status. */
  done: (status: number) => void;
};

/** What the authenticator is handed for a key: a GET of the WebSocket with these headers. */
const keyRequest = (headers: Record<string, string>, query: string): RequestInfo => ({
  method: 'GET',
  url: WS_PATH,
  query,
  headers,
  remoteAddress: () => '',
});

/** An upgrade answered with an HTTP error instead. */
function refuse(
  res: HttpResponse,
  status: 401 | 429 | 503,
  detail: string,
  headers: Record<string, string> = {},
): void {
  res.cork(() => {
    res.writeStatus(`${status} ${STATUS_CODES[status]}`);
    res.writeHeader('content-type', 'application/json');
    for (const k in headers) res.writeHeader(k, headers[k]);
    res.end(JSON.stringify({ detail }), true);
  });
}

/** uWS's upgrade handler: a connection when the process has room and the key (if any) is good. */
export function upgrade(
  o: WsOptions,
  res: HttpResponse,
  req: HttpRequest,
  context: us_socket_context_t,
): void {
  const u = readUpgrade(o, res, req, context);
  if (!o.hub.hasRoom()) {
    u.done(503);
    return refuse(res, 503, FULL_DETAIL, { 'retry-after': '5' });
  }
  if (keyFromHeaders(u.headers) === null && u.headers['authorization'] === undefined)
    return upgradeAnonymous(o, u);
  upgradeWithKey(o, u);
}

function readUpgrade(
  o: WsOptions,
  res: HttpResponse,
  req: HttpRequest,
  context: us_socket_context_t,
): Upgrade {
  const started = performance.now();
  const secKey = req.getHeader('sec-websocket-key');
  const extensions = req.getHeader('sec-websocket-extensions');
  const headers: Record<string, string> = {};
  req.forEach((k, v) => (headers[k] = v));
  const done = (status: number) =>
    o.onRequest?.(WS_PATH, 'GET', status, (performance.now() - started) / 1000);
  return { res, context, secKey, extensions, headers, query: req.getQuery() ?? '', done };
}

/** Upgrades to a connection holding `places` (given back at its close). */
function accept(
  u: Upgrade,
  principal: AgentPrincipal | undefined,
  places: Pick<Conn, 'anonymous' | 'keyPlace'>,
): void {
  u.done(101);
  // No subprotocol is offered (an empty Sec-WebSocket-Protocol answer).
  u.res.cork(() =>
    u.res.upgrade<Conn>(
      { principal, closed: false, authing: false, ...places },
      u.secKey,
      '',
      u.extensions,
      u.context,
    ),
  );
}

/** No key on the upgrade: the first message authenticates; until then the connection holds a place of its address. */
function upgradeAnonymous(o: WsOptions, u: Upgrade): void {
  const peer = Buffer.from(u.res.getRemoteAddressAsText()).toString();
  const anonymous = o.unauthenticated.take(
    addressKey(clientAddress(peer, u.headers['x-forwarded-for'], o.trustedProxies ?? [])),
  );
  if (anonymous) return accept(u, undefined, { anonymous });
  u.done(429);
  refuse(u.res, 429, unauthenticatedDetail('this WebSocket'), {
    'retry-after': String(UNAUTHENTICATED_RETRY_AFTER_S),
  });
}

/** The key on the upgrade: checked first, then the connection holds a stream place of the key. */
function upgradeWithKey(o: WsOptions, u: Upgrade): void {
  let aborted = false;
  u.res.onAborted(() => (aborted = true));
  o.authenticate(keyRequest(u.headers, u.query)).then(
    (p) => {
      if (aborted) return;
      const keyPlace = o.keyStreams.take(p.keyId);
      if (keyPlace) return accept(u, p, { keyPlace });
      u.done(429);
      refuse(u.res, 429, KEY_STREAMS_DETAIL, {
        'retry-after': String(STREAM_LIMIT_RETRY_AFTER_S),
      });
    },
    (err) => {
      if (aborted) return;
      if (err instanceof HttpError && err.status === 401) {
        u.done(401);
        return refuse(u.res, 401, String(err.detail), err.headers);
      }
      o.log.warn({ err }, 'websocket: checking a key failed');
      u.done(503);
      refuse(u.res, 503, KEY_UNCHECKED_DETAIL, { 'retry-after': '5' });
    },
  );
}

/** At the open: a connection upgraded with its key is authenticated now; others wait for their auth message, for a while. */
export function startAuth(o: WsOptions, c: Conn): void {
  const authTimeoutMs = o.authTimeoutMs ?? AUTH_TIMEOUT_MS;
  if (c.principal) authenticated(c, c.principal);
  else
    c.authTimer = setTimeout(
      () => end(c, WS_CLOSE.unauthorized, `no auth message within ${authTimeoutMs / 1000} s`),
      authTimeoutMs,
    );
}

/** The connection is the agent's: the address's place and the auth timer are done with. */
function authenticated(c: Conn, principal: AgentPrincipal): void {
  c.principal = principal;
  c.anonymous?.();
  c.anonymous = undefined;
  clearTimeout(c.authTimer);
  c.authTimer = undefined;
  sendOp(c, { op: 'authenticated', agent_id: principal.agentId });
}

/**
 * The first message of a connection without a key: an `auth` with the key, or the connection ends.
 * While the key is checked later messages wait (`pending`); `then` runs once it is accepted.
 */
export function authFromMessage(o: WsOptions, c: Conn, m: Message, then: () => void): void {
  if (m.op !== 'auth')
    return end(
      c,
      WS_CLOSE.unauthorized,
      `authenticate first: send {"op":"auth","key":"..."} (or the key in Authorization on the upgrade)`,
    );
  if (typeof m.key !== 'string' || Object.keys(m).some((k) => k !== 'op' && k !== 'key'))
    return end(c, WS_CLOSE.unauthorized, 'auth takes {"op":"auth","key":"<your API key>"}');
  c.authing = true;
  o.authenticate(keyRequest({ authorization: `Bearer ${m.key}` }, '')).then(
    (p) => {
      c.authing = false;
      if (c.closed) return;
      c.keyPlace = o.keyStreams.take(p.keyId);
      if (!c.keyPlace) return end(c, WS_CLOSE.keyStreams, KEY_STREAMS_DETAIL);
      authenticated(c, p);
      then();
    },
    (err) => {
      c.authing = false;
      if (err instanceof HttpError && err.status === 401)
        return end(c, WS_CLOSE.unauthorized, `unauthorized: ${String(err.detail)}`);
      o.log.warn({ err }, 'websocket: checking a key failed');
      end(c, WS_CLOSE.full, KEY_UNCHECKED_DETAIL);
    },
  );
}
