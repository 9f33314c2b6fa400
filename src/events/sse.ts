// Server-Sent Events as the event routes write them (the WHATWG event-stream format): one message
// per event (`id:`, `event:`, `data:` on one line: JSON has no raw newline), comments for keep-alives
// and for why a stream ends. The server bounds what a stream leaves unread (src/http/server.ts
// openStream): a chunk it refuses was not sent.
import type { Reply, ReplyStream } from '../http/route.js';

export const EVENT_STREAM = 'text/event-stream; charset=utf-8';

/** Reconnection delay a client is told first (ms). */
const RETRY_MS = 2000;

/**
 * A message whose data is JSON text already (an account's event as the hub hands it). JSON text may
 * hold line breaks as whitespace, which would end the field: each line is its own `data:` (a client
 * joins them with a newline, still the same JSON).
 */
export const sseText = (id: number | string, event: string, json: string) =>
  `id: ${id}\nevent: ${event}\ndata: ${/[\r\n]/.test(json) ? json.replace(/\r\n|\r|\n/g, '\ndata: ') : json}\n\n`;
export const sseMessage = (id: number | string, event: string, data: unknown) =>
  sseText(id, event, JSON.stringify(data));
/** A comment line: ignored by clients, keeps proxies from timing the stream out. */
export const sseComment = (text: string) => `: ${text.replace(/\n/g, ' ')}\n\n`;

/** A comment that says nothing: what the server sends to flush a stream once its client reads again. */
const FILLER = ':\n\n';

/** Why a stream that fell behind ends (its last words: the client resumes from its last id). */
export const BEHIND = sseComment(
  'closing: this stream fell too far behind; reconnect with Last-Event-ID to resume',
);

/** The first chunk of a stream: the reconnection delay. */
export const SSE_FIRST = `retry: ${RETRY_MS}\n\n`;

/** The 200 of a stream: its head, never cached or buffered by a proxy. */
export const sseReply = (open: ReplyStream['open']): Reply => ({
  contentType: EVENT_STREAM,
  headers: { 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
  stream: { open, filler: FILLER },
});
