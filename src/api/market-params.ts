// The path parameters of the market routes and pages: a market ({market_id}) and a family
// (cluster), each with its 404.
import Type from 'typebox';
import { FAMILIES, MARKET_IDS, isMarketId, type MarketId } from '../engine/index.js';
import { HttpError } from '../http/route.js';
import { MarketIdParam } from '../schemas/index.js';

export const MarketParams = Type.Object({ market_id: MarketIdParam });

export function marketOr404(id: string): MarketId {
  if (!isMarketId(id))
    throw new HttpError(
      404,
      `unknown market ${JSON.stringify(id)}; markets are ${MARKET_IDS.join(', ')}`,
    );
  return id;
}

export const clusterField = (what: string) =>
  Type.Integer({
    minimum: 0,
    description: `family (cluster id, 0..${FAMILIES.length - 1}); ${what}`,
  });

/** A cluster id of the catalog, or 404. */
export function clusterOr404(cluster: number): number {
  if (cluster >= FAMILIES.length)
    throw new HttpError(404, `unknown cluster ${cluster}; clusters are 0..${FAMILIES.length - 1}`);
  return cluster;
}
