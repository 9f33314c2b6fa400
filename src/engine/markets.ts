// The four markets of SPEC.md and what the service may serve about each (fees, max_qty,
// pricing.model). Latent dynamics per market live in params.ts.

export type MarketId = 'm15' | 'm45' | 'h2' | 'h10';

export const MARKET_IDS: readonly MarketId[] = ['m15', 'm45', 'h2', 'h10'];

export const PRICING_MODEL = 'core_v1.ou_jump_log';

export interface MarketSpec {
  id: MarketId;
  label: string;
  interval_seconds: number;
  /** true: deals quote sales_velocity / inverse_sv; false: they carry ranking fields instead. */
  quotes_velocity: boolean;
  settlement_horizon_ticks: number;
  /** Largest volume any deal of the market offers. */
  max_qty: number;
  fees: {
    fulfilment_per_unit_cents: number;
    holding_per_unit_session_cents: number;
  };
  menu_size: { min: number; max: number };
  pricing_model: string;
}

/** Sessions a filled position sells through before it settles: the same in every market (src/rules.ts re-exports it). */
export const SETTLEMENT_HORIZON_SESSIONS = 8;

export const MARKETS: Readonly<Record<MarketId, MarketSpec>> = Object.freeze({
  m15: {
    id: 'm15',
    label: 'Quarter-Hour Arena',
    interval_seconds: 900,
    quotes_velocity: true,
    settlement_horizon_ticks: SETTLEMENT_HORIZON_SESSIONS,
    max_qty: 20,
    fees: { fulfilment_per_unit_cents: 30, holding_per_unit_session_cents: 1 },
    menu_size: { min: 40, max: 90 },
    pricing_model: PRICING_MODEL,
  },
  m45: {
    id: 'm45',
    label: 'Three-Quarter League',
    interval_seconds: 2700,
    quotes_velocity: true,
    settlement_horizon_ticks: SETTLEMENT_HORIZON_SESSIONS,
    max_qty: 30,
    fees: { fulfilment_per_unit_cents: 35, holding_per_unit_session_cents: 2 },
    menu_size: { min: 60, max: 140 },
    pricing_model: PRICING_MODEL,
  },
  h2: {
    id: 'h2',
    label: 'Two-Hour Tournament',
    interval_seconds: 7200,
    quotes_velocity: false,
    settlement_horizon_ticks: SETTLEMENT_HORIZON_SESSIONS,
    max_qty: 50,
    fees: { fulfilment_per_unit_cents: 45, holding_per_unit_session_cents: 4 },
    menu_size: { min: 100, max: 220 },
    pricing_model: PRICING_MODEL,
  },
  h10: {
    id: 'h10',
    label: 'Ten-Hour Campaign',
    interval_seconds: 36000,
    quotes_velocity: false,
    settlement_horizon_ticks: SETTLEMENT_HORIZON_SESSIONS,
    max_qty: 80,
    fees: { fulfilment_per_unit_cents: 60, holding_per_unit_session_cents: 10 },
    menu_size: { min: 150, max: 300 },
    pricing_model: PRICING_MODEL,
  },
});

export function isMarketId(x: string): x is MarketId {
  return (MARKET_IDS as readonly string[]).includes(x);
}

export function marketSpec(id: string): MarketSpec {
  if (!isMarketId(id)) throw new RangeError(`unknown market ${id}`);
  return MARKETS[id];
}
