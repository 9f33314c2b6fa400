// The WebSocket at GET /api/v1/ws (CONTRACT.md "Events"), on uWebSockets.js's own WebSocket
// support. One connection carries an agent's account channel (its log, resumable with `after`) and
// any markets' session closes, read through the process's event hub (never the log directly).
//
// Frames (JSON text; one message each way per frame):
//   client → server  {"op":"auth","key":"..."}            (first message, unless the upgrade had the key)
//                    {"op":"subscribe","channels":["account","market:m15"],"after":N,"types"?:[...]}
//                    {"op":"unsubscribe","channels":[...]}   {"op":"ping"}
//   server → client  {"op":"authenticated","agent_id":N}   {"op":"subscribed","channels":[...],"after":N}
//                    {"op":"unsubscribed","channels":[...]} {"op":"pong"}
//                    {"op":"error","status":422|409|410,"detail":"..."}
//                    {"channel":"account","event":{id,type,created_at,data}}
//                    {"channel":"market:m15","event":{"type":"session.closed",market,tick,next_tick,tick_closes_at}}
// A subscribe that names an unknown channel or type, a bad `after`, or a channel already subscribed
// answers an error message and changes nothing (the connection stays). Everything else that is not
// the protocol ends the connection with a close code and a reason (WS_CLOSE below); uWS itself drops
// (no close frame) a message over MAX_FRAME_BYTES and a text frame that is not UTF-8.
//
// Backpressure: uWS buffers what the kernel did not take; a connection may have at most
// SEND_BUFFER_BYTES waiting (a single frame passes it only when nothing waits). The account channel
// takes events while there is room; the rest stays in the log and the channel waits (event-hub.ts)
// until uWS says the connection drained to half the bound, then reads on from its last id. A channel
// that waits too long (its client stopped reading), or a frame of another channel or an answer that
// finds no room, closes the connection with WS_CLOSE.behind and the id to resume from (`after=N` in
// the reason: every event up to N was sent before the close frame). uWS's own maxBackpressure sits
// above that bound, so the close frame itself always fits.
//
// A connection without the key on its upgrade is unauthenticated work of its client's address until
// its auth message is answered (limits.ts UNAUTHENTICATED_PER_ADDRESS: one more is refused 429
// before the upgrade), and is closed if that message does not come within AUTH_TIMEOUT_MS.
import type { Logger } from 'pino';
import { STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { TemplatedApp, WebSocket, HttpResponse } from 'uWebSockets.js';
import { MARKET_IDS } from '../engine/index.js';
import { EVENT_TYPES, type EventType } from '../schemas/index.js';
import { keyFromHeaders } from '../auth/api-keys.js';
import type { AgentPrincipal } from '../http/authenticators/agent-key.js';
import {
  perEvent,
  sendWhile,
  type AccountStream,
  type EventHub,
  type SessionEvent,
} from './hub.js';
import type { EventText } from '../../actors/events/messages.js';
import { HttpError, type RequestInfo } from '../http/route.js';
import { goneDetail } from './query.js';
import { clientAddress, type TrustedProxies } from '../http/client-address.js';
import {
  AUTH_TIMEOUT_MS,
  KEY_STREAMS_DETAIL,
  STREAM_BUFFER_BYTES,
  STREAM_LIMIT_RETRY_AFTER_S,
  UNAUTHENTICATED_RETRY_AFTER_S,
  addressKey,
  unauthenticatedDetail,
  type Places,
} from '../http/limits.js';

export const WS_PATH = '/api/v1/ws';

/** Close codes (RFC 6455 and the application's 4000 range, documented in /docs and the AsyncAPI). */
export const WS_CLOSE = {
  /** The service is stopping: reconnect and subscribe with `after` = your last id. */
  stopping: 1001,
  /** A binary frame: the protocol is JSON text. */
  binary: 1003,
  /** This process holds as many streams as it may: retry in a few seconds. */
  full: 1013,
  /** A message over MAX_PAYLOAD_BYTES (beyond MAX_FRAME_BYTES uWS drops the connection without a close frame). */
  tooBig: 1009,
  /** Not JSON, not an object with `op`, or an unknown op. */
  badFrame: 4400,
  /** No key on the upgrade and the first message is not a valid auth, a wrong key, or no auth in time. */
  unauthorized: 4401,
  /** `after` is older than the 7 days kept (an error message with the 410 detail came first). */
  gone: 4410,
  /** Too slow to read: the send buffer is full. Reconnect and subscribe with the `after` in the reason. */
  behind: 4429,
  /** The key of the first message holds STREAMS_PER_KEY streams already (the reason says so; CONTRACT.md pins 4429). */
  keyStreams: 4429,
} as const;

/** Largest message a client may send (auth and subscribe are a few hundred bytes); larger: closed with 1009 and a reason. */
export const MAX_PAYLOAD_BYTES = 4096;
/**
 * uWS's own cap (maxPayloadLength): a message over it is not even buffered, and the connection is
 * dropped without a close frame (the client sees 1006), as are text frames that are not UTF-8
 * (RFC 6455 fails such a connection; uWS checks before any handler runs).
 */
export const MAX_FRAME_BYTES = 64 * 1024;
/** Bytes a connection may have waiting to be sent; the frame that would pass it closes the connection (behind). */
export const SEND_BUFFER_BYTES = STREAM_BUFFER_BYTES;
/** uWS's own bound, above ours by room for the close frame (a send over it would be dropped). */
const MAX_BACKPRESSURE = SEND_BUFFER_BYTES + 64 * 1024;
/** Messages kept while the first message's key is being checked (a client may pipeline its subscribe). */
const MAX_PENDING = 8;
/** Seconds of silence before uWS pings (and closes a peer that does not answer). */
const IDLE_TIMEOUT_S = 60;

const CHANNELS = ['account', ...MARKET_IDS.map((m) => `market:${m}`)];
const OPS = 'auth, subscribe, unsubscribe, ping';

type Conn = {
  principal?: AgentPrincipal;
  ws?: WebSocket<Conn>;
  closed: boolean;
  /** A first message's key is being checked: later messages wait in `pending`. */
  authing: boolean;
  pending?: string[];
  /** Gives back the client address's place for unauthenticated work (held until the auth is answered). */
  anonymous?: () => void;
  authTimer?: NodeJS.Timeout;
  release?: () => void;
  /** Gives back the key's stream place (limits.ts STREAMS_PER_KEY), held from the auth to the close. */
  keyPlace?: () => void;
  /** The account channel: its stream, what removes it, and the last event id sent on it. */
  account?: { stream?: AccountStream; stop: () => void; last: number };
  markets?: Map<string, () => void>;
};

export type WsOptions = {
  hub: EventHub;
  /** The `key` routes' authenticator (HttpError(401) on a missing or wrong key). */
  authenticate: (req: RequestInfo) => Promise<AgentPrincipal>;
  log: Logger;
  /** Accounts for the upgrade like a request (route, method, status, seconds). */
  onRequest?: (route: string, method: string, status: number, seconds: number) => void;
  /** Unauthenticated work per client address (shared with POST /mcp without a key). */
  unauthenticated: Places;
  /** Streams per API key (shared with /api/v1/events/stream). */
  keyStreams: Places;
  /** Peers whose X-Forwarded-For names the client (config.trustedProxies). */
  trustedProxies?: TrustedProxies;
  /** How long a connection may wait for its auth message (default AUTH_TIMEOUT_MS; tests lengthen it). */
  authTimeoutMs?: number;
};

/** An account event's frame, made once for every connection handed it. */
const accountFrame = perEvent((e) => `{"channel":"account","event":${e.json}}`);

/** ASCII only, at most 123 bytes (a close frame's reason). */
const reasonText = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, 123);
/** A client's value quoted in a reason or error: short and printable. */
const quote = (v: unknown) => reasonText(JSON.stringify(v) ?? String(v)).slice(0, 40);

/** Registers the WebSocket route on the app (uWS serves upgrades before the route table's GET of the same path). */
export function attachWebSocket(app: TemplatedApp, o: WsOptions): void {
  const hub = o.hub;
  const authTimeoutMs = o.authTimeoutMs ?? AUTH_TIMEOUT_MS;

  const refuse = (
    res: HttpResponse,
    status: 401 | 429 | 503,
    detail: string,
    headers: Record<string, string> = {},
  ) => {
    res.cork(() => {
      res.writeStatus(`${status} ${STATUS_CODES[status]}`);
      res.writeHeader('content-type', 'application/json');
      for (const k in headers) res.writeHeader(k, headers[k]);
      res.end(JSON.stringify({ detail }), true);
    });
  };

  /** Sends a text frame unless what waits would pass the send buffer's bound with it (false: no room, or closed). */
  const sendText = (c: Conn, text: string | Uint8Array): boolean => {
    if (c.closed) return false;
    const ws = c.ws!;
    const waiting = ws.getBufferedAmount();
    if (
      waiting > 0 &&
      waiting + (typeof text === 'string' ? Buffer.byteLength(text) : text.byteLength) >
        SEND_BUFFER_BYTES
    )
      return false;
    return ws.send(text, false, false) !== 2;
  };
  const sendOp = (c: Conn, msg: Record<string, unknown>) => sendText(c, JSON.stringify(msg));

  const end = (c: Conn, code: number, reason: string) => {
    if (c.closed) return;
    c.ws!.end(code, reasonText(reason));
  };
  const resumeHint = (c: Conn) =>
    c.account
      ? `; reconnect and subscribe with after=${c.account.last}`
      : '; reconnect and subscribe again';
  const behind = (c: Conn) => end(c, WS_CLOSE.behind, `behind: too slow to read${resumeHint(c)}`);

  const error = (c: Conn, status: number, detail: string) => {
    if (!sendOp(c, { op: 'error', status, detail })) behind(c);
  };

  function authenticated(c: Conn, principal: AgentPrincipal): void {
    c.principal = principal;
    c.anonymous?.();
    c.anonymous = undefined;
    clearTimeout(c.authTimer);
    c.authTimer = undefined;
    sendOp(c, { op: 'authenticated', agent_id: principal.agentId });
  }

  function authFromMessage(c: Conn, m: Record<string, unknown>): void {
    if (m.op !== 'auth')
      return end(
        c,
        WS_CLOSE.unauthorized,
        `authenticate first: send {"op":"auth","key":"..."} (or the key in Authorization on the upgrade)`,
      );
    if (typeof m.key !== 'string' || Object.keys(m).some((k) => k !== 'op' && k !== 'key'))
      return end(c, WS_CLOSE.unauthorized, 'auth takes {"op":"auth","key":"<your API key>"}');
    c.authing = true;
    o.authenticate({
      method: 'GET',
      url: WS_PATH,
      query: '',
      headers: { authorization: `Bearer ${m.key}` },
      remoteAddress: () => '',
    }).then(
      (p) => {
        c.authing = false;
        if (c.closed) return;
        c.keyPlace = o.keyStreams.take(p.keyId);
        if (!c.keyPlace) return end(c, WS_CLOSE.keyStreams, KEY_STREAMS_DETAIL);
        authenticated(c, p);
        const pending = c.pending ?? [];
        c.pending = undefined;
        for (const text of pending) if (!c.closed) handle(c, text);
      },
      (err) => {
        c.authing = false;
        if (err instanceof HttpError && err.status === 401)
          return end(c, WS_CLOSE.unauthorized, `unauthorized: ${String(err.detail)}`);
        o.log.warn({ err }, 'websocket: checking a key failed');
        end(c, WS_CLOSE.full, 'the key could not be checked now: retry in a few seconds');
      },
    );
  }

  function handle(c: Conn, text: string): void {
    let m: unknown;
    try {
      m = JSON.parse(text);
    } catch {
      return end(
        c,
        WS_CLOSE.badFrame,
        'bad frame: not JSON (messages are JSON objects with an "op")',
      );
    }
    if (
      typeof m !== 'object' ||
      m === null ||
      Array.isArray(m) ||
      typeof (m as { op?: unknown }).op !== 'string'
    ) {
      return end(c, WS_CLOSE.badFrame, 'bad frame: a message is a JSON object with an "op"');
    }
    const msg = m as Record<string, unknown>;
    if (!c.principal) return authFromMessage(c, msg);
    switch (msg.op) {
      case 'auth':
        return error(c, 409, 'already authenticated');
      case 'subscribe':
        return subscribe(c, msg);
      case 'unsubscribe':
        return unsubscribe(c, msg);
      case 'ping':
        if (!sendOp(c, { op: 'pong' })) behind(c);
        return;
      default:
        return end(
          c,
          WS_CLOSE.badFrame,
          `bad frame: unknown op ${quote(msg.op)}; the ops are ${OPS}`,
        );
    }
  }

  /** The channels a subscribe or unsubscribe names, or the error's detail. */
  function channelsOf(msg: Record<string, unknown>): string[] | string {
    const list = msg.channels;
    if (!Array.isArray(list) || list.length === 0 || list.length > 16)
      return `"channels" is a list of 1 to ${CHANNELS.length} of ${CHANNELS.join(', ')}`;
    const unknown = list.filter((x) => typeof x !== 'string' || !CHANNELS.includes(x));
    if (unknown.length)
      return `unknown channel ${quote(unknown[0])}: the channels are ${CHANNELS.join(', ')}`;
    return [...new Set(list as string[])];
  }

  function subscribe(c: Conn, msg: Record<string, unknown>): void {
    const extra = Object.keys(msg).filter((k) => !['op', 'channels', 'after', 'types'].includes(k));
    if (extra.length)
      return error(c, 422, `subscribe takes op, channels, after and types; not ${quote(extra[0])}`);
    const channels = channelsOf(msg);
    if (typeof channels === 'string') return error(c, 422, channels);
    const wantsAccount = channels.includes('account');
    const after = msg.after ?? 0;
    if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0)
      return error(c, 422, '"after" is the last event id you have: a whole number, 0 or more');
    if (msg.after !== undefined && !wantsAccount)
      return error(c, 422, '"after" applies to the account channel');
    let types: EventType[] | undefined;
    if (msg.types !== undefined) {
      if (!wantsAccount) return error(c, 422, '"types" applies to the account channel');
      if (!Array.isArray(msg.types) || msg.types.length > EVENT_TYPES.length * 2)
        return error(c, 422, `"types" is a list of event types: ${EVENT_TYPES.join(', ')}`);
      const bad = msg.types.find((x) => !(EVENT_TYPES as unknown[]).includes(x));
      if (bad !== undefined) return error(c, 422, `unknown event type ${quote(bad)}`);
      types = msg.types.length ? [...new Set(msg.types as EventType[])] : undefined;
    }
    const again = channels.find((ch) => (ch === 'account' ? c.account : c.markets?.has(ch)));
    if (again) return error(c, 409, `already subscribed to ${again}: unsubscribe first`);

    if (!sendOp(c, { op: 'subscribed', channels, ...(wantsAccount ? { after } : {}) }))
      return behind(c);
    for (const ch of channels) {
      if (ch === 'account') subscribeAccount(c, after, types);
      else watch(c, ch);
      if (c.closed) return;
    }
  }

  function subscribeAccount(c: Conn, after: number, types: EventType[] | undefined): void {
    const state: NonNullable<Conn['account']> = { stop: () => {}, last: after };
    c.account = state;
    const sent = (e: EventText) => {
      if (!sendText(c, accountFrame(e))) return false;
      state.last = e.id;
      return true;
    };
    state.stream = {
      accountId: c.principal!.accountId,
      after,
      types,
      send: (events: EventText[]) => sendWhile(events, sent),
      ping: () => !c.closed,
      close: (why) => {
        if (why.reason === 'gone') {
          sendOp(c, { op: 'error', status: 410, detail: goneDetail(why.from) });
          return end(
            c,
            WS_CLOSE.gone,
            `gone: events before id ${why.from} are no longer kept; re-read orders and positions, then after=${why.from - 1}`,
          );
        }
        if (why.reason === 'behind') return behind(c);
        end(c, WS_CLOSE.stopping, `stopping${resumeHint(c)}`);
      },
    };
    state.stop = hub.subscribe(state.stream, { held: true });
  }

  function watch(c: Conn, channel: string): void {
    const market = channel.slice('market:'.length);
    const prefix = `{"channel":${JSON.stringify(channel)},"event":`;
    const stop = hub.watchMarket(
      {
        market,
        send: (e: SessionEvent) =>
          sendText(c, `${prefix}${JSON.stringify({ type: 'session.closed', ...e })}}`),
        ping: () => !c.closed,
        close: (why) =>
          why.reason === 'behind'
            ? behind(c)
            : end(c, WS_CLOSE.stopping, `stopping${resumeHint(c)}`),
      },
      { held: true },
    );
    (c.markets ??= new Map()).set(channel, stop);
  }

  function unsubscribe(c: Conn, msg: Record<string, unknown>): void {
    const extra = Object.keys(msg).filter((k) => !['op', 'channels'].includes(k));
    if (extra.length)
      return error(c, 422, `unsubscribe takes op and channels; not ${quote(extra[0])}`);
    const channels = channelsOf(msg);
    if (typeof channels === 'string') return error(c, 422, channels);
    for (const ch of channels) {
      if (ch === 'account') {
        c.account?.stop();
        c.account = undefined;
      } else {
        c.markets?.get(ch)?.();
        c.markets?.delete(ch);
      }
    }
    if (!sendOp(c, { op: 'unsubscribed', channels })) behind(c);
  }

  function cleanUp(c: Conn): void {
    c.closed = true;
    clearTimeout(c.authTimer);
    c.account?.stop();
    if (c.markets) for (const stop of c.markets.values()) stop();
    c.release?.();
    c.keyPlace?.();
    c.anonymous?.();
    c.pending = undefined;
  }

  app.ws<Conn>(WS_PATH, {
    compression: 0, // uWS.DISABLED
    maxPayloadLength: MAX_FRAME_BYTES,
    maxBackpressure: MAX_BACKPRESSURE,
    closeOnBackpressureLimit: 0,
    idleTimeout: IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,

    upgrade: (res, req, context) => {
      const started = performance.now();
      const secKey = req.getHeader('sec-websocket-key');
      const extensions = req.getHeader('sec-websocket-extensions');
      const headers: Record<string, string> = {};
      req.forEach((k, v) => (headers[k] = v));
      const done = (status: number) =>
        o.onRequest?.(WS_PATH, 'GET', status, (performance.now() - started) / 1000);
      if (!hub.hasRoom()) {
        done(503);
        return refuse(
          res,
          503,
          'this process holds as many streams as it may: retry in a few seconds',
          { 'retry-after': '5' },
        );
      }
      const upgrade = (
        principal: AgentPrincipal | undefined,
        places: Pick<Conn, 'anonymous' | 'keyPlace'>,
      ) => {
        done(101);
        // No subprotocol is offered (an empty Sec-WebSocket-Protocol answer).
        res.cork(() =>
          res.upgrade<Conn>(
            { principal, closed: false, authing: false, ...places },
            secKey,
            '',
            extensions,
            context,
          ),
        );
      };
      // No key on the upgrade: the first message authenticates; until then the connection holds a place of its address.
      if (keyFromHeaders(headers) === null && headers['authorization'] === undefined) {
        const peer = Buffer.from(res.getRemoteAddressAsText()).toString();
        const anonymous = o.unauthenticated.take(
          addressKey(clientAddress(peer, headers['x-forwarded-for'], o.trustedProxies ?? [])),
        );
        if (anonymous) return upgrade(undefined, { anonymous });
        done(429);
        return refuse(res, 429, unauthenticatedDetail('this WebSocket'), {
          'retry-after': String(UNAUTHENTICATED_RETRY_AFTER_S),
        });
      }
      let aborted = false;
      res.onAborted(() => (aborted = true));
      o.authenticate({
        method: 'GET',
        url: WS_PATH,
        query: req.getQuery() ?? '',
        headers,
        remoteAddress: () => '',
      }).then(
        (p) => {
          if (aborted) return;
          const keyPlace = o.keyStreams.take(p.keyId);
          if (keyPlace) return upgrade(p, { keyPlace });
          done(429);
          refuse(res, 429, KEY_STREAMS_DETAIL, {
            'retry-after': String(STREAM_LIMIT_RETRY_AFTER_S),
          });
        },
        (err) => {
          if (aborted) return;
          if (err instanceof HttpError && err.status === 401) {
            done(401);
            return refuse(res, 401, String(err.detail), err.headers);
          }
          o.log.warn({ err }, 'websocket: checking a key failed');
          done(503);
          refuse(res, 503, 'the key could not be checked now: retry in a few seconds', {
            'retry-after': '5',
          });
        },
      );
    },

    open: (ws) => {
      const c = ws.getUserData();
      c.ws = ws;
      c.release = hub.hold(() => end(c, WS_CLOSE.stopping, `stopping${resumeHint(c)}`));
      if (!c.release)
        return end(
          c,
          WS_CLOSE.full,
          'this process holds as many streams as it may: retry in a few seconds',
        );
      if (c.principal) authenticated(c, c.principal);
      else
        c.authTimer = setTimeout(
          () => end(c, WS_CLOSE.unauthorized, `no auth message within ${authTimeoutMs / 1000} s`),
          authTimeoutMs,
        );
    },

    message: (ws, message, isBinary) => {
      const c = ws.getUserData();
      if (c.closed) return;
      if (isBinary)
        return end(c, WS_CLOSE.binary, 'binary frames are not accepted: send JSON text');
      if (message.byteLength > MAX_PAYLOAD_BYTES)
        return end(c, WS_CLOSE.tooBig, `too big: a message is at most ${MAX_PAYLOAD_BYTES} bytes`);
      // The buffer is uWS's until this callback returns: decode it now.
      const text = Buffer.from(message).toString('utf8');
      if (c.authing) {
        (c.pending ??= []).push(text);
        if (c.pending.length > MAX_PENDING)
          end(
            c,
            WS_CLOSE.badFrame,
            `bad frame: more than ${MAX_PENDING} messages before the auth was answered`,
          );
        return;
      }
      handle(c, text);
    },

    drain: (ws) => {
      // Half the bound free again: the account channel (if it waits for room) reads on from its last id.
      const c = ws.getUserData();
      if (!c.closed && c.account?.stream && ws.getBufferedAmount() <= SEND_BUFFER_BYTES / 2)
        hub.resume(c.account.stream);
    },

    close: (ws) => cleanUp(ws.getUserData()),
  });
}
