// HTTP/1.1 over a bare socket, for the tests of slow and hostile clients: a connection that can stop
// reading (pause) and send requests back to back, what it received so far, and the parsing of one
// answer (Content-Length) or of a chunked one (a stream) out of those bytes. No wait here: the tests
// poll what came with eventually() (test/helpers/wait.ts).
import net from 'node:net';
import { once } from 'node:events';

type T = { teardown: (fn: () => unknown) => void };

export type RawConnection = {
  socket: net.Socket;
  /** Bytes received so far. */
  received: () => number;
  bytes: () => Buffer;
  /** Whether the connection has ended (closed by either side, or failed). */
  closed: () => boolean;
  /** Sends a GET (headers lower-case) without waiting for anything. */
  get: (path: string, headers?: Record<string, string>) => void;
};

/** Connects to 127.0.0.1:`port`; destroyed at t's teardown. */
export async function rawConnect(port: number, t: T): Promise<RawConnection> {
  const socket = net.connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  const got: Buffer[] = [];
  let size = 0;
  let closed = false;
  socket.on('data', (d: Buffer) => {
    got.push(d);
    size += d.length;
  });
  // A write after the server closed fails: the test learns it from closed().
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  await once(socket, 'connect');
  return {
    socket,
    received: () => size,
    bytes: () => Buffer.concat(got),
    closed: () => closed,
    get: (path, headers = {}) => {
      const lines = Object.entries({ host: 'x', ...headers })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`GET ${path} HTTP/1.1\r\n${lines}\r\n`);
    },
  };
}

export type RawAnswer = { status: number; headers: Record<string, string>; body: Buffer };

/** The head of the first answer in `bytes` (lower-case header names) and where its body starts; undefined until the head came. */
function headOf(
  bytes: Buffer,
): { status: number; headers: Record<string, string>; at: number } | undefined {
  const cut = bytes.indexOf('\r\n\r\n');
  if (cut < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, cut).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [
      l.slice(0, l.indexOf(':')).toLowerCase(),
      l.slice(l.indexOf(':') + 1).trim(),
    ]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, at: cut + 4 };
}

/** The first answer in `bytes` (with a Content-Length); undefined until all of it came. */
export function answerOf(bytes: Buffer): RawAnswer | undefined {
  const head = headOf(bytes);
  if (!head) return undefined;
  const length = Number(head.headers['content-length']);
  if (bytes.length - head.at < length) return undefined;
  return {
    status: head.status,
    headers: head.headers,
    body: bytes.subarray(head.at, head.at + length),
  };
}

/** The chunks of the first answer's chunked body received so far (as text), and whether its last (empty) chunk came. */
export function chunksOf(bytes: Buffer): { chunks: string[]; ended: boolean } {
  const chunks: string[] = [];
  const head = headOf(bytes);
  if (!head) return { chunks, ended: false };
  let at = head.at;
  for (;;) {
    const eol = bytes.indexOf('\r\n', at);
    if (eol < 0) return { chunks, ended: false };
    const n = parseInt(bytes.subarray(at, eol).toString('latin1'), 16);
    if (n === 0) return { chunks, ended: true };
    // The CRLF after a chunk's data comes with the next chunk (uWS writes it first).
    if (bytes.length < eol + 2 + n) return { chunks, ended: false };
    chunks.push(bytes.subarray(eol + 2, eol + 2 + n).toString('utf8'));
    at = eol + 2 + n + 2;
  }
}
