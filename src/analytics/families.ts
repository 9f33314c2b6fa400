/**
 * Item families of the current menu with their recorded outcomes (SPEC.md "families"): one row per
 * family on the menu, joining what the menu quotes now with what the family's executed trades did
 * over the last `window` closed sessions. Money arrives in cents; means are rounded to the cent
 * once, at the end; rates have 4 decimals.
 */
import { rate } from './tape.js';
import { centsToNumber as money } from '../engine/money.js';

/** The family on the current menu. */
export interface MenuFamily {
  cluster: number;
  sku_family: string;
  deals: number;
  house_bids: number;
  meanCostCents: number;
  meanPriceCents: number;
  meanMarginCents: number;
  /** Family-level quotes of the session, from one of its deals: velocity or ranking fields. */
  quotes: Record<string, number>;
}

/** The family's executed trades over the window. */
export interface FamilyOutcomes {
  executed: number;
  settled: number;
  pnlSumCents: number;
  profitable: number;
  downside: number;
  soldOut: number;
}

export const VELOCITY_QUOTES = ['sales_velocity', 'inverse_sv'] as const;
export const RANKING_QUOTES = [
  'sales_rank',
  'sales_rank_avg',
  'rank_drops',
  'rank_drops_long',
  'nsellers',
] as const;

const NO_OUTCOMES: FamilyOutcomes = {
  executed: 0,
  settled: 0,
  pnlSumCents: 0,
  profitable: 0,
  downside: 0,
  soldOut: 0,
};

/** The quote fields a family row carries on a market (the other kind is absent, not null). */
export function familyQuotes(
  deal: Record<string, unknown>,
  quotesVelocity: boolean,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of quotesVelocity ? VELOCITY_QUOTES : RANKING_QUOTES) out[f] = Number(deal[f]);
  return out;
}

/**
 * One served family row. `unitsSold` is what the family's positions sold over the window's
 * `sessions` recorded sessions (units_sold_per_session = unitsSold / sessions).
 */
export function familyRow(
  menu: MenuFamily,
  outcomes: FamilyOutcomes | undefined,
  unitsSold: number,
  sessions: number,
) {
  const o = outcomes ?? NO_OUTCOMES;
  return {
    cluster: menu.cluster,
    sku_family: menu.sku_family,
    deals: menu.deals,
    house_bids: menu.house_bids,
    mean_unit_cost: money(menu.meanCostCents),
    mean_list_price: money(menu.meanPriceCents),
    mean_margin: money(menu.meanMarginCents),
    ...menu.quotes,
    executed: o.executed,
    settled: o.settled,
    mean_pnl: o.settled ? money(o.pnlSumCents / o.settled) : null,
    profitable_rate: rate(o.profitable, o.settled),
    downside_rate: rate(o.downside, o.settled),
    sold_out_rate: rate(o.soldOut, o.settled),
    units_sold_per_session: sessions ? Math.round((unitsSold / sessions) * 1e4) / 1e4 : null,
  };
}
