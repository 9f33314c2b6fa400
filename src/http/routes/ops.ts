// Operators' routes (CONTRACT.md "Extra routes"): liveness, readiness, Prometheus metrics.
import { json, route, type Route } from '../route.js';
import type { Services } from '../services.js';

export function opsRoutes(s: Services): Route[] {
  return [
    route({
      method: 'GET', path: '/healthz', auth: 'none', summary: 'Liveness',
      handler: () => json({ status: 'ok' }),
    }),
    route({
      method: 'GET', path: '/readyz', auth: 'none', summary: 'Readiness: migrations ran and every market has an open session',
      handler: () =>
        s.supervisor.ready
          ? json({ status: 'ready', schema: s.schema.last })
          : json({ status: 'starting', detail: 'markets are opening or catching up' }, 503, { 'retry-after': '1' }),
    }),
    route({
      method: 'GET', path: '/metrics', auth: 'none', summary: 'Prometheus metrics',
      handler: async () => ({ body: await s.metrics.text(), contentType: 'text/plain; version=0.0.4; charset=utf-8' }),
    }),
  ];
}
