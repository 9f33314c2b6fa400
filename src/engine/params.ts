// Every number of the latent process that is not in the catalog or the public market table.
// None of these is served; all of them enter the engine identity (identity.ts).

import type { MarketId } from './markets.js';

/** Look-back of the moving-average representation of every autocorrelated series: a series at
 *  tick t is a weighted sum of the keyed shocks of ticks t-WINDOW+1..t (see latent.ts). */
export const WINDOW = 48;

export interface MarketDynamics {
  /** Per-session demand of a family on this market relative to m15 (longer sessions sell more). */
  velocity_mult: number;
  /** AR coefficients per session of the demand index, the price level and the seller count. */
  phi_index: number;
  phi_price: number;
  phi_sellers: number;
  /** Stationary sd of the log cost level, and of the log margin level around the family markup. */
  price_sd: number;
  margin_sd: number;
  /** Price jumps: probability per family and session, and sd of the log jump. */
  jump_prob: number;
  jump_sd: number;
  /** Stationary sd of the log number of sellers. */
  sellers_sd: number;
  /** sales_rank = rank_scale * (family units per session)^-rank_slope * noise. */
  rank_scale: number;
  rank_slope: number;
  /** Share of a family's sales seen as rank drops (several sales close together count once). */
  drops_frac: number;
  /** Settlement surcharge scale of the downside regime: flat part in cents. */
  flat_surcharge_cents: [number, number];
}

export const DYNAMICS: Readonly<Record<MarketId, MarketDynamics>> = Object.freeze({
  m15: {
    velocity_mult: 1,
    phi_index: 0.93,
    phi_price: 0.96,
    phi_sellers: 0.95,
    price_sd: 0.1,
    margin_sd: 0.05,
    jump_prob: 0.01,
    jump_sd: 0.12,
    sellers_sd: 0.25,
    rank_scale: 60000,
    rank_slope: 1.25,
    drops_frac: 0.6,
    flat_surcharge_cents: [100, 800],
  },
  m45: {
    velocity_mult: 1.8,
    phi_index: 0.9,
    phi_price: 0.94,
    phi_sellers: 0.93,
    price_sd: 0.11,
    margin_sd: 0.05,
    jump_prob: 0.015,
    jump_sd: 0.12,
    sellers_sd: 0.25,
    rank_scale: 60000,
    rank_slope: 1.25,
    drops_frac: 0.55,
    flat_surcharge_cents: [150, 1200],
  },
  h2: {
    velocity_mult: 3,
    phi_index: 0.86,
    phi_price: 0.92,
    phi_sellers: 0.9,
    price_sd: 0.12,
    margin_sd: 0.06,
    jump_prob: 0.02,
    jump_sd: 0.14,
    sellers_sd: 0.28,
    rank_scale: 60000,
    rank_slope: 1.25,
    drops_frac: 0.5,
    flat_surcharge_cents: [200, 2000],
  },
  h10: {
    velocity_mult: 6,
    phi_index: 0.78,
    phi_price: 0.88,
    phi_sellers: 0.85,
    price_sd: 0.13,
    margin_sd: 0.06,
    jump_prob: 0.03,
    jump_sd: 0.15,
    sellers_sd: 0.3,
    rank_scale: 60000,
    rank_slope: 1.25,
    drops_frac: 0.45,
    flat_surcharge_cents: [400, 4000],
  },
});

export const LISTING = Object.freeze({
  /** sd of a listing's log cost and log price around the family levels. */
  cost_sd: 0.06,
  price_sd: 0.08,
  /** Price elasticity of a listing's demand: demand x (list / family price)^-elasticity. */
  elasticity: 1.5,
  /** sd of a deal's own log demand multiplier (unobservable). */
  deal_sd: 0.3,
  /** sd of the log noise of the quoted velocity around the family's rate. */
  quote_sd: 0.15,
  /** sd of the log noise of sales_rank. */
  rank_sd: 0.2,
  /** Probability a bundle carries an add-on; items per bundle; pieces per item. */
  addon_prob: 0.25,
  max_items: 2,
  max_pieces: 3,
  /** A deal's max_qty is uniform in [min_qty_frac * market max_qty, market max_qty]. */
  min_qty_frac: 0.25,
  /** Sessions averaged by sales_rank_avg and summed by rank_drops_long. */
  rank_avg_window: 8,
  drops_long_window: 24,
});

export const REGIME = Object.freeze({
  /** Market-wide multiplier on the family downside propensity. */
  propensity_mult: 1,
  /** Demand multiplier from the strike session on (0 = collapse). */
  collapse: 0,
  /** extra_cost_frac uniform in this range (4 decimals). */
  extra_cost_frac: [0.04, 0.2] as [number, number],
});

export const HOUSE = Object.freeze({
  /** Volume bought = expected sales over the horizon at the believed rate x this factor (the
   *  house stocks a little more than it expects to sell, to not miss upside). */
  size_factor: 1.1,
  /** Accept when expected profit at that volume >= hurdle x outlay. The hurdle grows with the
   *  horizon's length in time (capital is tied up longer on slower markets). */
  hurdle: { m15: 0.14, m45: 0.17, h2: 0.21, h10: 0.26 } as Readonly<Record<MarketId, number>>,
});
