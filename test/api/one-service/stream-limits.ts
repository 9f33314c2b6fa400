// Streams one client may hold (CONTRACT.md "Events": one key cannot take a share of the process's
// places), on a real service over HTTP and WebSockets:
// - an API key holds at most STREAMS_PER_KEY streams, /events/stream and WebSockets together; one
//   more answers 429 with Retry-After and a detail naming the limit (a WebSocket: before the
//   upgrade, or closed with 4429 when its key comes in the first message); another key is not
//   affected; a JSON answer of the stream route (no Accept) holds no place; closing a stream frees
//   its place;
// - the public market stream: at most MARKET_STREAMS_PER_ADDRESS per client address (another
//   loopback address is another client).
import t from 'tap';
import { Agent } from 'undici';
import { sharedWebService } from '../../helpers/web.js';
import { registerAgent, type TestAgent } from '../../helpers/agents.js';
import { openSse, type SseStream } from '../../helpers/sse.js';
import { connectAs, connectWs } from '../../helpers/ws.js';
import { within } from '../../helpers/wait.js';
import { keyIdOf } from '../../../src/auth/api-keys.js';
import {
  MARKET_STREAMS_PER_ADDRESS,
  STREAMS_PER_KEY,
  STREAM_LIMIT_RETRY_AFTER_S,
} from '../../../src/http/limits.js';

const svc = await sharedWebService();
const STREAM = '/api/v1/events/stream';
const auth = (a: TestAgent) => ({ authorization: `Bearer ${a.key}` });
/** A refused stream request: its status, Retry-After and detail (the body read whole). */
async function refused(path: string, headers: Record<string, string>, dispatcher?: Agent) {
  const res = await fetch(`${svc.url}${path}`, {
    headers: { accept: 'text/event-stream', ...headers },
    dispatcher,
  } as RequestInit);
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    detail:
      res.status === 200
        ? (await res.body?.cancel(), '')
        : String(((await res.json()) as { detail: unknown }).detail),
  };
}
/** The places the key holds in the service's own count (what the refusals are decided on). */
const held = (a: TestAgent) => svc.services.streams.byKey.count(keyIdOf(a.key));

t.test(
  'a key holds at most 10 streams, SSE and WebSockets together; one more is refused, saying so; closing one frees its place',
  async (t) => {
    const a = await registerAgent(svc);
    const b = await registerAgent(svc);
    t.equal(STREAMS_PER_KEY, 10, 'CONTRACT.md pins 10');
    const sse: SseStream[] = [];
    for (let i = 0; i < 6; i++) {
      const s = await openSse(svc, STREAM, auth(a), t);
      t.equal(s.status, 200, `stream ${i + 1} opens`);
      sse.push(s);
    }
    const ws = [];
    for (let i = 0; i < 3; i++) ws.push(await connectAs(svc, a.key, t));
    // The tenth, with the key in the first message.
    const tenth = await connectWs(svc, {}, t);
    tenth.send({ op: 'auth', key: a.key });
    t.equal(
      (await tenth.next()).op,
      'authenticated',
      'the tenth (auth in its first message) is taken',
    );
    t.equal(held(a), 10, 'the service counts 10 for the key');

    // The eleventh, each way.
    const over = await refused(STREAM, auth(a));
    t.equal(over.status, 429, 'an 11th event stream answers 429');
    t.equal(over.retryAfter, String(STREAM_LIMIT_RETRY_AFTER_S), 'with Retry-After');
    t.match(
      over.detail,
      /holds 10 streams already, the most it may \(\/api\/v1\/events\/stream and WebSockets together\)/,
      'the detail names the limit',
    );
    const upgrade = await connectWs(svc, auth(a)).then(
      () => undefined,
      (err: { status?: number; body?: string; headers?: Record<string, string> }) => err,
    );
    t.equal(
      upgrade?.status,
      429,
      'a WebSocket with the key on its upgrade is refused before the upgrade',
    );
    t.equal(
      upgrade?.headers?.['retry-after'],
      String(STREAM_LIMIT_RETRY_AFTER_S),
      'with Retry-After',
    );
    t.match(String(upgrade?.body), /holds 10 streams already/);
    const late = await connectWs(svc, {}, t);
    late.send({ op: 'auth', key: a.key });
    const closed = await late.closed;
    t.equal(
      closed.code,
      4429,
      'a WebSocket whose first message brings the key is closed with 4429',
    );
    t.match(closed.reason, /holds 10 streams already/, 'its reason names the limit');
    t.equal(held(a), 10, 'the refusals took no place');

    // Not a stream: the route's JSON answer holds no place.
    const asJson = await svc.get(STREAM, { headers: auth(a) });
    t.equal(
      asJson.status,
      200,
      'without Accept: text/event-stream the route answers JSON as before',
    );
    t.ok(Array.isArray(((await asJson.json()) as { events: unknown[] }).events));

    // Another key is not affected.
    const other = await openSse(svc, STREAM, auth(b), t);
    t.equal(other.status, 200, "another key's stream opens");
    other.close();

    // Closing an SSE stream, then a WebSocket, frees their places.
    sse[0].close();
    await within(100, () => held(a) === 9, 'the closed stream to give its place back');
    const again = await openSse(svc, STREAM, auth(a), t);
    t.equal(again.status, 200, 'a stream opens in the freed place');
    ws[0].close();
    await ws[0].closed;
    await within(100, () => held(a) === 9, 'the closed WebSocket to give its place back');
    t.ok(await connectAs(svc, a.key, t), 'a WebSocket opens in the freed place');
    t.equal((await refused(STREAM, auth(a))).status, 429, 'full again');

    for (const s of [...sse, again]) s.close();
    for (const w of [...ws, tenth]) w.close();
    await within(100, () => held(a) === 1, 'every closed stream to give its place back');
  },
);

t.test(
  'the public market stream: at most 10 per client address; another address is another client',
  async (t) => {
    const here = new Agent({ keepAliveTimeout: 1000, localAddress: '127.0.0.1' });
    const there = new Agent({ keepAliveTimeout: 1000, localAddress: '127.0.0.2' });
    t.teardown(() => Promise.all([here.destroy(), there.destroy()]));
    const path = '/api/v1/markets/m15/stream';
    const open: AbortController[] = [];
    t.teardown(() => open.forEach((c) => c.abort()));
    for (let i = 0; i < MARKET_STREAMS_PER_ADDRESS; i++) {
      const ctl = new AbortController();
      open.push(ctl);
      const res = await fetch(`${svc.url}${path}`, {
        headers: { accept: 'text/event-stream' },
        signal: ctl.signal,
        dispatcher: here,
      } as RequestInit);
      t.equal(res.status, 200, `market stream ${i + 1} opens`);
    }
    const over = await refused(path, {}, here);
    t.equal(over.status, 429, 'the 11th from one address answers 429');
    t.equal(over.retryAfter, String(STREAM_LIMIT_RETRY_AFTER_S));
    t.match(
      over.detail,
      /your address holds 10 market streams already/,
      'the detail names the limit',
    );
    t.equal((await refused(path, {}, there)).status, 200, 'another address opens one');
    const json = await fetch(`${svc.url}${path}`, { dispatcher: here } as RequestInit);
    t.equal(json.status, 200, 'the JSON answer (no Accept) holds no place');
    await json.arrayBuffer();
    open[0].abort();
    await within(
      100,
      () =>
        svc.services.streams.marketByAddress.count('127.0.0.1') === MARKET_STREAMS_PER_ADDRESS - 1,
      'the closed stream to give its place back',
    );
    const ctl = new AbortController();
    open.push(ctl);
    const res = await fetch(`${svc.url}${path}`, {
      headers: { accept: 'text/event-stream' },
      signal: ctl.signal,
      dispatcher: here,
    } as RequestInit);
    t.equal(res.status, 200, 'a stream opens in the freed place');
  },
);
