// The four markets and their live session clock. Computed from the injected clock: no worker hop.
import Type from 'typebox';
import { MARKETS, MARKET_IDS, isMarketId, type MarketId } from '../../engine/index.js';
import { HttpError, json, route, type Route } from '../route.js';
import type { Clock } from '../../supervisor/clock.js';
import type { Services } from '../services.js';

const cents = (c: number) => Math.round(c) / 100;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function marketStatus(id: MarketId, clock: Clock) {
  const m = MARKETS[id];
  const tick = clock.tick(m.interval_seconds);
  const closesAt = clock.closesAt(tick, m.interval_seconds);
  return {
    id: m.id,
    label: m.label,
    interval_seconds: m.interval_seconds,
    current_tick: tick,
    tick_closes_at: round3(closesAt),
    seconds_to_close: round3(Math.max(0, closesAt - clock.realNow())),
    settlement_horizon_ticks: m.settlement_horizon_ticks,
    fees: {
      currency: 'USD',
      fulfilment_per_unit: cents(m.fees.fulfilment_per_unit_cents),
      holding_per_unit_session: cents(m.fees.holding_per_unit_session_cents),
    },
    max_qty: m.max_qty,
    pricing: { model: m.pricing_model },
    quotes_velocity: m.quotes_velocity,
  };
}

export const MarketParams = Type.Object({ market_id: Type.String({ description: 'm15, m45, h2 or h10' }) });

export function marketOr404(id: string): MarketId {
  if (!isMarketId(id)) throw new HttpError(404, `unknown market ${JSON.stringify(id)}; markets are ${MARKET_IDS.join(', ')}`);
  return id;
}

export function marketRoutes(s: Services): Route[] {
  return [
    route({
      method: 'GET', path: '/api/v1/markets', auth: 'none', summary: 'All markets with their current session and close time',
      handler: () => json({ markets: MARKET_IDS.map((id) => marketStatus(id, s.clock)) }),
    }),
    route({
      method: 'GET', path: '/api/v1/markets/{market_id}', auth: 'none', summary: 'One market',
      params: MarketParams,
      responses: { 200: { description: 'the market' }, 404: { description: 'unknown market' } },
      handler: ({ params }) => json(marketStatus(marketOr404(params.market_id), s.clock)),
    }),
  ];
}
