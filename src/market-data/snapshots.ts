// Immutable snapshots of each market's current menu (ARCHITECTURE rule 5): the engine is a pure
// function of (seed, market, tick), so the front end builds the open session's menu itself, once
// per session, and serves it from memory. The hot path is a map lookup and one tick comparison.
import {
  dealToJson,
  ENGINE_IDENTITY,
  menu,
  type Deal,
  type MarketId,
  type ServedDeal,
} from '../engine/index.js';
import { round2 } from '../analytics/money.js';

/** Observable summary of the listed menu (SPEC.md Market `quote`). Money from integer cents. */
export type MenuQuote = {
  cost_low: number;
  cost_mean: number;
  cost_high: number;
  list_price: number;
  price_low: number;
  price_high: number;
  deals: number;
  desk_bids: number;
  families: number;
};

export type MenuSnapshot = Readonly<{
  market: MarketId;
  tick: number;
  /** Real unix seconds when the session closes (3 decimals, as the market status). */
  closesAt: number;
  /** In listed_at order. */
  deals: readonly ServedDeal[];
  byKey: ReadonlyMap<string, ServedDeal>;
  /** The engine's deal and its menu position by key: what an order is placed on. */
  rows: ReadonlyMap<string, { idx: number; deal: Deal }>;
  byFamily: ReadonlyMap<string, readonly ServedDeal[]>;
  quote: MenuQuote;
  menuSize: number;
  /** The whole answer of GET /deals with the default query, serialised once. */
  defaultPageBytes: Buffer;
  /** Weak validator of everything served from this snapshot. */
  etag: string;
  /** `etag` and `cache-control: no-cache`, built once so answers share them. */
  headers: Readonly<Record<string, string>>;
}>;

/** The default query of GET /markets/{id}/deals; that answer is pre-serialised. */
export const DEFAULT_LIMIT = 2000;

export type DealsPage = {
  market: MarketId;
  tick: number;
  closes_at: number;
  total: number;
  limit: number;
  offset: number;
  deals: readonly ServedDeal[];
};

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const ENGINE_TAG = ENGINE_IDENTITY.params_hash.slice(0, 8);

export class MenuSnapshots {
  private readonly current = new Map<MarketId, MenuSnapshot>();
  /** The following session's snapshot, built ahead of its boundary (prepare). */
  private readonly next = new Map<MarketId, MenuSnapshot>();
  private readonly preparing = new Set<MarketId>();

  constructor(
    private readonly seed: number,
    /** The session the clock is in (not the record's open one: a closed session is never served). */
    private readonly clockTick: (market: MarketId) => number,
    /** Real unix seconds when a session closes (the injected clock's). */
    private readonly closesAt: (market: MarketId, tick: number) => number,
  ) {}

  get(market: MarketId): MenuSnapshot {
    const tick = this.clockTick(market);
    let snap = this.current.get(market);
    if (snap?.tick !== tick) {
      const ahead = this.next.get(market);
      // Built synchronously when not prepared: concurrent requests cannot build the same tick twice.
      snap = ahead?.tick === tick ? ahead : this.build(market, tick);
      this.current.set(market, snap);
    }
    if (this.next.get(market)?.tick !== tick + 1) this.prepareSoon(market, tick + 1);
    return snap;
  }

  /** Builds the following session's menu after this turn, so the boundary serves it ready-made. */
  private prepareSoon(market: MarketId, tick: number): void {
    if (this.preparing.has(market)) return;
    this.preparing.add(market);
    setImmediate(() => {
      this.preparing.delete(market);
      if (this.next.get(market)?.tick !== tick) this.next.set(market, this.build(market, tick));
    });
  }

  private build(market: MarketId, tick: number): MenuSnapshot {
    return buildSnapshot(this.seed, market, tick, round3(this.closesAt(market, tick)));
  }
}

export function buildSnapshot(
  seed: number,
  market: MarketId,
  tick: number,
  closesAt: number,
): MenuSnapshot {
  const raw = menu(seed, market, tick);
  const deals = Object.freeze(raw.map((d) => deepFreeze(dealToJson(d))));
  const byKey = new Map<string, ServedDeal>();
  const byFamily = new Map<string, ServedDeal[]>();
  for (const d of deals) {
    byKey.set(d.key, d);
    const list = byFamily.get(d.sku_family);
    if (list) list.push(d);
    else byFamily.set(d.sku_family, [d]);
  }
  for (const list of byFamily.values()) Object.freeze(list);
  const rows = new Map(raw.map((deal, idx) => [deal.key, { idx, deal }]));
  const etag = `W/"${market}-${tick}-${seed}-${ENGINE_TAG}"`;
  const page: DealsPage = {
    market,
    tick,
    closes_at: closesAt,
    total: deals.length,
    limit: DEFAULT_LIMIT,
    offset: 0,
    deals: deals.slice(0, DEFAULT_LIMIT),
  };
  return Object.freeze({
    market,
    tick,
    closesAt,
    deals,
    byKey,
    rows,
    byFamily,
    quote: Object.freeze(quoteOf(raw)),
    menuSize: deals.length,
    defaultPageBytes: Buffer.from(JSON.stringify(page)),
    etag,
    headers: Object.freeze({ etag, 'cache-control': 'no-cache' }),
  });
}

/** Lowest, mean and highest landed cost and resale price, counts; exact from integer cents. */
export function quoteOf(raw: readonly Deal[]): MenuQuote {
  const n = raw.length;
  let costLow = Infinity,
    costHigh = -Infinity,
    costSum = 0;
  let priceLow = Infinity,
    priceHigh = -Infinity,
    priceSum = 0;
  let bids = 0;
  const families = new Set<string>();
  for (const d of raw) {
    const c = d.unit_cost_cents,
      p = d.list_price_cents;
    if (c < costLow) costLow = c;
    if (c > costHigh) costHigh = c;
    if (p < priceLow) priceLow = p;
    if (p > priceHigh) priceHigh = p;
    costSum += c;
    priceSum += p;
    if (d.house_accepted) bids++;
    families.add(d.sku_family);
  }
  // An empty menu cannot happen (menu_size.min > 0); answer zeros rather than Infinity/NaN.
  const cents = (c: number) => (n ? c / 100 : 0);
  return {
    cost_low: cents(costLow),
    cost_mean: n ? round2(costSum / n / 100) : 0,
    cost_high: cents(costHigh),
    list_price: n ? round2(priceSum / n / 100) : 0,
    price_low: cents(priceLow),
    price_high: cents(priceHigh),
    deals: n,
    desk_bids: bids,
    families: families.size,
  };
}

/** Does an If-None-Match header match `etag`? Weak comparison (RFC 9110 13.1.2). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header === etag || header.trim() === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  return header.split(',').some((t) => {
    const v = t.trim();
    return (v.startsWith('W/') ? v.slice(2) : v) === opaque;
  });
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}
