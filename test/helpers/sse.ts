// A Server-Sent Events client for the tests: reads a streamed answer's messages (id, event, data)
// and comments in order, as EventSource would, and closes the connection when told (a drop).
import type { TestService } from './service.js';

export type SseMessage = { id?: string; event?: string; data?: string; comment?: string };

export type SseStream = {
  status: number;
  headers: Headers;
  /** The next message or comment (waits for it). */
  next: () => Promise<SseMessage>;
  /** The next message that is not a comment. */
  nextEvent: () => Promise<SseMessage & { json: any }>;
  /** Drops the connection. */
  close: () => void;
};

/** Opens `path` on a test service, or on a service at base URL `target` (a child process). */
export async function openSse(target: TestService | string, path: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const abort = new AbortController();
  const init = { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal };
  const res = typeof target === 'string' ? await fetch(`${target}${path}`, init) : await target.get(path, init);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const queue: SseMessage[] = [];
  const pull = async (): Promise<void> => {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ${path} ended`);
    buffer += decoder.decode(value, { stream: true });
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
