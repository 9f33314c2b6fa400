// Pure builders of the market record: engine output → rows. No I/O, so the live close and the
// history backfill produce the same rows for the same session, and tests can check them alone.
import type { TradeActor } from '../../orm/entities/record.js';
import {
  MARKETS,
  centsToNumber as c2,
  costBasisCents,
  dealMarketPath,
  dealToJson,
  familyTicks,
  isVelocityDeal,
  openPosition,
  positionTerms,
  regimeTerms,
  settlePosition,
  stepPosition,
  type Deal,
  type MarketId,
  type OutcomeInputs,
  type PositionState,
  type ServedDeal,
} from '../../src/engine/index.js';

export type MenuRecord = {
  market: string;
  tick: number;
  idx: number;
  offer_key: string;
  cluster: number;
  unit_cost_cents: number;
  list_price_cents: number;
  listed_at: number;
  max_qty: number;
  house_accepted: boolean;
  house_qty: number;
  deal: ServedDeal;
};

export function menuRecords(market: MarketId, deals: readonly Deal[]): MenuRecord[] {
  return deals.map((d, idx) => ({
    market,
    tick: d.tick,
    idx,
    offer_key: d.key,
    cluster: d.cluster,
    unit_cost_cents: d.unit_cost_cents,
    list_price_cents: d.list_price_cents,
    listed_at: d.listed_at,
    max_qty: d.max_qty,
    house_accepted: d.house_accepted,
    house_qty: d.house_qty,
    deal: dealToJson(d),
  }));
}

/** The revealed state of a trade: what its row holds after `revealed_ticks` closes. */
export type TradeState = {
  revealed_ticks: number;
  sales_by_tick: number[];
  units_sold: number;
  qty_left: number;
  revenue_cents: number;
  holding_cost_cents: number;
  settled: boolean;
  sold_out: boolean | null;
  regime: boolean | null;
  surcharge_cents: number | null;
  writeoff_cents: number | null;
  realized_pnl_cents: number | null;
};

export type TradeRecord = TradeState & {
  market: string;
  tick: number;
  idx: number;
  offer_key: string;
  cluster: number;
  actor: TradeActor;
  qty: number;
  unit_cost_cents: number;
  list_price_cents: number;
  fee_cents: number;
  holding_cents: number;
  cost_basis_cents: number;
  horizon: number;
  price_by_tick_cents: number[] | null;
  nsellers_by_tick: number[] | null;
};

function stateOf(p: PositionState): TradeState {
  return {
    revealed_ticks: p.ticks_done,
    sales_by_tick: p.sales_by_tick.slice(),
    units_sold: p.units_sold,
    qty_left: p.qty_left,
    revenue_cents: p.revenue_cents,
    holding_cost_cents: p.holding_cost_cents,
    settled: false,
    sold_out: null,
    regime: null,
    surcharge_cents: null,
    writeoff_cents: null,
    realized_pnl_cents: null,
  };
}

function positionOf(
  t: Pick<
    TradeRecord,
    'qty' | 'unit_cost_cents' | 'list_price_cents' | 'fee_cents' | 'holding_cents'
  >,
  s: TradeState,
): PositionState {
  return {
    qty: t.qty,
    unitCostCents: t.unit_cost_cents,
    listPriceCents: t.list_price_cents,
    feeCents: t.fee_cents,
    holdingCents: t.holding_cents,
    ticks_done: s.revealed_ticks,
    qty_left: s.qty_left,
    units_sold: s.units_sold,
    revenue_cents: s.revenue_cents,
    holding_cost_cents: s.holding_cost_cents,
    sales_by_tick: s.sales_by_tick.slice(),
    censored: s.sales_by_tick.length > 0 && s.qty_left === 0,
  };
}

/**
 * One session of a trade: sells `min(demand, left)` of session `revealed + 1`, and settles after
 * the horizon's last session. This is the only place a trade's state moves.
 */
export function advanceTrade(
  t: Pick<
    TradeRecord,
    'qty' | 'unit_cost_cents' | 'list_price_cents' | 'fee_cents' | 'holding_cents' | 'horizon'
  >,
  s: TradeState,
  inputs: OutcomeInputs,
): TradeState {
  if (s.settled) throw new Error('a settled trade does not advance');
  const stepped = stepPosition(positionOf(t, s), inputs.demand[s.revealed_ticks]);
  if (stepped.ticks_done < t.horizon) return stateOf(stepped);
  const settled = settlePosition(stepped, regimeTerms(inputs));
  return {
    ...stateOf(stepped),
    settled: true,
    sold_out: settled.sold_out,
    regime: settled.regime,
    surcharge_cents: settled.surcharge_cents,
    writeoff_cents: settled.writeoff_cents,
    realized_pnl_cents: settled.realized_pnl_cents,
  };
}

/** The house's trade of a menu row, as revealed after `revealed` closes since its fill. */
export function houseTrade(
  seed: number,
  market: MarketId,
  deal: Deal,
  idx: number,
  inputs: OutcomeInputs,
  revealed: number,
): TradeRecord {
  return executedTrade(seed, market, deal, idx, inputs, revealed, 'house', deal.house_qty);
}

/**
 * A trade of `qty` units of a menu row by the house or a holder, as revealed after `revealed` closes
 * since its fill. The house and holders trade on the same terms and the same demand path.
 */
export function executedTrade(
  seed: number,
  market: MarketId,
  deal: Deal,
  idx: number,
  inputs: OutcomeInputs,
  revealed: number,
  actor: 'house' | 'user',
  qty: number,
): TradeRecord {
  const terms = positionTerms(market, deal, qty);
  const horizon = MARKETS[market].settlement_horizon_ticks;
  const base = {
    market,
    tick: deal.tick,
    idx,
    offer_key: deal.key,
    cluster: deal.cluster,
    actor,
    qty: terms.qty,
    unit_cost_cents: terms.unitCostCents,
    list_price_cents: terms.listPriceCents,
    fee_cents: terms.feeCents,
    holding_cents: terms.holdingCents,
    cost_basis_cents: costBasisCents(terms),
    horizon,
    ...rankingPath(seed, market, deal),
  };
  let state = stateOf(openPosition(terms));
  for (let k = 0; k < Math.min(revealed, horizon); k++) state = advanceTrade(base, state, inputs);
  return { ...base, ...state };
}

function rankingPath(seed: number, market: MarketId, deal: Deal) {
  if (isVelocityDeal(deal)) return { price_by_tick_cents: null, nsellers_by_tick: null };
  const p = dealMarketPath(seed, market, deal);
  return { price_by_tick_cents: p.price_by_tick_cents, nsellers_by_tick: p.nsellers_by_tick };
}

// ---------------------------------------------------------------------------------------------
// Tape: one row per closed session for the whole market (cluster -1) and per family on the menu.
// ---------------------------------------------------------------------------------------------

/** An execution of the session (a trade filled at its close). */
export type Fill = {
  cluster: number;
  qty: number;
  unit_cost_cents: number;
  listed_at: number;
  actor: 'house' | 'user';
};
/** What one earlier position did in the session: its sales and what it still holds. */
export type Sale = {
  cluster: number;
  sold: number;
  revenue_cents: number;
  held_after: number;
  list_price_cents: number;
};

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

export type TapeRow = Record<string, number | null>;

function tapeRow(
  market: MarketId,
  deals: readonly Deal[],
  fills: readonly Fill[],
  sales: readonly Sale[],
  quoted: number | null,
  index: number | null,
  adv: number,
  dec: number,
): TapeRow {
  const prices = deals.map((d) => d.list_price_cents);
  const costs = deals.map((d) => d.unit_cost_cents);
  const ordered = [...fills].sort((a, b) => a.listed_at - b.listed_at);
  const units = fills.reduce((s, f) => s + f.qty, 0);
  const notional = fills.reduce((s, f) => s + f.qty * f.unit_cost_cents, 0);
  const sold = sales.reduce((s, x) => s + x.sold, 0);
  const inventory = sales.reduce((s, x) => s + x.held_after, 0);
  const velocityMarket = MARKETS[market].quotes_velocity;
  return {
    price_open: prices.length ? c2(prices[0]) : null,
    price_high: prices.length ? c2(Math.max(...prices)) : null,
    price_low: prices.length ? c2(Math.min(...prices)) : null,
    price_close: prices.length ? c2(prices[prices.length - 1]) : null,
    exec_n: fills.length,
    units,
    desk_units: fills.filter((f) => f.actor === 'house').reduce((s, f) => s + f.qty, 0),
    holder_units: fills.filter((f) => f.actor === 'user').reduce((s, f) => s + f.qty, 0),
    notional: c2(notional),
    open: ordered.length ? c2(ordered[0].unit_cost_cents) : null,
    high: ordered.length ? c2(Math.max(...ordered.map((f) => f.unit_cost_cents))) : null,
    low: ordered.length ? c2(Math.min(...ordered.map((f) => f.unit_cost_cents))) : null,
    close: ordered.length ? c2(ordered[ordered.length - 1].unit_cost_cents) : null,
    vwap: units ? c2(notional / units) : null,
    sold,
    revenue: c2(sales.reduce((s, x) => s + x.revenue_cents, 0)),
    active: sales.length,
    inventory,
    inventory_value: c2(sales.reduce((s, x) => s + x.held_after * x.list_price_cents, 0)),
    quoted: velocityMarket ? quoted : null,
    velocity: sales.length ? r4(sold / sales.length) : null,
    demand_index: velocityMarket ? index : null,
    sell_through: sold + inventory ? r4(sold / (sold + inventory)) : null,
    menu_n: deals.length,
    cost_floor: costs.length ? c2(Math.min(...costs)) : null,
    cost_mean: costs.length ? c2(costs.reduce((s, c) => s + c, 0) / costs.length) : null,
    supply_units: deals.reduce((s, d) => s + d.max_qty, 0),
    supply_value: c2(deals.reduce((s, d) => s + d.max_qty * d.unit_cost_cents, 0)),
    advancers: adv,
    decliners: dec,
  };
}

/** Tape rows of session `tick` keyed by cluster (-1 = the whole market). */
export function tapeRows(
  seed: number,
  market: MarketId,
  tick: number,
  deals: readonly Deal[],
  fills: readonly Fill[],
  sales: readonly Sale[],
): Map<number, TapeRow> {
  const now = familyTicks(seed, market, tick);
  const before = familyTicks(seed, market, tick - 1);
  // Every family the session touched: listed on its menu, or carried by earlier positions.
  const clusters = [
    ...new Set([...deals.map((d) => d.cluster), ...sales.map((s) => s.cluster)]),
  ].sort((a, b) => a - b);
  const moved = (c: number) => Math.sign(now[c].priceLevel - before[c].priceLevel);
  const out = new Map<number, TapeRow>();
  const mean = (xs: number[]) => (xs.length ? r4(xs.reduce((s, x) => s + x, 0) / xs.length) : null);
  out.set(
    -1,
    tapeRow(
      market,
      deals,
      fills,
      sales,
      mean(clusters.map((c) => now[c].quoted)),
      mean(clusters.map((c) => now[c].index)),
      clusters.filter((c) => moved(c) > 0).length,
      clusters.filter((c) => moved(c) < 0).length,
    ),
  );
  for (const c of clusters) {
    out.set(
      c,
      tapeRow(
        market,
        deals.filter((d) => d.cluster === c),
        fills.filter((f) => f.cluster === c),
        sales.filter((s) => s.cluster === c),
        r4(now[c].quoted),
        r4(now[c].index),
        moved(c) > 0 ? 1 : 0,
        moved(c) < 0 ? 1 : 0,
      ),
    );
  }
  return out;
}
