// Hostile and slow clients, on a real service and database over HTTP (the service runs in
// this process, so its resident memory is measured here, after a full collection):
// - unauthenticated work per client address (POST /mcp without a valid key, WebSockets before their
//   auth message) is capped: the one past the cap answers 429 with Retry-After and a detail naming
//   the limit, and a place comes back when its answer is sent or its connection authenticates;
// - 100 sockets that never read, each asking again and again for the largest default answers, add
//   less than 300 MB: the service answers at the pace the client reads and closes a connection that
//   asks again with an answer unread, instead of buffering every answer whole;
// - 100 Server-Sent Events streams that never read, on a log of large events, take no more than
//   their buffer bound and are ended with a comment saying why; a resume with Last-Event-ID (a
//   catch-up far larger than any buffer, read as it comes) gets every later event once.
import t from 'tap';
import v8 from 'node:v8';
import vm from 'node:vm';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent } from '../helpers/agents.js';
import { connectAs, connectWs, type WsClient } from '../helpers/ws.js';
import { openSse } from '../helpers/sse.js';
import { eventually } from '../helpers/wait.js';
import { chunksOf, rawConnect, type RawConnection } from '../helpers/raw-http.js';
import { appendEvents } from '../../actors/events/log.js';
import {
  UNAUTHENTICATED_PER_ADDRESS,
  UNAUTHENTICATED_RETRY_AFTER_S,
} from '../../src/http/limits.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(150); // slow clients and large answers, read at their pace

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
/** This process's resident memory after a full collection, in MB (the service runs here). */
const residentMb = () => {
  gc();
  return process.memoryUsage().rss / 2 ** 20;
};

// WebSockets wait for their auth message as long as the test needs (the cap, not the time-out, is tested).
// 100 slow readers of one account's log: one key may hold STREAMS_PER_KEY (10) streams, so this service lets it hold 100 (stream-limits.test.ts tests the 10).
const c = await startClockedService(t, {}, { wsAuthTimeoutMs: 3_600_000, streamsPerKey: 100 });
const svc = c.svc;
const rpcHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};
const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

/** The service's log lines from now on, counted as they come (a scan of new lines only). */
function logCounter(match: (line: Record<string, unknown>) => boolean) {
  let seen = svc.logs.length;
  let n = 0;
  return () => {
    for (; seen < svc.logs.length; seen++) if (match(svc.logs[seen])) n++;
    return n;
  };
}

t.test(
  'unauthenticated work per client address: past the cap, 429 with Retry-After and the limit named',
  async (t) => {
    const agent = await registerAgent(svc);
    const places = svc.services.unauthenticated;
    const mcp = (headers: Record<string, string> = {}) =>
      svc.get('/mcp', { method: 'POST', headers: { ...rpcHeaders, ...headers }, body: toolsList });

    // WebSockets that have not sent their auth message each hold a place of 127.0.0.1.
    const waiting: WsClient[] = [];
    for (let i = 0; i < UNAUTHENTICATED_PER_ADDRESS; i++) waiting.push(await connectWs(svc, {}, t));
    t.equal(places.count('127.0.0.1'), UNAUTHENTICATED_PER_ADDRESS, 'each holds a place');
    const refused = await connectWs(svc, {}, t).then(
      () => undefined,
      (err: { status?: number; body?: string; headers?: Record<string, string> }) => err,
    );
    t.equal(refused?.status, 429, 'one more WebSocket without a key: refused before the upgrade');
    t.equal(refused?.headers?.['retry-after'], String(UNAUTHENTICATED_RETRY_AFTER_S));
    t.match(
      JSON.parse(refused?.body ?? '{}').detail,
      `at most ${UNAUTHENTICATED_PER_ADDRESS}: MCP requests without a valid key and WebSockets before their auth message`,
    );

    const noKey = await mcp();
    t.equal(noKey.status, 429, 'POST /mcp without a key: the same cap');
    t.equal(noKey.headers.get('retry-after'), String(UNAUTHENTICATED_RETRY_AFTER_S));
    t.match(
      (await noKey.json()).detail,
      /this MCP request was refused; retry after \d+ s, or send your API key/,
    );
    const unknownKey = await mcp({ authorization: `Bearer ${'A'.repeat(80)}` });
    t.equal(unknownKey.status, 429, 'a key the service does not know counts as none');
    await unknownKey.arrayBuffer();
    const keyed = await mcp({ authorization: `Bearer ${agent.key}` });
    t.equal(keyed.status, 200, 'with a valid key: not counted');
    t.ok((await keyed.json()).result.tools.length > 20);
    const withKey = await connectAs(svc, agent.key, t);
    t.equal(
      places.count('127.0.0.1'),
      UNAUTHENTICATED_PER_ADDRESS,
      'a WebSocket with the key on its upgrade takes no place',
    );
    withKey.close();

    // One authenticates: its place comes back, and one MCP request without a key fits again.
    waiting[0].send({ op: 'auth', key: agent.key });
    t.equal((await waiting[0].next()).op, 'authenticated');
    t.equal(places.count('127.0.0.1'), UNAUTHENTICATED_PER_ADDRESS - 1, 'its place came back');
    const fits = await mcp();
    t.equal(fits.status, 200);
    t.ok((await fits.json()).result.tools.length > 20);
    await eventually(
      () => places.count('127.0.0.1') === UNAUTHENTICATED_PER_ADDRESS - 1,
      'the answered request to give its place back',
    );

    for (const w of waiting) w.close();
    await eventually(() => places.size() === 0, 'closing the connections to give every place back');
    const after = await mcp();
    t.equal(after.status, 200, 'without a key again, once the connections are gone');
    await after.arrayBuffer();
  },
);

t.test(
  '100 sockets asking again and again for the largest default answers and never reading add < 300 MB',
  async (t) => {
    // The largest answers a client gets without arguments: the OpenAPI document (~250 KB) and the h2 menu (~100 KB).
    const asked = ['/api/openapi.json', '/api/v1/markets/h2/deals'];
    const routes = ['/api/openapi.json', '/api/v1/markets/{market_id}/deals'];
    for (const p of asked) await (await svc.get(p)).arrayBuffer();
    const answered = logCounter((l) => l.msg === 'request' && routes.includes(String(l.route)));
    const cut = logCounter((l) => typeof l.msg === 'string' && l.msg.startsWith('answer cut'));
    const before = residentMb();
    const sockets: RawConnection[] = [];
    for (let i = 0; i < 100; i++) sockets.push(await rawConnect(svc.port, t));
    for (const s of sockets) s.socket.pause();
    // Each socket asks again as soon as its last answer is under way (80 rounds: 14 MB asked per
    // socket). A request is answered, or it finds an answer of its socket unread and the service
    // closes that connection (one `answer cut` each); a closed socket's next requests go nowhere.
    let requests = 0;
    for (let round = 0; round < 80 && cut() < sockets.length; round++) {
      const [a, x] = [answered(), cut()];
      const open = sockets.filter((s) => !s.closed());
      for (const s of open) s.get(asked[round % asked.length]);
      requests += open.length;
      // Sockets the service closed that the client has not noticed yet (it does not read).
      const unnoticed = x - (sockets.length - open.length);
      await eventually(
        () => answered() - a + (cut() - x) >= open.length - unnoticed,
        `round ${round}: each request answered, or its connection closed`,
        1,
      );
    }
    const closed = cut();
    const grown = residentMb() - before;
    t.comment(
      `${requests} requests on 100 sockets; ${closed} closed by the service; resident memory +${grown.toFixed(0)} MB`,
    );
    t.ok(grown < 300, `resident memory grew ${grown.toFixed(0)} MB (< 300)`);
    t.equal(closed, 100, 'each socket was closed once it asked again with an answer unread');
    for (const s of sockets) s.socket.destroy();
  },
);

t.test(
  'SSE streams that never read take no more than their bound, then end saying why; a resume gets every later event once',
  async (t) => {
    const agent = await registerAgent(svc);
    const streams = svc.services.events.size();
    // 200 ledger entries of 48 KB (a long `ref`): 9.6 MB for each stream, more than the kernel's buffers take.
    const ref = 'x'.repeat(48 * 1024);
    const n = 200;
    const entry = (i: number) => ({
      id: i + 1,
      account_id: agent.accountId,
      kind: 'card_charge',
      amount: 1,
      currency: 'USD',
      balance_after: i + 1,
      ref,
      created_at: 0,
    });
    const before = residentMb();
    const sockets: RawConnection[] = [];
    for (let i = 0; i < 100; i++) {
      const s = await rawConnect(svc.port, t);
      s.socket.pause();
      s.get('/api/v1/events/stream?after=0', {
        accept: 'text/event-stream',
        authorization: `Bearer ${agent.key}`,
      });
      sockets.push(s);
    }
    await eventually(() => svc.services.events.size() === streams + 100, 'the 100 streams to open');
    // Appended as changes would be, 10 at a time: each notice hands every stream the new ones.
    for (let i = 0; i < n; i += 10) {
      const batch = Array.from({ length: 10 }, (_, k) => ({
        account_id: agent.accountId,
        type: 'ledger.posted' as const,
        data: entry(i + k),
      }));
      await appendEvents(svc.orm.em.fork(), batch, svc.services.clock.realNow());
    }
    // Each takes what its socket has room for, then waits for its client to read (the figure then
    // also holds the actor workers' heaps after reading the log, which this process cannot collect).
    await eventually(
      () => svc.services.events.waitingCount() === 100,
      'the 100 streams to wait for room',
    );
    t.comment(
      `resident memory +${(residentMb() - before).toFixed(0)} MB with 100 streams waiting for room`,
    );
    // Ended once they stopped reading for long (uWS's own time-out after 10 s without progress, or
    // the hub's at two keep-alives waiting, whichever comes first).
    await eventually(
      () => svc.services.events.size() === streams,
      'the service to end every stream that stopped reading',
    );
    // What is left for clients that never read: at most the bound each until the socket goes, not
    // every event sent until uWS times the socket out.
    const ended = residentMb() - before;
    t.ok(
      ended < 100,
      `resident memory grew ${ended.toFixed(0)} MB with 100 ended streams unread (< 100)`,
    );

    // One of them reads what reached it: events from 1 on, none missing (and, when the hub ended it, why).
    const s = sockets[0];
    s.socket.resume();
    const got = await eventually(() => {
      const r = chunksOf(s.bytes());
      return (r.ended || s.closed()) && r;
    }, 'the end of the stream');
    t.equal(got.chunks[0], 'retry: 2000\n\n');
    const ids = got.chunks
      .filter((m) => m.startsWith('id: '))
      .map((m) => Number(/^id: (\d+)\n/.exec(m)?.[1]));
    t.ok(
      ids.length > 0 && ids.length < n,
      `${ids.length} of ${n} events reached it before the end`,
    );
    t.same(
      ids,
      Array.from({ length: ids.length }, (_, i) => i + 1),
      'in order, none missing',
    );
    if (got.ended)
      t.match(
        got.chunks.at(-1),
        /^: closing: this stream fell too far behind; reconnect with Last-Event-ID to resume/,
        'its last words say why',
      );
    for (const x of sockets) x.socket.destroy();

    // Resumed from the last id it has, reading as events come: every later event, once.
    const last = ids.at(-1)!;
    const again = await openSse(
      svc,
      '/api/v1/events/stream',
      { authorization: `Bearer ${agent.key}`, 'last-event-id': String(last) },
      t,
    );
    const rest: number[] = [];
    while (rest.length < n - last) rest.push(Number((await again.nextEvent()).id));
    t.same(
      rest,
      Array.from({ length: n - last }, (_, i) => last + i + 1),
      'every later event',
    );
    await appendEvents(
      svc.orm.em.fork(),
      [{ account_id: agent.accountId, type: 'ledger.posted', data: { ...entry(n), ref: 'small' } }],
      svc.services.clock.realNow(),
    );
    t.equal(
      Number((await again.nextEvent()).id),
      n + 1,
      'and the next one as it happens: nothing twice',
    );
    again.close();
  },
);
