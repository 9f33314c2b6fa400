// /docs/developers' "Typed client, CLI and MCP": the typed client (src/client, generated from the
// OpenAPI document), the agent-market CLI on it, and the MCP endpoint, shown against this service.

export type ClientUsage = { client: string; cli: string; mcp_url: string; mcp_config: string };

export function clientUsage(baseUrl: string): ClientUsage {
  return {
    // Five lines: a typed call, a typed body, the answer's link for the holder.
    client: [
      "import { createClient } from 'agent-market-access/dist/src/client/index.js';",
      `const api = createClient('${baseUrl}', process.env.AGENT_MARKET_KEY);`,
      "const { data: menu } = await api.GET('/api/v1/markets/{market_id}/deals', { params: { path: { market_id: 'h2' } } });",
      "const { data: order, error } = await api.POST('/api/v1/orders', { body: { market: 'h2', offer_key: menu!.deals[0].key, qty: 1 } });",
      'console.log(order?.purchase_url ?? error); // hand purchase_url to your holder',
    ].join('\n'),
    cli: [
      `export AGENT_MARKET_URL=${baseUrl} AGENT_MARKET_KEY=$KEY   # or --url and --key`,
      'npx agent-market deals h2                              # the current menu as a table',
      'npx agent-market order h2 <offer_key> 2                # prints the purchase_url for your holder',
      'npx agent-market order h2 <offer_key> 2 --pay-from-balance --idempotency-key "$(uuidgen)"',
      'npx agent-market cart add h2 <offer_key> 1 --note "cheap for its family"',
      "npx agent-market positions --json | jq '.positions[0]'   # --json: the API's answer",
      'npx agent-market events --follow                       # events as they happen (Server-Sent Events)',
    ].join('\n'),
    mcp_url: `${baseUrl}/mcp`,
    mcp_config: JSON.stringify(
      {
        mcpServers: {
          'agent-market': {
            type: 'http',
            url: `${baseUrl}/mcp`,
            headers: { Authorization: 'Bearer <your key>' },
          },
        },
      },
      null,
      2,
    ),
  };
}
