// The WebSocket across processes: two service processes on one database; an event
// committed by one reaches a WebSocket held by the other, and a WebSocket resumed with `after` after
// `kill -9` of the process that held it gets every later event exactly once.
//
// Time: SVC_TIME_SCALE=0.001 makes service time run 1000 times slower than real time from the first
// start, so the open h10 session stays open for the whole test (orders are all placed in it).
import t from 'tap';
import { freshDatabase } from '../helpers/db.js';
import { startChild, type ChildService } from '../helpers/child-service.js';
import { agentOn, ordersOn, slowTimeEnv } from '../helpers/child-agents.js';
import { connectAs, type WsClient } from '../helpers/ws.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(200); // two service processes

const MARKET = 'h10';
const env = slowTimeEnv;
const orders = (svc: ChildService, auth: Record<string, string>, n: number) =>
  ordersOn(svc, auth, MARKET, n);

/** Subscribes the account channel from `after`. */
async function subscribe(svc: ChildService, key: string, after: number): Promise<WsClient> {
  const ws = await connectAs({ url: svc.base }, key);
  ws.send({ op: 'subscribe', channels: ['account'], after });
  const ack = await ws.next();
  if (ack.op !== 'subscribed') throw new Error(`subscribe: ${JSON.stringify(ack)}`);
  return ws;
}

/** The next `n` account events (their ids and order ids). */
async function take(ws: WsClient, n: number): Promise<{ id: number; order: number }[]> {
  const out = [];
  while (out.length < n) {
    const m = await ws.next();
    if (m.channel === 'account') out.push({ id: m.event.id, order: m.event.data.id });
  }
  return out;
}

t.test('an event committed by one process reaches a WebSocket held by the other', async (t) => {
  const url = await freshDatabase(t);
  const a = await startChild(t, 'a', env(url));
  const b = await startChild(t, 'b', env(url));
  const agent = await agentOn(a);
  const ws = await subscribe(b, agent.key, 0);
  t.teardown(() => ws.close());
  const placed = await orders(a, agent.auth, 3);
  t.same(
    await take(ws, 3),
    placed.map((order, i) => ({ id: i + 1, order })),
    'process b sends what process a committed, in order',
  );
});

t.test(
  'a WebSocket resumed after kill -9 of its process gets every later event exactly once',
  async (t) => {
    const url = await freshDatabase(t);
    let a = await startChild(t, 'a', env(url));
    const b = await startChild(t, 'b', env(url));
    const agent = await agentOn(b);
    const first = await subscribe(a, agent.key, 0);
    const before = await orders(b, agent.auth, 2);
    const seen = await take(first, 2);
    t.same(
      seen.map((e) => e.order),
      before,
    );
    t.equal(await a.kill9(), 'SIGKILL');
    t.equal((await first.closed).code, 1006, 'the connection dropped without a close frame');
    // Events committed while the WebSocket's process is dead.
    const during = await orders(b, agent.auth, 3);
    a = await startChild(t, 'a again', env(url));
    const resumed = await subscribe(a, agent.key, seen.at(-1)!.id);
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
