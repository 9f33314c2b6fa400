// Answers at the pace the client reads them, on the uWS front end over real sockets with a
// small route table: a body of any size and encoding arrives whole and exact however the client reads
// it (fast-check), the server keeps a request's hold until its answer is all read, a client that asks
// again before reading an answer is closed (one answer per socket at most, counted as cut), and a
// stream refuses what would pass its buffer bound, hears when its client has read it, says why as it
// ends, and lives on once read.
import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import Type from 'typebox';
import fc from 'fast-check';
import { createApp, listen } from '../../src/http/server.js';
import { route, text, type Reply } from '../../src/http/route.js';
import { STREAM_BUFFER_BYTES } from '../../src/http/limits.js';
import { eventually } from '../helpers/wait.js';
import { answerOf, chunksOf, rawConnect } from '../helpers/raw-http.js';

const logs: any[] = [];
const sink = new Writable({
  write(chunk, _e, cb) {
    for (const l of String(chunk).split('\n')) if (l) logs.push(JSON.parse(l));
    cb();
  },
});

type Kind = 'ascii' | 'utf8' | 'bytes';
/** A body of `size` units: bytes, or characters (`utf8`: 2 and 3 bytes each, so byte and character offsets differ). */
function bodyOf(size: number, kind: Kind): string | Buffer {
  if (kind === 'bytes') {
    const b = Buffer.alloc(size);
    for (let i = 0; i < size; i++) b[i] = (i * 7 + 3) & 255;
    return b;
  }
  const unit = kind === 'ascii' ? 'abcdefghijklmnopqrstuvwxyz' : 'é€ü';
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}
const bytesOf = (b: string | Buffer) => (typeof b === 'string' ? Buffer.from(b) : b);

/** Holds given back (Context.hold), by request id. */
const released = new Set<string>();
/** Streams opened, for the test to write to. */
const streams: {
  write: (chunk: string) => boolean;
  end: (last?: string) => void;
  stopped: boolean;
  rooms: number;
}[] = [];

const routes = [
  route({
    method: 'GET',
    path: '/api/v1/blob',
    auth: 'none',
    summary: 'a body of a given size',
    query: Type.Object({
      id: Type.String(),
      size: Type.Integer({ minimum: 0 }),
      kind: Type.Union([Type.Literal('ascii'), Type.Literal('utf8'), Type.Literal('bytes')]),
    }),
    response: { 200: Type.Any() },
    handler: ({ query, hold }): Reply => {
      hold!(() => released.add(query.id));
      const body = bodyOf(query.size, query.kind);
      return typeof body === 'string'
        ? text(body)
        : { body, contentType: 'application/octet-stream' };
    },
  }),
  route({
    method: 'GET',
    path: '/api/v1/stream',
    auth: 'none',
    summary: 'a stream the test writes to',
    response: { 200: Type.Any() },
    handler: (): Reply => ({
      contentType: 'text/plain',
      stream: {
        filler: '~',
        open: (write, end, onRoom) => {
          const s = { write, end, stopped: false, rooms: 0 };
          onRoom(() => s.rooms++);
          streams.push(s);
          return () => (s.stopped = true);
        },
      },
    }),
  }),
];

const { app } = createApp({
  routes,
  log: pino({ level: 'info' }, sink),
  bodyLimitBytes: 1024,
  authenticators: {},
});
const server = await listen(app, '127.0.0.1', 0);
t.teardown(() => server.close());

const requestsLogged = () =>
  logs.filter((l) => l.msg === 'request' && l.route === '/api/v1/blob').length;

let n = 0;
const nextId = () => `r${++n}`;

t.test(
  'a body of any size and encoding arrives whole and exact, however slowly the client reads it',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 0, max: 4096 }), fc.integer({ min: 0, max: 12 * 2 ** 20 })),
        fc.constantFrom<Kind>('ascii', 'utf8', 'bytes'),
        fc.boolean(),
        async (size, kind, waitFirst) => {
          const id = nextId();
          const c = await rawConnect(server.port, t);
          const before = requestsLogged();
          if (waitFirst) c.socket.pause();
          c.get(`/api/v1/blob?id=${id}&size=${size}&kind=${kind}`);
          if (waitFirst) {
            // Not read until the server has answered as much as the socket takes.
            await eventually(() => requestsLogged() > before, 'the answer to start');
            c.socket.resume();
          }
          const answer = await eventually(() => answerOf(c.bytes()), 'the whole answer');
          c.socket.destroy();
          const want = bytesOf(bodyOf(size, kind));
          if (
            answer.status !== 200 ||
            Number(answer.headers['content-length']) !== want.length ||
            !answer.body.equals(want)
          ) {
            throw new Error(
              `${size} ${kind}: status ${answer.status}, ${answer.body.length} bytes of ${want.length}, equal: ${answer.body.equals(want)}`,
            );
          }
          await eventually(() => released.has(id), 'the hold to be given back');
        },
      ),
      { numRuns: 30 },
    );
    t.pass('30 bodies');
  },
);

t.test(
  'the hold lasts until the answer is all read; asking again before that closes the connection',
  async (t) => {
    const id = nextId();
    const c = await rawConnect(server.port, t);
    c.socket.pause();
    const before = requestsLogged();
    // Far more than the kernel's buffers take: the server must wait for the client to read.
    c.get(`/api/v1/blob?id=${id}&size=${64 * 2 ** 20}&kind=bytes`);
    await eventually(() => requestsLogged() > before, 'the answer to start');
    t.notOk(released.has(id), 'not read: the request still holds what it took');
    const cuts = logs.filter((l) => /answer cut/.test(l.msg)).length;
    c.get(`/api/v1/blob?id=${nextId()}&size=10&kind=ascii`);
    await eventually(() => released.has(id), 'the connection to be closed and the hold given back');
    t.equal(requestsLogged(), before + 1, 'the second request was not answered');
    t.equal(
      logs.filter((l) => /answer cut/.test(l.msg)).length,
      cuts + 1,
      'the first answer is counted as cut',
    );
    c.socket.resume();
    await eventually(() => c.closed(), 'the client to see the close');
    t.ok(
      c.received() < 64 * 2 ** 20,
      `${c.received()} bytes of 64 MiB reached the client before the close`,
    );

    const id2 = nextId();
    const gone = await rawConnect(server.port, t);
    gone.socket.pause();
    gone.get(`/api/v1/blob?id=${id2}&size=${64 * 2 ** 20}&kind=bytes`);
    await eventually(() => requestsLogged() > before + 1, 'the answer to start');
    t.notOk(released.has(id2));
    gone.socket.destroy();
    await eventually(() => released.has(id2), 'a client gone mid-answer gives its hold back');
  },
);

t.test(
  'a stream refuses what would pass its bound, ends with its last words, and lives on once read',
  async (t) => {
    const c = await rawConnect(server.port, t);
    c.socket.pause();
    c.get('/api/v1/stream');
    await eventually(() => streams.length === 1, 'the stream to open');
    const s = streams[0];
    const chunk = (i: number) => `${String(i).padStart(8, '0')}${'x'.repeat(8184)}`;
    let sent = 0;
    // The kernel's buffers first, then at most STREAM_BUFFER_BYTES in the process: a bound is reached.
    while (sent < 100_000 && s.write(chunk(sent))) sent++;
    t.ok(sent < 100_000, `refused after ${sent} chunks of 8 KB`);
    t.equal(s.rooms, 0, 'no room yet');
    c.socket.resume();
    const got = await eventually(() => {
      const r = chunksOf(c.bytes());
      return r.chunks.length >= sent && r;
    }, 'every accepted chunk');
    t.same(
      got.chunks.slice(0, sent).map((x) => Number(x.slice(0, 8))),
      Array.from({ length: sent }, (_, i) => i),
      'every accepted chunk, in order, none missing',
    );
    t.ok(
      got.chunks.slice(sent).every((x) => x === '~'),
      'then at most fillers',
    );
    // Read: the stream hears it has room, and takes chunks again.
    await eventually(() => s.rooms === 1, 'the stream to hear it has room');
    t.ok(s.write('after'), 'a chunk is taken again');
    s.end('last words');
    const all = await eventually(() => {
      const r = chunksOf(c.bytes());
      return r.ended && r;
    }, 'the end of the stream');
    t.same(
      all.chunks.filter((x) => x !== '~').slice(sent),
      ['after', 'last words'],
      'then the chunk written after, and the last words',
    );
    t.notOk(s.stopped, 'ended by the server, not by the client');

    // Past the bound, a stream's last words still go out, and its client gets every chunk it was told was sent.
    const d = await rawConnect(server.port, t);
    d.socket.pause();
    d.get('/api/v1/stream');
    await eventually(() => streams.length === 2, 'the second stream to open');
    const s2 = streams[1];
    let sent2 = 0;
    while (s2.write(chunk(sent2))) sent2++;
    s2.end('behind');
    d.socket.resume();
    const r2 = await eventually(() => {
      const r = chunksOf(d.bytes());
      return r.ended && r;
    }, 'the end of the second stream');
    t.same(
      r2.chunks.filter((x) => x !== '~').map((x) => (x === 'behind' ? x : Number(x.slice(0, 8)))),
      [...Array.from({ length: sent2 }, (_, i) => i), 'behind'],
    );
    t.ok(STREAM_BUFFER_BYTES > 8192, 'a chunk fits the bound');
  },
);

t.test('many sockets that never read cost the process at most one answer each', async (t) => {
  // Each socket asks again whenever its last answer is counted as started: answered with res.end,
  // every answer would wait in the process for a client that never reads.
  const sockets = await Promise.all(Array.from({ length: 8 }, () => rawConnect(server.port, t)));
  for (const c of sockets) c.socket.pause();
  const cuts = () => logs.filter((l) => /answer cut/.test(l.msg)).length;
  const cutsBefore = cuts();
  for (const c of sockets) {
    for (let i = 0; i < 100; i++) {
      const before = requestsLogged();
      const cutBefore = cuts();
      c.get(`/api/v1/blob?id=${nextId()}&size=${2 ** 19}&kind=bytes`);
      const what = await eventually(
        () => (requestsLogged() > before ? 'answered' : cuts() > cutBefore ? 'cut' : undefined),
        'the request to be answered or its socket closed',
      );
      if (what === 'cut') break;
    }
  }
  t.equal(
    cuts() - cutsBefore,
    sockets.length,
    'every socket was closed once it asked again with an answer unread',
  );
  for (const c of sockets) c.socket.resume();
  await eventually(() => sockets.every((c) => c.closed()), 'the clients to see their closes');
});
