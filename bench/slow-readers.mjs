#!/usr/bin/env node
// Outside probes of the front end's bounds (src/http/limits.ts), against the built service as a
// child process on a database of its own
// (127.0.0.1 only):
// - `streams` (default): 2 000 streams that never read (200 agents × 10, the per-key limit: 5 Server-
//   Sent Events streams and 5 WebSockets each) while each account's log grows by ~1 MB (events of
//   48 KB, more than the kernel's socket buffers take). Target: the service's resident memory grows
//   by at most 300 MB (limits.ts STREAM_BUFFER_BYTES bounds what it holds for each: 128 KB).
// - `mcp`: 100 sockets that post MCP requests without a key and never read their answers, again on
//   fresh sockets for 60 s, while m15 closes every 3 s (SVC_TIME_SCALE=300). Target: no close later
//   than 2 s (session_close_lateness_seconds): unread answers must not delay the closes.
// Usage: node bench/slow-readers.mjs [streams|mcp] [--pg postgres://postgres@127.0.0.1:5432]
// Last line: `slow-readers streams: +<MB> MB for 2000 streams (target <= 300)` or
// `slow-readers mcp: <n> of <m> closes later than 2 s, the latest <s> s (target 0)`.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerMany } from './lib/agents.mjs';
import { HOST, checkLocalPg, pgAdmin, startService } from './lib/service.mjs';
import { sleep } from './lib/process.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mode = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 'streams';
const pgIdx = process.argv.indexOf('--pg');
const pgBase = pgIdx > 0 ? process.argv[pgIdx + 1] : 'postgres://postgres@127.0.0.1:5432';
checkLocalPg(pgBase);
const log = (...a) => console.error(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
const rssMb = (pid) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/** A socket that sends `request` and never reads what comes back. */
function silent(port, request) {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, HOST, () => {
      s.pause();
      s.write(request);
      resolve(s);
    });
    s.on('error', () => {}); // the service may end it (a stream that fell behind): that is the point
    s.once('error', reject);
  });
}

const dbName = `slow_readers_${process.pid}`;
await pgAdmin(pgBase, `create database ${dbName}`);
const env = mode === 'mcp' ? { SVC_TIME_SCALE: '300', SVC_SHARDS: '2' } : { SVC_SHARDS: '2' };
let svc;
const sockets = [];
try {
  svc = await startService({ main: path.join(root, 'dist/src/main.js'), pgBase, dbName, env, log });
  const port = Number(new URL(svc.base).port);
  if (mode === 'streams') {
    const agents = await registerMany(svc.base, 200, {
      tag: `slow readers ${process.pid}`,
      model: 'bench/slow-readers.mjs',
    });
    await sleep(2000);
    const before = rssMb(svc.pid);
    for (const a of agents) {
      const auth = `Authorization: Bearer ${a.key}\r\n`;
      for (let i = 0; i < 5; i++) {
        sockets.push(
          await silent(
            port,
            `GET /api/v1/events/stream?after=0 HTTP/1.1\r\nHost: ${HOST}\r\nAccept: text/event-stream\r\n${auth}\r\n`,
          ),
        );
        sockets.push(
          await silent(
            port,
            `GET /api/v1/ws HTTP/1.1\r\nHost: ${HOST}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.from(`k${i}-${a.account_id}`.padEnd(16, '.')).toString('base64')}\r\n${auth}\r\n`,
          ),
        );
      }
    }
    log(`${sockets.length} silent streams open; resident ${before.toFixed(0)} MB before`);
    // The WebSockets subscribe to their account channel with a masked text frame, written blind.
    const frame = (text) => {
      const body = Buffer.from(text);
      const mask = Buffer.from([1, 2, 3, 4]);
      return Buffer.concat([
        Buffer.from([0x81, 0x80 | body.length]),
        mask,
        Buffer.from(body.map((b, i) => b ^ mask[i % 4])),
      ]);
    };
    for (let i = 1; i < sockets.length; i += 2)
      sockets[i].write(frame('{"op":"subscribe","channels":["account"],"after":0}'));
    // ~1 MB more in each account's log: 20 ledger events of 48 KB, appended as a posting would.
    const { openOrm } = await import(path.join(root, 'dist/orm/database.js'));
    const { appendEvents } = await import(path.join(root, 'dist/actors/events/log.js'));
    const orm = await openOrm(new URL(`/${dbName}`, pgBase).toString(), 4, { migrations: false });
    const ref = 'x'.repeat(48 * 1024);
    try {
      for (let n = 0; n < 20; n++) {
        const batch = agents.map((a) => ({
          account_id: a.account_id,
          type: 'ledger.posted',
          data: {
            id: n + 1,
            account_id: a.account_id,
            kind: 'card_charge',
            amount: 1,
            currency: 'USD',
            balance_after: n + 1,
            ref,
            created_at: 0,
          },
        }));
        await appendEvents(orm.em.fork(), batch, Date.now() / 1000);
      }
    } finally {
      await orm.close();
    }
    let peak = 0;
    for (let s = 0; s < 30; s++) {
      await sleep(1000);
      peak = Math.max(peak, rssMb(svc.pid) - before);
    }
    log(
      `peak growth ${peak.toFixed(0)} MB over 30 s after ~1 MB was appended to each account's log`,
    );
    console.log(
      `slow-readers streams: +${peak.toFixed(0)} MB for ${sockets.length} streams (target <= 300)`,
    );
    process.exitCode = peak <= 300 ? 0 : 1;
  } else {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const request = `POST /mcp HTTP/1.1\r\nHost: ${HOST}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const until = Date.now() + 60_000;
    let sent = 0;
    while (Date.now() < until) {
      // 100 sockets, each asking twice without reading; then fresh ones.
      const round = await Promise.all(
        Array.from({ length: 100 }, () => silent(port, request + request).catch(() => null)),
      );
      sent += round.filter(Boolean).length * 2;
      await sleep(1000);
      for (const s of round) s?.destroy();
    }
    const metrics = await (await fetch(`${svc.base}/metrics`)).text();
    // Cumulative buckets summed over the markets: { bound: closes at most that late }.
    const cumulative = new Map();
    let count = 0;
    for (const [, labels, n] of metrics.matchAll(
      /^session_close_lateness_seconds_(?:bucket|count)\{([^}]*)\} (\S+)$/gm,
    )) {
      const le = /le="([^"]+)"/.exec(labels)?.[1];
      if (le === undefined) count += Number(n);
      else if (le !== '+Inf')
        cumulative.set(Number(le), (cumulative.get(Number(le)) ?? 0) + Number(n));
    }
    const late = count - (cumulative.get(2) ?? 0);
    const bound = [...cumulative].sort((a, b) => a[0] - b[0]).find(([, n]) => n === count)?.[0];
    log(`${sent} MCP requests unread on 100 sockets at a time for 60 s; ${count} closes`);
    console.log(
      `slow-readers mcp: ${late} of ${count} closes later than 2 s, every one within ${bound ?? 'more than 120'} s (target: none later than 2 s)`,
    );
    process.exitCode = late === 0 ? 0 : 1;
  }
} finally {
  for (const s of sockets) s.destroy();
  await svc?.stop();
  await pgAdmin(pgBase, `drop database if exists ${dbName} with (force)`).catch((e) =>
    log(`drop: ${e.message}`),
  );
}
