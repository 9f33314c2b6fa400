// The one route table of the service.
import type { Route } from './route.js';
import { checkOperationIds } from '../api/openapi.js';
import { mcpTools } from '../mcp/tools.js';
import type { Services } from './services.js';
import { menuSnapshots } from '../market-data/live-session.js';
import { discoveryRoutes, openApiRoute } from '../docs/routes/discovery.js';
import { discoveryTexts } from '../docs/discovery-texts.js';
import { marketRoutes } from '../api/routes/markets.js';
import { opsRoutes } from '../ops/routes/probes.js';
import { opsPageRoutes } from '../ops/routes/pages.js';
import { historyRoutes } from '../market-data/routes/history.js';
import { tradesRoutes } from '../market-data/routes/trades.js';
import { analyticsRoutes } from '../market-data/routes/analytics.js';
import { bookRoutes } from '../market-data/routes/analytics-book.js';
import { projectionRoutes } from '../api/routes/projection.js';
import { pulseRoutes } from '../market-data/routes/pulse.js';
import { agentRoutes } from '../api/routes/agents.js';
import { tradingRoutes } from '../api/routes/trading.js';
import { orderQuoteRoute } from '../api/routes/order-quote.js';
import { eventRoutes } from '../events/routes/events.js';
import { waitEventsRoute } from '../events/routes/wait.js';
import { receiptRoutes } from '../api/routes/receipts.js';
import { webhookRoutes } from '../api/routes/webhooks.js';
import { wsRoutes } from '../events/routes/websocket.js';
import { cartRoutes } from '../api/routes/carts.js';
import { exchangeRoutes } from '../api/routes/exchange.js';
import { webRoutes } from '../web/routes/index.js';
import { competitionRoutes } from '../api/routes/competitions.js';
import { webDocsRoutes } from '../docs/routes/pages.js';
import { mcpRoute } from '../mcp/routes/mcp.js';

export function routeTable(s: Services): Route[] {
  // The discovery texts name the finished table's paths: built once it is finished, read later.
  const late: { texts?: ReturnType<typeof discoveryTexts> } = {};
  const routes = [
    ...discoveryRoutes(s, () => late.texts!),
    ...marketRoutes(s),
    ...historyRoutes(s),
    ...tradesRoutes(s),
    ...analyticsRoutes(s),
    ...bookRoutes(s),
    ...projectionRoutes(s),
    ...pulseRoutes(s, menuSnapshots(s)),
    ...agentRoutes(s),
    orderQuoteRoute(s),
    ...tradingRoutes(s),
    ...eventRoutes(s),
    waitEventsRoute(s),
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
  routes.push(
    ...webDocsRoutes(s, routes, () => late.texts!),
    openApiRoute(routes, s),
    mcpRoute(routes, s),
  );
  // Built now over the finished table: a text naming a path that no route serves stops the start.
  late.texts = discoveryTexts(s, routes);
  // Every operation of /api/openapi.json has its declared, unique operationId, or nothing starts.
  checkOperationIds(routes);
  // and every JSON operation under /api/v1 makes an MCP tool (one flat argument object), or nothing starts.
  mcpTools(routes);
  return routes;
}
