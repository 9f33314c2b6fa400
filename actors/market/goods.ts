// Owned goods minted at settlement (SPEC.md "Ownership"): the whole units a holder's position did
// not sell become one inventory item carrying its story, rarity and the market history of its
// family at minting. Pure: the same settled position and tape give the same item.
import { MARKETS, centsToNumber, type MarketId, type ServedDeal } from '../../src/engine/index.js';
import type { TapeRow } from './rows.js';

export type SettledHolding = {
  market: MarketId;
  tick: number;
  settledTick: number;
  cluster: number;
  deal: ServedDeal;
  qty: number;
  unitCostCents: number;
  listPriceCents: number;
  regime: boolean;
  positionId: number;
  orderId: number;
  roundId: number;
  /** The position traded a competition account's simulated USD. */
  competition: boolean;
};

/** The first entry of an item's provenance: the settled trade it was minted from. */
export type SettlementEntry = {
  kind: 'settlement';
  market: string;
  tick: number;
  offer_key: string;
  order_id: number;
  position_id: number;
  round_id: number;
  settled_tick: number;
};
/** The first entry of an item bought outright from an own cart. */
export type PurchaseEntry = {
  kind: 'purchase';
  market: string;
  tick: number;
  offer_key: string;
  cart_id: number;
  cart_item_id: number;
};
/** Each later entry: a sale on the exchange (actors/exchange), appended when the item changes owner. */
export type SaleEntry = {
  kind: 'exchange';
  at: number;
  from_holder: number;
  to_holder: number;
  price: number;
  currency: 'USD' | 'GC';
  listing_id: number;
};
export type ProvenanceEntry = SettlementEntry | PurchaseEntry | SaleEntry;
/**
 * How an item came to its owner; the latest change of owner decides (`exchange` once it was sold).
 * `competition`: minted from a competition account's position, so bought with simulated USD; such
 * goods are `simulated` and never change owner (CONTRACT.md "Competitions").
 */
export type ItemSource = 'settlement' | 'competition' | 'purchase' | 'exchange';

export type MintedItem = {
  title: string;
  qty: number;
  story: string;
  rarity: string;
  rarity_score: number;
  history: Record<string, unknown>;
  economy: Record<string, unknown>;
  source: 'settlement' | 'competition';
  simulated: boolean;
  provenance: [SettlementEntry];
};

const TIERS: [number, string][] = [
  [0.8, 'legendary'],
  [0.6, 'epic'],
  [0.4, 'rare'],
  [0.2, 'uncommon'],
  [0, 'common'],
];

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * Rarity from what the record shows about the family: half from how seldom the family was listed
 * over the sessions before minting, half from its resale price (a 100-dollar unit or dearer counts
 * fully). Scarce, dear goods are rare; everyday cheap ones are common.
 */
export function rarityOf(
  sessions: number,
  listedSessions: number,
  listPriceCents: number,
): { rarity: string; rarity_score: number } {
  const absence = sessions > 0 ? 1 - listedSessions / sessions : 1;
  const dear = Math.min(1, listPriceCents / 10_000);
  const score = r4(0.5 * absence + 0.5 * dear);
  return { rarity: TIERS.find(([min]) => score >= min)![1], rarity_score: score };
}

/** What goods of a family carry whatever made them: rarity, the family's history and the economy. */
function familyGoods(
  g: {
    market: MarketId;
    cluster: number;
    deal: ServedDeal;
    qty: number;
    unitCostCents: number;
    listPriceCents: number;
  },
  tape: { tick: number; row: TapeRow }[],
  window: number,
) {
  const listed = tape.filter((x) => (x.row.menu_n ?? 0) > 0).length;
  return {
    title: g.deal.bundle.title,
    qty: g.qty,
    ...rarityOf(window, listed, g.listPriceCents),
    history: {
      market: g.market,
      sku_family: g.deal.sku_family,
      cluster: g.cluster,
      ticks: tape.map((x) => x.tick),
      price_close: tape.map((x) => x.row.price_close ?? null),
      vwap: tape.map((x) => x.row.vwap ?? null),
      sold: tape.map((x) => x.row.sold ?? 0),
      velocity: tape.map((x) => x.row.velocity ?? null),
    },
    economy: {
      currency: 'USD',
      units: g.qty,
      unit_cost: centsToNumber(g.unitCostCents),
      list_price: centsToNumber(g.listPriceCents),
      cost_value: centsToNumber(g.qty * g.unitCostCents),
      list_value: centsToNumber(g.qty * g.listPriceCents),
    },
  };
}

const price = (c: number) => centsToNumber(c).toFixed(2);

/** `tape`: the family's tape rows of the sessions before minting (oldest first). */
export function mintItem(
  h: SettledHolding,
  tape: { tick: number; row: TapeRow }[],
  window: number,
): MintedItem {
  const m = MARKETS[h.market];
  const bundle = h.deal.bundle;
  const story =
    `${h.qty} × ${bundle.title} from ${bundle.origin}, bought on the ${m.label} in session ${h.tick} at ${price(h.unitCostCents)} USD a unit. ` +
    `${h.regime ? 'A downside event hit its family while it was on sale, and these' : 'These'} units were still unsold when the position settled ` +
    `${m.settlement_horizon_ticks} sessions later (session ${h.settledTick}), and became the holder's own goods.` +
    (h.competition
      ? ' They were bought in a competition with simulated USD, so they cannot be sold on the exchange.'
      : '');
  return {
    ...familyGoods(h, tape, window),
    story,
    source: h.competition ? 'competition' : 'settlement',
    simulated: h.competition,
    provenance: [
      {
        kind: 'settlement',
        market: h.market,
        tick: h.tick,
        offer_key: h.deal.key,
        order_id: h.orderId,
        position_id: h.positionId,
        round_id: h.roundId,
        settled_tick: h.settledTick,
      },
    ],
  };
}

/** Goods bought outright from an own cart (CONTRACT.md "Carts"): no order, position or trade. */
export type Purchase = {
  market: MarketId;
  tick: number;
  cluster: number;
  deal: ServedDeal;
  qty: number;
  unitCostCents: number;
  listPriceCents: number;
  cartId: number;
  cartItemId: number;
};

export type PurchasedItem = Omit<MintedItem, 'source' | 'simulated' | 'provenance'> & {
  source: 'purchase';
  simulated: false;
  provenance: [PurchaseEntry];
};

export function mintPurchase(
  p: Purchase,
  tape: { tick: number; row: TapeRow }[],
  window: number,
): PurchasedItem {
  const m = MARKETS[p.market];
  const bundle = p.deal.bundle;
  const story =
    `${p.qty} × ${bundle.title} from ${bundle.origin}, bought outright on the ${m.label} in session ${p.tick} at ${price(p.unitCostCents)} USD a unit. ` +
    "They went straight into the holder's inventory: no order, position or trade was opened for them.";
  return {
    ...familyGoods(p, tape, window),
    story,
    source: 'purchase',
    simulated: false,
    provenance: [
      {
        kind: 'purchase',
        market: p.market,
        tick: p.tick,
        offer_key: p.deal.key,
        cart_id: p.cartId,
        cart_item_id: p.cartItemId,
      },
    ],
  };
}
