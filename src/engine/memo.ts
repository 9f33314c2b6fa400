// A bounded memo for pure functions of (seed, market, tick): results are recomputable, so the
// cache only saves time (backfills walk ticks in order and reuse each tick's neighbours) and its
// size bound keeps memory flat in a long-running worker. Keys are numbers (a string key per
// lookup costs more than the lookup itself on the backfill's hot path).

import type { MarketId } from './markets.js';

const MARKET_SLOT: Record<MarketId, number> = { m15: 0, m45: 1, h2: 2, h10: 3 };

export class TickMemo<V> {
  private seed = NaN;
  private map = new Map<number, V>();
  constructor(private readonly limit: number) {}

  get(seed: number, market: MarketId, tick: number, compute: () => V): V {
    // One seed at a time in practice; switching seeds starts afresh.
    if (seed !== this.seed) {
      this.seed = seed;
      this.map = new Map();
    }
    const key = tick * 4 + MARKET_SLOT[market];
    const hit = this.map.get(key);
    if (hit !== undefined) return hit;
    const value = compute();
    if (this.map.size >= this.limit) this.map.delete(this.map.keys().next().value as number);
    this.map.set(key, value);
    return value;
  }
}
