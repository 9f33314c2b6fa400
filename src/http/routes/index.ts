// The one route table of the service.
import type { Route } from '../route.js';
import type { Services } from '../services.js';
import { discoveryRoutes, openApiRoute } from './discovery.js';
import { marketRoutes } from './markets.js';
import { opsRoutes } from './ops.js';

export function routeTable(s: Services): Route[] {
  const routes = [...discoveryRoutes(s), ...marketRoutes(s), ...opsRoutes(s)];
  routes.push(openApiRoute(routes, s));
  return routes;
}
