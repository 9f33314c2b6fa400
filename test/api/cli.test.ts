// The CLI (`agent-market`, dist/src/client/cli.js, on the typed client) against a running service:
// deals, order, cart add, positions and events (listed, and followed on the stream for a bounded
// number of events), as tables and as --json; the key from AGENT_MARKET_KEY or --key, the service
// from AGENT_MARKET_URL.
import t from 'tap';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent } from '../helpers/agents.js';

const run = promisify(execFile);
const CLI = path.resolve('dist/src/client/cli.js');
const MARKET = 'h2';
const c = await startClockedService(t);
const svc = c.svc;
const agent = await registerAgent(svc);

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = { ...process.env, AGENT_MARKET_URL: svc.url, AGENT_MARKET_KEY: '', ...env };
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: base, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

let deal: string;
t.test('deals: a table, and the API answer with --json', async (t) => {
  const table = await cli(['deals', MARKET]);
  t.equal(table.code, 0, table.stderr);
  t.match(table.stdout, /^h2 session \d+, closes .*: \d+ deals\nkey\s+family\s+unit_cost/);
  const json = await cli(['deals', MARKET, '--json']);
  const api = (await svc.getJson(`/api/v1/markets/${MARKET}/deals`)).body;
  t.same(JSON.parse(json.stdout), api);
  deal = api.deals[0].key;
  t.ok(table.stdout.includes(deal));
});

t.test('order: the key from AGENT_MARKET_KEY or --key; the purchase_url to hand over', async (t) => {
  const r = await cli(['order', MARKET, deal, '1'], { AGENT_MARKET_KEY: agent.key });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /order \d+: 1 x /);
  t.match(r.stdout, /hand this link to your holder.*\nhttp:\/\/.*\/checkout\//);
  const j = await cli(['order', MARKET, deal, '2', '--json', '--key', agent.key, '--idempotency-key', 'cli-1']);
  const again = await cli(['order', MARKET, deal, '2', '--json', '--key', agent.key, '--idempotency-key', 'cli-1']);
  const order = JSON.parse(j.stdout);
  t.equal(order.qty, 2);
  t.same(JSON.parse(again.stdout), order, 'the same key answers the same order');
  const orders = (await agent.get('/api/v1/orders')).body.orders;
  t.equal(orders.length, 2, 'two orders, not three');
  const none = await cli(['order', MARKET, deal, '1']);
  t.equal(none.code, 1, 'without a key');
  t.match(none.stderr, /error 401/);
  t.match(none.stderr, /AGENT_MARKET_KEY/);
  const bad = await cli(['order', MARKET, deal, 'many'], { AGENT_MARKET_KEY: agent.key });
  t.equal(bad.code, 2, 'a usage error');
});

t.test('cart add and cart', async (t) => {
  const r = await cli(['cart', 'add', MARKET, deal, '1', '--note', 'cheap for its family'], { AGENT_MARKET_KEY: agent.key });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /line \d+ in cart \d+/);
  t.match(r.stdout, /checkout_url: http/);
  const show = await cli(['cart', '--json'], { AGENT_MARKET_KEY: agent.key });
  t.equal(JSON.parse(show.stdout).items.length, 1);
});

t.test('positions: none yet, as a table and as JSON', async (t) => {
  const r = await cli(['positions'], { AGENT_MARKET_KEY: agent.key });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /\(none\)/);
  t.same(JSON.parse((await cli(['positions', '--json'], { AGENT_MARKET_KEY: agent.key })).stdout), { positions: [] });
});

t.test('events: listed, and followed on the stream for a bounded number of events', async (t) => {
  const list = await cli(['events'], { AGENT_MARKET_KEY: agent.key });
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /order\.created/);
  const api = (await agent.get('/api/v1/events')).body.events;
  t.ok(api.length >= 2);
  const follow = await cli(['events', '--follow', '--max', '2', '--json'], { AGENT_MARKET_KEY: agent.key });
  t.equal(follow.code, 0, follow.stderr);
  const lines = follow.stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.same(lines, api.slice(0, 2), 'the stream\'s first two events, one JSON object a line');
  const after = await cli(['events', '--follow', '--max', '1', '--after', String(api[0].id), '--json'], { AGENT_MARKET_KEY: agent.key });
  t.same(JSON.parse(after.stdout), api[1], 'resumed after an id');
});

t.test('markets, orders, account', async (t) => {
  const markets = await cli(['markets']);
  t.equal(markets.code, 0, markets.stderr);
  t.match(markets.stdout, /^id\s+label\s+interval_seconds/);
  t.match(markets.stdout, /\nh2\s/);
  const orders = await cli(['orders'], { AGENT_MARKET_KEY: agent.key });
  t.match(orders.stdout, /awaiting_payment/);
  const account = JSON.parse((await cli(['account', '--json'], { AGENT_MARKET_KEY: agent.key })).stdout);
  t.type(account.balance, 'number');
  t.match((await cli(['account'], { AGENT_MARKET_KEY: agent.key })).stdout, /balance/);
});

t.test('help and unknown commands', async (t) => {
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /usage: agent-market/);
  t.equal((await cli(['frobnicate'])).code, 2);
});
