// Menus: menu(seed, market, tick) lists every deal of a session. Each deal is drawn from its own
// keyed stream (seed, market, tick, 'deal', index), and listed_at is stratified —
// listed_at(i) in [i/n, (i+1)/n) — so the menu is ordered by listed_at by construction and any
// single deal can be recomputed from its index alone (dealAt), e.g. at a live close.

import { ADDONS, FAMILIES, GRADE_VALUE, type Addon, type Family } from './catalog.js';
import { type MarketId, type MarketSpec, MARKETS, marketSpec } from './markets.js';
import {
  familyTicks,
  levelsAt,
  rankingFields,
  rateFromRank,
  type RankingFields,
} from './latent.js';
import { LISTING } from './params.js';
import { houseDecision } from './policy.js';
import { hexTag, keyedStream, type Stream } from './rng.js';
import type { Bundle, BundleItem, Deal, DealLatent, RankingDeal, VelocityDeal } from './types.js';

const SUPPLY_CUM = (() => {
  const cum = new Float64Array(FAMILIES.length);
  let s = 0;
  FAMILIES.forEach((f, i) => (cum[i] = s += f.supply));
  return cum;
})();

/** Number of deals on the menu of a session. */
export function menuSize(seed: number, market: MarketId, tick: number): number {
  const { min, max } = MARKETS[market].menu_size;
  return keyedStream(seed, market, tick, 'menu').int(min, max);
}

export function dealKey(seed: number, market: MarketId, tick: number, index: number): string {
  return `${market}-${tick}-${index}-${hexTag([seed, market, tick, index])}`;
}

export interface ParsedKey {
  market: MarketId;
  tick: number;
  index: number;
}

/** Reads market, tick and index out of a deal key, or null if it is not one this engine (with
 *  this seed) could have published. */
export function parseDealKey(seed: number, key: string): ParsedKey | null {
  const m = /^(m15|m45|h2|h10)-(\d{1,15})-(\d{1,4})-([0-9a-f]{6})$/.exec(key);
  if (!m) return null;
  const market = m[1] as MarketId;
  const tick = Number(m[2]);
  const index = Number(m[3]);
  if (index >= menuSize(seed, market, tick) || dealKey(seed, market, tick, index) !== key)
    return null;
  return { market, tick, index };
}

/** The deal at a menu position, with the latent facts its outcome depends on. */
export function dealWithLatent(
  seed: number,
  market: MarketId,
  tick: number,
  index: number,
  n = menuSize(seed, market, tick),
): { deal: Deal; latent: DealLatent } {
  const spec = marketSpec(market);
  if (!Number.isInteger(index) || index < 0 || index >= n)
    throw new RangeError(`no deal ${index} on ${market} tick ${tick}`);
  const l = drawListing(keyedStream(seed, market, tick, 'deal', index), spec, index, n);
  const { unitCost, refPrice, listPrice } = priceListing(seed, market, tick, l);
  const { cluster, fam, items, addon, maxQty } = l;
  const title = `${fam.title}: ${items.map((i) => `${i.qty} x ${i.name} (${i.grade})`).join(', ')}${addon ? ` + ${addon.label.toLowerCase()}` : ''}`;
  const facts: DealFacts = {
    key: dealKey(seed, market, tick, index),
    tick,
    cluster,
    bundle: { title, unit: fam.unit, origin: fam.origin, items },
    sku: fam.sku_family,
    unitCost,
    listPrice,
    listedAt: l.listedAt,
    maxQty,
  };
  let deal: Deal;
  let houseRate: number;
  if (spec.quotes_velocity) {
    houseRate = familyTicks(seed, market, tick)[cluster].quoted;
    deal = velocityDeal(facts, houseRate);
  } else {
    const r = rankingFields(seed, market, tick)[cluster];
    houseRate = rateFromRank(market, r.sales_rank, r.nsellers);
    deal = rankingDeal(facts, r);
  }
  const house = houseDecision(spec, {
    rate: houseRate,
    unitCostCents: unitCost,
    listPriceCents: listPrice,
    maxQty,
  });
  deal.house_accepted = house.accepted;
  deal.house_qty = house.qty;
  return { deal, latent: { cluster, relativePrice: listPrice / refPrice, menuIndex: index } };
}

/** A listing's random facts, drawn from the deal's own stream in a fixed order. */
type Listing = {
  cluster: number;
  fam: Family;
  listedAt: number;
  items: BundleItem[];
  content: number;
  addon: Addon | undefined;
  zCost: number;
  zPrice: number;
  maxQty: number;
};

function drawListing(s: Stream, spec: MarketSpec, index: number, n: number): Listing {
  const cluster = s.weighted(SUPPLY_CUM);
  const fam = FAMILIES[cluster];
  const listedAt = Math.round(((index + s.uniform()) / n) * 1e6) / 1e6;
  const { items, content } = drawItems(s, fam);
  const addon = s.bernoulli(LISTING.addon_prob)
    ? ADDONS.find((a) => a.name === fam.addons[s.int(0, fam.addons.length - 1)])
    : undefined;
  const zCost = s.normal();
  const zPrice = s.normal();
  const minQty = Math.max(1, Math.ceil(LISTING.min_qty_frac * spec.max_qty));
  const maxQty = s.int(minQty, spec.max_qty);
  return { cluster, fam, listedAt, items, content, addon, zCost, zPrice, maxQty };
}

/** Cost and list price from the family's levels at the listing's instant, the add-on and the draws. */
function priceListing(
  seed: number,
  market: MarketId,
  tick: number,
  l: Listing,
): { unitCost: number; refPrice: number; listPrice: number } {
  const level = levelsAt(seed, market, tick, l.cluster, l.listedAt);
  const costMult = l.addon?.cost_mult ?? 1;
  const priceMult = l.addon?.price_mult ?? 1;
  const unitCost = Math.max(
    1,
    Math.round(level.cost * l.content * costMult * Math.exp(LISTING.cost_sd * l.zCost)),
  );
  const refPrice = level.price * l.content * priceMult;
  const listPrice = Math.max(1, Math.round(refPrice * Math.exp(LISTING.price_sd * l.zPrice)));
  return { unitCost, refPrice, listPrice };
}

/** What every deal has, whatever its market quotes. */
type DealFacts = {
  key: string;
  tick: number;
  cluster: number;
  bundle: Bundle;
  sku: string;
  unitCost: number;
  listPrice: number;
  listedAt: number;
  maxQty: number;
};

// Object literals, not spreads: this runs for every row of a backfill.
function velocityDeal(f: DealFacts, quoted: number): VelocityDeal {
  return {
    key: f.key,
    tick: f.tick,
    sku_family: f.sku,
    cluster: f.cluster,
    bundle: f.bundle,
    unit_cost_cents: f.unitCost,
    list_price_cents: f.listPrice,
    margin_cents: f.listPrice - f.unitCost,
    listed_at: f.listedAt,
    sales_velocity: quoted,
    inverse_sv: Math.round(1e4 / quoted) / 1e4,
    max_qty: f.maxQty,
    house_accepted: false,
    house_qty: 0,
  };
}

function rankingDeal(f: DealFacts, r: RankingFields): RankingDeal {
  return {
    key: f.key,
    tick: f.tick,
    sku_family: f.sku,
    cluster: f.cluster,
    bundle: f.bundle,
    unit_cost_cents: f.unitCost,
    list_price_cents: f.listPrice,
    margin_cents: f.listPrice - f.unitCost,
    listed_at: f.listedAt,
    sales_rank: r.sales_rank,
    sales_rank_avg: r.sales_rank_avg,
    rank_drops: r.rank_drops,
    rank_drops_long: r.rank_drops_long,
    nsellers: r.nsellers,
    max_qty: f.maxQty,
    house_accepted: false,
    house_qty: 0,
  };
}

function drawItems(s: Stream, fam: Family) {
  const count = s.int(1, Math.min(LISTING.max_items, fam.items.length));
  const pool = fam.items.map((_, i) => i);
  const items: Array<{ name: string; qty: number; grade: string }> = [];
  let content = 0;
  for (let k = 0; k < count; k++) {
    const item = fam.items[pool.splice(s.int(0, pool.length - 1), 1)[0]];
    const qty = s.int(1, LISTING.max_pieces);
    const grade = item.grades[s.int(0, item.grades.length - 1)];
    content += qty * item.weight * GRADE_VALUE[grade];
    items.push({ name: item.name, qty, grade });
  }
  return { items, content };
}

export function dealAt(seed: number, market: MarketId, tick: number, index: number): Deal {
  return dealWithLatent(seed, market, tick, index).deal;
}

/** Every deal of a session, ordered by listed_at. */
export function menu(seed: number, market: MarketId, tick: number): Deal[] {
  const n = menuSize(seed, market, tick);
  const out: Deal[] = [];
  for (let i = 0; i < n; i++) out.push(dealWithLatent(seed, market, tick, i, n).deal);
  return out;
}
