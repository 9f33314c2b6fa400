// Pure builders of history rows (SPEC "History row"): a served deal plus what the record knows of
// it. Outcomes come only from trades that executed the row, revealed by settlement; the profit
// curve is the engine's, censored at the largest executed volume when that position sold out.
import {
  dealProfitCurve,
  centsToNumber,
  menuSize,
  sessionRow,
  type MarketId,
  type ProfitCurve,
  type SessionRow,
} from '../../src/engine/index.js';
import { tradeJson, type TradeRow } from './trade-json.js';

/** SPEC field order of a Deal object (jsonb does not keep key order). */
const DEAL_ORDER = [
  'key',
  'tick',
  'sku_family',
  'cluster',
  'bundle',
  'unit_cost',
  'list_price',
  'margin',
  'listed_at',
  'sales_velocity',
  'inverse_sv',
  'sales_rank',
  'sales_rank_avg',
  'rank_drops',
  'rank_drops_long',
  'nsellers',
  'max_qty',
  'house_accepted',
  'house_qty',
] as const;

export type DealJson = Record<string, any> & { bundle: { title: string } };

/** The deal in SPEC order, with `title` in place of `bundle` unless the bundle is asked for. */
export function servedDeal(deal: DealJson, includeBundle: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of DEAL_ORDER) {
    if (!(k in deal)) continue;
    if (k === 'bundle' && !includeBundle) out.title = deal.bundle.title;
    else out[k] = deal[k];
  }
  return out;
}

/**
 * Engine outcomes of the menu rows a request reveals, each computed once: row by row, not the
 * whole session (a history read reveals the observed rows, about one in five, unless the oracle
 * asks for the rejected ones too).
 */
export class Outcomes {
  private readonly rows = new Map<string, SessionRow>();
  private readonly sizes = new Map<number, number>();
  constructor(
    private readonly seed: number,
    private readonly market: MarketId,
  ) {}

  row(tick: number, idx: number): SessionRow {
    const key = `${tick}:${idx}`;
    let row = this.rows.get(key);
    if (!row) {
      let n = this.sizes.get(tick);
      if (n === undefined) this.sizes.set(tick, (n = menuSize(this.seed, this.market, tick)));
      if (!Number.isInteger(idx) || idx < 0 || idx >= n)
        throw new Error(`no menu row ${idx} in ${this.market} session ${tick}`);
      this.rows.set(key, (row = sessionRow(this.seed, this.market, tick, idx, n)));
    }
    return row;
  }

  /** Profit curve of a row executed at `executedQty` (0: the oracle's, every volume known). */
  curve(tick: number, idx: number, executedQty: number): ProfitCurve {
    const { deal, inputs } = this.row(tick, idx);
    return dealProfitCurve(this.market, deal, inputs, executedQty);
  }
}

export const curveJson = (c: ProfitCurve) =>
  c.profit_curve_cents.map((x) => (x === null ? null : centsToNumber(x)));

export type RowContext = {
  recorded: boolean;
  /** The row's session has settled (every trade of it revealed all sessions). */
  settled: boolean;
  includeBundle: boolean;
  /** reveal=full with the oracle switch on. */
  oracle: boolean;
  outcomes: Outcomes;
};

/** A history row of menu row `idx` of session `deal.tick`, with the trades that executed it. */
export function historyRow(
  deal: DealJson,
  idx: number,
  trades: TradeRow[],
  ctx: RowContext,
): Record<string, unknown> {
  const status = !ctx.recorded ? 'unrecorded' : trades.length ? 'observed' : 'rejected';
  const row: Record<string, unknown> = {
    ...servedDeal(deal, ctx.includeBundle),
    recorded: ctx.recorded,
    settled: ctx.settled,
    status,
    trades: trades.map(tradeJson),
  };
  if (!ctx.settled) return row;
  if (status === 'observed' && trades.every((t) => t.settled)) {
    const executed = Math.max(...trades.map((t) => t.qty));
    const c = ctx.outcomes.curve(deal.tick, idx, executed);
    row.profit_curve = curveJson(c);
    row.known_up_to_qty = c.known_up_to_qty;
    const house = trades.find((t) => t.actor === 'house');
    if (house) {
      row.house_profit = centsToNumber(house.realized_pnl_cents!);
      row.house_units_sold = house.units_sold;
    }
  } else if (status === 'rejected' && ctx.oracle) {
    const c = ctx.outcomes.curve(deal.tick, idx, 0);
    row.profit_curve = curveJson(c);
    row.known_up_to_qty = c.known_up_to_qty;
    row.oracle = true;
  }
  return row;
}

/** Trades grouped by their menu row, `${tick}:${idx}`, in id order. */
export function tradesByRow<T extends TradeRow>(trades: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const t of trades) {
    const k = `${t.tick}:${t.idx}`;
    const list = out.get(k);
    if (list) list.push(t);
    else out.set(k, [t]);
  }
  return out;
}
