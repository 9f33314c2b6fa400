// The WebSocket at /api/v1/ws (CONTRACT.md "Events"), on a real service and database with a clock
// the test drives: the key on the upgrade or in a first message; a subscribe with `after` gets what
// was missed, then each event as it happens, exactly once across a dropped connection; a market's
// closes; a resume point older than the log keeps; frames of any kind end only their own connection
// (fast-check), never the process; a consumer that stops reading is closed with its reason and
// resumes from the id the reason names.
import t from 'tap';
import fc from 'fast-check';
import { isUtf8 } from 'node:buffer';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent, send, type Menu } from '../helpers/agents.js';
import { connectAs, connectWs, type WsClient } from '../helpers/ws.js';
import { eventually } from '../helpers/wait.js';
import { openSse } from '../helpers/sse.js';
import { appendEvents, type NewEvent } from '../../actors/events/log.js';
import {
  MAX_FRAME_BYTES,
  MAX_PAYLOAD_BYTES,
  SEND_BUFFER_BYTES,
  WS_CLOSE,
} from '../../src/events/websocket.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(150); // a consumer that stops reading is closed 10-20 s after

const MARKET = 'm15';

// A fixed instant just after an even UTC hour: the m15 session this file closes ends at 12:15, never
// at a boundary of h2 (every 2 hours), whose close would also reach the market channel it watches.
const c = await startClockedService(t, {}, { startMs: Date.UTC(2026, 10, 26, 12) + 50 });
const svc = c.svc;
const menu = async (): Promise<Menu> =>
  (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;

/** The next message that is not an op (an event of a channel). */
async function nextEvent(ws: WsClient): Promise<{ channel: string; event: any }> {
  for (;;) {
    const m = await ws.next();
    if (m.channel) return m;
  }
}

t.test('auth: the key on the upgrade, or a first message; refused without one', async (t) => {
  const agent = await registerAgent(svc);
  const byHeader = await connectWs(svc, { authorization: `Bearer ${agent.key}` }, t);
  t.same(
    await byHeader.next(),
    { op: 'authenticated', agent_id: agent.agentId },
    'Authorization on the upgrade',
  );
  byHeader.close();
  const byToken = await connectWs(svc, { 'x-api-token': agent.key }, t);
  t.equal((await byToken.next()).op, 'authenticated', 'X-API-Token on the upgrade');
  byToken.close();

  const byMessage = await connectWs(svc, {}, t);
  byMessage.send({ op: 'auth', key: agent.key });
  // A subscribe pipelined behind the auth waits for it.
  byMessage.send({ op: 'subscribe', channels: ['account'] });
  t.same(
    await byMessage.next(),
    { op: 'authenticated', agent_id: agent.agentId },
    'a first message {"op":"auth"}',
  );
  t.same(await byMessage.next(), { op: 'subscribed', channels: ['account'], after: 0 });
  byMessage.close();

  const wrong = await connectWs(svc, { authorization: `Bearer ${'A'.repeat(80)}` }, t).catch(
    (e) => e,
  );
  t.equal(wrong.status, 401, 'a wrong key on the upgrade: 401, no WebSocket');
  t.match(JSON.parse(wrong.body).detail, /unknown API key/);

  const none = await connectWs(svc, {}, t);
  none.send({ op: 'subscribe', channels: ['account'] });
  t.match(
    await none.closed,
    { code: WS_CLOSE.unauthorized, reason: /authenticate first/ },
    'a message before auth: closed 4401',
  );

  const badKey = await connectWs(svc, {}, t);
  badKey.send({ op: 'auth', key: 'nope' });
  t.match(
    await badKey.closed,
    { code: WS_CLOSE.unauthorized, reason: /unauthorized: invalid API key/ },
    'a wrong key in the auth message: closed 4401',
  );

  const plain = await svc.get('/api/v1/ws', { headers: { authorization: `Bearer ${agent.key}` } });
  t.equal(plain.status, 426, 'a GET without the upgrade: 426');
  t.equal(plain.headers.get('upgrade'), 'websocket');
  t.equal((await svc.get('/api/v1/ws')).status, 401);
});

t.test(
  'subscribe with after: what was missed, then live events in order, exactly once across a dropped connection',
  async (t) => {
    const agent = await registerAgent(svc);
    const m = await menu();
    const order = async (i: number) =>
      t.equal(
        (
          await agent.post('/api/v1/orders', {
            market: MARKET,
            offer_key: m.deals[i % m.deals.length].key,
            qty: 1,
          })
        ).status,
        201,
      );
    for (let i = 0; i < 3; i++) await order(i);

    const streams = svc.services.events.size();
    const first = await connectAs(svc, agent.key, t);
    t.equal(svc.services.events.size(), streams + 1, "a connection holds one of the hub's places");
    first.send({ op: 'subscribe', channels: ['account', `market:${MARKET}`], after: 1 });
    t.same(await first.next(), {
      op: 'subscribed',
      channels: ['account', `market:${MARKET}`],
      after: 1,
    });
    t.equal(svc.services.events.size(), streams + 1, 'its channels do not take more');
    const seen: number[] = [];
    const take = async (ws: WsClient) => {
      const e = await nextEvent(ws);
      t.equal(e.channel, 'account');
      seen.push(e.event.id);
      return e.event;
    };
    t.same([(await take(first)).id, (await take(first)).id], [2, 3], 'the events after 1');
    await order(3);
    const live = await take(first);
    t.match(
      live,
      { id: 4, type: 'order.created', data: { market: MARKET } },
      'a new event arrives without polling',
    );
    const rest = (await agent.get('/api/v1/events?after=3')).body;
    t.same(live, rest.events[0], 'the event as GET /events serves it');

    await t.test(
      'a subscribe it cannot honour answers an error; the connection stays',
      async (t) => {
        first.send({ op: 'subscribe', channels: ['market:zz'] });
        t.match(await first.next(), {
          op: 'error',
          status: 422,
          detail: /unknown channel "market:zz"/,
        });
        first.send({ op: 'subscribe', channels: ['market:h2'], after: -1 });
        t.match(await first.next(), { op: 'error', status: 422, detail: /after/ });
        first.send({ op: 'subscribe', channels: ['account'], after: 0 });
        t.match(await first.next(), {
          op: 'error',
          status: 409,
          detail: /already subscribed to account/,
        });
        first.send({ op: 'subscribe', channels: ['account'], types: ['order.teleported'] });
        t.match(await first.next(), { op: 'error', status: 422 });
        first.send({ op: 'ping' });
        t.same(await first.next(), { op: 'pong' }, 'still open');
      },
    );

    first.close();
    await first.closed;
    await eventually(
      () => svc.services.events.size() === streams,
      'the dropped connection to leave the hub',
    );

    // Events while no one listens, then a reconnection from the last id it had.
    for (let i = 4; i < 6; i++) await order(i);
    const again = await connectAs(svc, agent.key, t);
    again.send({ op: 'subscribe', channels: ['account'], after: 4 });
    t.equal((await again.next()).op, 'subscribed');
    t.same([(await take(again)).id, (await take(again)).id], [5, 6]);
    await order(6);
    t.equal((await take(again)).id, 7);
    t.same(seen, [2, 3, 4, 5, 6, 7], 'every event exactly once');

    // Unsubscribing stops the channel; subscribing again resumes from the id given.
    again.send({ op: 'unsubscribe', channels: ['account'] });
    t.same(await again.next(), { op: 'unsubscribed', channels: ['account'] });
    await order(7);
    again.send({ op: 'subscribe', channels: ['account'], after: 7, types: ['order.created'] });
    t.equal((await again.next()).op, 'subscribed');
    t.match(await take(again), { id: 8, type: 'order.created' }, 'after 7, of the types asked');
    again.close();
  },
);

t.test('the market channel: session.closed at each close', async (t) => {
  const agent = await registerAgent(svc);
  const ws = await connectAs(svc, agent.key, t);
  ws.send({ op: 'subscribe', channels: [`market:${MARKET}`, 'market:h2'] });
  t.equal((await ws.next()).op, 'subscribed');
  const open = svc.services.supervisor.openTick(MARKET)!;
  const next = await c.closeSession(MARKET);
  const e = await nextEvent(ws);
  t.same(e, {
    channel: `market:${MARKET}`,
    event: {
      type: 'session.closed',
      market: MARKET,
      tick: open,
      next_tick: next,
      tick_closes_at: svc.services.clock.closesAt(next, 900),
    },
  });
  ws.send({ op: 'ping' });
  t.same(await ws.next(), { op: 'pong' }, 'no other market closed');
  ws.close();
});

t.test(
  'frames of any kind end only their own connection, with a reason; the service keeps answering',
  async (t) => {
    const agent = await registerAgent(svc);
    const streams = svc.services.events.size();
    const text = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json(),
      fc.jsonValue().map((v) => JSON.stringify(v)),
      fc.constantFrom(
        '{',
        '[]',
        'null',
        '{"op":1}',
        '{"op":"subscribe"',
        '{"op":"teleport"}',
        '{"op":"auth"}',
        '{"op":"auth","key":null}',
      ),
      fc
        .record(
          {
            op: fc.constantFrom('subscribe', 'unsubscribe', 'ping', 'auth', 'SUBSCRIBE', ''),
            channels: fc.anything(),
            after: fc.anything(),
            types: fc.anything(),
          },
          { requiredKeys: ['op'] },
        )
        .map((v) => JSON.stringify(v)),
      fc
        .record(
          {
            op: fc.constant('subscribe'),
            channels: fc.array(
              fc.constantFrom('account', 'market:m15', 'market:h10', 'market:', 'accounts'),
              { maxLength: 6 },
            ),
            after: fc.oneof(fc.integer(), fc.double(), fc.constant('1')),
          },
          { requiredKeys: ['op'] },
        )
        .map((v) => JSON.stringify(v)),
    );
    const frame = fc.oneof(
      text.map((s) => ({ data: s as string | Buffer, binary: false })),
      fc.uint8Array({ maxLength: 300 }).map((b) => ({ data: Buffer.from(b), binary: true })),
      fc
        .uint8Array({ minLength: 1, maxLength: 300 })
        .map((b) => ({ data: Buffer.from(b), binary: false })), // random bytes as a text frame (invalid UTF-8 too)
      fc
        .integer({ min: MAX_PAYLOAD_BYTES + 1, max: 4 * MAX_FRAME_BYTES })
        .map((n) => ({ data: `{"op":"ping","x":"${'x'.repeat(n)}"}`, binary: false })),
    );
    const codes = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(frame, fc.boolean(), async ({ data, binary }, keyed) => {
        const ws = keyed ? await connectAs(svc, agent.key, t) : await connectWs(svc, {}, t);
        ws.send(data, { binary });
        // Every frame is answered: a message, or the end of the connection.
        const reply = await Promise.race([
          ws.next().then(
            (m) => ({ m }),
            () => undefined,
          ),
          ws.closed.then((e) => ({ e })),
        ]);
        if (reply && 'm' in reply && reply.m) {
          t.ok(
            reply.m.op === 'error' ||
              reply.m.op === 'pong' ||
              reply.m.op === 'subscribed' ||
              reply.m.op === 'unsubscribed' ||
              reply.m.op === 'authenticated' ||
              reply.m.channel,
            `an answer: ${JSON.stringify(reply.m).slice(0, 200)}`,
          );
          if (reply.m.op === 'error') t.type(reply.m.detail, 'string');
          if (!ws.isClosed()) {
            ws.send({ op: 'ping' });
            for (
              let m = await ws.next().catch(() => null);
              m && m.op !== 'pong';
              m = await ws.next().catch(() => null)
            );
          }
        } else {
          const { code, reason } = await ws.closed;
          codes.set(code, (codes.get(code) ?? 0) + 1);
          // uWS drops (1006, no close frame) what it refuses before any handler: over its cap, or text that is not UTF-8.
          const dropped =
            !binary && (Buffer.byteLength(data) > MAX_FRAME_BYTES || !isUtf8(Buffer.from(data)));
          const expected: number[] = dropped
            ? [1006]
            : [WS_CLOSE.badFrame, WS_CLOSE.unauthorized, WS_CLOSE.binary, WS_CLOSE.tooBig];
          t.ok(
            expected.includes(code),
            `closed with a reason: ${code} ${reason} (${binary ? 'binary' : 'text'} ${data.length} bytes: ${JSON.stringify(String(data).slice(0, 60))})`,
          );
          if (!dropped) t.ok(reason.length > 0, 'the reason says why');
        }
        ws.close();
        await ws.closed;
      }),
      { numRuns: 150 },
    );
    t.comment(`close codes seen: ${JSON.stringify([...codes])}`);
    t.equal((await svc.get('/readyz')).status, 200, 'the service still answers');
    const after = await connectAs(svc, agent.key, t);
    after.send({ op: 'ping' });
    t.same(await after.next(), { op: 'pong' }, 'and still takes WebSockets');
    after.close();
    await after.closed;
    await eventually(
      () => svc.services.events.size() === streams,
      'every fuzzed connection to leave the hub',
    );
  },
);

t.test(
  'events whose data needs escaping reach the WebSocket and SSE as the objects GET /events serves',
  async (t) => {
    // The streams send each event as the JSON text PostgreSQL builds (actors/events/reads.ts EVENT_JSON);
    // GET /events serialises the parsed row. Both must be the same object, whatever the data holds.
    const agent = await registerAgent(svc);
    const odd = [
      {
        s: 'quote " backslash \\ slash / newline \n tab \t nul-ish \u0001 del \u007f',
        u: 'é ü 中文 😀 \u2028 \u2029',
        html: '</script><!--',
      },
      {
        n: [0.1 + 0.2, 1e-7, 123456789.123, -0, 2 ** 53 - 1, -1.5e300, 5e-324],
        e: [[], {}, [null, true, false, '']],
        deep: { a: { b: { c: [1, { d: 'x' }] } } },
      },
      { 'key with "quotes"': 1, ключ: 2, '': 3, ' spaced ': { ' ': ' ' } },
    ];
    // limits.changed: the one type whose data holds any object (its `limits`), as GET /events's answer check allows.
    await appendEvents(
      svc.orm.em.fork(),
      [...odd, {}].map((limits) => ({
        account_id: agent.accountId,
        type: 'limits.changed' as const,
        data: { agent_id: agent.agentId, limits },
      })),
      svc.services.clock.realNow(),
    );
    // The log keeps json as the text it was built as: line breaks as whitespace must not end an SSE data field.
    odd.push({ broken: ['across', 'lines'] });
    await svc.orm.em
      .fork()
      .execute(`update account_event set data = ?::json where account_id = ? and id = ?`, [
        `{"agent_id": ${agent.agentId},\r\n  "limits": {"broken":\n["across",\r"lines"]}}`,
        agent.accountId,
        odd.length,
      ]);
    const answer = await agent.get('/api/v1/events?after=0');
    t.equal(answer.status, 200, `GET /events answers ${answer.status}`);
    const rest = answer.body.events;
    t.equal(rest.length, odd.length);

    const ws = await connectAs(svc, agent.key, t);
    const frames: string[] = [];
    ws.socket.on('message', (d: unknown) => frames.push(String(d)));
    ws.send({ op: 'subscribe', channels: ['account'], after: 0 });
    t.equal((await ws.next()).op, 'subscribed');
    const viaWs = [];
    for (let i = 0; i < odd.length; i++) viaWs.push((await nextEvent(ws)).event);
    t.same(viaWs, rest, 'the WebSocket: the same objects');
    for (const f of frames.filter((x) => x.startsWith('{"channel"')))
      t.match(
        f,
        /^\{"channel":"account","event":\{"id":\d+,"type":"limits\.changed","created_at":[\d.]+,"data":\{/,
        "the frame's envelope is compact JSON",
      );
    ws.close();

    const sse = await openSse(
      svc,
      '/api/v1/events/stream?after=0',
      { authorization: `Bearer ${agent.key}` },
      t,
    );
    const viaSse = [];
    for (let i = 0; i < odd.length; i++) {
      const m = await sse.nextEvent();
      t.equal(m.id, String(m.json.id));
      viaSse.push(m.json);
    }
    sse.close();
    t.same(viaSse, rest, 'Server-Sent Events: the same objects');
  },
);

t.test(
  'a consumer that stops reading is closed with its reason, and resumes from the id it names',
  async (t) => {
    const agent = await registerAgent(svc);
    const streams = svc.services.events.size();
    const ws = await connectAs(svc, agent.key, t);
    ws.send({ op: 'subscribe', channels: ['account'], after: 0 });
    t.equal((await ws.next()).op, 'subscribed');
    // Stop reading: what the service sends piles up in the kernel's buffers, then in uWS's up to the
    // connection's bound; the rest waits in the log until the service gives up on the consumer.
    (ws.socket as any)._socket.pause();
    // Far more than the kernel's buffers and the connection's own bound hold: 4 KB events, appended to the log as a change would.
    const n = 4000;
    const pad = 'x'.repeat(4000);
    const events: NewEvent[] = Array.from({ length: n }, (_, i) => ({
      account_id: agent.accountId,
      type: 'ledger.posted',
      data: { i, pad },
    }));
    t.ok(n * pad.length > 4 * SEND_BUFFER_BYTES);
    await appendEvents(svc.orm.em.fork(), events, svc.services.clock.realNow());
    await eventually(
      () => svc.services.events.size() === streams,
      'the service to close the connection that fell behind',
    );
    (ws.socket as any)._socket.resume();
    const got: number[] = [];
    for (;;) {
      const m = await ws.next().catch(() => null);
      if (!m) break;
      got.push(m.event.id);
    }
    const { code, reason } = await ws.closed;
    t.equal(code, WS_CLOSE.behind, 'closed as behind');
    t.ok(
      got.length > 0 && got.length < n,
      `${got.length} of ${n} events reached it before the close`,
    );
    t.same(
      got,
      Array.from({ length: got.length }, (_, i) => i + 1),
      'in order, none missing up to the close',
    );
    t.equal(
      reason,
      `behind: too slow to read; reconnect and subscribe with after=${got.at(-1)}`,
      'the reason names the id to resume from',
    );

    const again = await connectAs(svc, agent.key, t);
    again.send({ op: 'subscribe', channels: ['account'], after: got.at(-1) });
    t.equal((await again.next()).op, 'subscribed');
    const rest: number[] = [];
    while (rest.length < n - got.length) rest.push((await nextEvent(again)).event.id);
    t.same(
      [...got, ...rest],
      Array.from({ length: n }, (_, i) => i + 1),
      'every event exactly once across the close',
    );
    again.close();
  },
);

t.test(
  'an after older than the log keeps: an error with the 410 detail, then the close',
  async (t) => {
    const agent = await registerAgent(svc);
    const m = await menu();
    t.equal(
      (await agent.post('/api/v1/orders', { market: MARKET, offer_key: m.deals[0].key, qty: 1 }))
        .status,
      201,
    );
    c.advanceBy(8 * 86_400_000);
    await svc.services.runtime.ask('answers:sweep', {
      kind: 'sweep',
      at: svc.services.clock.realNow(),
    });
    t.equal((await agent.get('/api/v1/events?after=0')).status, 410);
    const ws = await connectAs(svc, agent.key, t);
    ws.send({ op: 'subscribe', channels: ['account'], after: 0 });
    t.equal((await ws.next()).op, 'subscribed');
    t.match(await ws.next(), {
      op: 'error',
      status: 410,
      detail: /events before id 2 are no longer kept/,
    });
    t.match(await ws.closed, { code: WS_CLOSE.gone, reason: /after=1/ });
    const head = await connectAs(svc, agent.key, t);
    head.send({ op: 'subscribe', channels: ['account'], after: 1 });
    t.equal((await head.next()).op, 'subscribed');
    head.send({ op: 'ping' });
    t.same(await head.next(), { op: 'pong' }, 'from the head on, the subscription stays');
    head.close();
  },
);

t.test('a stopping service ends its WebSockets with 1001 and the id to resume from', async (t) => {
  // (The sweep above moved the clock 8 days: the service is catching up those closes, orders wait.)
  const agent = await registerAgent(svc);
  const ws = await connectAs(svc, agent.key, t);
  ws.send({ op: 'subscribe', channels: ['account', `market:${MARKET}`], after: 0 });
  t.equal((await ws.next()).op, 'subscribed');
  const idle = await connectAs(svc, agent.key, t);
  await svc.stop();
  t.same(await ws.closed, {
    code: WS_CLOSE.stopping,
    reason: 'stopping; reconnect and subscribe with after=0',
  });
  t.same(
    await idle.closed,
    { code: WS_CLOSE.stopping, reason: 'stopping; reconnect and subscribe again' },
    'one with nothing subscribed too',
  );
});
