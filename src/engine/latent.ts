// The latent state of every family at a tick: demand index, cost and price levels, seller count,
// and the observable summaries drawn from them (quoted velocity, sales rank, rank drops).
//
// Every autocorrelated series is a moving average of keyed shocks over the last WINDOW ticks:
//   s(t) = k * sum_{j=0}^{WINDOW-1} phi^j * e(t-j),   k = sqrt((1-phi^2) / (1-phi^(2*WINDOW)))
// i.e. an AR(1) truncated after WINDOW lags, scaled to unit stationary variance. So the state of
// any tick is a pure function of (seed, market, tick) with a bounded look-back — no sequential
// state — and a backfill and a live close compute the same numbers.

import { FAMILIES } from './catalog.js';
import type { MarketId } from './markets.js';
import { TickMemo } from './memo.js';
import { DYNAMICS, LISTING, WINDOW } from './params.js';
import { keyedStream } from './rng.js';

export interface FamilyTick {
  /** Demand index (mean 1). */
  index: number;
  /** Landed cost and resale price of one standard item at level, cents (not rounded). */
  costLevel: number;
  priceLevel: number;
  /** Sellers competing for the family's demand this session. */
  nsellers: number;
  /** Expected units the whole family sells per session. */
  units: number;
  /** Expected units per session of one listing (units / nsellers): the family's rate. */
  rate: number;
  /** Quoted velocity: the rate with noise, 2 decimals, at least 0.01. */
  quoted: number;
  /** Sales rank at session open (lower = sells faster). */
  rank: number;
  /** Sales events of the session seen as rank improvements. */
  drops: number;
}

const F = FAMILIES.length;
const SHOCKS = 4; // per family: demand index, price (with jumps), margin, sellers

const shockMemo = new TickMemo<Float64Array>(4096);
const stateMemo = new TickMemo<readonly FamilyTick[]>(1024);

function shocks(seed: number, market: MarketId, tick: number): Float64Array {
  return shockMemo.get(seed, market, tick, () => {
    const dyn = DYNAMICS[market];
    const s = keyedStream(seed, market, tick, 'shocks');
    const out = new Float64Array(F * SHOCKS);
    for (let f = 0; f < F; f++) {
      const o = f * SHOCKS;
      out[o] = s.normal();
      const jumps = s.uniform() < dyn.jump_prob;
      const jump = s.normal() * dyn.jump_sd;
      out[o + 1] = dyn.price_sd * s.normal() + (jumps ? jump : 0);
      out[o + 2] = s.normal();
      out[o + 3] = s.normal();
    }
    return out;
  });
}

function scale(phi: number): number {
  return Math.sqrt((1 - phi * phi) / (1 - Math.pow(phi, 2 * WINDOW)));
}

/** State of every family (by cluster) at a tick. */
export function familyTicks(seed: number, market: MarketId, tick: number): readonly FamilyTick[] {
  return stateMemo.get(seed, market, tick, () => computeTick(seed, market, tick));
}

export function familyTick(
  seed: number,
  market: MarketId,
  tick: number,
  cluster: number,
): FamilyTick {
  return familyTicks(seed, market, tick)[cluster];
}

function computeTick(seed: number, market: MarketId, tick: number): readonly FamilyTick[] {
  const dyn = DYNAMICS[market];
  const acc = new Float64Array(F * SHOCKS);
  let wi = 1;
  let wp = 1;
  let ws = 1;
  for (let j = 0; j < WINDOW; j++) {
    const e = shocks(seed, market, tick - j);
    for (let f = 0; f < F; f++) {
      const o = f * SHOCKS;
      acc[o] += wi * e[o];
      acc[o + 1] += wp * e[o + 1];
      acc[o + 2] += wp * e[o + 2];
      acc[o + 3] += ws * e[o + 3];
    }
    wi *= dyn.phi_index;
    wp *= dyn.phi_price;
    ws *= dyn.phi_sellers;
  }
  const ki = scale(dyn.phi_index);
  const kp = scale(dyn.phi_price);
  const ks = scale(dyn.phi_sellers);
  const noise = keyedStream(seed, market, tick, 'observed');
  const out: FamilyTick[] = [];
  for (let f = 0; f < F; f++) {
    const fam = FAMILIES[f];
    const o = f * SHOCKS;
    const vol = fam.volatility;
    const index = Math.exp(vol * ki * acc[o] - (vol * vol) / 2);
    const logCost = kp * acc[o + 1];
    const costLevel = fam.cost_cents * Math.exp(logCost);
    const priceLevel =
      fam.cost_cents * fam.markup * Math.exp(0.8 * logCost + dyn.margin_sd * kp * acc[o + 2]);
    const nsellers = Math.max(
      1,
      Math.round(fam.sellers * Math.exp(dyn.sellers_sd * ks * acc[o + 3])),
    );
    const units = fam.velocity * dyn.velocity_mult * fam.sellers * index;
    const rate = units / nsellers;
    // Draw order is fixed per family so every tick consumes the stream identically.
    const zq = noise.normal();
    const zr = noise.normal();
    const drops = noise.poisson(units * dyn.drops_frac);
    const qs = LISTING.quote_sd;
    const quoted = Math.max(0.01, Math.round(100 * rate * Math.exp(qs * zq - (qs * qs) / 2)) / 100);
    const rank = Math.max(
      1,
      Math.round(
        dyn.rank_scale * Math.pow(units, -dyn.rank_slope) * Math.exp(LISTING.rank_sd * zr),
      ),
    );
    out.push(
      Object.freeze({ index, costLevel, priceLevel, nsellers, units, rate, quoted, rank, drops }),
    );
  }
  return Object.freeze(out);
}

export interface RankingFields {
  sales_rank: number;
  sales_rank_avg: number;
  rank_drops: number;
  rank_drops_long: number;
  nsellers: number;
}

const rankingMemo = new TickMemo<readonly RankingFields[]>(512);

/** Ranking fields of every family at a tick (signals at session open): rank and sellers now,
 *  rank averaged over the last sessions, drops of the session before and of a longer window. */
export function rankingFields(
  seed: number,
  market: MarketId,
  tick: number,
): readonly RankingFields[] {
  return rankingMemo.get(seed, market, tick, () => {
    const now = familyTicks(seed, market, tick);
    const rankSum = new Float64Array(F);
    const dropsLong = new Float64Array(F);
    for (let j = 0; j < LISTING.rank_avg_window; j++) {
      const st = familyTicks(seed, market, tick - j);
      for (let f = 0; f < F; f++) rankSum[f] += st[f].rank;
    }
    for (let j = 1; j <= LISTING.drops_long_window; j++) {
      const st = familyTicks(seed, market, tick - j);
      for (let f = 0; f < F; f++) dropsLong[f] += st[f].drops;
    }
    const prev = familyTicks(seed, market, tick - 1);
    return Object.freeze(
      now.map((st, f) =>
        Object.freeze({
          sales_rank: st.rank,
          sales_rank_avg: Math.round(rankSum[f] / LISTING.rank_avg_window),
          rank_drops: prev[f].drops,
          rank_drops_long: dropsLong[f],
          nsellers: st.nsellers,
        }),
      ),
    );
  });
}

/** The rate a desk (or analyst) reads off a sales rank and a seller count, inverting the
 *  log-linear rank map without its noise. */
export function rateFromRank(market: MarketId, salesRank: number, nsellers: number): number {
  const dyn = DYNAMICS[market];
  return Math.pow(dyn.rank_scale / salesRank, 1 / dyn.rank_slope) / Math.max(1, nsellers);
}

/** Family level at a point inside a session: log-linear between the levels at tick and tick+1,
 *  so the price path through the session runs in listed_at order. */
export function levelsAt(
  seed: number,
  market: MarketId,
  tick: number,
  cluster: number,
  at: number,
): { cost: number; price: number } {
  const a = familyTick(seed, market, tick, cluster);
  const b = familyTick(seed, market, tick + 1, cluster);
  return {
    cost: a.costLevel * Math.pow(b.costLevel / a.costLevel, at),
    price: a.priceLevel * Math.pow(b.priceLevel / a.priceLevel, at),
  };
}
