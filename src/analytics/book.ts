/**
 * Synthetic order book around the resale price (SPEC.md "Book"). The market has no limit order
 * book, so the book is drawn from tape estimates: a spread (see spread.ts), a depth scale and the
 * buy/sell split of recent volume.
 *
 * Construction (all prices in cents via round2):
 *   - mid = round2(mid). best_bid = round2(mid - spread/2), best_ask = round2(mid + spread/2), each
 *     pushed at least one cent away from mid so that best_bid < mid < best_ask always holds.
 *     The served `spread` is the quoted one, best_ask - best_bid.
 *   - Level i (0-based) of each side sits i·step away from its best price: bids step down, asks up.
 *     Bid levels at a price <= 0 are dropped.
 *   - Size: base = mean of depthUnits (units per session over the window, negatives as 0).
 *     Side share = buyVolume / (buyVolume + sellVolume) for bids, the rest for asks (1/2 each when
 *     there is no volume). size_i = round2(2 · share · base · decay^i): at an even split the first
 *     level holds one session's average units, and depth decays geometrically away from the mid.
 *   - cum is the running total of sizes from the best level outward; depth = all bid + ask sizes;
 *     imbalance = (bidDepth - askDepth) / (bidDepth + askDepth), 0 when the book is empty.
 */
import { round2 } from './money.js';

export interface BookLevel {
  price: number;
  size: number;
  cum: number;
}

export interface BookInput {
  mid: number;
  spread: number;
  spreadMethod: string;
  step: number;
  levels: number;
  depthUnits: readonly number[];
  buyVolume: number;
  sellVolume: number;
  priceImpact: number | null;
  listed: number;
  listedLow: number;
  listedHigh: number;
  tick: number;
  /** geometric size decay per level away from the mid, in (0, 1]; default 0.8 */
  decay?: number;
}

export interface Book {
  mid: number;
  spread: number;
  spread_method: string;
  tick: number;
  best_bid: number;
  best_ask: number;
  bids: BookLevel[];
  asks: BookLevel[];
  depth: number;
  imbalance: number;
  buy_volume: number;
  sell_volume: number;
  price_impact: number | null;
  listed: number;
  listed_low: number;
  listed_high: number;
}

export const DEFAULT_DECAY = 0.8;

function side(
  best: number,
  dir: 1 | -1,
  step: number,
  levels: number,
  size0: number,
  decay: number,
): BookLevel[] {
  const out: BookLevel[] = [];
  let cum = 0;
  for (let i = 0; i < levels; i++) {
    const price = round2(best + dir * i * step);
    if (price <= 0) break;
    const size = round2(size0 * decay ** i);
    cum = round2(cum + size);
    out.push({ price, size, cum });
  }
  return out;
}

export function syntheticBook(input: BookInput): Book {
  const mid = round2(input.mid);
  const half = Math.max(0, input.spread) / 2;
  const bestBid = Math.min(round2(mid - half), round2(mid - 0.01));
  const bestAsk = Math.max(round2(mid + half), round2(mid + 0.01));

  const positive = input.depthUnits.map((u) => (Number.isFinite(u) && u > 0 ? u : 0));
  const base = positive.length ? positive.reduce((a, b) => a + b, 0) / positive.length : 0;
  const buy = Math.max(0, input.buyVolume),
    sell = Math.max(0, input.sellVolume);
  const bidShare = buy + sell > 0 ? buy / (buy + sell) : 0.5;
  const decay = input.decay ?? DEFAULT_DECAY;
  const levels = Math.max(0, Math.floor(input.levels));

  const bids = side(bestBid, -1, input.step, levels, 2 * bidShare * base, decay);
  const asks = side(bestAsk, 1, input.step, levels, 2 * (1 - bidShare) * base, decay);
  const bidDepth = bids.length ? bids[bids.length - 1].cum : 0;
  const askDepth = asks.length ? asks[asks.length - 1].cum : 0;
  const total = bidDepth + askDepth;

  return {
    mid,
    spread: round2(bestAsk - bestBid),
    spread_method: input.spreadMethod,
    tick: input.tick,
    best_bid: bestBid,
    best_ask: bestAsk,
    bids,
    asks,
    depth: round2(total),
    imbalance: total > 0 ? (bidDepth - askDepth) / total : 0,
    buy_volume: input.buyVolume,
    sell_volume: input.sellVolume,
    price_impact: input.priceImpact,
    listed: input.listed,
    listed_low: round2(input.listedLow),
    listed_high: round2(input.listedHigh),
  };
}
