// Record routes: the synthetic book, the families of the current menu and ranking signals.
import Type, { type Static } from 'typebox';
import { FAMILIES, MARKETS } from '../../engine/index.js';
import { HttpError, route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { MarketParams, clusterField, clusterOr404, marketOr404 } from '../../api/market-params.js';
import {
  FAMILIES_WINDOW,
  SIGNALS_CAP,
  SIGNALS_DEFAULT,
  TickRange,
  checkSpan,
  closeAnswer,
  recordPosition,
} from '../record-query.js';
import { BookQuery, bookJson, bookKey, familiesJson } from '../families-book.js';
import { BookAnswer, FamiliesAnswer, SignalsAnswer } from '../../schemas/index.js';

const FamiliesQuery = Type.Object({
  window: Type.Integer({
    minimum: 1,
    maximum: 400,
    default: FAMILIES_WINDOW,
    description: 'closed sessions of outcomes',
  }),
});
type FamiliesQuery = Static<typeof FamiliesQuery>;
type MarketParam = Static<typeof MarketParams>;
const SignalsParams = Type.Object({
  market_id: MarketParams.properties.market_id,
  cluster: clusterField('the family'),
});
type SignalsParams = Static<typeof SignalsParams>;
const SignalsQuery = Type.Object({
  from_tick: Type.Optional(TickRange.from_tick),
  to_tick: Type.Optional(TickRange.to_tick),
});
type SignalsQuery = Static<typeof SignalsQuery>;

export function bookRoutes(s: Services): Route[] {
  return [
    route<MarketParam, BookQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/book',
      operationId: 'get_book',
      auth: 'none',
      summary: 'Synthetic order book around the resale price',
      params: MarketParams,
      query: BookQuery,
      response: { 200: BookAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market or cluster, or no tape in the window' },
      },
      handler: (c) => getBook(s, c),
    }),
    route<MarketParam, FamiliesQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/families',
      operationId: 'list_families',
      auth: 'none',
      summary: 'Item families on the current menu with recorded outcome statistics',
      params: MarketParams,
      query: FamiliesQuery,
      response: { 200: FamiliesAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market' },
      },
      handler: (c) => listFamilies(s, c),
    }),
    route<SignalsParams, SignalsQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/families/{cluster}/signals',
      operationId: 'get_family_signals',
      auth: 'none',
      summary: `Signals of a family per session (ranking markets only): rows up to and including the open session; default the last ${SIGNALS_DEFAULT} sessions, at most ${SIGNALS_CAP} per call`,
      params: SignalsParams,
      query: SignalsQuery,
      response: { 200: SignalsAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market or cluster, or a market that quotes velocity' },
      },
      handler: (c) => getFamilySignals(s, c),
    }),
  ];
}

async function getBook(
  s: Services,
  { params, query, req }: PublicContext<MarketParam, BookQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  if (query.cluster !== undefined) clusterOr404(query.cluster);
  return closeAnswer(s, req, market, bookKey(query), (open) => bookJson(s, market, query, open));
}

async function listFamilies(
  s: Services,
  { params, query, req }: PublicContext<MarketParam, FamiliesQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  return closeAnswer(s, req, market, `families|${query.window}`, (open) =>
    familiesJson(s, market, query.window, open),
  );
}

async function getFamilySignals(
  s: Services,
  { params, query, req }: PublicContext<SignalsParams, SignalsQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  if (MARKETS[market].quotes_velocity)
    throw new HttpError(
      404,
      `market ${market} quotes velocity; signals exist on ranking markets (h2, h10)`,
    );
  const cluster = clusterOr404(params.cluster);
  const { open } = recordPosition(s, market);
  const to = query.to_tick ?? open;
  const from = query.from_tick ?? Math.max(0, to - SIGNALS_DEFAULT + 1);
  checkSpan({ from_tick: from, to_tick: to }, SIGNALS_CAP);
  // Rows come from the seed; the answer still moves with the open session (rows up to it, the ETag).
  return closeAnswer(s, req, market, `signals|${from}|${to}`, async (open) => {
    const last = Math.min(to, open);
    const rows = await s.runtime.read('analytics.signals', { market, cluster, from, to: last });
    return {
      json: {
        market,
        cluster,
        sku_family: FAMILIES[cluster].sku_family,
        from_tick: from,
        to_tick: last,
        rows,
      },
      settledOnly: to < open,
    };
  });
}
