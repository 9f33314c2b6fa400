// The bare fan-out peer of bench/ws.mjs --peer: a uWebSockets.js server (the package the service
// uses, loaded as src/http/uws.ts does) that holds the same subscribers on the same path, answers
// their auth and subscribe with the service's bytes, and, when told a close happened, sends each
// subscriber the very frames the service sent it for that close: no database read, no log, no hub.
// The floor of one close's fan-out on this machine.
//
// --read READS_JS: the floor of a fan-out that reads the log, as the service's must (a stream resumes
// from its own id, so the log is the buffer): told a close, it reads each subscriber's events of that
// close with the service's own statement (READS_JS's eventsOfMany, the built actors/events/reads.js),
// 1000 accounts a read and three reads in flight as the hub does, on this process's own connections,
// and sends each event's frame as it arrives. Still no hub, no worker, no ORM, no other work.
//
//   node bench/ws-peer.mjs --frames FILE --db URL --channel NAME [--host 127.0.0.1] [--port 0] [--read READS_JS]
//
// FILE (JSON, written by bench/ws.mjs): { "subscribers": [{ "key", "agent_id", "closes": { NAME:
// [frame text, ...] }, "account_id", "reads": { NAME: { "after", "last" } } }] } (reads: the ids
// around that close's events, for --read). The key on the upgrade (`Authorization: Bearer <key>`) says which
// subscriber a connection is, as the service's key look-up does.
// "Told a close happened": a NOTIFY on `--channel` whose payload names the close, heard on this
// process's own LISTEN connection (node-postgres on the main thread, as the service's hub hears the
// log's NOTIFY); the bench's commit clock LISTENs on the same channel.
// Prints `{"listening":{...}}` once it accepts connections and listens, then one `{"sent":{...}}` line
// per close (frames sent, refused by backpressure, and the send loop's own time); exits on SIGTERM,
// SIGINT or when its stdin closes.
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { exitWithParent, loadUws } from './lib/uws.mjs';

const { values } = parseArgs({
  options: {
    frames: { type: 'string' },
    db: { type: 'string' },
    channel: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    read: { type: 'string' },
  },
});
if (values.host !== '127.0.0.1') throw new Error('ws-peer only listens on 127.0.0.1');
if (!values.frames || !values.db || !values.channel)
  throw new Error('usage: node bench/ws-peer.mjs --frames FILE --db URL --channel NAME');
if (!/^[a-z_][a-z0-9_]*$/.test(values.channel))
  throw new Error(`not a channel name: ${values.channel}`);
if (!['127.0.0.1', 'localhost'].includes(new URL(values.db).hostname))
  throw new Error('--db must point at 127.0.0.1');

/** The service's WebSocket path and its options (src/events/websocket.ts), so a connection costs the same to hold. */
const WS_PATH = '/api/v1/ws';
const MAX_FRAME_BYTES = 64 * 1024;
const MAX_BACKPRESSURE = 128 * 1024 + 64 * 1024;
const IDLE_TIMEOUT_S = 60;
/** The service's connections' settings (orm/config.ts CONNECTION_SETTINGS: no JIT for the read's statement). */
const CONNECTION_SETTINGS = '-c jit=off';
/** The hub's read sizes (src/events/hub.ts): accounts per read, reads in flight. */
const ACCOUNTS_PER_READ = 1000;
const READS_IN_FLIGHT = 3;

// Every frame as bytes, made before any close: nothing is left to make at send time (the service
// makes each event's frame text once, src/events/hub.ts perEvent).
const byKey = new Map();
for (const s of JSON.parse(fs.readFileSync(values.frames, 'utf8')).subscribers) {
  const closes = {};
  for (const [name, frames] of Object.entries(s.closes))
    closes[name] = frames.map((f) => Buffer.from(f));
  byKey.set(s.key, { agentId: s.agent_id, accountId: s.account_id, reads: s.reads, closes });
}
/** --read: the service's read of many accounts' events (actors/events/reads.ts), and three connections for it. */
const reader = values.read
  ? {
      eventsOfMany: (await import(pathToFileURL(values.read).href)).eventsOfMany,
      pool: new pg.Pool({
        connectionString: values.db,
        max: READS_IN_FLIGHT,
        options: CONNECTION_SETTINGS,
      }),
    }
  : undefined;

const uws = loadUws();
const app = uws.App();
/** Subscribed connections, in the order they subscribed. */
const subscribed = new Set();

app.ws(WS_PATH, {
  compression: 0,
  maxPayloadLength: MAX_FRAME_BYTES,
  maxBackpressure: MAX_BACKPRESSURE,
  closeOnBackpressureLimit: 0,
  idleTimeout: IDLE_TIMEOUT_S,
  sendPingsAutomatically: true,
  upgrade: (res, req, context) => {
    const auth = req.getHeader('authorization');
    const sub = byKey.get(auth.startsWith('Bearer ') ? auth.slice(7) : '');
    const secKey = req.getHeader('sec-websocket-key');
    const extensions = req.getHeader('sec-websocket-extensions');
    res.cork(() => {
      if (!sub) {
        res.writeStatus('401 Unauthorized');
        res.end('{"detail":"unknown key"}');
        return;
      }
      res.upgrade({ sub, closed: false }, secKey, '', extensions, context);
    });
  },
  open: (ws) => {
    ws.send(
      JSON.stringify({ op: 'authenticated', agent_id: ws.getUserData().sub.agentId }),
      false,
      false,
    );
  },
  message: (ws, message) => {
    const m = JSON.parse(Buffer.from(message).toString('utf8'));
    if (m.op !== 'subscribe') return;
    subscribed.add(ws);
    ws.send(
      JSON.stringify({ op: 'subscribed', channels: m.channels, after: m.after ?? 0 }),
      false,
      false,
    );
  },
  close: (ws) => {
    ws.getUserData().closed = true;
    subscribed.delete(ws);
  },
});

/** One close's fan-out: each subscribed connection its frames, sent as the service's hub sends them. */
function fanOut(name) {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const counts = { sent: 0, backpressure: 0, dropped: 0 };
  for (const ws of subscribed) {
    const frames = ws.getUserData().sub.closes[name];
    if (frames) for (const f of frames) count(counts, ws.send(f, false, false));
  }
  report(name, counts, t0, cpu0);
}

/**
 * --read: one close's fan-out from the log. Each subscriber's events after its `after` for that
 * close, read ACCOUNTS_PER_READ accounts at a time with READS_IN_FLIGHT reads in flight; each frame
 * made from its JSON text and sent as its read comes back.
 */
async function fanOutRead(name) {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const counts = { sent: 0, backpressure: 0, dropped: 0 };
  const batches = [];
  let batch = [];
  for (const ws of subscribed) {
    if (!ws.getUserData().sub.reads?.[name]) continue;
    if (batch.push(ws) < ACCOUNTS_PER_READ) continue;
    batches.push(batch);
    batch = [];
  }
  if (batch.length) batches.push(batch);
  const readOne = async (conns) => {
    const client = await reader.pool.connect();
    try {
      const em = {
        execute: async (sql, params) =>
          (await client.query(placeholders(sql, params), params)).rows,
      };
      const accounts = conns.map((ws) => ({
        accountId: ws.getUserData().sub.accountId,
        after: ws.getUserData().sub.reads[name].after,
      }));
      const got = await reader.eventsOfMany(em, { accounts, limit: 200 });
      for (const ws of conns) {
        const { accountId, reads } = ws.getUserData().sub;
        const r = got[accountId];
        if (!r || !('events' in r)) continue;
        for (const e of r.events)
          if (e.id <= reads[name].last)
            count(counts, ws.send(`{"channel":"account","event":${e.json}}`, false, false));
      }
    } finally {
      client.release();
    }
  };
  const inFlight = new Set();
  for (const b of batches) {
    if (inFlight.size === READS_IN_FLIGHT) await Promise.race(inFlight);
    const p = readOne(b).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  report(name, counts, t0, cpu0);
}

/** `?` placeholders (an EntityManager's) as node-postgres' `$n`. */
function placeholders(sql, params) {
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  if (n !== params.length) throw new Error(`${n} placeholders for ${params.length} values`);
  return text;
}

function count(counts, r) {
  if (r === 2) counts.dropped++;
  else {
    counts.sent++;
    if (r === 0) counts.backpressure++;
  }
}

function report(name, { sent, backpressure, dropped }, t0, cpu0) {
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(
    `${JSON.stringify({ sent: { close: name, frames: sent, backpressure, dropped, loop_ms: performance.now() - t0, loop_cpu_ms: (cpu.user + cpu.system) / 1000 } })}\n`,
  );
}

const listener = new pg.Client({ connectionString: values.db });
await listener.connect();
listener.on('notification', (n) => {
  if (n.channel !== values.channel) return;
  if (!reader) return fanOut(n.payload ?? '');
  fanOutRead(n.payload ?? '').catch(
    (err) => (console.error(`ws-peer: reading the log failed: ${err.message}`), process.exit(1)),
  );
});
await listener.query(`listen ${values.channel}`);

let listenSocket;
app.listen(values.host, Number(values.port), (socket) => {
  if (!socket) {
    console.error(`cannot listen on ${values.host}:${values.port}`);
    process.exit(1);
  }
  listenSocket = socket;
  process.stdout.write(
    `${JSON.stringify({ listening: { host: values.host, port: uws.us_socket_local_port(socket), path: WS_PATH, subscribers: byKey.size } })}\n`,
  );
});

exitWithParent(() => {
  if (listenSocket) uws.us_listen_socket_close(listenSocket);
  for (const ws of subscribed) ws.close();
  listener.end().catch(() => {});
  reader?.pool.end().catch(() => {});
});
