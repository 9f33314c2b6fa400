// The cluster (CONTRACT.md "Several front ends"): `npm run cluster`'s command starts an
// embedded primary, a streaming replica, 3 nodes and HAProxy. Through the balancer, 8 agents order
// from their balances with Idempotency-Keys while two of them hold event streams; the node running
// the closes is killed with SIGKILL mid-load. Then: another node holds the closes within 5 s, m15
// keeps closing, every order a client saw acknowledged exists exactly once, each request has one
// order, every balance = Σ its ledger, every stream resumed on another node with Last-Event-ID
// missed nothing, and SIGTERM stops the command with nothing it started left running.
//
// Time: SVC_TIME_SCALE=60, so m15 closes every 15 s and h10 (the agents' market) every 600 s; the
// agents order on an h10 session with at least ORDER_WINDOW_S left, so no order meets its close.
import t from 'tap';
import pg from 'pg';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import { freePort } from '../helpers/child-service.js';
import { productionEnv } from '../helpers/child-env.js';
import { openSse, type SseStream } from '../helpers/sse.js';
import { within, eventually } from '../helpers/wait.js';
import { fileTimeout } from '../helpers/file-timeout.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { T0 } from '../helpers/clock-rig.js';
import { metricValue } from '../helpers/metrics.js';
import { ROOT } from '../helpers/root.js';

fileTimeout(300);

const CLUSTER_MAIN = path.join(ROOT, 'dist', 'src', 'cluster', 'main.js');
const SCALE = 60;
const MARKET = 'h10';
/** Seconds of the h10 session the orders need: the whole ordering phase fits in it. */
const ORDER_WINDOW_S = 60;
const AGENTS = 8;
const ORDERS_BEFORE = 4;
const ORDERS_AFTER = 6;
const ORDERS_ROLLING = 12;
const NODE_MAIN = path.join(ROOT, 'dist', 'src', 'main.js');

/** Whether process `pid` is running. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Each server's state as the balancer sees it now (HAProxy's admin socket, `show stat`). */
function balancerSees(dataDir: string): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const c = net.connect(path.join(dataDir, 'cluster', 'haproxy.sock'), () =>
      c.end('show stat\n'),
    );
    c.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('end', () => {
      const lines = out.trim().split('\n');
      const head = lines[0].replace(/^# /, '').split(',');
      const [sv, st] = [head.indexOf('svname'), head.indexOf('status')];
      resolve(
        new Map(
          lines
            .slice(1)
            .map((l) => l.split(','))
            .map((f) => [f[sv], f[st]]),
        ),
      );
    });
  });
}
/** A request a node may have received when it died is sent again with its key, at most this often. */
const RESENDS = 40;

type Reply = { status: number; body: any };
type Fleet = { key: string; accountId: number; agentId: number };

const dispatcher = new Agent({
  keepAliveTimeout: 1000,
  headersTimeout: 30_000,
  bodyTimeout: 30_000,
});
t.teardown(() => dispatcher.destroy());

async function send(
  base: string,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await request(`${base}${p}`, {
    method: method as 'GET',
    dispatcher,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: HAProxy's own pages
  }
  return { status: res.statusCode, body: parsed };
}

/** The processes cluster.json names (nodes, balancer, primary, replicas). */
function startedPids(dataDir: string): number[] {
  try {
    const f = JSON.parse(fs.readFileSync(path.join(dataDir, 'cluster.json'), 'utf8'));
    return [
      ...f.nodes.map((n: { pid: number }) => n.pid),
      f.balancer.pid,
      f.primary.pid,
      ...f.replicas.map((r: { pid: number }) => r.pid),
    ].filter((p) => p);
  } catch {
    return [];
  }
}

t.test(
  'three nodes behind HAProxy: orders, money and streams survive the death of the node running the closes',
  async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-'));
    fs.chmodSync(dataDir, 0o755); // the embedded server's user reaches its cluster inside
    const port = await freePort();
    const env = productionEnv(
      {
        DATA_DIR: dataDir,
        SVC_TIME_SCALE: String(SCALE),
        SVC_BACKFILL_DAYS: '0',
        SVC_SHARDS: '1',
        LOG_LEVEL: 'warn',
      },
      ['DATABASE_URL', 'BASE_URL', 'PORT'],
    );
    const proc = spawn(
      process.execPath,
      [CLUSTER_MAIN, '--nodes', '3', '--replicas', '1', '--port', String(port)],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const restarted: ChildProcess[] = [];
    t.teardown(() => restarted.forEach((c) => c.exitCode === null && c.kill('SIGKILL')));
    t.teardown(async () => {
      // A failed test still leaves nothing running: SIGTERM, then (a kill guard) SIGKILL of everything the command started.
      if (proc.exitCode === null) proc.kill('SIGTERM');
      let guard: NodeJS.Timeout | undefined;
      // A kill guard of a hung child, cleared once it exits: a pending timer would hold this process open for its minute.
      const done = await Promise.race([
        exited.then(() => true),
        new Promise<false>((r) => (guard = setTimeout(() => r(false), 60_000))),
      ]);
      clearTimeout(guard);
      if (!done) {
        proc.kill('SIGKILL');
        for (const pid of startedPids(dataDir)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    await within(
      2400,
      () => {
        if (proc.exitCode !== null)
          throw new Error(`the cluster command exited (${proc.exitCode}):\n${out}`);
        return /cluster ready: (\S+)/.exec(out)?.[1];
      },
      'cluster ready (2 minutes)',
    );
    const base = `http://127.0.0.1:${port}`;
    t.match(
      out,
      new RegExp(`cluster ready: http://127.0.0.1:${port}\n`),
      'the command says where it serves',
    );
    const file = JSON.parse(fs.readFileSync(path.join(dataDir, 'cluster.json'), 'utf8'));
    t.same(
      file.nodes.map((n: { name: string }) => n.name),
      ['node-1', 'node-2', 'node-3'],
    );
    t.equal(file.base_url, base);
    t.equal(file.replicas.length, 1);

    const primaryUrl = `postgres://postgres:${encodeURIComponent(fs.readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim())}@127.0.0.1:${file.primary.port}/postgres`;
    const db = new pg.Client({ connectionString: primaryUrl, statement_timeout: 30_000 });
    db.on('error', () => {}); // the primary stops at the end: a failed query reports it
    await db.connect();
    t.teardown(() => db.end().catch(() => {}));
    const rows = async (sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows;
    t.same(
      await rows(`select application_name as name, state from pg_stat_replication`),
      [{ name: 'replica-1', state: 'streaming' }],
      'the replica streams from the primary',
    );

    const readyOf = async (n: { port: number }) =>
      (
        await send(`http://127.0.0.1:${n.port}`, 'GET', '/readyz').catch(() => ({
          status: 0,
          body: null,
        }))
      ).body;
    const closers = async () =>
      (await Promise.all(file.nodes.map(readyOf)))
        .filter((r) => r?.closes === true)
        .map((r) => r.node as string);
    t.equal((await closers()).length, 1, 'one node runs the closes');

    // The fleet: agents registered through the balancer, funded by a holder through a ledger row each.
    const [holder] = await rows(
      `insert into holder (email, password_hash, created_at) values ('cluster@example.org', 'unused', ${instantSql('$1')}) returning id::float8 as id`,
      [T0],
    );
    const fleet: Fleet[] = [];
    for (let i = 0; i < AGENTS; i++) {
      const key = (await send(base, 'POST', '/api/v1/agents/token')).body.token as string;
      const reg = await send(base, 'POST', '/api/v1/agents/register', {
        token: key,
        name: `cluster ${i}`,
        recall_phrase: 'blue heron',
      });
      t.equal(reg.status, 201, `agent ${i} registered through the balancer`);
      fleet.push({ key, accountId: reg.body.account_id, agentId: reg.body.agent_id });
      await rows('update agent set holder_id = $1, autonomous_funding = true where id = $2', [
        holder.id,
        reg.body.agent_id,
      ]);
      await rows(
        'update account set holder_id = $1, balance_cents = balance_cents + 1000000 where id = $2',
        [holder.id, reg.body.account_id],
      );
      await rows(
        `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) values ($1, 'topup', 1000000, 1000000, $2, ${instantSql('$3')})`,
        [reg.body.account_id, `test:fixture:${reg.body.account_id}`, T0],
      );
    }
    const auth = (a: Fleet) => ({ authorization: `Bearer ${a.key}` });

    // An h10 session with room for the whole ordering phase.
    // A session with less left ends within ORDER_WINDOW_S s; the next one has the room (polls a second apart).
    await within(
      ORDER_WINDOW_S + 15,
      async () =>
        (await send(base, 'GET', `/api/v1/markets/${MARKET}`)).body.seconds_to_close >=
        ORDER_WINDOW_S,
      `an ${MARKET} session with ${ORDER_WINDOW_S} s left`,
      1000,
    );
    const menu = (await send(base, 'GET', `/api/v1/markets/${MARKET}/deals?limit=20`)).body;

    // Two agents follow their events through the balancer, resuming with Last-Event-ID when a stream ends.
    const seen = new Map<number, string[]>();
    const followers = fleet.slice(0, 2).map((a) => {
      const ids: string[] = [];
      seen.set(a.accountId, ids);
      let stream: SseStream | undefined;
      let stopped = false;
      const run = (async () => {
        while (!stopped) {
          const last = ids.at(-1);
          // Through the balancer, to whichever node holds the key now (a refused open is tried again).
          stream = await eventually(
            async () => {
              const s = await openSse(
                base,
                '/api/v1/events/stream',
                { ...auth(a), ...(last ? { 'last-event-id': last } : {}) },
                t,
              ).catch(() => undefined);
              if (s && s.status !== 200) s.close();
              return s?.status === 200 ? s : undefined;
            },
            'the event stream to open',
            200,
          );
          try {
            for (;;) {
              const m = await stream.nextEvent();
              if (m.id) ids.push(m.id);
            }
          } catch {
            // the stream ended (its node died or the test closed it): resume on whichever node the balancer picks
          }
        }
      })();
      return { stop: () => ((stopped = true), stream?.close(), run) };
    });

    // Each agent orders one after another; a request whose answer was lost (its node died) is sent again with its key.
    const acked = new Map<number, { account: number; key: string }>();
    const keys = new Set<string>();
    const wrong: string[] = [];
    let resent = 0;
    const order = async (a: Fleet, i: number) => {
      const key = randomUUID();
      keys.add(key);
      const deal = menu.deals[i % menu.deals.length];
      let attempts = 0;
      const r = await within(
        RESENDS,
        async () => {
          if (attempts++) resent++;
          const r = await send(
            base,
            'POST',
            '/api/v1/orders',
            { market: MARKET, offer_key: deal.key, qty: 1, pay_from_balance: true },
            { ...auth(a), 'idempotency-key': key },
          ).catch(() => null);
          // A lost connection or the balancer's 502/503 (the node died under it): the same key again.
          return r && r.status !== 502 && r.status !== 503 ? r : null;
        },
        `request ${key} to be answered`,
        100,
      );
      if (r.status !== 201) {
        wrong.push(`${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        return;
      }
      if (acked.has(r.body.id) && acked.get(r.body.id)!.key !== key)
        wrong.push(`order ${r.body.id} acknowledged to two requests`);
      acked.set(r.body.id, { account: a.accountId, key });
    };
    const phase = (from: number, n: number) =>
      Promise.all(
        fleet.map(async (a) => {
          for (let i = from; i < from + n; i++) await order(a, i);
        }),
      );

    await phase(0, ORDERS_BEFORE);
    // The closed record's reads that miss a node's cache go to the replica once it has replayed the closes.
    const replicaReads = async () => {
      let n = 0;
      for (const node of file.nodes) {
        const m = await send(`http://127.0.0.1:${node.port}`, 'GET', '/metrics').catch(() => null);
        if (m?.status === 200)
          n += metricValue(String(m.body), 'record_replica_reads_total{source="replica"}') || 0;
      }
      return n;
    };
    await within(
      60,
      async () => {
        await send(base, 'GET', '/api/v1/markets/m15/tape');
        return (await replicaReads()) > 0;
      },
      'a record read served by the replica',
      1000,
    );
    const [closer] = await closers();
    const victim = file.nodes.find((n: { name: string }) => n.name === closer);
    const m15Closed = async () =>
      Number(
        (
          await rows(
            `select count(*) filter (where closed_at is not null) as n from market_session where market = 'm15'`,
          )
        )[0].n,
      );
    // The kill lands while the agents order.
    const after = phase(ORDERS_BEFORE, ORDERS_AFTER);
    process.kill(victim.pid, 'SIGKILL');
    const others = file.nodes.filter((n: { name: string }) => n !== victim);
    const taker = await within(
      100,
      async () => (await Promise.all(others.map(readyOf))).find((r) => r?.closes === true)?.node,
      'another node to hold the closes within 5 s',
    );
    t.not(taker, closer, `${taker} took the closes over from ${closer}`);
    const closedAtTakeover = await m15Closed();
    await after;
    t.same(wrong, [], 'every order answered 201, once (resending a lost request with its key)');
    t.comment(`${resent} requests resent after the kill`);
    t.equal(acked.size, AGENTS * (ORDERS_BEFORE + ORDERS_AFTER), 'every request acknowledged');

    // The victim is dead: the next close is the taker's.
    await within(
      1200,
      async () => (await m15Closed()) >= closedAtTakeover + 1,
      'm15 to keep closing: the next close (15 s at scale 60; one minute allowed)',
    );

    // A rolling restart of the two nodes left, one at a time, while the agents order: no request fails.
    const resentBefore = resent;
    const rolling = phase(ORDERS_BEFORE + ORDERS_AFTER, ORDERS_ROLLING);
    for (const n of others) {
      process.kill(n.pid, 'SIGTERM');
      await within(400, () => !alive(n.pid), `${n.name} to stop (20 s)`);
      const again = spawn(process.execPath, [NODE_MAIN], {
        cwd: ROOT,
        stdio: 'ignore',
        env: {
          ...env,
          PORT: String(n.port),
          HOST: '127.0.0.1',
          DATABASE_URL: primaryUrl,
          BASE_URL: base,
          SVC_NODE_NAME: n.name,
          SVC_TRUSTED_PROXIES: '127.0.0.1',
          SVC_DRAIN_MS: '2000',
        },
      });
      restarted.push(again);
      await within(
        1200,
        async () => (await readyOf(n))?.status === 'ready',
        `${n.name} to be ready again (one minute)`,
      );
      await within(
        200,
        async () => (await balancerSees(dataDir)).get(n.name) === 'UP',
        `the balancer to take ${n.name} back (10 s)`,
      );
    }
    await rolling;
    t.same(wrong, [], 'every order during the rolling restart answered 201');
    t.equal(resent - resentBefore, 0, 'and none had to be resent: no request failed');
    t.equal(acked.size, AGENTS * (ORDERS_BEFORE + ORDERS_AFTER + ORDERS_ROLLING));

    // The books, read from the primary.
    const orders = await rows(`select id::float8 as id, account_id::float8 as account from orders`);
    t.same(
      orders.map((o) => o.id).sort((x, y) => x - y),
      [...acked.keys()].sort((x, y) => x - y),
      'the orders are exactly the acknowledged ones: none lost, none doubled',
    );
    for (const o of orders)
      if (acked.get(o.id)!.account !== o.account)
        wrong.push(`order ${o.id} on account ${o.account}`);
    t.same(wrong, [], "each on its agent's account");
    t.same(
      await rows(
        `select account_id, kind, ref, count(*)::int as n from ledger group by 1, 2, 3 having count(*) > 1 and kind <> 'holding_fee' limit 5`,
      ),
      [],
      'no ledger row doubled',
    );
    t.same(
      await rows(`select a.id from account a left join (select account_id, sum(amount_cents) as s from ledger group by 1) l on l.account_id = a.id
                      where a.balance_cents <> coalesce(l.s, 0) or a.balance_cents < 0`),
      [],
      'every balance = Σ its ledger',
    );

    // The streams: every event of the two accounts arrived, once, in order, across the node's death.
    await Promise.all(followers.map((f) => f.stop()));
    for (const a of fleet.slice(0, 2)) {
      const listed = (
        await send(base, 'GET', '/api/v1/events?limit=1000', undefined, auth(a))
      ).body.events.map((e: { id: number }) => String(e.id));
      t.same(
        seen.get(a.accountId),
        listed,
        `account ${a.accountId}: the stream saw every event once, in order (${listed.length})`,
      );
    }

    // SIGTERM: the command drains and stops everything it started.
    await db.end();
    proc.kill('SIGTERM');
    t.equal(await exited, 0, 'the command exits 0 on SIGTERM');
    // The restarted nodes are the test's own: stopped like the command's.
    await Promise.all(
      restarted.map((c) =>
        c.exitCode === null
          ? (c.kill('SIGTERM'), new Promise((r) => c.once('exit', r)))
          : undefined,
      ),
    );
    const left = () => startedPids(dataDir).filter(alive);
    // A stopped server's postmaster leaves a moment after its pid file: a few polls.
    await within(
      100,
      () => left().length === 0,
      `no process it started to be left (${left()})`,
    ).catch(() => undefined);
    t.same(left(), [], 'no process it started is left');
  },
);
