// Discovery cannot drift: every path the manifest, /llms.txt, the agent
// protocol and the /docs pages name, with its {params} filled by real values of this running
// service (a market, a deal of the current menu, the agent's own cart, line, order and position,
// a family, a competition...), answers 2xx, 3xx or 422 (426 for the WebSocket's plain GET): never
// 404. Real service and database, the clock driven through a close.
import t from 'tap';
import { MARKETS } from '../../src/engine/index.js';
import { manifest } from '../../src/docs/manifest.js';
import { agentProtocol } from '../../src/docs/protocol.js';
import { RoutePaths } from '../../src/docs/route-paths.js';
import { routeTable } from '../../src/http/route-table.js';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send } from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';
import { T0 } from '../helpers/clock-rig.js';
import { run as cliRun } from '../../src/client/cli.js';

// h2 is a ranking market: its families answer signals (SPEC.md: 404 on markets that quote velocity).
const MARKET = 'h2';
const INTERVAL = MARKETS[MARKET].interval_seconds;

let nowMs = (T0 + 100) * 1000;
const svc = await startTestService(t, {}, { realMs: () => nowMs });
const base = svc.config.baseUrl;
const open = () => svc.services.supervisor.openTick(MARKET)!;

const agent = await registerAgent(svc);
const holder = await registerHolder(svc);
const auth = { authorization: `Bearer ${agent.key}`, cookie: holder.cookie };

// An order the holder pays, filled at the close into a position.
const deal0 = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals?limit=1`)).body.deals[0];
const order = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal0.key, qty: 1 });
// Set-up before any test: a failure throws (an assertion here would end the root test early).
const must = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`set-up: ${what}`);
};
must(order.status === 201, 'the order is placed');
must((await holder.pay(order.body.purchase_url)).status === 200, 'the order is paid');
const closedTick = open();
nowMs = svc.services.clock.closesAt(closedTick, INTERVAL) * 1000 + 1000;
await svc.services.supervisor.runDue();
const filled = (await agent.get(`/api/v1/orders/${order.body.id}`)).body;
must(filled.status === 'filled', 'the order filled at the close');

const deal = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals?limit=1`)).body.deals[0];
const cart = (await agent.get('/api/v1/cart')).body;
const family = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/families`)).body.families[0];
const competition = (await send(svc, 'GET', '/api/v1/competitions')).body.competitions[0];

/** A fresh line of the agent's default cart (a DELETE probe withdraws one). */
const newLine = async () => {
  const r = await agent.post('/api/v1/cart/items', {
    market: MARKET,
    offer_key: deal.key,
    qty: 1,
    note: 'probe',
  });
  if (r.status !== 201) throw new Error(`cart line: ${r.status} ${JSON.stringify(r.body)}`);
  return String(r.body.item_id);
};

/** A fresh order awaiting payment (a DELETE probe withdraws one; the filled order answers every other method). */
const newOrder = async () => {
  const r = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty: 1 });
  if (r.status !== 201) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
  return String(r.body.id);
};

/**
 * Real values for every placeholder a text may use: `{param}` of a route, or a shell variable of
 * the examples; `method` is the probe's.
 */
const VALUES: Record<string, (method: string) => string | Promise<string>> = {
  market_id: () => MARKET,
  offer_key: () => deal.key,
  DEAL: () => deal.key,
  cart_id: () => String(cart.id),
  CART: () => String(cart.id),
  item_id: newLine,
  order_id: (method) => (method === 'DELETE' ? newOrder() : String(order.body.id)),
  position_id: () => String(filled.position_id),
  cluster: () => String(family.cluster),
  id: () => String(competition.id),
  token: () => new URL(cart.checkout_url).pathname.split('/').pop()!,
  slug: () => 'agents',
  asset: () => 'swagger-ui.css',
  tick: () => String(closedTick),
  agent_id: () => String(agent.agentId),
};

type Mention = { method?: string; path: string; from: string };

const unescapeHtml = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");
const trim = (p: string) =>
  p
    .replace(/[.,;:)\]]+$/, '')
    .split('?')[0]
    .split('#')[0];
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The paths a text names: full addresses of this service, `METHOD /path` requests, `$B/...` examples, links. */
function mentions(text: string, from: string): Mention[] {
  const out: Mention[] = [];
  for (const m of text.matchAll(
    new RegExp(`(?:\\b(GET|POST|PUT|DELETE) )?${escapeRe(base)}(/[^\\s"'<>\`]*)`, 'g'),
  )) {
    out.push({ method: m[1], path: trim(m[2]), from });
  }
  // A request relative to the API base (or a site form such as POST /console/agents).
  for (const m of text.matchAll(/\b(GET|POST|PUT|DELETE) (\/[^\s"'<>`]*)/g))
    out.push({ method: m[1], path: trim(m[2]), from: `${from} (relative)` });
  // The examples' curl commands, but for one shown answering 404 on purpose ("# 404: an unknown market").
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (/^# 404:/.test(lines[i - 1] ?? '')) return;
    for (const m of line.matchAll(/"\$B(\/[^"]*)"/g))
      out.push({ path: `/api/v1${trim(m[1])}`, from: `${from} (example)` });
  });
  for (const m of text.matchAll(/\bhref="(\/[^"]*)"/g))
    out.push({ method: 'GET', path: trim(unescapeHtml(m[1])), from: `${from} (link)` });
  // Paths the developers' reference lists.
  for (const m of text.matchAll(/(?<![\w/.$])(\/api\/v1\/[^\s"'<>`]*)/g))
    out.push({ path: trim(m[1]), from: `${from} (reference)` });
  // The API base itself is an address prefix, not a route.
  return out.filter((x) => x.path.startsWith('/') && !/^\/api\/v1\/?$/.test(x.path));
}

/** A relative API request names a path under /api/v1 unless it is a site path itself. */
const apiTable = routeTable(svc.services);
const at = new RoutePaths(base, apiTable);
function resolve(m: Mention): Mention {
  if (m.path.startsWith('/api/') || !m.from.endsWith('(relative)')) return m;
  const methods = m.method ? [m.method] : ['GET'];
  return methods.some((x) => at.has(`/api/v1${m.path}`, x))
    ? { ...m, path: `/api/v1${m.path}` }
    : m;
}

async function fill(path: string, method = 'GET'): Promise<string> {
  let out = '';
  let last = 0;
  for (const m of path.matchAll(/\{([a-z_]+)\}|\$([A-Z]+)|<[^>]*>/g)) {
    const name = m[1] ?? m[2];
    const value = name ? VALUES[name] : undefined;
    if (!value) throw new Error(`no real value for ${m[0]} in ${path}`);
    out += path.slice(last, m.index) + encodeURIComponent(await value(method));
    last = m.index! + m[0].length;
  }
  return out + path.slice(last);
}

/** The answer to a mention: with its method, else GET, else the method the path takes. */
async function probe(
  method: string | undefined,
  path: string,
): Promise<{ method: string; status: number; rpcError?: number }> {
  for (const m of method ? [method] : ['GET', 'POST', 'PUT', 'DELETE']) {
    const get = m === 'GET';
    // A body that is no request body of any route: a route that validates one answers 422 and does nothing.
    const res = await svc.get(await fill(path, m), {
      method: m,
      redirect: 'manual',
      headers: get ? auth : { ...auth, 'content-type': 'application/json' },
      body: get ? undefined : '[]',
    });
    // A stream (Server-Sent Events) answers its head and stays open: its status is the answer.
    if (res.headers.get('content-type')?.startsWith('text/event-stream')) await res.body?.cancel();
    else if (path === '/mcp' && m === 'POST')
      return {
        method: m,
        status: res.status,
        rpcError: ((await res.json()) as { error?: { code?: number } }).error?.code,
      };
    else await res.arrayBuffer();
    if (res.status !== 405 || method) return { method: m, status: res.status };
  }
  return { method: 'ANY', status: 405 };
}

t.test(
  'every path the discovery texts name answers, its params filled with real values',
  async (t) => {
    const texts: [string, string][] = [
      ['manifest', JSON.stringify((await svc.getJson('/api/v1/manifest')).body)],
      ['llms.txt', await (await svc.get('/llms.txt')).text()],
      ['protocol', JSON.stringify((await svc.getJson('/api/v1/agents/protocol')).body)],
    ];
    for (const page of [
      '/docs',
      '/docs/agents',
      '/docs/developers',
      '/docs/events',
      '/docs/protocol',
      '/docs/competitions',
    ]) {
      const res = await svc.get(page);
      t.equal(res.status, 200, `${page} answers`);
      texts.push([page, unescapeHtml(await res.text())]);
    }
    const seen = new Map<string, Mention>();
    for (const [from, text] of texts) {
      for (const m of mentions(text, from).map(resolve)) seen.set(`${m.method ?? ''} ${m.path}`, m);
    }
    // The mentions most at risk of drifting are among those checked.
    const paths = [...seen.values()].map((m) => m.path);
    for (const p of [
      '/api/v1/markets/{market_id}/families/{cluster}/signals',
      '/api/v1/markets/{market_id}/projection',
      '/api/v1/markets/{market_id}/families',
      '/api/v1/cart',
      '/api/v1/events',
      '/api/v1/events/stream',
      '/api/v1/markets/{market_id}/stream',
      '/api/asyncapi.json',
      '/docs/events',
    ]) {
      t.ok(paths.includes(p), `${p} is named`);
    }
    t.ok(seen.size > 40, `${seen.size} mentions`);
    for (const m of seen.values()) {
      const r = await probe(m.method, m.path);
      // 426: the WebSocket's path, asking a plain GET for its upgrade (it exists: a wrong path is 404).
      // 400 with JSON-RPC's -32600: the MCP endpoint refusing the probe's body (an empty batch) as JSON-RPC says.
      const exists =
        (r.status >= 200 && r.status < 400) ||
        r.status === 422 ||
        (r.status === 426 && m.path === '/api/v1/ws') ||
        (r.status === 400 && r.rpcError === -32600);
      t.ok(exists, `${r.method} ${m.path} (${m.from}) answers ${r.status}`);
    }
  },
);

t.test(
  'the manifest names the signals of a family, which exist; never a market-level /signals',
  async (t) => {
    const m = (await svc.getJson('/api/v1/manifest')).body;
    t.notOk(
      m.history.endpoints.some((e: string) => e.endsWith('/{market_id}/signals')),
      'no /markets/{market_id}/signals',
    );
    t.ok(
      m.history.endpoints.includes(`${base}/api/v1/markets/{market_id}/families/{cluster}/signals`),
    );
    const signals = await send(
      svc,
      'GET',
      `/api/v1/markets/${MARKET}/families/${family.cluster}/signals`,
    );
    t.equal(signals.status, 200);
  },
);

t.test('a text naming a path no route serves cannot be built', async (t) => {
  const without = (pred: (p: string) => boolean) =>
    new RoutePaths(
      base,
      apiTable.filter((r) => !pred(r.path)),
    );
  t.throws(
    () =>
      manifest(
        without((p) => p.endsWith('/signals')),
        svc.services.schema,
      ),
    /names GET \/api\/v1\/markets\/\{market_id\}\/families\/\{cluster\}\/signals/,
  );
  t.throws(
    () => agentProtocol(without((p) => p === '/api/v1/markets/{market_id}/projection')),
    /no route serves/,
  );
  t.throws(() => at.api('/markets/{market_id}/signals'), /no route serves/, 'the old mention');
  t.throws(
    () => at.api('/orders', 'PUT'),
    /no route serves/,
    'a method no route of that path takes',
  );
  t.equal(
    at.api('/markets/h2/deals'),
    `${base}/api/v1/markets/h2/deals`,
    'a filled path of a route',
  );
  t.equal(
    at.rel('/carts/$CART/checkout', 'POST'),
    '/carts/$CART/checkout',
    'a shell variable fills a param',
  );
});

t.test(
  'llms.txt and the protocol say an order above max_qty is refused, a cart line clamped; the study step names families and projections',
  async (t) => {
    const llms = await (await svc.get('/llms.txt')).text();
    t.match(
      llms,
      /POST \S+\/orders with \{market, offer_key, qty\} \(qty 1\.\.max_qty: more is refused with 422, never clamped\)/,
    );
    t.match(llms, /a line's qty above the deal's max_qty is clamped to it/);
    t.match(
      llms,
      /A downside event [^\n]*settlement surcharge, debited when the position settles[^\n]*pnl_so_far leaves it out until then/,
      'llms.txt tells the loss a position shows only when it settles',
    );
    const study = llms.split('\n').find((l) => l.includes('Study the public record'))!;
    for (const p of [
      '/markets/{market_id}/families',
      '/markets/{market_id}/deals/{offer_key}/projection',
      '/markets/{market_id}/projection?cluster=',
    ]) {
      t.ok(study.includes(`${base}/api/v1${p}`), `the study step names ${p}`);
    }
    const proto = (await svc.getJson('/api/v1/agents/protocol')).body;
    const step5 = proto.steps.find((s: any) => s.step === 5);
    t.match(step5.note, /\/markets\/\{market_id\}\/families/);
    t.match(step5.note, /\/markets\/\{market_id\}\/projection\?cluster=/);
    t.ok(proto.analysis.endpoints.includes(`${base}/api/v1/markets/{market_id}/projection`));
    const step6 = proto.steps.find((s: any) => s.step === 6);
    t.match(step6.note, /more answers 422/);
    // What the texts say is what the service does.
    const tooMany = await agent.post('/api/v1/orders', {
      market: MARKET,
      offer_key: deal.key,
      qty: deal.max_qty + 1,
    });
    t.equal(tooMany.status, 422, 'an order above max_qty is refused');
    const line = await agent.post('/api/v1/cart/items', {
      market: MARKET,
      offer_key: deal.key,
      qty: deal.max_qty + 1,
    });
    t.equal(line.status, 201);
    t.same([line.body.qty, line.body.clamped], [deal.max_qty, true], 'a cart line is clamped');
  },
);

t.test(
  'GET /cart carries the permissions on your own cart, as every cart answer does',
  async (t) => {
    const mine = (await agent.get('/api/v1/cart')).body;
    const detail = (await agent.get(`/api/v1/carts/${mine.id}`)).body;
    t.ok(mine.permissions, 'GET /cart has permissions');
    t.same(mine.permissions, detail.permissions, 'the same as GET /carts/{cart_id}');
    t.same(
      [mine.permissions.read, mine.permissions.write],
      [true, true],
      'your own cart: read and write',
    );
  },
);

t.test(
  'the values llms.txt and the CLI help state hold on the live service: markets, fees, the stream limit',
  async (t) => {
    const llms = await (await svc.get('/llms.txt')).text();
    const live = (await svc.getJson('/api/v1/markets')).body.markets as {
      id: string;
      interval_seconds: number;
      fees: { fulfilment_per_unit: number; holding_per_unit_session: number };
    }[];
    // Markets: each line "- <id>: <label>, a session every <n> s of market time".
    const stated = [...llms.matchAll(/^- (\w+): .+, a session every (\d+) s of market time/gm)].map(
      (m) => [m[1], Number(m[2])],
    );
    t.same(
      stated,
      live.map((m) => [m.id, m.interval_seconds]),
      'llms.txt names the live markets and their sessions',
    );

    // Fees: "(USD: m15 0.30, ...)" of the fulfilment fee and of the holding fee, against GET /markets.
    const feesIn = (sentence: RegExp) => {
      const line = llms.split('\n').find((l) => sentence.test(l));
      return Object.fromEntries(
        [...(line ?? '').matchAll(/\b([mh]\d+) (\d+\.\d\d)\b/g)].map((m) => [m[1], Number(m[2])]),
      );
    };
    t.same(
      feesIn(/^- The fulfilment fee is per unit/),
      Object.fromEntries(live.map((m) => [m.id, m.fees.fulfilment_per_unit])),
      'the fulfilment fees llms.txt states are the live ones',
    );
    t.same(
      feesIn(/holding fee per unsold unit/),
      Object.fromEntries(live.map((m) => [m.id, m.fees.holding_per_unit_session])),
      'and the holding fees',
    );
    t.equal(
      filled.fee_amount,
      Number((filled.qty * live.find((m) => m.id === MARKET)!.fees.fulfilment_per_unit).toFixed(2)),
      "an order's fee_amount is qty × the stated fee",
    );

    // The monthly fee: what llms.txt says, what the holder's first payment of the month was charged.
    const monthly = Number(/The monthly participation fee: (\d+\.\d\d) USD/.exec(llms)?.[1]);
    t.equal(
      monthly,
      (await svc.getJson('/api/v1/payments/methods')).body.monthly_fee.amount,
      'the monthly fee llms.txt states is the one served',
    );
    const ledger = (await agent.get('/api/v1/account')).body.ledger as {
      kind: string;
      amount: number;
    }[];
    t.same(
      ledger.filter((e) => e.kind === 'monthly_fee').map((e) => Math.abs(e.amount)),
      [monthly],
      'and the one the holder was charged, once',
    );

    // The stream limit: as many as llms.txt says open, one more is refused.
    const limit = Number(/One key holds at most (\d+) streams at once/.exec(llms)?.[1]);
    t.ok(limit > 0, `llms.txt states ${limit} streams per key`);
    const streamer = await registerAgent(svc);
    const aborts: AbortController[] = [];
    t.teardown(() => aborts.forEach((a) => a.abort()));
    const openOne = async () => {
      const a = new AbortController();
      aborts.push(a);
      const res = await svc.get('/api/v1/events/stream', {
        headers: { accept: 'text/event-stream', authorization: `Bearer ${streamer.key}` },
        signal: a.signal,
      });
      if (res.status !== 200) await res.arrayBuffer();
      return res.status;
    };
    const opened = [];
    for (let i = 0; i < limit; i++) opened.push(await openOne());
    t.same(opened, Array(limit).fill(200), `${limit} streams open`);
    t.equal(await openOne(), 429, 'one more is refused');

    // The CLI's help names the live markets and no other.
    const help: string[] = [];
    await cliRun(['help'], {}, { json: false, write: (line) => help.push(line) }, () => {});
    const listed = /the current menu of a market \(([^)]*)\)/
      .exec(help.join('\n'))?.[1]
      .split(', ');
    t.same(
      listed,
      live.map((m) => m.id),
      'the CLI help lists the live markets',
    );
  },
);
