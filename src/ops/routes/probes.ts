// Operators' routes (CONTRACT.md "Extra routes", "Operators"): liveness and readiness (open: a
// balancer's health checks), Prometheus metrics (the /ops rule: a scraper sends the ops token).
import { json, media, route, type Reply, type Route } from '../../http/route.js';
import { Health, Ready, Starting } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';

export function opsRoutes(s: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      summary: 'Liveness',
      response: { 200: Health },
      handler: () => getHealth(),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      auth: 'none',
      summary:
        'Readiness: migrations ran, every market has an open session, and the node is not stopping',
      response: { 200: Ready, 503: Starting },
      handler: () => getReadiness(s),
    }),
    route({
      method: 'GET',
      path: '/metrics',
      auth: 'ops',
      summary: 'Prometheus metrics (the /ops access rule)',
      response: {
        200: media('text/plain; version=0.0.4; charset=utf-8', 'Prometheus text format'),
      },
      handler: () => getMetrics(s),
    }),
  ];
}

function getHealth(): Reply {
  return json({ status: 'ok' });
}

function getReadiness(s: Services): Reply {
  if (s.draining())
    return json(
      { status: 'stopping', detail: 'this node is stopping: a balancer takes it out' },
      503,
      { 'retry-after': '1' },
    );
  return s.supervisor.ready
    ? json({
        status: 'ready',
        schema: s.schema.last,
        node: s.node(),
        closes: s.supervisor.holdsCloses,
      })
    : json({ status: 'starting', detail: 'markets are opening or catching up' }, 503, {
        'retry-after': '1',
      });
}

async function getMetrics(s: Services): Promise<Reply> {
  return { body: await s.metrics.text(), contentType: 'text/plain; version=0.0.4; charset=utf-8' };
}
