// The one route table of the service.
import type { Route } from '../route.js';
import { checkOperationIds } from '../openapi.js';
import { mcpTools } from '../mcp.js';
import type { Services } from '../services.js';
import { menuSnapshots } from '../live-session.js';
import { discoveryRoutes, openApiRoute } from './discovery.js';
import { discoveryTexts } from '../content/discovery-texts.js';
import { marketRoutes } from './markets.js';
import { opsRoutes } from './ops.js';
import { opsPageRoutes } from './ops-pages.js';
import { historyRoutes } from './history.js';
import { tradesRoutes } from './trades.js';
import { analyticsRoutes } from './analytics.js';
import { bookRoutes } from './analytics-book.js';
import { projectionRoutes } from './projection.js';
import { pulseRoutes } from './pulse.js';
import { agentRoutes } from './agents.js';
import { tradingRoutes } from './trading.js';
import { eventRoutes } from './events.js';
import { receiptRoutes } from './receipts.js';
import { webhookRoutes } from './webhooks.js';
import { wsRoutes } from './ws.js';
import { cartRoutes } from './carts.js';
import { exchangeRoutes } from './exchange.js';
import { webRoutes } from './web.js';
import { competitionRoutes } from './competitions.js';
import { webDocsRoutes } from './web-docs.js';
import { mcpRoute } from './mcp.js';

export function routeTable(s: Services): Route[] {
  let texts: ReturnType<typeof discoveryTexts> | undefined;
  const routes = [
    ...discoveryRoutes(s, () => texts!),
    ...marketRoutes(s),
    ...historyRoutes(s),
    ...tradesRoutes(s),
    ...analyticsRoutes(s),
    ...bookRoutes(s),
    ...projectionRoutes(s),
    ...pulseRoutes(s, menuSnapshots(s)),
    ...agentRoutes(s),
    ...tradingRoutes(s),
    ...eventRoutes(s),
    ...receiptRoutes(s),
    ...webhookRoutes(s),
    ...wsRoutes(),
    ...cartRoutes(s),
    ...exchangeRoutes(s),
    ...competitionRoutes(s),
    ...webRoutes(s),
    ...opsRoutes(s),
    ...opsPageRoutes(s),
  ];
  routes.push(...webDocsRoutes(s, routes, () => texts!), openApiRoute(routes, s), mcpRoute(routes, s));
  // Built now over the finished table: a text naming a path that no route serves stops the start.
  texts = discoveryTexts(s, routes);
  // Every operation of /api/openapi.json has its declared, unique operationId, or nothing starts.
  checkOperationIds(routes);
  // and every JSON operation under /api/v1 makes an MCP tool (one flat argument object), or nothing starts.
  mcpTools(routes);
  return routes;
}
