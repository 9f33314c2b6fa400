// A WebSocket client for the tests (the `ws` package): connects to the service's /api/v1/ws,
// queues the JSON messages it receives in order, and says how the connection ended.
// No wait here has a deadline (test/unit/no-wall-clock.test.ts): a wait for a message ends when
// the message comes or when the connection ends (closed, reset, errored), never otherwise; given the
// test that opened it, the connection is cut at that test's end, so a subtest that failed (or was
// timed out by tap) leaves no connection behind and no wait of its own pending.
import WebSocket from 'ws';
import type { TestService } from './service.js';

type T = { teardown: (fn: () => unknown) => void };

export type WsClose = { code: number; reason: string };

export type WsClient = {
  socket: WebSocket;
  /** The next message (waits for it); rejects when the connection ended first, or ends before one comes. */
  next: () => Promise<any>;
  /** Messages received and not yet taken. */
  queued: () => number;
  /** Sends an object as JSON, or a string / bytes as they are (`binary` for a binary frame). */
  send: (m: unknown, opts?: { binary?: boolean }) => void;
  /** Resolves when the connection has ended, with the close code and reason (1006 when it was cut or failed). */
  closed: Promise<WsClose>;
  /** Whether it has ended. */
  isClosed: () => boolean;
  /** Starts the closing handshake. */
  close: () => void;
};

export const wsUrl = (svc: { url: string }) => `${svc.url.replace(/^http/, 'ws')}/api/v1/ws`;

/**
 * Opens a connection; rejects with `status` (and `body`, `headers`) set when the upgrade is refused (401, 429, 503), and with the
 * error when the connection fails before it opens. With `t`, the connection is cut (terminated:
 * no closing handshake to wait for) at t's teardown.
 */
export function connectWs(
  svc: { url: string },
  headers: Record<string, string> = {},
  t?: T,
): Promise<WsClient> {
  const socket = new WebSocket(wsUrl(svc), { headers, perMessageDeflate: false });
  t?.teardown(() => socket.terminate());
  const queue: any[] = [];
  const waiters: { resolve: (m: any) => void; reject: (e: Error) => void }[] = [];
  let ended: WsClose | undefined;
  let failure: Error | undefined;
  const endedError = (e: WsClose) =>
    Object.assign(
      new Error(`closed ${e.code} ${e.reason}${failure ? ` (${failure.message})` : ''}`),
      e,
    );
  // An error after the open (a reset, a bad frame from the server) is followed by 'close', which
  // ends the waits; it is kept for their message. Listened to for good: an 'error' event without a
  // listener would throw out of the test process.
  socket.on('error', (err) => (failure ??= err));
  const closed = new Promise<WsClose>((resolve) => {
    socket.on('close', (code, reason) => {
      ended = { code, reason: reason.toString() };
      for (const w of waiters.splice(0)) w.reject(endedError(ended));
      resolve(ended);
    });
  });
  socket.on('message', (data, isBinary) => {
    const text = isBinary ? `<binary ${(data as Buffer).length}>` : data.toString();
    let m: any;
    try {
      m = JSON.parse(text);
    } catch {
      m = { unparsed: text };
    }
    const w = waiters.shift();
    if (w) w.resolve(m);
    else queue.push(m);
  });
  return new Promise((resolve, reject) => {
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => {
        reject(
          Object.assign(new Error(`upgrade refused: ${res.statusCode} ${body}`), {
            status: res.statusCode,
            body,
            headers: res.headers,
          }),
        );
        socket.terminate();
      });
      res.on('error', (err) => {
        reject(
          Object.assign(
            new Error(`upgrade refused: ${res.statusCode} (its body failed: ${err.message})`),
            { status: res.statusCode, body },
          ),
        );
        socket.terminate();
      });
    });
    socket.once('error', (err) => reject(err));
    // Closed before it opened (cut at a teardown, or refused without an answer): nothing to wait for.
    void closed.then((e) => reject(failure ?? endedError(e)));
    socket.once('open', () =>
      resolve({
        socket,
        next: () => {
          if (queue.length) return Promise.resolve(queue.shift());
          if (ended) return Promise.reject(endedError(ended));
          return new Promise((res, rej) => waiters.push({ resolve: res, reject: rej }));
        },
        queued: () => queue.length,
        send: (m, opts = {}) =>
          socket.send(typeof m === 'string' || Buffer.isBuffer(m) ? m : JSON.stringify(m), {
            binary: !!opts.binary,
          }),
        closed,
        isClosed: () => ended !== undefined,
        close: () => socket.close(),
      }),
    );
  });
}

/** Connects with the agent's key in Authorization and takes the `authenticated` message (cut at t's teardown, given t). */
export async function connectAs(
  svc: TestService | { url: string },
  key: string,
  t?: T,
): Promise<WsClient> {
  const c = await connectWs(svc, { authorization: `Bearer ${key}` }, t);
  const hello = await c.next();
  if (hello.op !== 'authenticated')
    throw new Error(`expected authenticated, got ${JSON.stringify(hello)}`);
  return c;
}
