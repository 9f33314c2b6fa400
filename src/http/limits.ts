// What one client can make the front end hold (ARCHITECTURE.md rule 6: every queue has a bound),
// each bound defined once here: the streams a process carries, the bytes a stream may leave unread,
// the streams one key or one address may hold, the unauthenticated work one client address may have
// under way, and the size of an MCP answer.
// Without them, one small request can make the process build and buffer megabytes for a client that
// never reads them, and streams that never read grow the process without bound.

import { HttpError } from './route.js';

/** Streams one process holds at once (each a socket: SSE and WebSockets): more are refused with 503. */
export const MAX_STREAMS = 20_000;

/**
 * Bytes a stream (a WebSocket or Server-Sent Events) may have waiting in the process for a client
 * that reads slower than it is sent to: what would pass it ends the stream instead (the client
 * resumes from its last id, CONTRACT.md "Events"). The kernel's own socket buffers come first; this
 * is what the process adds (uWS's own default for a WebSocket is 64 KB). 2 000 streams that never
 * read hold at most 256 MB.
 */
export const STREAM_BUFFER_BYTES = 128 * 1024;

/**
 * Streams one API key may hold at once, `/api/v1/events/stream` and WebSockets together
 * (CONTRACT.md "Events"): one more is refused 429 (a WebSocket whose key comes in its first message
 * is closed with WS_CLOSE.keyStreams), so that one free key cannot hold a share of MAX_STREAMS.
 */
export const STREAMS_PER_KEY = 10;
/** Public market streams (`/api/v1/markets/{id}/stream`) one client address may hold at once. */
export const MARKET_STREAMS_PER_ADDRESS = 10;
/** Seconds a client over a stream limit is told to wait: a place is free as soon as one of its streams closes. */
export const STREAM_LIMIT_RETRY_AFTER_S = 5;

/** The sentence a refusal over STREAMS_PER_KEY carries (its `detail`, or a WebSocket's close reason). */
export const KEY_STREAMS_DETAIL =
  `this API key holds ${STREAMS_PER_KEY} streams already, the most it may (/api/v1/events/stream and WebSockets together): ` +
  `close one, or retry after ${STREAM_LIMIT_RETRY_AFTER_S} s`;
/** The sentence a refusal over MARKET_STREAMS_PER_ADDRESS carries. */
export const MARKET_STREAMS_DETAIL =
  `your address holds ${MARKET_STREAMS_PER_ADDRESS} market streams already, the most it may: close one, or retry after ${STREAM_LIMIT_RETRY_AFTER_S} s ` +
  '(one WebSocket subscribed to several market channels counts once, against your key)';

/**
 * Unauthenticated work one client address may have under way at once: POST /mcp without a valid
 * key (from its arrival until its answer is fully sent or the client went away) and WebSockets
 * that have not authenticated yet. One more is answered 429 with Retry-After.
 */
export const UNAUTHENTICATED_PER_ADDRESS = 16;
/** Seconds a client over UNAUTHENTICATED_PER_ADDRESS is told to wait (Retry-After). */
export const UNAUTHENTICATED_RETRY_AFTER_S = 2;
/** A WebSocket without the key on its upgrade must authenticate within this, or it is closed (4401). */
export const AUTH_TIMEOUT_MS = 5_000;

/**
 * Bytes of one MCP tool result's JSON text (its structuredContent is the same value again): an API
 * answer larger than this becomes a tool error that says to ask for a smaller page.
 */
export const MCP_RESULT_BYTES = 256 * 1024;
/** Bytes of any one MCP answer (a JSON-RPC message): larger, and it is replaced by a JSON-RPC error. */
export const MCP_ANSWER_BYTES = 1024 * 1024;
/**
 * An MCP host puts the tool list and each answer in its model's context (CONTRACT.md "MCP" →
 * Weight), so both stay small: tools/list
 * answers at most MCP_TOOLS_LIST_BYTES; a list tool's default page is MCP_LIST_DEFAULT items; a
 * result carries its JSON a second time (structuredContent) only while the two fit in
 * MCP_TOOL_ANSWER_BYTES.
 */
export const MCP_TOOLS_LIST_BYTES = 40_000;
export const MCP_LIST_DEFAULT = 50;
export const MCP_TOOL_ANSWER_BYTES = 64_000;

/** The sentence a refusal over UNAUTHENTICATED_PER_ADDRESS carries (its `detail`). */
export const unauthenticatedDetail = (what: string) =>
  `too many unauthenticated requests and connections from your address at once (at most ${UNAUTHENTICATED_PER_ADDRESS}: ` +
  `MCP requests without a valid key and WebSockets before their auth message): ${what} was refused; ` +
  `retry after ${UNAUTHENTICATED_RETRY_AFTER_S} s, or send your API key`;

/**
 * What a per-address count is kept under: the address itself, or for IPv6 its /64 (one host can
 * hold a whole /64, so counting single IPv6 addresses would bound nothing). uWS writes IPv6 as
 * eight groups of hex digits; an IPv4-mapped address counts as its IPv4 address.
 */
export function addressKey(address: string): string {
  const mapped = /^(?:0*:){5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mapped) {
    const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  if (!address.includes(':')) return address;
  return `${address.toLowerCase().split(':').slice(0, 4).join(':')}::/64`;
}

/**
 * Places counted per key (a client address) with a cap: `take` answers what gives the place back
 * (idempotent), or undefined when the key holds `cap` places already. Keys without a place are
 * forgotten, so the map holds only what is under way.
 */
export class Places {
  private readonly held = new Map<string, number>();

  constructor(readonly cap: number) {}

  take(key: string): (() => void) | undefined {
    const n = this.held.get(key) ?? 0;
    if (n >= this.cap) return undefined;
    this.held.set(key, n + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }

  /** Places `key` holds now. */
  count(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /** Keys holding at least one place. */
  size(): number {
    return this.held.size;
  }
}

/** The stream places of one process: per API key (SSE and WebSockets together) and per address (public market streams). */
export class StreamPlaces {
  readonly byKey: Places;
  readonly marketByAddress = new Places(MARKET_STREAMS_PER_ADDRESS);

  constructor(perKey = STREAMS_PER_KEY) {
    this.byKey = new Places(perKey);
  }
}

/** A place of `key` under `places`' cap (what gives it back), or the 429 that names the limit. */
export function placeOr429(places: Places, key: string, detail: string): () => void {
  const release = places.take(key);
  if (!release)
    throw new HttpError(429, detail, { 'retry-after': String(STREAM_LIMIT_RETRY_AFTER_S) });
  return release;
}
