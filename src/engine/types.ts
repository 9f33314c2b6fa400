// Shapes the engine hands out. Money is integer cents (`*_cents`); see money.ts and
// dealToJson for the served form.

export interface BundleItem {
  name: string;
  qty: number;
  grade: string;
}

export interface Bundle {
  title: string;
  unit: string;
  origin: string;
  items: BundleItem[];
}

interface DealBase {
  /** Unique across markets and ticks: `${market}-${tick}-${index}-${tag}`. */
  key: string;
  tick: number;
  sku_family: string;
  cluster: number;
  bundle: Bundle;
  unit_cost_cents: number;
  list_price_cents: number;
  /** list_price_cents - unit_cost_cents (may be negative). */
  margin_cents: number;
  /** 0..1, non-decreasing along the menu. */
  listed_at: number;
  max_qty: number;
  house_accepted: boolean;
  /** 0 when the house does not bid. */
  house_qty: number;
}

/** Deal on a market with quotes_velocity: true (m15, m45). */
export interface VelocityDeal extends DealBase {
  sales_velocity: number;
  inverse_sv: number;
}

/** Deal on a market with quotes_velocity: false (h2, h10). */
export interface RankingDeal extends DealBase {
  sales_rank: number;
  sales_rank_avg: number;
  rank_drops: number;
  rank_drops_long: number;
  nsellers: number;
}

export type Deal = VelocityDeal | RankingDeal;

export function isVelocityDeal(d: Deal): d is VelocityDeal {
  return 'sales_velocity' in d;
}

/** What a deal's outcome depends on beyond its served fields (never served). */
export interface DealLatent {
  cluster: number;
  /** list price / family reference price of the same bundle: demand scales with its -elasticity. */
  relativePrice: number;
  /** Position on the menu (the deal's own stream key). */
  menuIndex: number;
}

/** Everything the cash formulas need from the engine for one deal; the same for every executor. */
export interface OutcomeInputs {
  /** Demand of sessions 1..8 after the fill (non-negative integers). */
  demand: number[];
  /** Whether a downside regime strikes within the horizon. */
  regime: boolean;
  /** Session (1..8) at which it strikes; null without regime. Demand is 0 from there on. */
  regime_session: number | null;
  /** Settlement surcharge parameters, 0 without regime. */
  extra_cost_frac: number;
  flat_extra_cost_cents: number;
}
