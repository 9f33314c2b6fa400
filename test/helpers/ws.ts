// A WebSocket client for the tests (the `ws` package): connects to the service's /api/v1/ws,
// queues the JSON messages it receives in order, and says how the connection ended.
import WebSocket from 'ws';
import type { TestService } from './service.js';

export type WsClose = { code: number; reason: string };

export type WsClient = {
  socket: WebSocket;
  /** The next message (waits for it); rejects when the connection ended first. */
  next: () => Promise<any>;
  /** Messages received and not yet taken. */
  queued: () => number;
  /** Sends an object as JSON, or a string / bytes as they are (`binary` for a binary frame). */
  send: (m: unknown, opts?: { binary?: boolean }) => void;
  /** Resolves when the connection has ended, with the close code and reason. */
  closed: Promise<WsClose>;
  /** Whether it has ended. */
  isClosed: () => boolean;
  close: () => void;
};

export const wsUrl = (svc: { url: string }) => `${svc.url.replace(/^http/, 'ws')}/api/v1/ws`;

/** Opens a connection; rejects with `status` set when the upgrade is refused (401, 503). */
export function connectWs(svc: { url: string }, headers: Record<string, string> = {}): Promise<WsClient> {
  const socket = new WebSocket(wsUrl(svc), { headers, perMessageDeflate: false });
  const queue: any[] = [];
  const waiters: { resolve: (m: any) => void; reject: (e: Error) => void }[] = [];
  let ended: WsClose | undefined;
  const closed = new Promise<WsClose>((resolve) => {
    socket.on('close', (code, reason) => {
      ended = { code, reason: reason.toString() };
      for (const w of waiters.splice(0)) w.reject(Object.assign(new Error(`closed ${code} ${ended.reason}`), ended));
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
        reject(Object.assign(new Error(`upgrade refused: ${res.statusCode} ${body}`), { status: res.statusCode, body }));
        socket.terminate();
      });
    });
    socket.once('error', (err) => reject(err));
    socket.once('open', () =>
      resolve({
        socket,
        next: () => {
          if (queue.length) return Promise.resolve(queue.shift());
          if (ended) return Promise.reject(Object.assign(new Error(`closed ${ended.code} ${ended.reason}`), ended));
          return new Promise((res, rej) => waiters.push({ resolve: res, reject: rej }));
        },
        queued: () => queue.length,
        send: (m, opts = {}) => socket.send(typeof m === 'string' || Buffer.isBuffer(m) ? m : JSON.stringify(m), { binary: !!opts.binary }),
        closed,
        isClosed: () => ended !== undefined,
        close: () => socket.close(),
      }),
    );
  });
}

/** Connects with the agent's key in Authorization and takes the `authenticated` message. */
export async function connectAs(svc: TestService | { url: string }, key: string): Promise<WsClient> {
  const c = await connectWs(svc, { authorization: `Bearer ${key}` });
  const hello = await c.next();
  if (hello.op !== 'authenticated') throw new Error(`expected authenticated, got ${JSON.stringify(hello)}`);
  return c;
}
