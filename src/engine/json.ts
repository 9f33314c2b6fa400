// The served (JSON) form of engine values: cents become numbers with 2 decimals under the field
// names of SPEC.md (unit_cost, list_price, margin). Field order is fixed so bytes are stable.

import { centsToNumber } from './money.js';
import { type Deal, isVelocityDeal, type RankingDeal, type VelocityDeal } from './types.js';

type Served<D> = Omit<D, 'unit_cost_cents' | 'list_price_cents' | 'margin_cents'> & {
  unit_cost: number;
  list_price: number;
  margin: number;
};

export type ServedDeal = Served<VelocityDeal> | Served<RankingDeal>;

export function dealToJson(d: Deal): ServedDeal {
  const head = {
    key: d.key,
    tick: d.tick,
    sku_family: d.sku_family,
    cluster: d.cluster,
    bundle: d.bundle,
    unit_cost: centsToNumber(d.unit_cost_cents),
    list_price: centsToNumber(d.list_price_cents),
    margin: centsToNumber(d.margin_cents),
    listed_at: d.listed_at,
  };
  const tail = { max_qty: d.max_qty, house_accepted: d.house_accepted, house_qty: d.house_qty };
  if (isVelocityDeal(d))
    return { ...head, sales_velocity: d.sales_velocity, inverse_sv: d.inverse_sv, ...tail };
  return {
    ...head,
    sales_rank: d.sales_rank,
    sales_rank_avg: d.sales_rank_avg,
    rank_drops: d.rank_drops,
    rank_drops_long: d.rank_drops_long,
    nsellers: d.nsellers,
    ...tail,
  };
}
