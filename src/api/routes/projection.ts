// Record routes: the naive projection of a deal of the current menu, or of a hypothetical deal of a
// family at a given unit cost (SPEC.md "Projection"); the record work runs as the read task
// 'projection.deal' (actors/record/projection-deal.ts, which documents the choices). Ticker and
// pulse live in pulse.ts.
import Type, { type Static } from 'typebox';
import { FAMILIES, MARKETS, numberToCents, type MarketId } from '../../engine/index.js';
import { HttpError, route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import { ProjectionAnswer } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { MarketParams, marketOr404 } from '../market-params.js';
import { menuSnapshots } from '../../market-data/live-session.js';
import { cacheable } from '../../market-data/record-query.js';
import { Fit, Lookback, ProjectionQuery, projectDeal } from '../deal-projection.js';
import type { DealProjectionArgs } from '../../../actors/record/messages.js';

const HypotheticalQuery = Type.Object({
  cluster: Type.Integer({ minimum: 0, description: 'family id (cluster)' }),
  unit_cost: Type.Number({
    exclusiveMinimum: 0,
    maximum: 1_000_000,
    description: 'landed cost per unit of the hypothetical deal (USD, rounded to cents)',
  }),
  lookback: Lookback,
  fit: Fit,
});
type HypotheticalQuery = Static<typeof HypotheticalQuery>;
const DealParams = Type.Object({
  market_id: MarketParams.properties.market_id,
  offer_key: Type.String({ description: 'a key of the current menu' }),
});
type DealParams = Static<typeof DealParams>;
/** MarketParams' type (its name is the imported schema's). */
type MarketPath = Static<typeof MarketParams>;

export function projectionRoutes(s: Services): Route[] {
  return [
    route<DealParams, ProjectionQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/deals/{offer_key}/projection',
      operationId: 'get_deal_projection',
      auth: 'none',
      summary:
        'Naive projection of a deal of the current menu: family sales history, fit, P&L curve by volume',
      params: DealParams,
      query: ProjectionQuery,
      response: { 200: ProjectionAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market, or the key is not on the current menu' },
      },
      handler: (c) => getDealProjection(s, c),
    }),
    route<MarketPath, HypotheticalQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/projection',
      operationId: 'get_market_projection',
      auth: 'none',
      summary:
        "Naive projection of a hypothetical deal of a family at a unit cost (list price: the family's mean on the current menu)",
      params: MarketParams,
      query: HypotheticalQuery,
      response: { 200: ProjectionAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market or cluster' },
      },
      handler: (c) => getMarketProjection(s, c),
    }),
  ];
}

async function getDealProjection(
  s: Services,
  { params, query, req }: PublicContext<DealParams, ProjectionQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const snap = menuSnapshots(s).get(market);
  const deal = snap.byKey.get(params.offer_key);
  if (!deal)
    throw new HttpError(
      404,
      `deal ${JSON.stringify(params.offer_key)} is not on the current menu of ${market} (session ${snap.tick})`,
    );
  const answer = await projectDeal(s, snap, deal, query);
  return cacheable(s, req, market, { json: { ...answer, offer_key: deal.key } }, false);
}

async function getMarketProjection(
  s: Services,
  { params, query, req }: PublicContext<MarketPath, HypotheticalQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  if (!FAMILIES[query.cluster])
    throw new HttpError(
      404,
      `unknown cluster ${query.cluster}; clusters are 0..${FAMILIES.length - 1}`,
    );
  const snap = menuSnapshots(s).get(market);
  const listed = snap.byFamily.get(FAMILIES[query.cluster].sku_family) ?? [];
  const answer = await runProjection(s, {
    market,
    cluster: query.cluster,
    lookback: query.lookback,
    fit: query.fit,
    open: snap.tick,
    unitCostCents: numberToCents(query.unit_cost),
    listPriceCents: meanCents(listed.map((d) => d.list_price)),
    listPriceBasis: 'menu_mean',
    maxQty: MARKETS[market].max_qty,
    quotedVelocity: quotedOf(market, listed),
  });
  return cacheable(s, req, market, { json: { ...answer, offer_key: null } }, false);
}

function runProjection(s: Services, args: DealProjectionArgs) {
  return s.runtime.read<Record<string, unknown>>('projection.deal', args);
}

/** Mean of 2-decimal prices in integer cents; null for none. */
function meanCents(prices: number[]): number | null {
  if (!prices.length) return null;
  return Math.round(prices.reduce((a, p) => a + numberToCents(p), 0) / prices.length);
}

/** The family's quoted velocity (a property of the family, the same on each of its deals). */
function quotedOf(market: MarketId, listed: readonly object[]): number | null {
  if (!MARKETS[market].quotes_velocity) return null;
  const d = listed.find((x) => 'sales_velocity' in x) as { sales_velocity: number } | undefined;
  return d?.sales_velocity ?? null;
}
