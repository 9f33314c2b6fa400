// MCP (CONTRACT.md "MCP") with the SDK's own client over Streamable HTTP: the tools are the API's
// operations (list, call, a key-required tool without a key, idempotency_key retried), the
// resources are llms.txt, the protocol and /docs/agents; GET and DELETE /mcp answer 405; a fuzzed
// POST /mcp never gets a 5xx; a batch (a JSON array) is refused with 400/-32600 before any tool runs;
// a tool answer past the byte budget is a tool error. The clock is the test's: the session stays
// open while it runs.
import t from 'tap';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent, send } from '../helpers/agents.js';
import { appendEvents } from '../../actors/events/log.js';
import { MCP_LIST_DEFAULT, MCP_RESULT_BYTES } from '../../src/http/limits.js';

const MARKET = 'h2';
const c = await startClockedService(t);
const svc = c.svc;
const agent = await registerAgent(svc);

async function connect(key?: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : undefined,
  });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}

const withKey = await connect(agent.key);
const anonymous = await connect();
const text = (r: any) => JSON.parse(r.content[0].text);

// What the fuzz tests send: messages of any shape, with the real tools' names and arguments among them.
const toolNames = (await anonymous.listTools()).tools.map((x) => x.name);
const json = fc.jsonValue({ maxDepth: 4 });
const message = fc.oneof(
  fc.record(
    {
      jsonrpc: fc.constantFrom('2.0', '1.0', 2),
      id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)),
      method: fc.oneof(
        fc.constantFrom('tools/call', 'tools/list', 'resources/read', 'initialize', 'ping'),
        fc.string(),
      ),
      params: fc.oneof(
        json,
        fc.record({
          name: fc.constantFrom(...toolNames, 'x'),
          arguments: fc.oneof(
            fc.dictionary(
              fc.constantFrom(
                'market_id',
                'market',
                'offer_key',
                'qty',
                'order_id',
                'limit',
                'idempotency_key',
                'family',
                'x',
              ),
              json,
            ),
            json,
          ),
        }),
      ),
    },
    { requiredKeys: [] },
  ),
  json,
);

t.test('initialize: a 2025-06-18 or later protocol, tools and resources', async (t) => {
  t.ok(withKey.getServerVersion()?.name);
  t.ok(withKey.getServerCapabilities()?.tools);
  t.ok(withKey.getServerCapabilities()?.resources);
  t.match(withKey.getInstructions(), /purchase_url/);
});

t.test(
  'tools/list: one tool per API operation, named by operationId, flat arguments',
  async (t) => {
    const { tools } = await anonymous.listTools();
    const names = tools.map((x) => x.name);
    for (const n of [
      'list_markets',
      'list_deals',
      'get_deal',
      'create_order',
      'get_order',
      'list_positions',
      'get_account',
      'add_cart_item',
      'list_events',
    ]) {
      t.ok(names.includes(n), `${n} is a tool`);
    }
    t.equal(new Set(names).size, names.length, 'unique names');
    t.notOk(names.includes('stream_events'), 'no streams');
    t.notOk(names.includes('get_dataset_csv'), 'JSON operations only');
    const doc = (await svc.getJson('/api/openapi.json')).body;
    const jsonOps = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.values<any>(item)
        .filter(
          (op) =>
            path.startsWith('/api/v1/') &&
            Object.entries<any>(op.responses).some(
              ([s, r]) =>
                s.startsWith('2') &&
                r.content?.['application/json'] &&
                !Object.keys(r.content).some((m) => m.startsWith('text/event-stream')),
            ),
        )
        .map((op) => op.operationId),
    );
    t.same(
      [...names].sort(),
      jsonOps.sort(),
      'every JSON operation of /api/openapi.json (not the streams), and only those',
    );

    const order = tools.find((x) => x.name === 'create_order')!;
    t.same(Object.keys(order.inputSchema.properties!).sort(), [
      'api_key',
      'idempotency_key',
      'market',
      'offer_key',
      'pay_from_balance',
      'qty',
    ]);
    t.same([...(order.inputSchema.required ?? [])].sort(), ['market', 'offer_key', 'qty']);
    t.match(order.description, /purchase_url/);
    t.match(order.description, /hand it to them/);
    t.match(order.description, /Authorization: Bearer/);
    t.notOk(
      order.outputSchema,
      'no output schema (the weight of tools/list): the result carries its JSON',
    );
    t.notOk(order.annotations?.readOnlyHint, "not read-only (the spec's default, not repeated)");

    const deals = tools.find((x) => x.name === 'list_deals')!;
    t.ok('market_id' in deals.inputSchema.properties!, 'path parameter');
    t.ok('family' in deals.inputSchema.properties!, 'query parameter');
    t.same(deals.inputSchema.required, ['market_id']);
    t.notOk('idempotency_key' in deals.inputSchema.properties!, 'reads take no idempotency_key');
    t.notOk('api_key' in deals.inputSchema.properties!, 'public tools take no api_key');
    t.equal(
      (deals.inputSchema.properties!.limit as { default?: number }).default,
      MCP_LIST_DEFAULT,
      `a list's page is ${MCP_LIST_DEFAULT} by default`,
    );
    t.equal(deals.annotations?.readOnlyHint, true);
    t.match(tools.find((x) => x.name === 'add_cart_item')!.description, /checkout_url/);
  },
);

let deal: any;
t.test('list_deals: the menu as structuredContent and as one text item', async (t) => {
  const r: any = await anonymous.callTool({ name: 'list_deals', arguments: { market_id: MARKET } });
  t.notOk(r.isError);
  t.equal(r.content.length, 1);
  t.same(text(r), r.structuredContent);
  const api = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals?limit=${MCP_LIST_DEFAULT}`))
    .body;
  t.same(r.structuredContent, api, `the API answer (its page of ${MCP_LIST_DEFAULT})`);
  deal = r.structuredContent.deals[0];
  t.ok(deal.key);
  const one: any = await anonymous.callTool({
    name: 'get_deal',
    arguments: { market_id: MARKET, offer_key: deal.key },
  });
  t.equal(one.structuredContent.key ?? one.structuredContent.deal?.key, deal.key);
});

t.test('create_order with the key: the order and its purchase_url to hand over', async (t) => {
  const r: any = await withKey.callTool({
    name: 'create_order',
    arguments: { market: MARKET, offer_key: deal.key, qty: 1 },
  });
  t.notOk(r.isError, JSON.stringify(r.content));
  t.equal(r.structuredContent.status, 'awaiting_payment');
  t.match(r.structuredContent.purchase_url, /^http/);
  const got: any = await withKey.callTool({
    name: 'get_order',
    arguments: { order_id: r.structuredContent.id },
  });
  t.equal(got.structuredContent.id, r.structuredContent.id);
  const orders = await agent.get('/api/v1/orders');
  t.ok(
    orders.body.orders.some((o: any) => o.id === r.structuredContent.id),
    'the order is on the account, as the API shows it',
  );
});

t.test("a validation failure is the API's 422, as a tool error", async (t) => {
  const r: any = await withKey.callTool({
    name: 'create_order',
    arguments: { market: MARKET, offer_key: deal.key, qty: 0 },
  });
  t.equal(r.isError, true);
  t.equal(text(r).status, 422);
  t.same(text(r).detail[0].loc, ['body', 'qty']);
  const unknown: any = await withKey.callTool({
    name: 'create_order',
    arguments: { market: MARKET, offer_key: deal.key, qty: 1, colour: 'red' },
  });
  t.equal(unknown.isError, true);
  t.match(text(unknown).detail, /unknown argument "colour"/);
});

t.test('idempotency_key: a retry answers the same order, once', async (t) => {
  const args = { market: MARKET, offer_key: deal.key, qty: 2, idempotency_key: 'mcp-retry-1' };
  const a: any = await withKey.callTool({ name: 'create_order', arguments: args });
  const b: any = await withKey.callTool({ name: 'create_order', arguments: args });
  t.notOk(a.isError, JSON.stringify(a.content));
  t.same(b.structuredContent, a.structuredContent, 'the same answer');
  t.equal(b._meta?.idempotent_replayed, true);
  const orders = (await agent.get('/api/v1/orders')).body.orders.filter(
    (o: any) => o.id === a.structuredContent.id,
  );
  t.equal(orders.length, 1, 'one order');
  const other: any = await withKey.callTool({
    name: 'create_order',
    arguments: { ...args, qty: 3 },
  });
  t.equal(other.isError, true, 'the same key with other arguments');
  t.equal(text(other).status, 400);
});

t.test('add_cart_item: the line and the checkout_url for the holder', async (t) => {
  const r: any = await withKey.callTool({
    name: 'add_cart_item',
    arguments: { market: MARKET, offer_key: deal.key, qty: 1, note: 'cheap for its family' },
  });
  t.notOk(r.isError, JSON.stringify(r.content));
  t.match(r.structuredContent.checkout_url, /\/carts\//);
  const cart = await agent.get('/api/v1/cart');
  t.ok(
    cart.body.items.some(
      (i: any) => i.id === r.structuredContent.item_id || i.item_id === r.structuredContent.item_id,
    ),
    'the line is in the default cart',
  );
});

t.test('a key-required tool without a key: a tool error that says so', async (t) => {
  for (const name of ['list_positions', 'create_order', 'get_account']) {
    const r: any = await anonymous.callTool({
      name,
      arguments: name === 'create_order' ? { market: MARKET, offer_key: deal.key, qty: 1 } : {},
    });
    t.equal(r.isError, true, name);
    t.match(text(r).detail, /needs the agent's API key/);
    t.match(text(r).detail, /Authorization: Bearer/);
    t.match(text(r).detail, /or as the api_key argument/);
  }
  const bad = await connect('A'.repeat(80));
  const r: any = await bad.callTool({ name: 'get_account', arguments: {} });
  t.equal(r.isError, true);
  t.equal(text(r).status, 401, "an unknown key: the API's 401");
  const pub: any = await anonymous.callTool({ name: 'list_markets', arguments: {} });
  t.notOk(pub.isError, 'public tools work without a key');
});

t.test(
  "a host without a key: create_token, register_agent, then the agent's tools with api_key",
  async (t) => {
    const token = text(await anonymous.callTool({ name: 'create_token', arguments: {} }))
      .token as string;
    const reg: any = await anonymous.callTool({
      name: 'register_agent',
      arguments: { token, name: 'keyless host', recall_phrase: 'no config' },
    });
    t.notOk(reg.isError, JSON.stringify(reg.content).slice(0, 300));
    const me: any = await anonymous.callTool({
      name: 'get_account',
      arguments: { api_key: token },
    });
    t.notOk(me.isError, JSON.stringify(me.content).slice(0, 300));
    t.equal(
      me.structuredContent.account_id,
      reg.structuredContent.account_id,
      "the new agent's own account",
    );
    const order: any = await anonymous.callTool({
      name: 'create_order',
      arguments: { market: MARKET, offer_key: deal.key, qty: 1, api_key: token },
    });
    t.equal(order.structuredContent.status, 'awaiting_payment', 'it orders as that agent');
    const mine = (
      await send(svc, 'GET', '/api/v1/orders', undefined, { authorization: `Bearer ${token}` })
    ).body.orders;
    t.ok(
      mine.some((o: any) => o.id === order.structuredContent.id),
      "the order is on the new agent's account",
    );
    const wrong: any = await anonymous.callTool({
      name: 'get_account',
      arguments: { api_key: 'B'.repeat(80) },
    });
    t.equal(text(wrong).status, 401, "a wrong api_key: the API's 401");
    const notString: any = await anonymous.callTool({
      name: 'get_account',
      arguments: { api_key: 7 },
    });
    t.equal(text(notString).status, 422, 'an api_key that is not a string: 422');
    // The request's own key wins over the argument (CONTRACT.md: api_key is for a request without one).
    const both: any = await withKey.callTool({
      name: 'get_account',
      arguments: { api_key: token },
    });
    t.equal(
      both.structuredContent.account_id,
      agent.accountId,
      'with Authorization on the request, the argument is not used',
    );
    const pub: any = await anonymous.callTool({
      name: 'list_markets',
      arguments: { api_key: token },
    });
    t.equal(text(pub).status, 422, 'a public tool takes no api_key');
  },
);

t.test('list_positions, get_account, list_events with the key', async (t) => {
  const p: any = await withKey.callTool({ name: 'list_positions', arguments: { limit: 5 } });
  t.ok(Array.isArray(p.structuredContent.positions));
  const a: any = await withKey.callTool({ name: 'get_account', arguments: {} });
  t.type(a.structuredContent.balance, 'number');
  const e: any = await withKey.callTool({ name: 'list_events', arguments: {} });
  t.notOk(e.isError, JSON.stringify(e.content).slice(0, 300));
  t.ok(Array.isArray(e.structuredContent.events));
  const unknownTool: any = await withKey.callTool({ name: 'no_such_tool', arguments: {} });
  t.equal(unknownTool.isError, true);
});

t.test('resources: llms.txt, the protocol, /docs/agents', async (t) => {
  const { resources } = await anonymous.listResources();
  t.same(
    resources.map((r) => new URL(r.uri).pathname),
    ['/llms.txt', '/api/v1/agents/protocol', '/docs/agents'],
  );
  for (const r of resources) {
    const read = await anonymous.readResource({ uri: r.uri });
    const body = (read.contents[0] as { text: string }).text;
    t.ok(body.length > 100, `${r.uri}: ${body.length} characters`);
    t.equal(read.contents[0].mimeType, r.mimeType);
  }
  const llms = await anonymous.readResource({ uri: resources[0].uri });
  t.equal((llms.contents[0] as { text: string }).text, await (await svc.get('/llms.txt')).text());
  await t.rejects(anonymous.readResource({ uri: `${svc.url}/nothing` }), /Resource not found/);
});

const rpcHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

t.test('quote_order before create_order, then cancel_order withdraws it', async (t) => {
  const q: any = await withKey.callTool({
    name: 'quote_order',
    arguments: { market: MARKET, offer_key: deal.key, qty: 1 },
  });
  t.notOk(q.isError, JSON.stringify(q.content));
  t.match(q.structuredContent, { market: MARKET, qty: 1, would_answer: { status: 201 } });
  const placed: any = await withKey.callTool({
    name: 'create_order',
    arguments: { market: MARKET, offer_key: deal.key, qty: 1 },
  });
  t.equal(placed.structuredContent.total_amount, q.structuredContent.total_amount, 'as quoted');
  const gone: any = await withKey.callTool({
    name: 'cancel_order',
    arguments: { order_id: placed.structuredContent.id },
  });
  t.notOk(gone.isError, JSON.stringify(gone.content));
  t.equal(gone.structuredContent.status, 'cancelled');
  const again: any = await withKey.callTool({
    name: 'cancel_order',
    arguments: { order_id: 999_999_999 },
  });
  t.equal(again.isError, true);
  t.equal(text(again).status, 404);
});

t.test('wait_events: held until the next event, none once timeout_s has passed', async (t) => {
  const last = (await agent.get('/api/v1/events?limit=1000')).body.next_after;
  const empty: any = await withKey.callTool({
    name: 'wait_events',
    arguments: { after: last, timeout_s: 1 },
  });
  t.notOk(empty.isError, JSON.stringify(empty.content));
  t.same(empty.structuredContent, { events: [], next_after: last }, 'nothing happened');
  const waiting = withKey.callTool({
    name: 'wait_events',
    arguments: { after: last, types: 'order.created', timeout_s: 25 },
  });
  // The order comes after the wait began (it is held: the answer cannot exist before it).
  const order = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty: 1 });
  t.equal(order.status, 201);
  const r: any = await waiting;
  t.notOk(r.isError, JSON.stringify(r.content));
  t.same(
    r.structuredContent.events.map((e: any) => [e.type, e.data.id]),
    [['order.created', order.body.id]],
    'the event it waited for, as GET /events serves it',
  );
  t.equal(r.structuredContent.next_after, r.structuredContent.events[0].id);
  const tooLong: any = await withKey.callTool({
    name: 'wait_events',
    arguments: { after: last, timeout_s: 26 },
  });
  t.equal(text(tooLong).status, 422, 'at most 25 s');
});

t.test('?tags= lists only the tools of those OpenAPI tags; an unknown tag is a 400', async (t) => {
  const list = async (tags: string) => {
    const r = await svc.get(`/mcp?tags=${tags}`, {
      method: 'POST',
      headers: { ...rpcHeaders, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const trading = await list('trading,events');
  t.equal(trading.status, 200);
  const names = trading.body.result.tools.map((x: any) => x.name);
  for (const n of ['create_order', 'quote_order', 'cancel_order', 'wait_events', 'list_events'])
    t.ok(names.includes(n), n);
  t.notOk(names.includes('list_markets'), 'a markets tool is left out');
  t.ok(names.length < toolNames.length);
  const openapi = (await svc.getJson('/api/openapi.json')).body;
  t.same(
    openapi.paths['/api/v1/orders/quote'].post.tags,
    ['trading'],
    "the tags are the OpenAPI document's",
  );
  const unknown = await list('trading,nope');
  t.equal(unknown.status, 400);
  t.equal(unknown.body.error.code, -32602);
  t.match(unknown.body.error.message, /unknown tag "nope"; tags are discovery, agents/);
});

t.test(
  'stateless: GET and DELETE /mcp answer 405; an old protocol version is refused',
  async (t) => {
    t.equal((await svc.get('/mcp')).status, 405);
    t.equal((await svc.get('/mcp', { method: 'DELETE' })).status, 405);
    const old = await svc.get('/mcp', {
      method: 'POST',
      headers: { ...rpcHeaders, 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    t.equal(old.status, 400);
    const init = await svc.get('/mcp', {
      method: 'POST',
      headers: rpcHeaders,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2024-11-05',
          capabilities: {},
          clientInfo: { name: 'old', version: '1' },
        },
      }),
    });
    const answer = await init.json();
    t.ok(
      answer.result.protocolVersion >= '2025-06-18',
      `an initialize asking 2024-11-05 is offered ${answer.result.protocolVersion}`,
    );
    const noSession = await svc.get('/mcp', {
      method: 'POST',
      headers: { ...rpcHeaders, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    t.equal(noSession.status, 200, 'tools/list without initialize on this request (stateless)');
    t.ok((await noSession.json()).result.tools.length > 20);
  },
);

t.test('bad JSON: a JSON-RPC parse error; a body over the limit: 413', async (t) => {
  const res = await svc.get('/mcp', {
    method: 'POST',
    headers: rpcHeaders,
    body: '{"jsonrpc": "2.0", ',
  });
  t.equal(res.status, 400);
  t.equal((await res.json()).error.code, -32700);
  const big = await svc.get('/mcp', {
    method: 'POST',
    headers: rpcHeaders,
    body: `{"x":"${'a'.repeat(svc.config.bodyLimitBytes)}"}`,
  });
  t.equal(big.status, 413);
  const cross = await svc.get('/mcp', {
    method: 'POST',
    headers: { ...rpcHeaders, origin: 'https://evil.example' },
    body: '{}',
  });
  t.equal(cross.status, 403, 'a cross-site browser request is refused');
});

const rpc = { jsonrpc: '2.0' as const };
/** Request lines of tools run inside the process (a tool call is a dispatch of its route). */
const toolRuns = () => svc.logs.filter((l) => l.msg === 'request' && l.internal === true).length;

/** Expects the batch refusal: 400, JSON-RPC -32600, a short answer. */
async function refusedAsBatch(
  body: string,
  headers: Record<string, string> = rpcHeaders,
): Promise<string | undefined> {
  const res = await svc.get('/mcp', { method: 'POST', headers, body });
  const out = await res.text();
  let code: unknown;
  try {
    code = JSON.parse(out).error?.code;
  } catch {}
  if (
    res.status === 400 &&
    code === -32600 &&
    /one JSON-RPC message per POST/.test(out) &&
    out.length < 1000
  )
    return undefined;
  return `${res.status} (${out.length} bytes) ${out.slice(0, 200)}`;
}

t.test('a batch (a JSON array body) answers 400 with -32600 and builds nothing', async (t) => {
  const runs = toolRuns();
  const calls = JSON.stringify(
    Array.from({ length: 50 }, (_, i) => ({
      ...rpc,
      id: i,
      method: 'tools/call',
      params: { name: 'list_markets', arguments: {} },
    })),
  );
  const cases: [string, string, Record<string, string>?][] = [
    [
      '100 tools/list without a key (issue 41: it answered 25 MB)',
      JSON.stringify(
        Array.from({ length: 100 }, (_, i) => ({ ...rpc, id: i, method: 'tools/list' })),
      ),
    ],
    ['50 tool calls', calls],
    ['one message in an array', JSON.stringify([{ ...rpc, id: 1, method: 'tools/list' }])],
    ['an empty array', '[]'],
    [
      'an initialize in an array',
      JSON.stringify([
        {
          ...rpc,
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-06-18',
            capabilities: {},
            clientInfo: { name: 'x', version: '1' },
          },
        },
      ]),
    ],
    [
      'with the key, after white space',
      ` \n\t${calls}`,
      { ...rpcHeaders, authorization: `Bearer ${agent.key}` },
    ],
  ];
  for (const [what, body, headers] of cases)
    t.equal(await refusedAsBatch(body, headers), undefined, what);
  t.equal(toolRuns(), runs, 'no tool ran');
  const one = await svc.get('/mcp', {
    method: 'POST',
    headers: rpcHeaders,
    body: JSON.stringify({
      ...rpc,
      id: 7,
      method: 'tools/call',
      params: { name: 'list_markets', arguments: {} },
    }),
  });
  t.equal(one.status, 200, 'the same message alone is answered');
  t.equal((await one.json()).id, 7);
});

t.test('fuzz: every JSON array body is refused as a batch, whatever it holds', async (t) => {
  const runs = toolRuns();
  const space = fc.string({ unit: fc.constantFrom(' ', '\n', '\t', '\r'), maxLength: 3 });
  await fc.assert(
    fc.asyncProperty(
      fc.array(message, { maxLength: 6 }),
      space,
      fc.boolean(),
      async (batch, before, keyed) => {
        const wrong = await refusedAsBatch(
          before + JSON.stringify(batch),
          keyed ? { ...rpcHeaders, authorization: `Bearer ${agent.key}` } : rpcHeaders,
        );
        if (wrong) throw new Error(`${JSON.stringify(batch).slice(0, 200)}: ${wrong}`);
      },
    ),
    { numRuns: 150 },
  );
  t.equal(toolRuns(), runs, 'no tool ran');
});

t.test(
  'a tool answer past the byte budget is a tool error that says to ask for less',
  async (t) => {
    const big = await registerAgent(svc);
    // 300 ledger entries of 2 KB each (a long `ref`), appended as a posting would.
    const ref = 'x'.repeat(2000);
    const entry = (i: number) => ({
      id: i + 1,
      account_id: big.accountId,
      kind: 'card_charge',
      amount: 1,
      currency: 'USD',
      balance_after: i + 1,
      ref,
      created_at: 0,
    });
    await appendEvents(
      svc.orm.em.fork(),
      Array.from({ length: 300 }, (_, i) => ({
        account_id: big.accountId,
        type: 'ledger.posted' as const,
        data: entry(i),
      })),
      svc.services.clock.realNow(),
    );
    t.ok(
      (await big.get('/api/v1/events?limit=1000')).body.events.length === 300,
      'the API answers the whole page (over HTTP)',
    );
    const client = await connect(big.key);
    const r: any = await client.callTool({ name: 'list_events', arguments: { limit: 1000 } });
    t.equal(r.isError, true, 'a tool error');
    t.equal(text(r).status, 413);
    t.match(text(r).detail, `list_events answered`);
    t.match(
      text(r).detail,
      `more than the ${MCP_RESULT_BYTES} an MCP tool result may carry: ask for less`,
    );
    t.notOk(r.structuredContent, 'nothing of the answer');
    const page: any = await client.callTool({ name: 'list_events', arguments: { limit: 10 } });
    t.notOk(page.isError, 'a smaller page is answered');
    t.equal(page.structuredContent.events.length, 10);
  },
);

t.test('fuzz: no POST /mcp, however malformed, gets a 5xx', async (t) => {
  const body = fc.oneof(
    { arbitrary: message.map((m) => JSON.stringify(m)), weight: 6 },
    { arbitrary: fc.array(message, { maxLength: 4 }).map((m) => JSON.stringify(m)), weight: 1 },
    { arbitrary: fc.string({ maxLength: 200 }), weight: 1 },
    { arbitrary: fc.constant('['.repeat(5000)), weight: 1 },
  );
  const headers = fc.record(
    {
      'content-type': fc.constantFrom(
        'application/json',
        'text/plain',
        'application/x-www-form-urlencoded',
      ),
      accept: fc.constantFrom('application/json, text/event-stream', 'application/json', '*/*'),
      'mcp-protocol-version': fc.constantFrom('2025-06-18', '2025-11-25', '1999-01-01', 'garbage'),
      authorization: fc.constantFrom(`Bearer ${agent.key}`, 'Bearer nope', 'Basic x'),
    },
    { requiredKeys: ['content-type', 'accept'] },
  );
  await fc.assert(
    fc.asyncProperty(body, headers, async (b, h) => {
      const res = await svc.get('/mcp', {
        method: 'POST',
        headers: h as Record<string, string>,
        body: b,
      });
      const out = await res.text();
      if (res.status >= 500)
        throw new Error(`${res.status} for ${b.slice(0, 200)}: ${out.slice(0, 300)}`);
    }),
    { numRuns: 300 },
  );
  t.same(
    svc.logs.filter((l) => /unhandled error|answer failed|does not match/.test(String(l.msg))),
    [],
    'nothing unhandled logged',
  );
});
