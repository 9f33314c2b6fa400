// The service's own route table (CONTRACT.md "MCP"): every operation of
// /api/openapi.json has its declared operationId, snake_case and unique, CONTRACT.md's names among
// them; every JSON operation under /api/v1 makes an MCP tool with one flat argument object.
import t from 'tap';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { routeTable } from '../../src/http/route-table.js';
import {
  buildOpenApi,
  checkOperationIds,
  isApiRoute,
  OPERATION_ID,
} from '../../src/api/openapi.js';
import { mcpTools } from '../../src/mcp/tools.js';
import type { Services } from '../../src/http/services.js';
import { MCP_TOOLS_LIST_BYTES } from '../../src/http/limits.js';

// Building the table touches only configuration, the logger and the clock.
const config = loadConfig({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PORT: '0' });
const services = {
  config,
  log: pino({ level: 'silent' }),
  clock: { realNow: () => 0 },
} as unknown as Services;
const routes = routeTable(services);
const api = routes.filter(isApiRoute);

t.test('every listed operation declares a unique snake_case operationId', async (t) => {
  t.ok(api.length > 40, `${api.length} operations`);
  for (const r of api)
    t.match(r.operationId, OPERATION_ID, `${r.method} ${r.path}: ${r.operationId}`);
  t.equal(new Set(api.map((r) => r.operationId)).size, api.length, 'unique');
  t.doesNotThrow(() => checkOperationIds(routes));
  const doc: any = buildOpenApi(routes, { title: 't', version: '1', serverUrl: '/' });
  const ids = Object.values<any>(doc.paths).flatMap((item) =>
    Object.values<any>(item).map((op) => op.operationId),
  );
  t.equal(ids.length, api.length);
  const at = (method: string, path: string) => doc.paths[path][method].operationId;
  t.same(
    [
      at('get', '/api/v1/markets'),
      at('get', '/api/v1/markets/{market_id}/deals'),
      at('get', '/api/v1/markets/{market_id}/deals/{offer_key}'),
      at('post', '/api/v1/orders'),
      at('get', '/api/v1/orders/{order_id}'),
      at('get', '/api/v1/positions'),
      at('get', '/api/v1/account'),
      at('post', '/api/v1/cart/items'),
      at('get', '/api/v1/events'),
    ],
    [
      'list_markets',
      'list_deals',
      'get_deal',
      'create_order',
      'get_order',
      'list_positions',
      'get_account',
      'add_cart_item',
      'list_events',
    ],
    "CONTRACT.md's names",
  );
});

t.test('a route listed without an operationId stops the table', async (t) => {
  const broken = routes.map((r) =>
    r.path === '/api/v1/orders' && r.method === 'POST' ? { ...r, operationId: undefined } : r,
  );
  t.throws(() => checkOperationIds(broken), /POST \/api\/v1\/orders has no operationId/);
});

t.test('MCP tools: the JSON operations under /api/v1, flat arguments', async (t) => {
  const tools = mcpTools(routes);
  const names = tools.map((x) => x.tool.name);
  t.notOk(
    names.includes('stream_events') ||
      names.includes('stream_market') ||
      names.includes('get_dataset_csv'),
    'no streams or CSV',
  );
  t.ok(tools.every((x) => x.route.path.startsWith('/api/v1/')));
  for (const { tool, route, places } of tools) {
    t.equal(tool.inputSchema.type, 'object', tool.name);
    t.equal(tool.description!.startsWith(route.summary), true, `${tool.name}: the summary`);
    t.equal(
      'idempotency_key' in (tool.inputSchema.properties ?? {}),
      route.method !== 'GET',
      `${tool.name}: idempotency_key iff it changes state`,
    );
    t.equal(places.size, Object.keys(tool.inputSchema.properties ?? {}).length);
    t.notOk(tool.outputSchema, `${tool.name}: no output schema (the weight of tools/list)`);
    t.notMatch(
      JSON.stringify(tool),
      /~kind|#\/components/,
      `${tool.name}: plain, self-contained JSON Schema`,
    );
  }
  const order = tools.find((x) => x.tool.name === 'create_order')!;
  t.same(Object.fromEntries(order.places), {
    market: 'body',
    offer_key: 'body',
    qty: 'body',
    pay_from_balance: 'body',
    idempotency_key: 'header',
    api_key: 'credential',
  });
  for (const { tool, route, places } of tools)
    t.equal(
      places.get('api_key') === 'credential',
      route.auth === 'key',
      `${tool.name}: api_key iff it needs the key`,
    );
  const deals = tools.find((x) => x.tool.name === 'list_deals')!;
  t.equal(deals.places.get('market_id'), 'path');
  t.equal(deals.places.get('family'), 'query');
  const size = Buffer.byteLength(JSON.stringify(tools.map((x) => x.tool)));
  t.ok(
    size < MCP_TOOLS_LIST_BYTES,
    `the tools are ${size} bytes (tools/list at most ${MCP_TOOLS_LIST_BYTES} in all)`,
  );
});
