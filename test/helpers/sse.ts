// A Server-Sent Events client for the tests: reads a streamed answer's messages (id, event, data)
// and comments in order, as EventSource would, and closes the connection when told (a drop).
// No wait here has a deadline (test/unit/no-wall-clock.test.ts): a wait for a message ends when
// the message comes or when the stream ends (the server ended it, the connection failed, the test
// closed it), never otherwise; given the test that opened it, the stream is closed at that test's
// end, so a subtest that failed (or was timed out by tap) leaves no stream behind.
import type { TestService } from './service.js';

type T = { teardown: (fn: () => unknown) => void };

export type SseMessage = { id?: string; event?: string; data?: string; comment?: string };

export type SseStream = {
  status: number;
  headers: Headers;
  /** The next message or comment (waits for it); rejects once the stream has ended or failed. */
  next: () => Promise<SseMessage>;
  /** The next message that is not a comment. */
  nextEvent: () => Promise<SseMessage & { json: any }>;
  /** Drops the connection (a wait under way rejects). */
  close: () => void;
};

/** Opens `path` on a test service, or on a service at base URL `target` (a child process); closed at t's teardown, given t. */
export async function openSse(
  target: TestService | string,
  path: string,
  headers: Record<string, string> = {},
  t?: T,
): Promise<SseStream> {
  const abort = new AbortController();
  t?.teardown(() => abort.abort());
  const init = { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal };
  const res =
    typeof target === 'string'
      ? await fetch(`${target}${path}`, init)
      : await target.get(path, init);
  if (!res.body) throw new Error(`the stream ${path} answered ${res.status} without a body`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queue: SseMessage[] = [];
  // Once the stream has ended or failed, every later wait rejects at once with the same reason.
  let ended: Error | undefined;
  const read = async () => {
    try {
      return await reader.read();
    } catch (err) {
      throw new Error(
        `the stream ${path} (${res.status}) failed: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  };
  const pull = async (): Promise<void> => {
    if (ended) throw ended;
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await read();
      if (chunk.done)
        throw new Error(
          `the stream ${path} (${res.status}) ended${buffer ? `; unread: ${JSON.stringify(buffer.slice(0, 200))}` : ''}`,
        );
    } catch (err) {
      throw (ended ??= err as Error);
    }
    buffer += decoder.decode(chunk.value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const m: SseMessage = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) m.comment = line.slice(1).trim();
        else {
          const i = line.indexOf(':');
          const [k, v] = [line.slice(0, i), line.slice(i + 1).replace(/^ /, '')];
          // Several data lines are one value, joined with a newline (as EventSource does).
          if (k === 'data') m.data = m.data === undefined ? v : `${m.data}\n${v}`;
          else if (k === 'id' || k === 'event') m[k] = v;
        }
      }
      queue.push(m);
    }
  };
  const next = async () => {
    while (!queue.length) await pull();
    return queue.shift()!;
  };
  return {
    status: res.status,
    headers: res.headers,
    next,
    nextEvent: async () => {
      for (;;) {
        const m = await next();
        if (m.data !== undefined) return { ...m, json: JSON.parse(m.data) };
      }
    },
    close: () => abort.abort(),
  };
}
