// The projection of a deal of the current menu (SPEC.md "Projection"): the query with its defaults
// and the read task's call, one definition for the route and the purchase pages.
import Type, { type Static } from 'typebox';
import { numberToCents, type ServedDeal } from '../engine/index.js';
import { read } from '../../actors/runtime/client.js';
import type { Services } from '../http/services.js';
import type { MenuSnapshot } from '../market-data/snapshots.js';

/** The query's defaults: also what the purchase pages project a deal with. */
export const PROJECTION_DEFAULTS = { lookback: 48, fit: 'trend' } as const;
export const Lookback = Type.Integer({
  minimum: 8,
  maximum: 400,
  default: PROJECTION_DEFAULTS.lookback,
  description: 'closed sessions of family history to fit',
});
export const Fit = Type.Union([Type.Literal('trend'), Type.Literal('mean')], {
  default: PROJECTION_DEFAULTS.fit,
  description: 'least-squares line or the mean',
});
export const ProjectionQuery = Type.Object({ lookback: Lookback, fit: Fit });
export type ProjectionQuery = Static<typeof ProjectionQuery>;

/**
 * The projection of a deal of the menu `snap` (GET .../deals/{offer_key}/projection answers it with
 * the deal's key): one definition for the route and the purchase pages.
 */
export function projectDeal(
  s: Services,
  snap: MenuSnapshot,
  deal: ServedDeal,
  query: ProjectionQuery,
) {
  return read(s.runtime, 'projection.deal', {
    market: snap.market,
    cluster: deal.cluster,
    lookback: query.lookback,
    fit: query.fit,
    open: snap.tick,
    unitCostCents: numberToCents(deal.unit_cost),
    listPriceCents: numberToCents(deal.list_price),
    listPriceBasis: 'deal',
    maxQty: deal.max_qty,
    quotedVelocity: 'sales_velocity' in deal ? deal.sales_velocity : null,
  });
}
