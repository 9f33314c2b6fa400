// What an MCP host puts in its model's context (CONTRACT.md "MCP" → Weight), measured as the host
// receives it
// (the HTTP bodies of POST /mcp) on a service with a day of recorded history:
// - tools/list at most MCP_TOOLS_LIST_BYTES;
// - every tool called with its default arguments (those it requires filled with real values)
//   answers at most MCP_TOOL_ANSWER_BYTES, and a list tool's default page is MCP_LIST_DEFAULT items;
// - an answer too large to carry twice comes once, in columnar form, and says nothing is lost
//   (a property: the columnar form expands back to the API's JSON).
import t from 'tap';
import fc from 'fast-check';
import { startRecordedService } from '../helpers/service.js';
import { registerAgent, send } from '../helpers/agents.js';
import {
  MCP_LIST_DEFAULT,
  MCP_TOOLS_LIST_BYTES,
  MCP_TOOL_ANSWER_BYTES,
} from '../../src/http/limits.js';
import { columnar } from '../../src/mcp/tools.js';

const svc = await startRecordedService(t);
const agent = await registerAgent(svc);

/** One JSON-RPC request as a host sends it: the answer's bytes and its parsed body. */
async function rpc(
  method: string,
  params: unknown,
  key?: string,
): Promise<{ bytes: number; body: any }> {
  const res = await svc.get('/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.text();
  return { bytes: Buffer.byteLength(text), body: JSON.parse(text) };
}

/** The inverse of columnar (the test's own): every {$columns, $rows} back to a list of objects. */
function expand(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(expand);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  if (Array.isArray(o.$columns) && Array.isArray(o.$rows) && Object.keys(o).length === 2) {
    return (o.$rows as unknown[][]).map((row) =>
      Object.fromEntries((o.$columns as string[]).map((k, i) => [k, expand(row[i])])),
    );
  }
  return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, expand(x)]));
}

t.test('columnar: nothing lost (any JSON value expands back to itself)', async (t) => {
  const key = fc
    .string({ minLength: 1, maxLength: 6 })
    .filter((k) => !k.startsWith('$') && k !== '__proto__');
  const row = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 4 }),
    fc.array(row, { maxLength: 6 }),
    fc.record({
      series: fc.array(
        fc.constant(null).chain(() => row),
        { maxLength: 6 },
      ),
      same: fc.array(fc.record({ a: fc.integer(), b: fc.string() }), { maxLength: 6 }),
    }),
  );
  fc.assert(
    fc.property(value, (v) => t.same(expand(columnar(v)), JSON.parse(JSON.stringify(v)))),
    { numRuns: 300 },
  );
  t.same(
    columnar([
      { a: 1, b: 2 },
      { a: 3, b: 4 },
    ]),
    {
      $columns: ['a', 'b'],
      $rows: [
        [1, 2],
        [3, 4],
      ],
    },
    'a list of like objects is a table',
  );
  const proto = JSON.parse('{"x": {"__proto__": {"y": 1}}}');
  t.same(
    JSON.stringify(columnar(proto)),
    JSON.stringify(proto),
    'a "__proto__" key of the JSON stays a key',
  );
});

t.test(`tools/list is at most ${MCP_TOOLS_LIST_BYTES} bytes`, async (t) => {
  const { bytes, body } = await rpc('tools/list', {});
  t.ok(
    bytes <= MCP_TOOLS_LIST_BYTES,
    `tools/list: ${bytes} bytes for ${body.result.tools.length} tools (at most ${MCP_TOOLS_LIST_BYTES})`,
  );
  t.ok(body.result.tools.length > 40, 'every operation is still a tool');
});

t.test(
  `every tool's answer to its default arguments is at most ${MCP_TOOL_ANSWER_BYTES} bytes; a list's default page is ${MCP_LIST_DEFAULT}`,
  async (t) => {
    const menu = (await send(svc, 'GET', '/api/v1/markets/m15/deals?limit=1')).body;
    const family = (await send(svc, 'GET', '/api/v1/markets/m15/families')).body.families[0];
    // The values of the arguments a tool requires (a tool needing one not here is not called: it has no default call).
    const values: Record<string, unknown> = {
      market_id: 'm15',
      offer_key: menu.deals[0].key,
      cluster: family.cluster,
      unit_cost: 10,
    };
    // Signals exist on the ranking markets only.
    const ranking = (await send(svc, 'GET', '/api/v1/markets/h2/families')).body.families[0];
    const valuesOf = (tool: string) =>
      tool === 'get_family_signals'
        ? { ...values, market_id: 'h2', cluster: ranking.cluster }
        : values;
    const { body } = await rpc('tools/list', {});
    const sizes: [string, number][] = [];
    for (const tool of body.result.tools as {
      name: string;
      inputSchema: { required?: string[] };
    }[]) {
      const required = tool.inputSchema.required ?? [];
      const v = valuesOf(tool.name);
      if (!required.every((k) => k in v)) continue;
      const args = Object.fromEntries(required.map((k) => [k, v[k as keyof typeof v]]));
      const r = await rpc('tools/call', { name: tool.name, arguments: args }, agent.key);
      sizes.push([tool.name, r.bytes]);
      t.notOk(
        r.body.result.isError,
        `${tool.name} answers: ${r.body.result.content[0].text.slice(0, 200)}`,
      );
      t.ok(
        r.bytes <= MCP_TOOL_ANSWER_BYTES,
        `${tool.name}: ${r.bytes} bytes (at most ${MCP_TOOL_ANSWER_BYTES})`,
      );
    }
    t.ok(sizes.length >= 30, `${sizes.length} tools called with their defaults`);
    t.comment(
      `the largest: ${sizes
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([n, b]) => `${n} ${b}`)
        .join(', ')}`,
    );

    const deals = await rpc('tools/call', { name: 'list_deals', arguments: { market_id: 'm15' } });
    const page =
      deals.body.result.structuredContent ?? expand(JSON.parse(deals.body.result.content[0].text));
    t.ok(
      menu.total > MCP_LIST_DEFAULT,
      `the menu has more deals (${menu.total}) than a default page`,
    );
    t.equal(
      page.deals.length,
      MCP_LIST_DEFAULT,
      `list_deals answers ${MCP_LIST_DEFAULT} deals by default`,
    );
    t.equal(page.total, menu.total, 'and says how many there are');
  },
);

t.test(
  'an answer too large to carry twice comes once, in columnar form, the same data',
  async (t) => {
    const r = await rpc('tools/call', { name: 'get_pulse', arguments: {} });
    const api = (await send(svc, 'GET', '/api/v1/pulse')).body;
    const json = Buffer.byteLength(JSON.stringify(api));
    t.ok(
      2 * json > MCP_TOOL_ANSWER_BYTES,
      `the pulse is ${json} bytes of JSON: twice would not fit`,
    );
    t.notOk(r.body.result.structuredContent, 'no second copy');
    t.match(r.body.result._meta.form, /^columnar/, 'the result says its text is columnar');
    t.same(
      expand(JSON.parse(r.body.result.content[0].text)),
      api,
      'the text expands to the API answer',
    );
    t.ok(r.bytes < json, `${r.bytes} bytes instead of ${json}`);
  },
);
