// POST /mcp: the Model Context Protocol endpoint (CONTRACT.md "MCP"); src/mcp/tools.ts builds the
// tools from the finished route table and adapts the request to the SDK's transport. Stateless: GET
// and DELETE /mcp (a session's stream, a session's end) answer 405, as any other method of a
// path the table serves only under POST.
import { media, route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import { mcpEndpoint, type McpEndpoint } from '../tools.js';
import type { Services } from '../../http/services.js';
import { keyAuthenticator } from '../../http/authenticators/agent-key.js';

const rpc = (description: string) => media('application/json', description);

export function mcpRoute(routes: Route[], s: Services): Route {
  const built: Built = {};
  return route({
    method: 'POST',
    path: '/mcp',
    auth: 'none',
    api: false,
    summary:
      "MCP over Streamable HTTP (stateless, JSON answers): the API's operations as tools (?tags=markets,trading: only the operations of those OpenAPI tags), llms.txt, the protocol and /docs/agents as resources",
    optionalBody: true,
    response: {
      200: rpc('the JSON-RPC answer'),
      202: rpc('a notification or response was accepted (no body)'),
      400: rpc(
        'a JSON-RPC error: unreadable JSON (-32700), a batch (-32600: one message per POST), an invalid message, an unsupported protocol version, an unknown tag in ?tags= (-32602)',
      ),
      404: rpc('a JSON-RPC error'),
      406: rpc('a JSON-RPC error: Accept must name application/json and text/event-stream'),
      415: rpc('a JSON-RPC error: the body must be JSON'),
    },
    responses: {
      429: {
        description:
          'too many requests without a valid key from this address at once (with WebSockets before their auth): retry after Retry-After, or send the key',
      },
    },
    handler: (c) => serveMcp(routes, s, built, c),
  });
}

/** The table's MCP endpoint, once built. */
type Built = { endpoint?: McpEndpoint };

function serveMcp(routes: Route[], s: Services, built: Built, ctx: PublicContext): Promise<Reply> {
  // Built at the first request, over the table as it is then (this route included, not a tool).
  built.endpoint ??= mcpEndpoint(routes, s.config.baseUrl, {
    authenticate: keyAuthenticator(s),
    unauthenticated: s.unauthenticated,
  });
  return built.endpoint.handle(ctx);
}
