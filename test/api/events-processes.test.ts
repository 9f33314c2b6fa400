// The event log across processes: two service processes on one database,
// where an event committed by one reaches a stream held by the other (PostgreSQL LISTEN/NOTIFY), and
// a stream resumed after `kill -9` of the process that held it gets every later event exactly once.
//
// Time: SVC_TIME_SCALE=0.001 makes service time run 1000 times slower than real time from the first
// start, so the open h10 session stays open for the whole test (orders are all placed in it).
import t from 'tap';
import { freshDatabase } from '../helpers/db.js';
import { startChild, type ChildService } from '../helpers/child-service.js';
import { agentOn, ordersOn, slowTimeEnv } from '../helpers/child-agents.js';
import { openSse, type SseStream } from '../helpers/sse.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(190); // two service processes

const MARKET = 'h10';
const env = slowTimeEnv;
const orders = (svc: ChildService, auth: Record<string, string>, n: number) =>
  ordersOn(svc, auth, MARKET, n);

/** The next `n` events of a stream (their ids and order ids). */
async function take(s: SseStream, n: number): Promise<{ id: number; order: number }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const e = await s.nextEvent();
    out.push({ id: Number(e.id), order: e.json.data.id });
  }
  return out;
}

t.test('an event committed by one process reaches a stream held by the other', async (t) => {
  const url = await freshDatabase(t);
  const a = await startChild(t, 'a', env(url));
  const b = await startChild(t, 'b', env(url));
  const agent = await agentOn(a);
  const stream = await openSse(b.base, '/api/v1/events/stream', agent.auth);
  t.teardown(() => stream.close());
  t.equal(stream.status, 200);
  const placed = await orders(a, agent.auth, 3);
  t.same(
    await take(stream, 3),
    placed.map((order, i) => ({ id: i + 1, order })),
    'process b streams what process a committed, in order',
  );
  const more = await orders(b, agent.auth, 1);
  t.same(await take(stream, 1), [{ id: 4, order: more[0] }], 'and what it commits itself');
});

t.test(
  'a stream resumed after kill -9 of its process gets every later event exactly once',
  async (t) => {
    const url = await freshDatabase(t);
    let a = await startChild(t, 'a', env(url));
    const b = await startChild(t, 'b', env(url));
    const agent = await agentOn(b);
    const first = await openSse(a.base, '/api/v1/events/stream', agent.auth);
    t.teardown(() => first.close());
    const before = await orders(b, agent.auth, 2);
    const seen = await take(first, 2);
    t.same(
      seen.map((e) => e.order),
      before,
    );
    t.equal(await a.kill9(), 'SIGKILL');
    // Events committed while the stream's process is dead.
    const during = await orders(b, agent.auth, 3);
    a = await startChild(t, 'a again', env(url));
    const resumed = await openSse(a.base, '/api/v1/events/stream', {
      ...agent.auth,
      'last-event-id': String(seen.at(-1)!.id),
    });
    t.teardown(() => resumed.close());
    seen.push(...(await take(resumed, 3)));
    const after = await orders(b, agent.auth, 1);
    seen.push(...(await take(resumed, 1)));
    t.same(
      seen.map((e) => e.id),
      [1, 2, 3, 4, 5, 6],
      'every id once, in order',
    );
    t.same(
      seen.map((e) => e.order),
      [...before, ...during, ...after],
      "every order's event once",
    );
  },
);
