// The site's front pages for people: what the service is, where agents and holders start, the
// four markets as they stand (served from the same in-memory snapshots as the API: no worker hop)
// and, on the home page, the pulse and the ticker (the API's cached record reads).
import { MARKET_IDS } from '../../engine/index.js';
import { holderOf } from '../../http/authenticators/holder-session.js';
import { renderFragment, renderPage } from '../pages.js';
import { htmlPage, route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { usd } from '../answers.js';
import { marketStatus, menuSnapshots, sessionLength } from '../../market-data/live-session.js';
import { pulseSource, tickerNow } from '../../market-data/pulse-source.js';
import { FragmentCache } from '../fragment-cache.js';
import { pulseView, type PulseLike } from '../pulse-view.js';
import { recordPosition } from '../../market-data/record-query.js';

export function webSiteRoutes(s: Services): Route[] {
  // The pulse part of the home page changes only when a market closes: kept per set of open sessions.
  const pulseParts = new FragmentCache(4, 512 * 1024);
  return [
    route({
      method: 'GET',
      path: '/',
      auth: 'none',
      summary: 'Home page',
      response: { 200: htmlPage('the home page') },
      handler: (c) => showHome(s, pulseParts, c),
    }),
    route({
      method: 'GET',
      path: '/markets',
      auth: 'none',
      summary: 'The four markets and their current sessions',
      response: { 200: htmlPage('the markets page') },
      handler: (c) => showMarkets(s, c),
    }),
  ];
}

async function showHome(
  s: Services,
  pulseParts: FragmentCache,
  { req }: PublicContext,
): Promise<Reply> {
  const [holder, pulsePart] = await Promise.all([holderOf(s, req), pulse(s, pulseParts)]);
  return renderPage('home', {
    title: 'Home',
    holder,
    markets: marketsView(s),
    base_url: s.config.baseUrl,
    pulse: pulsePart,
  });
}

async function showMarkets(s: Services, { req }: PublicContext): Promise<Reply> {
  return renderPage('markets', {
    title: 'Markets',
    holder: await holderOf(s, req),
    markets: marketsView(s),
  });
}

function marketsView(s: Services) {
  const snapshots = menuSnapshots(s);
  return MARKET_IDS.map((id) => {
    const m = marketStatus(id, s.clock, snapshots.get(id));
    return {
      id,
      label: m.label,
      length: sessionLength(m.interval_seconds / s.config.timeScale),
      tick: m.current_tick,
      closes_in: Math.ceil(m.seconds_to_close),
      deals: m.menu_size,
      desk_bids: m.quote.desk_bids,
      cost_low: usd(m.quote.cost_low),
      cost_high: usd(m.quote.cost_high),
      list_price: usd(m.quote.list_price),
      velocity: m.quotes_velocity ? 'quoted velocity' : 'sales rank',
    };
  });
}

/** The home page's pulse part, from `pulseParts` while no market has closed since. */
function pulse(s: Services, pulseParts: FragmentCache): Promise<string> {
  return pulseParts.get(
    MARKET_IDS.map((m) => recordPosition(s, m).open).join(','),
    async () => {
      const [p, ticker] = await Promise.all([
        pulseSource(s).pulse(),
        tickerNow(s, menuSnapshots(s)),
      ]);
      return renderFragment('home-pulse', pulseView(p as PulseLike, ticker));
    },
    MARKET_IDS.every((m) => s.supervisor.historyLoaded(m)),
  );
}
