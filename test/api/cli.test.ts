// The CLI (`agent-market`, dist/src/client/cli.js, on the typed client) against a running service:
// the whole loop of a new agent (token, register, deals, projection, order, cart add/list/link,
// events, receipt verify once its holder paid), deals, order, cart add, positions and events
// (listed, and followed on the stream for a bounded number of events), as tables and as --json;
// the key from AGENT_MARKET_KEY or --key, the service from AGENT_MARKET_URL; errors that name the
// URL tried; help that names only real markets.
import t from 'tap';
import net from 'node:net';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent } from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';
import { MARKET_IDS } from '../../src/engine/index.js';
import { baseUrlOf } from '../../src/client/cli.js';
import { DEFAULT_BASE_URL } from '../../src/client/index.js';
import { productionEnv } from '../helpers/child-env.js';

const run = promisify(execFile);
const CLI = path.resolve('dist/src/client/cli.js');
const MARKET = 'h2';
const c = await startClockedService(t);
const svc = c.svc;
const agent = await registerAgent(svc);

async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = productionEnv({ AGENT_MARKET_URL: svc.url, AGENT_MARKET_KEY: '', ...env });
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: base,
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof err.code === 'number' ? err.code : -1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? '',
    };
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

t.test(
  'order: the key from AGENT_MARKET_KEY or --key; the purchase_url to hand over',
  async (t) => {
    const r = await cli(['order', MARKET, deal, '1'], { AGENT_MARKET_KEY: agent.key });
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /order \d+: 1 x /);
    t.match(r.stdout, /hand this link to your holder.*\nhttp:\/\/.*\/checkout\//);
    const j = await cli([
      'order',
      MARKET,
      deal,
      '2',
      '--json',
      '--key',
      agent.key,
      '--idempotency-key',
      'cli-1',
    ]);
    const again = await cli([
      'order',
      MARKET,
      deal,
      '2',
      '--json',
      '--key',
      agent.key,
      '--idempotency-key',
      'cli-1',
    ]);
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
  },
);

t.test('quote, cancel and wait', async (t) => {
  const key = { AGENT_MARKET_KEY: agent.key };
  const q = await cli(['quote', MARKET, deal, '1'], key);
  t.equal(q.code, 0, q.stderr);
  t.match(q.stdout, /the holder pays \d+\.\d\d now/);
  t.match(q.stdout, /ordering now would answer 201/);
  const quote = JSON.parse((await cli(['quote', MARKET, deal, '1', '--json'], key)).stdout);
  const placed = JSON.parse((await cli(['order', MARKET, deal, '1', '--json'], key)).stdout);
  t.equal(placed.total_amount, quote.total_amount, 'the order is what the quote said');
  const last = (await agent.get('/api/v1/events?limit=1000')).body.next_after;
  const gone = await cli(['cancel', String(placed.id)], key);
  t.equal(gone.code, 0, gone.stderr);
  t.match(gone.stdout, new RegExp(`order ${placed.id}: cancelled`));
  const again = await cli(['cancel', String(placed.id), '--json'], key);
  t.equal(JSON.parse(again.stdout).status, 'cancelled');
  const waited = await cli(['wait', '--after', String(last), '--types', 'order.cancelled'], key);
  t.equal(waited.code, 0, waited.stderr);
  t.match(waited.stdout, /order\.cancelled/);
  const none = await cli(['wait', '--after', String(last + 1000), '--timeout', '1', '--json'], key);
  t.same(JSON.parse(none.stdout).events, []);
  const paid = await cli(['cancel', '999999999'], key);
  t.equal(paid.code, 1);
  t.match(paid.stderr, /error 404/);
});

t.test('cart add and cart', async (t) => {
  const r = await cli(['cart', 'add', MARKET, deal, '1', '--note', 'cheap for its family'], {
    AGENT_MARKET_KEY: agent.key,
  });
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
  t.same(JSON.parse((await cli(['positions', '--json'], { AGENT_MARKET_KEY: agent.key })).stdout), {
    positions: [],
  });
});

t.test('events: listed, and followed on the stream for a bounded number of events', async (t) => {
  const list = await cli(['events'], { AGENT_MARKET_KEY: agent.key });
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /order\.created/);
  const api = (await agent.get('/api/v1/events')).body.events;
  t.ok(api.length >= 2);
  const follow = await cli(['events', '--follow', '--max', '2', '--json'], {
    AGENT_MARKET_KEY: agent.key,
  });
  t.equal(follow.code, 0, follow.stderr);
  const lines = follow.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.same(lines, api.slice(0, 2), "the stream's first two events, one JSON object a line");
  const after = await cli(
    ['events', '--follow', '--max', '1', '--after', String(api[0].id), '--json'],
    { AGENT_MARKET_KEY: agent.key },
  );
  t.same(JSON.parse(after.stdout), api[1], 'resumed after an id');
});

t.test('markets, orders, account', async (t) => {
  const markets = await cli(['markets']);
  t.equal(markets.code, 0, markets.stderr);
  t.match(markets.stdout, /^id\s+label\s+interval_seconds/);
  t.match(markets.stdout, /\nh2\s/);
  const orders = await cli(['orders'], { AGENT_MARKET_KEY: agent.key });
  t.match(orders.stdout, /awaiting_payment/);
  const account = JSON.parse(
    (await cli(['account', '--json'], { AGENT_MARKET_KEY: agent.key })).stdout,
  );
  t.type(account.balance, 'number');
  t.match((await cli(['account'], { AGENT_MARKET_KEY: agent.key })).stdout, /balance/);
});

t.test('help and unknown commands', async (t) => {
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /usage: agent-market/);
  for (const command of [
    'token',
    'register',
    'projection',
    'cart list',
    'cart link',
    'receipt verify',
  ])
    t.match(help.stdout, `\n  ${command} `, `help names ${command}`);
  t.ok(
    help.stdout.indexOf('\n  quote ') < help.stdout.indexOf('\n  order '),
    'help puts the quote before the order, as an agent calls them',
  );
  t.match(help.stdout, /loop: deals, quote .*order/s, 'and says the loop');
  const named = /\(([a-z0-9, ]+)\)/
    .exec(help.stdout.split('\n').find((l) => l.trimStart().startsWith('deals '))!)![1]
    .split(', ');
  t.same(named, [...MARKET_IDS], "the markets help names are the service's, and only those");
  t.same(
    named,
    (await svc.getJson('/api/v1/markets')).body.markets.map((m: { id: string }) => m.id),
    'as the running service lists them',
  );
  t.equal((await cli(['frobnicate'])).code, 2);
});

t.test('errors name the URL tried; an empty AGENT_MARKET_URL is unset', async (t) => {
  // A port nothing listens on: one the system just gave a server that is closed again.
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const down = await cli(['markets'], { AGENT_MARKET_URL: `http://127.0.0.1:${port}` });
  t.equal(down.code, 1);
  t.match(
    down.stderr,
    `error: cannot reach the service at http://127.0.0.1:${port} (ECONNREFUSED): is it running? Set --url or AGENT_MARKET_URL`,
  );
  t.equal(
    baseUrlOf(undefined, { AGENT_MARKET_URL: '' }),
    DEFAULT_BASE_URL,
    'an empty AGENT_MARKET_URL: the default address, not "Failed to parse URL"',
  );
  t.equal(
    baseUrlOf('', { AGENT_MARKET_URL: 'http://a.test' }),
    'http://a.test',
    'an empty --url: the variable',
  );
  t.equal(
    baseUrlOf('http://b.test', { AGENT_MARKET_URL: 'http://a.test' }),
    'http://b.test',
    '--url first',
  );
  const bad = await cli(['markets', '--url', 'not a url']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /the service's URL must be an http\(s\) URL \(from --url\): "not a url"/);
});

t.test('the whole loop of a new agent through the CLI', async (t) => {
  const token = await cli(['token', '--json']);
  t.equal(token.code, 0, token.stderr);
  t.match(JSON.parse(token.stdout), { token: /^[A-Za-z0-9]{80}$/ });
  t.match((await cli(['token'])).stdout, /^key [A-Za-z0-9]{80}\nkey id [A-Za-z0-9]{20} \(public\)/);

  t.equal((await cli(['register'])).code, 2, 'register needs a name');
  const reg = await cli(['register', '--name', 'CLI loop agent']);
  t.equal(reg.code, 0, reg.stderr);
  const key = /export AGENT_MARKET_KEY=([A-Za-z0-9]{80})/.exec(reg.stdout)?.[1];
  t.ok(key, 'prints the key to export');
  const own = await cli([
    'register',
    '--name',
    'CLI agent two',
    '--token',
    JSON.parse(token.stdout).token,
    '--recall-phrase',
    'green lamp',
    '--json',
  ]);
  t.equal(own.code, 0, own.stderr);
  t.match(JSON.parse(own.stdout), { name: 'CLI agent two', token: JSON.parse(token.stdout).token });
  const as = { AGENT_MARKET_KEY: key! };
  t.equal(
    JSON.parse((await cli(['account', '--json'], as)).stdout).balance,
    0,
    'the new agent reads its account',
  );

  const menu = JSON.parse((await cli(['deals', 'm15', '--json'])).stdout);
  const offer = menu.deals[0].key;
  const projection = await cli(['projection', 'm15', offer], as);
  t.equal(projection.code, 0, projection.stderr);
  t.match(projection.stdout, /a naive projection from \d+ closed sessions/);
  t.match(projection.stdout, /losses are possible/, 'says what the projection does not cover');
  t.match(projection.stdout, /\nqty\s+low\s+mid\s+high\s+best\n/);
  const pj = JSON.parse((await cli(['projection', 'm15', offer, '--json'])).stdout);
  t.same(
    pj,
    (await svc.getJson(`/api/v1/markets/m15/deals/${offer}/projection`)).body,
    "--json is the API's answer",
  );
  t.equal(
    (await cli(['projection', 'm15', 'no-such-deal'])).code,
    1,
    'a deal not on the menu: refused',
  );

  const placed = JSON.parse((await cli(['order', 'm15', offer, '1', '--json'], as)).stdout);
  t.equal(placed.status, 'awaiting_payment');
  t.equal((await cli(['cart', 'add', 'm15', offer, '1'], as)).code, 0);
  const carts = await cli(['cart', 'list', '--json'], as);
  t.equal(JSON.parse(carts.stdout).carts.length, 1, "cart list: the agent's one cart");
  t.match((await cli(['cart', 'list'], as)).stdout, /^id\s+name\s+kind\s+mine\s+connected/);
  const link = await cli(['cart', 'link'], as);
  t.equal(link.code, 0, link.stderr);
  t.match(
    link.stdout,
    /to review and pay it:\s+http.*\n\s+to connect you to them:\s+http.*\/link\//,
  );

  const unpaid = await cli(['receipt', 'verify', String(placed.id)], as);
  t.equal(unpaid.code, 2);
  t.match(unpaid.stderr, /has no receipt/);
  const holder = await registerHolder(svc);
  t.equal((await holder.pay(placed.purchase_url)).status, 200);
  const verified = await cli(['receipt', 'verify', String(placed.id), '--json'], as);
  t.equal(verified.code, 0, verified.stderr);
  const v = JSON.parse(verified.stdout);
  t.equal(v.valid, true);
  t.equal(v.payload.iss, svc.config.baseUrl);
  const receipt = JSON.parse((await cli(['orders', '--json'], as)).stdout).orders.find(
    (o: { id: number }) => o.id === placed.id,
  ).receipt;
  t.match(
    (await cli(['receipt', 'verify', receipt])).stdout,
    /^valid: signed by /,
    'a receipt given whole verifies without a key',
  );
  const [h, body, sig] = receipt.split('.');
  const forged = Buffer.from(
    JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), charged: 0 }),
  ).toString('base64url');
  const tampered = await cli(['receipt', 'verify', `${h}.${forged}.${sig}`]);
  t.equal(tampered.code, 1, 'a tampered receipt does not verify');
  t.match(tampered.stderr, /error 422: the receipt does not verify against http/);
  t.match((await cli(['events'], as)).stdout, /order\.paid/, 'and the agent saw it paid');
});
