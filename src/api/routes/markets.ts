// The four markets, their live session clock and the current menu. Everything here is served from
// the injected clock and the in-memory menu snapshots: no worker hop (ARCHITECTURE rule 5).
import Type, { type Static } from 'typebox';
import { MARKET_IDS, type MarketId } from '../../engine/index.js';
import {
  HttpError,
  json,
  route,
  type PublicContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import { Deal, DealsPage as DealsAnswer, MarketList, MarketStatus } from '../../schemas/index.js';
import { dealNotOnMenu } from '../../rules.js';
import {
  DEFAULT_LIMIT,
  type MenuSnapshots,
  etagMatches,
  type DealsPage,
  type MenuSnapshot,
} from '../../market-data/snapshots.js';
import type { Services } from '../../http/services.js';
import { MarketParams, marketOr404 } from '../market-params.js';
import { menuSnapshots, statusWriter } from '../../market-data/live-session.js';

const JSON_TYPE = 'application/json';

/** MarketParams' type (its name is the imported schema's). */
type MarketPath = Static<typeof MarketParams>;
const DealParams = Type.Object({
  market_id: MarketParams.properties.market_id,
  offer_key: Type.String({ description: 'a key of the current menu' }),
});
type DealParams = Static<typeof DealParams>;

const DealsQuery = Type.Object({
  family: Type.Optional(Type.String({ description: 'only deals of this sku_family' })),
  house_only: Type.Boolean({ default: false, description: 'only deals the house bids on' }),
  limit: Type.Integer({ minimum: 1, maximum: 5000, default: DEFAULT_LIMIT }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
type DealsQuery = Static<typeof DealsQuery>;

function page(snap: MenuSnapshot, q: DealsQuery): DealsPage {
  let rows = q.family === undefined ? snap.deals : (snap.byFamily.get(q.family) ?? []);
  if (q.house_only) rows = rows.filter((d) => d.house_accepted);
  const deals = rows.slice(q.offset, q.offset + q.limit);
  return {
    market: snap.market,
    tick: snap.tick,
    closes_at: snap.closesAt,
    total: rows.length,
    limit: q.limit,
    offset: q.offset,
    deals,
  };
}

export function marketRoutes(s: Services, snapshots: MenuSnapshots = menuSnapshots(s)): Route[] {
  const writeStatus = statusWriter(s.clock);
  const status = (id: MarketId) => writeStatus(id, snapshots.get(id));
  const notFound = { description: 'unknown market' };

  return [
    route({
      method: 'GET',
      path: '/api/v1/markets',
      operationId: 'list_markets',
      auth: 'none',
      summary: 'All markets with their current session and close time',
      response: { 200: MarketList },
      handler: () => listMarkets(s, status),
    }),
    route<MarketPath>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}',
      operationId: 'get_market',
      auth: 'none',
      summary: 'One market',
      params: MarketParams,
      response: { 200: MarketStatus },
      responses: { 404: notFound },
      handler: (c) => getMarket(status, c),
    }),
    route<MarketPath, DealsQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/deals',
      operationId: 'list_deals',
      auth: 'none',
      summary: 'The current menu: deals of the open session',
      params: MarketParams,
      query: DealsQuery,
      response: { 200: DealsAnswer },
      responses: {
        304: { description: 'If-None-Match matched: the menu has not changed' },
        404: notFound,
      },
      handler: (c) => listDeals(snapshots, c),
    }),
    route<DealParams>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/deals/{offer_key}',
      operationId: 'get_deal',
      auth: 'none',
      summary: 'One deal of the current menu',
      params: DealParams,
      response: { 200: Deal },
      responses: {
        404: {
          description:
            'unknown market, or the key is not on the current menu (also once its session closed)',
        },
      },
      handler: (c) => getDeal(s, snapshots, c),
    }),
  ];
}

/** A market's status as JSON: the table's status writer (built once: it keeps each market's serialised parts). */
type StatusOf = (id: MarketId) => string;

function listMarkets(s: Services, status: StatusOf): Reply {
  return {
    body: `{"markets":[${MARKET_IDS.map(status).join(',')}],"time_scale":${JSON.stringify(s.config.timeScale)}}`,
    contentType: JSON_TYPE,
  };
}

function getMarket(status: StatusOf, { params }: PublicContext<MarketPath>): Reply {
  return { body: status(marketOr404(params.market_id)), contentType: JSON_TYPE };
}

function listDeals(
  snapshots: MenuSnapshots,
  { params, query: q, req }: PublicContext<MarketPath, DealsQuery>,
): Reply {
  const snap = snapshots.get(marketOr404(params.market_id));
  if (etagMatches(req.headers['if-none-match'], snap.etag))
    return { status: 304, headers: snap.headers };
  // The default query (what agents poll) answers the bytes serialised once per session.
  if (q.family === undefined && !q.house_only && q.limit === DEFAULT_LIMIT && q.offset === 0) {
    return { body: snap.defaultPageBytes, contentType: JSON_TYPE, headers: snap.headers };
  }
  return json(page(snap, q), 200, snap.headers);
}

function getDeal(
  s: Services,
  snapshots: MenuSnapshots,
  { params }: PublicContext<DealParams>,
): Reply {
  const market = marketOr404(params.market_id);
  const snap = snapshots.get(market);
  const deal = snap.byKey.get(params.offer_key);
  // CONTRACT.md "Session boundary": the clock ends a deal, not the record's close.
  if (!deal || s.clock.realNow() >= snap.closesAt)
    throw new HttpError(
      404,
      dealNotOnMenu(
        s.config.baseUrl,
        market,
        params.offer_key,
        `is not on the current menu of ${market} (session ${snap.tick})`,
      ),
    );
  return json(deal);
}
