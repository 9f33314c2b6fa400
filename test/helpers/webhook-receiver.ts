// A webhook receiver for tests: node:http on 127.0.0.1 (so the service needs
// SVC_WEBHOOK_ALLOW_PRIVATE=1) that records every request and answers it with the status the test
// chooses, or holds it open without ever answering ('hang': a dead receiver) until the test ends.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Hit = { path: string; headers: Record<string, string>; body: string };
/** What a receiver answers a request: an HTTP status, or 'hang' (never answer). */
export type Answer = number | 'hang';

export type Receiver = {
  url: string;
  hits: Hit[];
  /** The requests to `path`. */
  at: (path: string) => Hit[];
  /** Requests held open now (answered 'hang'), in all and per path. */
  held: () => number;
  heldAt: (path: string) => number;
  /** The most requests to one path held open at once so far. */
  mostHeldAtOnePath: () => number;
};

/** A receiver answering each request with `answer(hit, hits)` (204 unless told); closed when the test ends. */
export async function receiver(
  t: { teardown: (fn: () => unknown) => void },
  answer: (hit: Hit, hits: Hit[]) => Answer = () => 204,
): Promise<Receiver> {
  const hits: Hit[] = [];
  const holding = new Map<string, number>();
  let most = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = {
        path: req.url ?? '',
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString(),
      };
      hits.push(hit);
      const a = answer(hit, hits);
      if (a === 'hang') {
        const n = (holding.get(hit.path) ?? 0) + 1;
        holding.set(hit.path, n);
        most = Math.max(most, n);
        res.on('close', () => holding.set(hit.path, (holding.get(hit.path) ?? 1) - 1));
        return;
      }
      res.statusCode = a;
      res.end(a >= 400 ? 'no thanks' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    at: (path) => hits.filter((h) => h.path === path),
    held: () => [...holding.values()].reduce((s, n) => s + n, 0),
    heldAt: (path) => holding.get(path) ?? 0,
    mostHeldAtOnePath: () => most,
  };
}

/** The Standard Webhooks headers of a hit, as Webhook.verify takes them. */
export const swHeaders = (h: Hit) => ({
  'webhook-id': h.headers['webhook-id'],
  'webhook-timestamp': h.headers['webhook-timestamp'],
  'webhook-signature': h.headers['webhook-signature'],
});
