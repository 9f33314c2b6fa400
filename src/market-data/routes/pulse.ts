// Ticker and pulse (SPEC.md "Ticker", "Pulse"): served from the cached record part of
// src/market-data/pulse-source.ts, with the ticker's clock added per request.
import { route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import { PulseAnswer, TickerAnswer } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import type { MenuSnapshots } from '../snapshots.js';
import { cacheable, keptReply } from '../record-query.js';
import {
  PRICE_BASIS,
  PULSE_PATH,
  pulseSource,
  tickerNow,
  type PulseSource,
} from '../pulse-source.js';

export function pulseRoutes(s: Services, snapshots: MenuSnapshots): Route[] {
  const source = pulseSource(s);
  return [
    route({
      method: 'GET',
      path: '/api/v1/ticker',
      operationId: 'get_ticker',
      auth: 'none',
      summary:
        'Ticker per market: resale price at the last close, change, executed cost, volume, demand index, clock',
      response: { 200: TickerAnswer },
      responses: { 304: { description: 'If-None-Match matched' } },
      handler: (c) => getTicker(s, snapshots, c),
    }),
    route({
      method: 'GET',
      path: PULSE_PATH,
      operationId: 'get_pulse',
      auth: 'none',
      summary:
        'Pulse across the four markets: totals, last 30 days, last 24 hours, per day, per market, latest settled trades',
      response: { 200: PulseAnswer },
      responses: { 304: { description: 'If-None-Match matched' } },
      handler: (c) => getPulse(source, c),
    }),
  ];
}

async function getTicker(
  s: Services,
  snapshots: MenuSnapshots,
  { req }: PublicContext,
): Promise<Reply> {
  const markets = await tickerNow(s, snapshots);
  return cacheable(s, req, 'm15', { json: { price_basis: PRICE_BASIS, markets } }, false);
}

// The bytes and ETag made once per close with the answer (JSON and a hash per request would be its cost).
async function getPulse(source: PulseSource, { req }: PublicContext): Promise<Reply> {
  return keptReply(req, await source.pulseAnswer());
}
