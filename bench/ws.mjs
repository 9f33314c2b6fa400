// N WebSocket subscribers, each on its own account's channel, while an m15 close
// fills and then advances a position for every one of them. Figures, all from one run:
//   - how many connections this machine holds (--subscribers, 10 000 by default; the most that opened);
//   - RSS of the service per idle connection (authenticated; then subscribed), target <= 10 KB;
//   - delivery latency from commit to client, p50/p99 (target p99 <= 250 ms), per phase: the orders
//     (each order's own commit), the close that fills them, the close that advances the positions;
//   - events/s delivered by each close (from its commit to the last subscriber's last event);
//   - checks: every subscriber got its account's events exactly once, in order, gap-free.
//
//   npm run build && node bench/ws.mjs [--subscribers 10000] [--time-scale 15] [--connect-concurrency 200]
//       [--order-connections 32] [--pg postgres://postgres@127.0.0.1:5432/] [--service dist/src/main.js]
//       [--service-log FILE]   (the service's log at level info, one JSON record a line)
//       [--subscriber-client go|node] [--peer]
//
// The subscribers: `go` (the default) is bench/subscribers/main.go, compiled here with Debian's Go
// and its packaged Gorilla WebSocket (apt-get install -y golang-go golang-github-gorilla-websocket-dev);
// `node` holds them in this process with the ws package. They share the service's two cores, and
// Node's take about as much CPU per event of a close as the service; the compiled ones far less.
// For each close the result gives the CPU of the service, PostgreSQL and the subscribers
// from its commit to its last delivery (read from /proc every 20 ms), per 1000 events.
// BENCH_SERVICE_NODE_ARGS (space-separated) are given to the service's node (experiments).
//
// "Commit" is when PostgreSQL delivers the log's NOTIFY (sent at commit) to a LISTEN connection of
// this script, in a worker thread of its own (the main thread is busy with the subscribers): the
// same signal the service wakes on. An event's latency is its arrival at its subscriber (the
// WebSocket message callback) minus the last such notice for its account (or for every account: a
// close's notice names `*`) before it. Subscribers and the service share the machine's cores.
//
// --peer: after the service's closes, the floor of the same fan-out on this machine.
// bench/ws-peer.mjs, a bare uWebSockets.js server in a process of its own, holds the same number of
// subscribers (the same client, connecting, authenticating and subscribing the same way, each with
// its agent's key) and, when told a close happened, sends each subscriber the very frames the
// service sent it in that close (built by the service's own read, eventsOfMany, and checked byte for
// byte against the frames the subscribers kept whole). It is told by a NOTIFY on a channel of its
// own, heard on its LISTEN connection as the service hears the log's; the bench's commit clock
// LISTENs on that channel too, so both latencies run from PostgreSQL delivering a notice to the
// same listener. The service and its subscribers are stopped first, so the peer's closes have the
// machine as the service's had it (minus the service). The result gives service/peer for the CPU
// per 1000 delivered events (each process's own CPU from /proc, commit to last delivery, both closes)
// and for the p99 of the closes' delivery latency; the last line says both.
// Then the floor of a fan-out that reads the log (bench/ws-peer.mjs --read), as the service's must: the
// same peer, subscribers and closes, each close's events read with the service's own statement before
// they are sent. The two lines before the last give that peer against the bare one (what the read
// costs by itself) and the service against it (what the service adds beyond reading the log).
//
// Everything is started and stopped by the script (also on error and Ctrl-C), on 127.0.0.1 only:
// a fresh database bench_ws_<pid>; the built service with SVC_TIME_SCALE (an m15 session lasts
// 900/scale s); agents registered through the API and funded by the bench fixture
// (bench/lib/agents.mjs); one pay_from_balance order per agent through POST /api/v1/orders, placed
// early in a session; the two closes that follow. Writes bench/results/<iso-date>-ws.json.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Arrival and notice times (ms). The compiled subscribers stamp arrivals with the wall clock, so the
 * notices are stamped with it too (a process's performance.timeOrigin can be several ms off it);
 * Node's subscribers and the notices share this process's finer monotonic clock.
 */
const now =
  !isMainThread && workerData.wallClock
    ? () => Date.now()
    : () => performance.timeOrigin + performance.now();

/** Every how many ms the worker reads the processes' CPU time (the kernel counts it in 10 ms ticks). */
const CPU_SAMPLE_MS = 20;
/** How many CPU samples are kept (an hour at CPU_SAMPLE_MS): older ones are dropped. */
const CPU_SAMPLES_MAX = 180_000;

if (!isMainThread) {
  // The commit clock: LISTEN on the log's channels, each notice stamped as it arrives.
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: workerData.url });
  await c.connect();
  c.on('notification', (n) =>
    parentPort.postMessage({ t: now(), channel: n.channel, payload: n.payload }),
  );
  await c.query('listen svc_events');
  await c.query('listen svc_sessions');
  if (workerData.peerChannel) await c.query(`listen ${workerData.peerChannel}`);
  // Where a close's fan-out spends the machine's CPU: the service, the database and these
  // subscribers, read every CPU_SAMPLE_MS (cumulative ticks) off this thread (the main one is busy).
  // The database's processes are listed once a second (listing /proc each sample costs more than reading them).
  const { postgresPids, procTicks } = await import('./lib/cpu.mjs');
  const cpuTicks = (pid) => procTicks(pid) ?? 0;
  const cpu = [];
  /** The subscribers' process: this one, or the compiled subscribers once they are started. */
  let subscribersPid = process.pid;
  /** The bare peer's process (--peer), once it is started. */
  let peerPid;
  let pgPids = postgresPids();
  let lastList = Date.now();
  const sampler = setInterval(() => {
    if (Date.now() - lastList > 1000) {
      pgPids = postgresPids();
      lastList = Date.now();
    }
    if (cpu.length === CPU_SAMPLES_MAX) cpu.shift();
    cpu.push([
      now(),
      cpuTicks(workerData.servicePid),
      pgPids.reduce((n, pid) => n + cpuTicks(pid), 0),
      cpuTicks(subscribersPid),
      peerPid ? cpuTicks(peerPid) : 0,
    ]);
  }, CPU_SAMPLE_MS);
  parentPort.postMessage({ ready: true });
  parentPort.on('message', async (m) => {
    if (m === 'cpu') return parentPort.postMessage({ cpu });
    if (m?.subscribersPid) subscribersPid = m.subscribersPid;
    if (m?.peerPid) peerPid = m.peerPid;
    if (m?.subscribersPid || m?.peerPid) return;
    if (m === 'stop') {
      clearInterval(sampler);
      await c.end().catch(() => {});
      process.exit(0);
    }
  });
} else {
  await runMain();
}

async function runMain() {
  const { default: WebSocket } = await import('ws');
  const { followServiceLog, freePort, SERVICE_NODE_FLAGS, sleep, stopChild, within } =
    await import('./lib/process.mjs');
  const { fundAgents, registerMany } = await import('./lib/agents.mjs');
  const { startGoSubscribers, scratchDir } = await import('./lib/go-subscribers.mjs');
  const { waitExit } = await import('./lib/process.mjs');
  const { CLK_TCK } = await import('./lib/cpu.mjs');

  let gc;
  /** A full collection of this process's heap (the Node subscribers'), timed in the log. */
  const collectGarbage = () => {
    gc ??= (v8.setFlagsFromString('--expose-gc'), vm.runInNewContext('gc'));
    const t = performance.now();
    gc();
    log(`collected the subscribers' garbage in ${round(performance.now() - t)} ms`);
  };
  const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
  const ROOT = path.resolve(BENCH_DIR, '..');
  const HOST = '127.0.0.1';
  const MARKET = 'm15';

  const { values: opts } = parseArgs({
    options: {
      subscribers: { type: 'string', default: '10000' },
      'time-scale': { type: 'string', default: '15' },
      'connect-concurrency': { type: 'string', default: '200' },
      'order-connections': { type: 'string', default: '32' },
      'subscriber-client': { type: 'string', default: 'go' },
      pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/' },
      service: { type: 'string' },
      'ready-timeout': { type: 'string', default: '180' },
      'service-log': { type: 'string' },
      peer: { type: 'boolean', default: false },
    },
  });
  const int = (name, min, max) => {
    const n = Number(opts[name]);
    if (!Number.isInteger(n) || n < min || n > max) {
      console.error(`--${name} must be an integer in ${min}..${max}`);
      process.exit(2);
    }
    return n;
  };
  const N = int('subscribers', 1, 100_000);
  const CONNECT_CONCURRENCY = int('connect-concurrency', 1, 2000);
  const ORDER_CONNECTIONS = int('order-connections', 1, 512);
  const READY_TIMEOUT_S = int('ready-timeout', 1, 3600);
  const CLIENT = opts['subscriber-client'];
  if (CLIENT !== 'go' && CLIENT !== 'node') {
    console.error(
      '--subscriber-client must be go (bench/subscribers/main.go) or node (the ws package, in this process)',
    );
    process.exit(2);
  }
  const SCALE = Number(opts['time-scale']);
  if (!(SCALE > 0 && SCALE <= 900)) throw new Error('--time-scale must be in (0, 900]');
  const SESSION_S = 900 / SCALE;
  const PG_BASE = new URL(opts.pg);
  if (!['127.0.0.1', 'localhost'].includes(PG_BASE.hostname))
    throw new Error('--pg must point at 127.0.0.1');
  const SERVICE_MAIN = path.resolve(opts.service ?? path.join(ROOT, 'dist', 'src', 'main.js'));
  if (!fs.existsSync(SERVICE_MAIN)) {
    console.error(`${SERVICE_MAIN} is missing: run \`npm run build\` first.`);
    process.exit(2);
  }
  const PID = process.pid;
  const DB = `bench_ws_${PID}`;
  /** --peer: the channel the bare peer is told a close on (and the commit clock hears it). */
  const PEER_CHANNEL = opts.peer ? `bench_ws_peer_${PID}` : undefined;
  /** Target: the service at most this many times the bare peer, CPU per 1000 events and p99. */
  const PEER_RATIO_TARGET = 1.5;
  const dbUrl = (name) => Object.assign(new URL(PG_BASE), { pathname: `/${name}` }).toString();
  const log = (msg) => console.error(`[ws ${new Date().toISOString().slice(11, 19)}] ${msg}`);
  const round = (x, d = 1) =>
    x === undefined || x === null || !Number.isFinite(x) ? x : Math.round(x * 10 ** d) / 10 ** d;
  const state = {
    service: undefined,
    dbCreated: false,
    warnings: [],
    stderr: [],
    interrupted: false,
    listener: undefined,
    clients: [],
    gos: [],
    peer: undefined,
  };

  const { default: pg } = await import('pg');
  async function withDb(name, fn) {
    const c = new pg.Client({
      connectionString: dbUrl(name),
      connectionTimeoutMillis: 5000,
      statement_timeout: 120_000,
    });
    await within(10_000, c.connect(), `connect to ${name}`);
    try {
      return await fn(c);
    } finally {
      await c.end().catch(() => {});
    }
  }
  const rssKb = (pid) =>
    Number(/^VmRSS:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

  async function getJson(url) {
    const r = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }

  async function startService() {
    const port = await freePort(HOST);
    const env = {
      ...process.env,
      PORT: String(port),
      HOST,
      LOG_LEVEL: opts['service-log'] ? 'info' : 'warn',
      BASE_URL: `http://${HOST}:${port}`,
      SVC_BACKFILL_DAYS: '0',
      SVC_TIME_SCALE: String(SCALE),
      DATABASE_URL: dbUrl(DB),
    };
    delete env.DATA_DIR;
    log(
      `starting ${path.relative(process.cwd(), SERVICE_MAIN)} on ${HOST}:${port}, database ${DB}, SVC_TIME_SCALE=${SCALE} (m15 sessions of ${round(SESSION_S)} s)`,
    );
    const child = spawn(
      process.execPath,
      [
        ...SERVICE_NODE_FLAGS,
        ...(process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        SERVICE_MAIN,
      ],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    state.service = child;
    const serviceLog = opts['service-log'] && fs.createWriteStream(opts['service-log']);
    followServiceLog(child, {
      onRecord: (rec) => serviceLog?.write(`${JSON.stringify(rec)}\n`),
      onWarning: (rec) => state.warnings.length < 20 && state.warnings.push(rec),
      onStderr: (line) => state.stderr.length < 200 && state.stderr.push(line),
    });
    const base = `http://${HOST}:${port}`;
    const deadline = Date.now() + READY_TIMEOUT_S * 1000;
    while (Date.now() < deadline) {
      if (state.interrupted) throw new Error('interrupted');
      if (child.exitCode !== null)
        throw new Error(
          `service exited (code ${child.exitCode}):\n${state.stderr.slice(-20).join('\n')}`,
        );
      try {
        const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
        await r.arrayBuffer();
        if (r.status === 200) return { base, pid: child.pid, ws: `ws://${HOST}:${port}/api/v1/ws` };
      } catch {}
      await sleep(250);
    }
    throw new Error(`service not ready within ${READY_TIMEOUT_S} s`);
  }

  /** The commit clock (a worker thread LISTENing): every notice with its arrival time. */
  async function startListener(servicePid) {
    const notices = [];
    const w = new Worker(fileURLToPath(import.meta.url), {
      workerData: {
        url: dbUrl(DB),
        servicePid,
        wallClock: CLIENT === 'go',
        peerChannel: PEER_CHANNEL,
      },
    });
    state.listener = w;
    await new Promise((resolve, reject) => {
      w.on('message', (m) => (m.ready ? resolve() : m.cpu ? state.cpu?.(m.cpu) : notices.push(m)));
      w.once('error', reject);
    });
    return notices;
  }

  /** The listener's CPU samples so far: [time, service, postgres, subscribers, peer] (cumulative ticks). */
  function cpuSamples() {
    return new Promise((resolve) => {
      state.cpu = resolve;
      state.listener.postMessage('cpu');
    });
  }

  /**
   * CPU time (ms) of the service, PostgreSQL, the subscribers and the peer between two times, from the
   * samples just before `from` and just after `to` (the window is widened to whole samples).
   */
  function cpuBetween(samples, from, to) {
    const a = samples.findLast((x) => x[0] <= from) ?? samples[0];
    const b = samples.find((x) => x[0] >= to) ?? samples.at(-1);
    const tick = 1000 / CLK_TCK;
    return {
      window_ms: round(b[0] - a[0], 0),
      service_ms: (b[1] - a[1]) * tick,
      postgres_ms: (b[2] - a[2]) * tick,
      subscribers_ms: (b[3] - a[3]) * tick,
      peer_ms: (b[4] - a[4]) * tick,
    };
  }

  /** An account event's frame as the service writes it: its id and type first. */
  const FRAME_HEAD = /^\{"channel":"account","event":\{"id":(\d+),"type":"([^"]+)"/;
  /** One subscriber in this many keeps its frames whole, checked as JSON (and against the heads read) after the run. */
  const CHECKED = 100;

  /**
   * Opens up to `n` connections (the key on the upgrade), CONNECT_CONCURRENCY at a time, each
   * waiting for its `authenticated`; stops at the first that cannot open. Returns the clients.
   */
  async function connectAll(url, agents) {
    const clients = new Array(agents.length);
    let next = 0;
    let failed;
    const one = (i) =>
      new Promise((resolve, reject) => {
        const ws = new WebSocket(url, {
          headers: { authorization: `Bearer ${agents[i].key}` },
          perMessageDeflate: false,
        });
        // `types`: the event types this subscriber has had (the waits below ask it, O(1) per subscriber).
        const c = {
          i,
          ws,
          got: [],
          types: new Set(),
          ops: [],
          closed: undefined,
          frames: i % CHECKED === 0 ? [] : undefined,
        };
        const timer = setTimeout(
          () => (ws.terminate(), reject(new Error('no authenticated within 30 s'))),
          30_000,
        );
        ws.on('message', (data) => {
          const t = now();
          const s = data.toString();
          if (s.startsWith('{"channel"')) {
            // Only the arrival, id and type are kept, read off the frame's head (id, type, created_at,
            // data): these subscribers share the service's two cores, and holding every frame's
            // text would make their garbage collection take CPU from the service in a close's
            // fan-out. Every frame of one subscriber in CHECKED is kept whole and parsed as JSON
            // after the run.
            const head = FRAME_HEAD.exec(s);
            c.got.push(t, head ? Number(head[1]) : NaN, head?.[2]);
            c.types.add(head?.[2]);
            if (c.frames) c.frames.push(s);
          } else {
            c.ops.push(JSON.parse(s));
            if (c.ops.at(-1).op === 'authenticated') {
              clearTimeout(timer);
              resolve(c);
            }
          }
        });
        ws.on(
          'unexpected-response',
          (_q, res) => (
            clearTimeout(timer),
            reject(new Error(`upgrade answered ${res.statusCode}`))
          ),
        );
        ws.on('error', (err) => (clearTimeout(timer), reject(err)));
        ws.on('close', (code, reason) => (c.closed = { code, reason: reason.toString() }));
      });
    const worker = async () => {
      while (!failed && !state.interrupted) {
        const i = next++;
        if (i >= agents.length) return;
        try {
          clients[i] = await one(i);
        } catch (err) {
          failed ??= { at: i, error: err.message };
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECT_CONCURRENCY }, worker));
    const open = clients.filter(Boolean);
    return { clients: open, failed };
  }

  /** Waits (bounded) until `cond()` holds, polling. */
  async function until(cond, what, ms) {
    const deadline = Date.now() + ms;
    while (!cond()) {
      if (state.interrupted) throw new Error('interrupted');
      if (Date.now() > deadline)
        throw new Error(`${typeof what === 'function' ? what() : what}: not within ${ms / 1000} s`);
      await sleep(50);
    }
  }

  /** One pay_from_balance order per agent of `agents`, into the session open now. */
  async function placeOrders(base, agents) {
    const deals = (await getJson(`${base}/api/v1/markets/${MARKET}/deals?limit=5000`)).deals.filter(
      (d) => d.max_qty >= 1,
    );
    const tick = deals[0].tick;
    const statuses = {};
    let next = 0;
    const t0 = Date.now();
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= agents.length || state.interrupted) return;
        const d = deals[i % deals.length];
        const r = await fetch(`${base}/api/v1/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${agents[i].key}` },
          body: JSON.stringify({
            market: MARKET,
            offer_key: d.key,
            qty: 1,
            pay_from_balance: true,
          }),
          signal: AbortSignal.timeout(60_000),
        });
        const text = await r.text();
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status !== 201)
          throw new Error(`POST /api/v1/orders answered ${r.status}: ${text.slice(0, 300)}`);
      }
    };
    await Promise.all(Array.from({ length: ORDER_CONNECTIONS }, worker));
    const s = (Date.now() - t0) / 1000;
    return {
      tick,
      placed: agents.length,
      seconds: round(s, 2),
      per_s: round(agents.length / s, 0),
      statuses,
    };
  }

  const pct = (sorted, p) =>
    sorted.length
      ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
      : null;
  const stats = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return {
      n: s.length,
      min_ms: round(s[0]),
      p50_ms: round(pct(s, 50)),
      p90_ms: round(pct(s, 90)),
      p99_ms: round(pct(s, 99)),
      max_ms: round(s.at(-1)),
    };
  };

  const started = new Date();
  const summary = {
    scenario: 'ws',
    date: started.toISOString(),
    machine: {
      nproc: os.availableParallelism(),
      cpu: os.cpus()[0]?.model,
      node: process.version,
      loadavg_at_start: os.loadavg().map((x) => round(x, 2)),
    },
    config: {
      subscribers: N,
      time_scale: SCALE,
      session_s: round(SESSION_S, 1),
      connect_concurrency: CONNECT_CONCURRENCY,
      order_connections: ORDER_CONNECTIONS,
    },
  };
  try {
    summary.code = execFileSync('git', ['-C', ROOT, 'log', '-1', '--format=%h %s'], {
      encoding: 'utf8',
    }).trim();
  } catch {}

  /**
   * The compiled subscribers (bench/subscribers/main.go, bench/lib/go-subscribers.mjs): connected to
   * `server` (the service, or the bare peer: { ws, pid }), subscribed, waited on and read back in this
   * script's shape. A second set (the peer's) reuses the first one's build.
   */
  async function goSubscribers(server, agents, name = 'subscribers') {
    state.scratch ??= scratchDir();
    const go = startGoSubscribers({
      url: server.ws,
      keys: agents.map((a) => a.key),
      concurrency: CONNECT_CONCURRENCY,
      dir: state.scratch,
      name,
      bin: state.gos[0]?.bin,
    });
    state.gos.push(go);
    state.listener.postMessage({ subscribersPid: go.pid });
    const t0 = Date.now();
    const o = await go.open(Math.max(120_000, N * 60));
    const connectS = (Date.now() - t0) / 1000;
    await sleep(3000);
    const rss1 = rssKb(server.pid);
    const sub = await go.subscribe(150_000);
    return {
      opened: o.open,
      failed: o.failed ? { error: o.error } : undefined,
      connectS,
      rss1,
      droppedEarly: o.open - sub.held.length,
      closedCodes: Object.keys(sub.closed_reasons ?? {}).length
        ? JSON.stringify(sub.closed_reasons)
        : undefined,
      held: sub.held.map((i) => agents[i]),
      wait: (type, ms) => go.wait(type, ms),
      arrivals: async () => {
        const heldIds = new Set(sub.held);
        return (await go.report(120_000)).filter((c) => heldIds.has(c.i));
      },
      /** Closes every connection and waits (bounded) for the process to end. */
      stop: async () => (go.stop(), await waitExit(go.child, 10_000)),
    };
  }

  /** This process's own subscribers (the ws package), connected to `server` ({ ws, pid }). */
  async function nodeSubscribers(server, agents) {
    const t0 = Date.now();
    let { clients, failed } = await connectAll(server.ws, agents);
    state.clients = clients;
    const connectS = (Date.now() - t0) / 1000;
    await sleep(3000);
    const rss1 = rssKb(server.pid);
    for (const c of clients)
      c.ws.send(JSON.stringify({ op: 'subscribe', channels: ['account'], after: 0 }));
    const closedCodes = () => {
      const by = {};
      for (const c of clients)
        if (c.closed)
          by[`${c.closed.code} ${c.closed.reason}`] =
            (by[`${c.closed.code} ${c.closed.reason}`] ?? 0) + 1;
      return JSON.stringify(by);
    };
    await until(
      () => clients.every((c) => c.closed || c.ops.some((m) => m.op === 'subscribed')),
      () =>
        `every subscribe answered (${clients.filter((c) => c.ops.some((m) => m.op === 'subscribed')).length} so far; closed: ${closedCodes()})`,
      120_000,
    );
    const opened = clients.length;
    const droppedEarly = clients.filter((c) => c.closed).length;
    clients = clients.filter((c) => !c.closed);
    state.clients = clients;
    return {
      opened,
      failed,
      connectS,
      rss1,
      droppedEarly,
      closedCodes: droppedEarly ? closedCodes() : undefined,
      held: clients.map((c) => agents[c.i]),
      // Not a scan of every frame: with 10k subscribers, polled every 50 ms, that would stall this
      // thread (so stamping arrivals late) and take CPU from the service during a close's fan-out.
      wait: (type, ms) =>
        until(
          () => clients.every((c) => c.types.has(type)),
          `every subscriber to get its ${type}`,
          ms,
        ),
      arrivals: async () => clients,
      stop: async () => {
        for (const c of clients) c.ws.terminate();
        state.clients = [];
        await sleep(500);
        collectGarbage();
      },
    };
  }

  /** The last time in `ts` at or before `t` (-Infinity: none). */
  const lastBefore = (ts, t) => {
    let best = -Infinity;
    for (const x of ts ?? []) if (x <= t && x > best) best = x;
    return best;
  };
  /** Which part of the run an event belongs to, by its type: the orders, or one of the two closes. */
  const phaseOf = (type) =>
    type === 'order.filled'
      ? 'fill'
      : type === 'position.advanced'
        ? 'advance'
        : type?.startsWith('order.') || type === 'ledger.posted'
          ? 'orders'
          : undefined;
  /** The two closes, and the event type each one delivers to every subscriber. */
  const CLOSES = { fill: 'order.filled', advance: 'position.advanced' };
  /** Each close's commit (its earliest), last delivery and events, filled in by track(). */
  const newCloses = () =>
    Object.fromEntries(Object.keys(CLOSES).map((k) => [k, { commit: Infinity, last: 0, n: 0 }]));
  const track = (cl, commit, t) => {
    cl.commit = Math.min(cl.commit, commit);
    cl.last = Math.max(cl.last, t);
    cl.n++;
  };
  /**
   * Each close's figures from its commit to its last delivery: events/s, and the CPU of `processes`
   * (columns of cpuBetween: service, postgres, subscribers, peer) in all and per 1000 events.
   */
  const closeFigures = (closes, samples, processes) =>
    Object.fromEntries(
      Object.entries(closes).map(([k, v]) => {
        const cpu = cpuBetween(samples, v.commit, v.last);
        return [
          k,
          {
            events: v.n,
            commit_to_last_delivery_ms: round(v.last - v.commit, 0),
            events_per_s: round(v.n / ((v.last - v.commit) / 1000), 0),
            // Where the machine's CPU went from the close's commit to its last delivery (whole samples).
            cpu_ms: cpu,
            cpu_ms_per_1000_events: Object.fromEntries(
              processes.map((p) => [p, round((cpu[`${p}_ms`] / v.n) * 1000, 0)]),
            ),
          },
        ];
      }),
    );
  /** One process's CPU per 1000 delivered events over both closes (their CPU summed over their events summed). */
  const cpuPer1000 = (closes, process) => {
    const all = Object.values(closes);
    return round(
      (all.reduce((n, c) => n + c.cpu_ms[`${process}_ms`], 0) /
        all.reduce((n, c) => n + c.events, 0)) *
        1000,
      1,
    );
  };

  /** An account event's frame as the service writes it (src/events/websocket.ts accountFrame); checked against the frames kept whole. */
  const accountFrame = (json) => `{"channel":"account","event":${json}}`;

  /**
   * Every event of these accounts as the service's streams read it: its JSON text from the service's
   * own read task (actors/events/reads.ts eventsOfMany, the build under bench), by account and id.
   */
  /** The built actors/events/reads.js beside the service run (or the checkout's). */
  function builtReads() {
    const built = path.resolve(path.dirname(SERVICE_MAIN), '..', 'actors', 'events', 'reads.js');
    return fs.existsSync(built) ? built : path.join(ROOT, 'dist', 'actors', 'events', 'reads.js');
  }

  async function servedEvents(accountIds) {
    const { eventsOfMany } = await import(pathToFileURL(builtReads()).href);
    return withDb(DB, async (c) => {
      await c.query('set jit = off');
      // The read's statement as its EntityManager would run it: `?` placeholders, rows back.
      const em = {
        execute: async (sql, params) => {
          let n = 0;
          const text = sql.replace(/\?/g, () => `$${++n}`);
          if (n !== params.length)
            throw new Error(`eventsOfMany: ${n} placeholders for ${params.length} values`);
          return (await c.query(text, params)).rows;
        },
      };
      const out = new Map();
      for (let k = 0; k < accountIds.length; k += 1000) {
        const got = await eventsOfMany(em, {
          accounts: accountIds.slice(k, k + 1000).map((accountId) => ({ accountId, after: 0 })),
          limit: 1000,
        });
        for (const [id, r] of Object.entries(got))
          out.set(Number(id), new Map(('events' in r ? r.events : []).map((e) => [e.id, e.json])));
      }
      return out;
    });
  }

  /** Starts bench/ws-peer.mjs on these frames; resolves once it listens (HTTP and LISTEN). */
  async function startPeer(framesFile, read) {
    const args = [
      ...(process.env.BENCH_PEER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      path.join(BENCH_DIR, 'ws-peer.mjs'),
      '--frames',
      framesFile,
      '--db',
      dbUrl(DB),
      '--channel',
      PEER_CHANNEL,
    ];
    if (read) args.push('--read', builtReads());
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    state.peer = child;
    const sent = [];
    const listening = await within(
      120_000,
      new Promise((resolve, reject) => {
        readline.createInterface({ input: child.stdout }).on('line', (line) => {
          const m = JSON.parse(line);
          if (m.listening) resolve(m.listening);
          if (m.sent) sent.push(m.sent);
        });
        child.once('exit', (code) => reject(new Error(`ws-peer exited (code ${code})`)));
      }),
      'ws-peer start',
    );
    return { pid: child.pid, ws: `ws://${HOST}:${listening.port}${listening.path}`, sent };
  }

  /**
   * --peer: the bare uWS peer's fan-out of the same two closes. Builds each held subscriber's frames
   * of each close as the service sent them (checked byte for byte against the frames kept whole), stops
   * the service's subscribers and the service, starts the peer, connects the same client to it, and
   * tells it each close by a NOTIFY on PEER_CHANNEL. Latency: arrival minus that notice's arrival at
   * the commit clock; CPU: the peer's process, from the notice to its last delivery.
   */
  async function peerPhase(stopBefore, clients, agents, allNotices, read = false) {
    // This phase's notices only (an earlier peer phase was told the same closes).
    const noticesBefore = allNotices.length;
    const events = await servedEvents(clients.map((c) => agents[c.i].account_id));
    const subs = [];
    const expected = [];
    const built = { frames: 0, missing: 0, checked: 0, not_as_the_service_sent: 0 };
    for (const c of clients) {
      const agent = agents[c.i];
      const mine = events.get(agent.account_id);
      const frames = Object.fromEntries(Object.keys(CLOSES).map((k) => [k, []]));
      const ids = Object.fromEntries(Object.keys(CLOSES).map((k) => [k, []]));
      for (let k = 0; k < c.got.length; k += 3) {
        const phase = phaseOf(c.got[k + 2]);
        if (!(phase in CLOSES)) continue;
        const json = mine?.get(c.got[k + 1]);
        if (json === undefined) {
          built.missing++;
          continue;
        }
        const frame = accountFrame(json);
        if (c.frames) {
          built.checked++;
          if (c.frames[k / 3] !== frame) built.not_as_the_service_sent++;
        }
        frames[phase].push(frame);
        ids[phase].push(c.got[k + 1]);
        built.frames++;
      }
      const reads = Object.fromEntries(
        Object.entries(ids)
          .filter(([, xs]) => xs.length)
          .map(([k, xs]) => [k, { after: xs[0] - 1, last: xs.at(-1) }]),
      );
      subs.push({
        key: agent.key,
        agent_id: agent.agent_id,
        account_id: agent.account_id,
        reads,
        closes: frames,
      });
      expected.push({ agent, frames, ids });
    }
    log(
      `peer: ${built.frames} frames of ${subs.length} subscribers built by the service's read; ${built.checked} checked against the frames kept whole, ${built.not_as_the_service_sent} not as the service sent them, ${built.missing} missing`,
    );

    // What ran before stops (the service and its subscribers, or the first peer and its): this
    // peer's closes get the machine the service's closes had, without the service (its next closes
    // would land in the peer's fan-out).
    await stopBefore();
    state.scratch ??= scratchDir();
    const framesFile = path.join(state.scratch, 'peer-frames.json');
    fs.writeFileSync(framesFile, JSON.stringify({ subscribers: subs }), { mode: 0o600 });
    const peer = await startPeer(framesFile, read);
    state.listener.postMessage({ peerPid: peer.pid });
    log(`peer: bench/ws-peer.mjs (pid ${peer.pid}) at ${peer.ws}`);
    const peerAgents = expected.map((x) => x.agent);
    const rss0 = rssKb(peer.pid);
    const set =
      CLIENT === 'go'
        ? await goSubscribers(peer, peerAgents, 'peer')
        : await nodeSubscribers(peer, peerAgents);
    log(
      `peer: ${set.opened} connections open in ${round(set.connectS)} s, ${set.held.length} subscribed`,
    );
    await sleep(3000);
    const connections = {
      opened: set.opened,
      held: set.held.length,
      open_s: round(set.connectS),
      rss_kb: { before: rss0, authenticated: set.rss1, subscribed: rssKb(peer.pid) },
      rss_per_idle_connection_kb: round((set.rss1 - rss0) / set.opened, 2),
    };

    // Its closes, each told by a NOTIFY once the one before has reached every subscriber.
    await withDb(DB, async (db) => {
      for (const [name, type] of Object.entries(CLOSES)) {
        await sleep(2000);
        if (CLIENT === 'node') collectGarbage();
        await db.query('select pg_notify($1, $2)', [PEER_CHANNEL, name]);
        await set.wait(type, 120_000);
        log(`peer: every subscriber has its ${type}`);
      }
    });
    await sleep(1000);
    const peerClients = await set.arrivals();

    const toldAt = Object.fromEntries(Object.keys(CLOSES).map((k) => [k, []]));
    for (const n of allNotices.slice(noticesBefore))
      if (n.channel === PEER_CHANNEL && n.payload in toldAt) toldAt[n.payload].push(n.t);
    const extra = Object.entries(toldAt).filter(([, ts]) => ts.length !== 1);
    if (extra.length)
      throw new Error(`peer: each close is told once; heard ${JSON.stringify(extra)}`);
    const lat = Object.fromEntries(Object.keys(CLOSES).map((k) => [k, []]));
    const closes = newCloses();
    const checks = {
      events_delivered: 0,
      subscribers_not_as_sent: 0,
      frames_compared: 0,
      frames_not_byte_identical: 0,
      arrivals_stamped_before_their_notice: 0,
    };
    for (const c of peerClients) {
      const exp = expected[c.i];
      const got = Object.fromEntries(Object.keys(CLOSES).map((k) => [k, []]));
      for (let k = 0; k < c.got.length; k += 3) {
        const t = c.got[k];
        const phase = phaseOf(c.got[k + 2]);
        checks.events_delivered++;
        if (!(phase in got)) continue;
        const nth = got[phase].push(c.got[k + 1]) - 1;
        if (c.frames) {
          checks.frames_compared++;
          if (c.frames[k / 3] !== exp.frames[phase][nth]) checks.frames_not_byte_identical++;
        }
        // One notice per close: its frames are from it even when stamped before it (the peer can hear
        // it and send before the commit clock's thread stamps it; the clocks agree to a millisecond).
        const commit = toldAt[phase][0];
        if (t < commit) checks.arrivals_stamped_before_their_notice++;
        lat[phase].push(t - commit);
        track(closes[phase], commit, Math.max(t, commit));
      }
      if (Object.keys(CLOSES).some((k) => got[k].join() !== exp.ids[k].join()))
        checks.subscribers_not_as_sent++;
    }
    checks.closed_early = peerClients.filter((c) => c.closed).length;
    const figures = {
      implementation: read
        ? "bench/ws-peer.mjs --read: bare uWebSockets.js reading each close's events from the log with the service's statement (1000 accounts a read, 3 in flight), told by a NOTIFY on its own LISTEN connection"
        : 'bench/ws-peer.mjs: bare uWebSockets.js, the frames in memory, told by a NOTIFY on its own LISTEN connection',
      told_by: `NOTIFY ${PEER_CHANNEL} (payload: the close), heard by the peer and by the commit clock`,
      frames: built,
      connections,
      latency_ms: {
        close_fill: stats(lat.fill),
        close_advance: stats(lat.advance),
        closes: stats([...lat.fill, ...lat.advance]),
      },
      closes: closeFigures(closes, await cpuSamples(), ['peer', 'postgres', 'subscribers']),
      send_loops: peer.sent,
      checks,
    };
    return {
      figures,
      stop: async () => (await set.stop?.(), await stopChild(state.peer, 'ws-peer', 5000, log)),
    };
  }

  async function main() {
    await withDb('postgres', (c) => c.query(`create database "${DB}"`));
    state.dbCreated = true;
    const service = await startService();
    log(`service ready (pid ${service.pid})`);
    let t0 = Date.now();
    const agents = await registerMany(service.base, N, {
      tag: `bench ws ${PID}`,
      model: 'bench/ws.mjs',
      stop: () => state.interrupted,
    });
    const fx = await withDb(DB, (c) =>
      fundAgents(c, agents, {
        holders: Math.ceil(N / 1000),
        tag: `bench-ws-${PID}`,
        cents: 10n ** 9n,
      }),
    );
    summary.setup = { agents: fx.agents, register_s: round((Date.now() - t0) / 1000) };
    log(`registered and funded ${fx.agents} agents in ${summary.setup.register_s} s`);
    const notices = await startListener(service.pid);

    // Connections: the key on the upgrade, idle (authenticated, nothing subscribed), then subscribed.
    await sleep(2000);
    const rss0 = rssKb(service.pid);
    const subscribers =
      CLIENT === 'go'
        ? await goSubscribers(service, agents)
        : await nodeSubscribers(service, agents);
    const { opened, failed, connectS, rss1, droppedEarly, closedCodes } = subscribers;
    log(
      `${opened} connections open in ${round(connectS)} s (${CLIENT} subscribers)${failed ? ` (the next one failed: ${failed.error})` : ''}`,
    );
    if (droppedEarly)
      log(
        `${droppedEarly} connections ended before their subscribe was answered${closedCodes ? `: ${closedCodes}` : ''}`,
      );
    await sleep(3000);
    const rss2 = rssKb(service.pid);
    summary.connections = {
      subscriber_client: CLIENT,
      asked: N,
      opened,
      ended_before_subscribed: droppedEarly,
      held: subscribers.held.length,
      first_failure: failed ?? null,
      open_s: round(connectS),
      per_s: round(opened / connectS, 0),
      rss_kb: { before: rss0, authenticated: rss1, subscribed: rss2 },
      rss_per_idle_connection_kb: round((rss1 - rss0) / opened, 2),
      rss_per_subscribed_connection_kb: round((rss2 - rss0) / opened, 2),
    };
    log(
      `RSS ${round(rss0 / 1024)} MB → ${round(rss1 / 1024)} MB with ${opened} idle connections (${summary.connections.rss_per_idle_connection_kb} KB each) → ${round(rss2 / 1024)} MB subscribed (${summary.connections.rss_per_subscribed_connection_kb} KB each)`,
    );
    const held = subscribers.held;

    // Orders early in a session, so the next close fills them all.
    for (;;) {
      const m = await getJson(`${service.base}/api/v1/markets/${MARKET}`);
      if (m.seconds_to_close > SESSION_S * 0.6) break;
      log(`waiting ${round(m.seconds_to_close)} s for the next ${MARKET} session`);
      await sleep(m.seconds_to_close * 1000 + 1500);
    }
    const placing = await placeOrders(service.base, held);
    log(
      `placed ${placing.placed} orders into session ${placing.tick} in ${placing.seconds} s (${placing.per_s}/s)`,
    );
    summary.orders = placing;
    // The Node subscribers stand in for agents on other machines, but here they share the service's
    // two cores: their own collector's full collection, falling in a close's fan-out, would take
    // the service's CPU. Collected now, between closes.
    if (CLIENT === 'node') collectGarbage();
    const phaseMs = (SESSION_S * 2 + 120) * 1000;
    await subscribers.wait('order.filled', phaseMs);
    log('every subscriber has its order.filled');
    if (CLIENT === 'node') collectGarbage();
    await subscribers.wait('position.advanced', phaseMs);
    log('every subscriber has its position.advanced');
    await sleep(1000);
    const clients = await subscribers.arrivals();

    // Latency: each event's arrival minus the last notice (its account's, or `*`) before it.
    const byAccount = new Map();
    const star = [];
    for (const n of notices) {
      if (n.channel !== 'svc_events') continue;
      if (n.payload === '*') star.push(n.t);
      else
        for (const id of n.payload.split(','))
          (byAccount.get(Number(id)) ?? byAccount.set(Number(id), []).get(Number(id))).push(n.t);
    }
    const phases = { orders: [], fill: [], advance: [] };
    const closes = newCloses();
    let unmatched = 0;
    let wrongOrder = 0;
    let total = 0;
    const heads = await withDb(
      DB,
      async (c) =>
        new Map(
          (
            await c.query(
              'select account_id::float8 as a, last_id::float8 as h from account_event_head',
            )
          ).rows.map((r) => [r.a, r.h]),
        ),
    );
    let headMismatch = 0;
    let badFrames = 0;
    let checkedFrames = 0;
    for (const c of clients) {
      const account = agents[c.i].account_id;
      const ids = [];
      for (let k = 0; k < c.got.length; k += 3) {
        const t = c.got[k];
        const e = { id: c.got[k + 1], type: c.got[k + 2] };
        ids.push(e.id);
        total++;
        const commit = Math.max(lastBefore(byAccount.get(account), t), lastBefore(star, t));
        const phase = phaseOf(e.type);
        if (!Number.isFinite(commit)) {
          unmatched++;
          continue;
        }
        if (phase) phases[phase].push(t - commit);
        if (phase in closes) track(closes[phase], commit, t);
      }
      if (c.frames) {
        const parsed = c.frames.map((f) => JSON.parse(f));
        if (
          parsed.some(
            (f, k) =>
              f.channel !== 'account' ||
              f.event.id !== ids[k] ||
              f.event.type !== c.got[k * 3 + 2] ||
              typeof f.event.data !== 'object',
          )
        )
          badFrames++;
        checkedFrames += parsed.length;
      }
      if (ids.some((id, k) => id !== k + 1)) wrongOrder++;
      if (ids.length !== heads.get(account)) headMismatch++;
    }
    summary.latency_ms = {
      orders: stats(phases.orders),
      close_fill: stats(phases.fill),
      close_advance: stats(phases.advance),
      // Both closes' events: what --peer compares with the bare peer's.
      closes: stats([...phases.fill, ...phases.advance]),
      all: stats([...phases.orders, ...phases.fill, ...phases.advance]),
    };
    summary.closes = closeFigures(closes, await cpuSamples(), [
      'service',
      'postgres',
      'subscribers',
    ]);
    summary.checks = {
      events_delivered: total,
      subscribers_not_1_2_3: wrongOrder,
      frames_parsed_whole: checkedFrames,
      subscribers_with_a_frame_not_as_read: badFrames,
      subscribers_not_at_their_head: headMismatch,
      events_without_a_notice_before_them: unmatched,
      closed_early: clients.filter((c) => c.closed).length,
      service_warnings: state.warnings.length,
    };
    summary.targets = {
      p99_le_250_ms: {
        value: summary.latency_ms.all.p99_ms,
        met: summary.latency_ms.all.p99_ms <= 250,
      },
      rss_per_idle_connection_le_10_kb: {
        value: summary.connections.rss_per_idle_connection_kb,
        met: summary.connections.rss_per_idle_connection_kb <= 10,
      },
      subscribers_10000: { value: clients.length, met: clients.length >= 10_000 },
    };
    summary.rss_kb_end = rssKb(service.pid);
    if (PEER_CHANNEL) {
      const first = await peerPhase(
        async () => (
          await subscribers.stop(),
          await stopChild(state.service, 'service', 30_000, log)
        ),
        clients,
        agents,
        notices,
      );
      summary.peer = first.figures;
      // The floor of a fan-out that reads the log: the same peer reading each close's events first.
      const second = await peerPhase(first.stop, clients, agents, notices, true);
      summary.peer_read = second.figures;
      await second.stop();
      const svc = {
        cpu_per_1000: cpuPer1000(summary.closes, 'service'),
        p99_ms: summary.latency_ms.closes.p99_ms,
      };
      const floorOf = (figures) => ({
        cpu_per_1000: cpuPer1000(figures.closes, 'peer'),
        p99_ms: figures.latency_ms.closes.p99_ms,
      });
      const uws = floorOf(summary.peer);
      const uwsRead = floorOf(summary.peer_read);
      const ratio = (a, b) => ({
        cpu_per_1000: round(a.cpu_per_1000 / b.cpu_per_1000, 2),
        p99: round(a.p99_ms / b.p99_ms, 2),
      });
      const ratios = ratio(svc, uws);
      const readRatios = ratio(svc, uwsRead);
      summary.ratios = {
        service_to_uws: { ...ratios, service: svc, uws, target: PEER_RATIO_TARGET },
        service_to_uws_reading_the_log: {
          ...readRatios,
          service: svc,
          uws_reading_the_log: uwsRead,
        },
        uws_reading_the_log_to_uws: ratio(uwsRead, uws),
      };
      summary.targets.cpu_per_1000_service_to_uws_le_1_5 = {
        value: ratios.cpu_per_1000,
        met: ratios.cpu_per_1000 <= PEER_RATIO_TARGET,
      };
      summary.targets.p99_service_to_uws_le_1_5 = {
        value: ratios.p99,
        met: ratios.p99 <= PEER_RATIO_TARGET,
      };
      state.lastLines = [
        `ws: uws reading the log/uws cpu_per_1000 ${summary.ratios.uws_reading_the_log_to_uws.cpu_per_1000} p99 ${summary.ratios.uws_reading_the_log_to_uws.p99}`,
        `ws: service/uws reading the log cpu_per_1000 ${readRatios.cpu_per_1000} p99 ${readRatios.p99}`,
        `ws: service/uws cpu_per_1000 ${ratios.cpu_per_1000} p99 ${ratios.p99}`,
      ];
    }
    if (state.warnings.length) summary.warnings = state.warnings.slice(0, 5);

    const file = path.join(
      BENCH_DIR,
      'results',
      `${started
        .toISOString()
        .replace(/:/g, '-')
        .replace(/\.\d+Z$/, 'Z')}-ws.json`,
    );
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
    console.log(JSON.stringify({ ...summary, result_file: path.relative(ROOT, file) }, null, 2));
  }

  async function cleanup() {
    for (const go of state.gos) go.stop();
    await stopChild(state.peer, 'ws-peer', 5000, log);
    if (state.scratch) fs.rmSync(state.scratch, { recursive: true, force: true });
    for (const c of state.clients) c?.ws.terminate();
    if (state.listener) await state.listener.terminate().catch(() => {});
    if (state.service && state.service.exitCode === null)
      await stopChild(state.service, 'service', 30_000, log);
    if (state.dbCreated)
      await withDb('postgres', (c) =>
        c.query(`drop database if exists "${DB}" with (force)`),
      ).catch((e) => console.error(`drop ${DB}: ${e.message}`));
  }
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      state.interrupted = true;
      cleanup().finally(() => process.exit(130));
    });
  }
  let code = 0;
  try {
    await main();
  } catch (err) {
    console.error(`bench failed: ${err.stack ?? err}`);
    for (const w of state.warnings)
      console.error(`service warning: ${JSON.stringify(w).slice(0, 500)}`);
    if (state.stderr.length) console.error(state.stderr.slice(-20).join('\n'));
    code = 1;
  } finally {
    await cleanup();
  }
  for (const line of state.lastLines ?? []) console.log(line);
  process.exit(code);
}
