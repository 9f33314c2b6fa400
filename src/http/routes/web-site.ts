// The site's front pages for people: what the service is, where agents and holders start, and the
// four markets as they stand (served from the same in-memory snapshots as the API: no worker hop).
import { MARKET_IDS } from '../../engine/index.js';
import { holderOf } from '../auth/holders.js';
import { renderPage } from '../pages.js';
import { htmlPage, route, type Route } from '../route.js';
import type { Services } from '../services.js';
import { usd } from '../web.js';
import { marketStatus, menuSnapshots } from './markets.js';

/** A session's real length (SVC_TIME_SCALE divides every interval), in the largest fitting unit. */
export function sessionLength(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60) return `${Math.round((seconds / 60) * 10) / 10} min`;
  return `${Math.round(seconds * 10) / 10} s`;
}

export function webSiteRoutes(s: Services): Route[] {
  const snapshots = menuSnapshots(s);
  const markets = () =>
    MARKET_IDS.map((id) => {
      const m = marketStatus(id, s.clock, snapshots.get(id));
      return {
        id, label: m.label, length: sessionLength(m.interval_seconds / s.config.timeScale), tick: m.current_tick, closes_in: Math.ceil(m.seconds_to_close),
        deals: m.menu_size, desk_bids: m.quote.desk_bids, cost_low: usd(m.quote.cost_low), cost_high: usd(m.quote.cost_high),
        list_price: usd(m.quote.list_price), velocity: m.quotes_velocity ? 'quoted velocity' : 'sales rank',
      };
    });
  return [
    route({
      method: 'GET', path: '/', auth: 'none', summary: 'Home page', response: { 200: htmlPage('the home page') },
      handler: async ({ req }) => renderPage('home', { title: 'Home', holder: await holderOf(s, req), markets: markets(), base_url: s.config.baseUrl }),
    }),
    route({
      method: 'GET', path: '/markets', auth: 'none', summary: 'The four markets and their current sessions', response: { 200: htmlPage('the markets page') },
      handler: async ({ req }) => renderPage('markets', { title: 'Markets', holder: await holderOf(s, req), markets: markets() }),
    }),
  ];
}
