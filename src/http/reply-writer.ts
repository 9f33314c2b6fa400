// How an answer reaches the socket (src/http/server.ts decides which answer): a whole body at the
// pace the client reads it, or a stream bounded by what its client leaves unread; and the
// exchange's end, which gives back what its handler held (Context.hold).
import { STATUS_CODES } from 'node:http';
import type { Reply } from './route.js';
import type { HttpResponse } from './uws.js';
import { STREAM_BUFFER_BYTES } from './limits.js';

/**
 * `started`: the handler runs (or ran), so it will call finish(); before that an abort must.
 * `done`: finish() ran (the answer is being sent, or there was nobody to send it to).
 * `onAbort`: a streamed answer's clean-up when the client goes away.
 * `holds`: what the handler keeps until the exchange is over (Context.hold), run once by settle().
 * `sending`: a body is being sent at the pace the client reads it (sendBody), not all out yet.
 */
export type Exchange = {
  aborted: boolean;
  done: boolean;
  started: boolean;
  onAbort?: () => void;
  holds?: (() => void)[];
  settled?: boolean;
  sending?: boolean;
};

/** Ends what the exchange's handler held (Context.hold): once, when its answer is all sent or its client gone. */
export function settle(x: Exchange): void {
  if (x.settled) return;
  x.settled = true;
  const holds = x.holds;
  x.holds = undefined;
  if (holds) for (const release of holds) release();
}

/** Context.hold for an exchange: kept until settle(), or given back at once when the exchange is over already. */
export const holdFor = (x: Exchange) => (release: () => void) => {
  if (x.settled) release();
  else (x.holds ??= []).push(release);
};

/** The bytes of a chunk of a chunked answer besides its data: the size in hex and two CRLFs. */
const CHUNK_FRAMING = 12;
/** Chunks up to this size go through uWS's cork buffer (16 KB) whole (see openStream). */
const CORKED_CHUNK_BYTES = 8 * 1024;

const statusLines = new Map<number, string>();
export const statusLine = (s: number) => {
  let line = statusLines.get(s);
  if (!line) statusLines.set(s, (line = `${s} ${STATUS_CODES[s] ?? 'Unknown'}`));
  return line;
};

/**
 * A whole body at the pace the client reads it: uWS's tryEnd sends what the socket takes now and
 * keeps none of the rest, which waits here as the reply's own bytes (a shared snapshot is not
 * copied) and goes out from onWritable as the client reads. res.end would instead copy all of it
 * into the socket's buffer and count the answer as sent, so a client that never read could ask
 * again and again on one socket. Until the body is all out the exchange stays open, and uWS
 * closes a connection that sends another request meanwhile: a socket holds one answer at most.
 */
export function sendBody(res: HttpResponse, x: Exchange, payload: string | Uint8Array): void {
  const total = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
  const base = res.getWriteOffset();
  if (res.tryEnd(payload, total)[1]) return settle(x);
  // The offsets are in bytes: a text is encoded once, the way uWS encodes it (UTF-8).
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  x.sending = true;
  res.onWritable((offset) => {
    let ok = false;
    res.cork(() => {
      const [sent, done] = res.tryEnd(body.subarray(offset - base), total);
      ok = sent;
      if (done) {
        x.sending = false;
        settle(x);
      }
    });
    return ok;
  });
}

/**
 * A streamed answer (Reply.stream): the head now, then the stream's chunks until either side ends.
 * A chunk the socket cannot take now waits in uWS's buffer for this socket; `held` is at most what
 * that buffer holds (a write that returns true found it empty). A chunk is refused while something
 * waits and it would take `held` past STREAM_BUFFER_BYTES (`write` answers false; a single chunk is
 * never refused on its size alone, or a large one could never be sent). uWS hands a socket that
 * drained to onWritable instead of flushing it itself: the stream's `filler` (a chunk that says
 * nothing) flushes what waits, and once nothing does, a stream refused a chunk hears it has room.
 */
export function openStream(
  res: HttpResponse,
  x: Exchange,
  reply: Reply,
  stream: NonNullable<Reply['stream']>,
): void {
  let ended = false;
  let held = 0;
  let refused = false;
  let room: (() => void) | undefined;
  res.cork(() => {
    res.writeStatus(statusLine(200));
    res.writeHeader('content-type', reply.contentType ?? 'application/octet-stream');
    res.writeHeader('x-content-type-options', 'nosniff');
    if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]);
  });
  /** Writes a chunk; true when uWS held nothing before it (it holds at most this chunk now). */
  const put = (chunk: string | Uint8Array, size: number): boolean => {
    let empty = false;
    // Corked only when the chunk fits uWS's cork buffer: a larger one is written through it, and
    // this uWS (before v20.77) drops such a chunk's data when the corked part fails to flush.
    if (size <= CORKED_CHUNK_BYTES) res.cork(() => (empty = res.write(chunk)));
    else empty = res.write(chunk);
    held = empty ? size : held + size;
    return empty;
  };
  const write = (chunk: string | Uint8Array): boolean => {
    if (ended || x.aborted) return false;
    const size =
      (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength) + CHUNK_FRAMING;
    if (held > 0 && held + size > STREAM_BUFFER_BYTES) {
      refused = true;
      return false;
    }
    put(chunk, size);
    return true;
  };
  const end = (last?: string) => {
    if (ended || x.aborted) return;
    ended = true;
    x.onAbort = undefined;
    res.cork(() => {
      // The stream's last words (why it ends) go out whatever waits: one short chunk.
      if (last) res.write(last);
      res.end();
    });
    settle(x);
  };
  res.onWritable(() => {
    if (ended || x.aborted || held === 0 || !stream.filler) return true;
    if (put(stream.filler, stream.filler.length + CHUNK_FRAMING) && refused) {
      refused = false;
      room?.();
    }
    return true;
  });
  const stop = stream.open(write, end, (listener) => (room = listener));
  x.onAbort = () => {
    ended = true;
    stop();
  };
}
