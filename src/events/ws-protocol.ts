// The WebSocket's constants and a connection's state (src/events/websocket.ts describes the
// protocol): shared by the upgrade, the ops, the delivery and the connection's lifecycle.
import type { Logger } from 'pino';
import type { WebSocket } from 'uWebSockets.js';
import { MARKET_IDS } from '../engine/index.js';
import type { AgentPrincipal } from '../http/authenticators/agent-key.js';
import type { RequestInfo } from '../http/route.js';
import type { TrustedProxies } from '../http/client-address.js';
import { STREAM_BUFFER_BYTES, type Places } from '../http/limits.js';
import type { AccountStream, EventHub } from './hub.js';

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
export const MAX_BACKPRESSURE = SEND_BUFFER_BYTES + 64 * 1024;
/** Messages kept while the first message's key is being checked (a client may pipeline its subscribe). */
export const MAX_PENDING = 8;
/** Seconds of silence before uWS pings (and closes a peer that does not answer). */
export const IDLE_TIMEOUT_S = 60;

export const CHANNELS = ['account', ...MARKET_IDS.map((m) => `market:${m}`)];

/** Why a connection is refused at the upgrade (503) or closed at its open (1013). */
export const FULL_DETAIL = 'this process holds as many streams as it may: retry in a few seconds';
/** Why a connection is refused (503) or closed (1013) when its key could not be checked. */
export const KEY_UNCHECKED_DETAIL = 'the key could not be checked now: retry in a few seconds';

/** A connection's state (uWS's user data). */
export type Conn = {
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

/** A client message: a JSON object with a string `op`. */
export type Message = Record<string, unknown>;

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
