// What one client can make the front end hold (ARCHITECTURE.md rule 6: every queue has a bound),
// each bound defined once here: the streams a process carries, the bytes a stream may leave unread,
// the unauthenticated work one client address may have under way, and the size of an MCP answer.
// Issue 41: one 4.8 KB request had made the process build and buffer 25 MB for a client that never
// read it; 1 000 streams that never read grew the process without bound.

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
