/**
 * Tape-derived analytics (SPEC.md "Tape row", "Book"): the served order of tape fields, the
 * settled-only figures of a tape row, and the synthetic book reconstructed from a window of tape.
 * Money arrives as integer cents and leaves as 2-decimal numbers; rates have 4 decimals.
 */
import { syntheticBook, type Book } from './book.js';
import { kyleLambda } from './impact.js';
import { round2 } from './money.js';
import { centsToNumber } from '../engine/money.js';
import { chooseSpread } from './spread.js';

/** Every tape field of SPEC.md in its order (jsonb does not keep the stored key order). */
export const TAPE_FIELDS = [
  'price_open',
  'price_high',
  'price_low',
  'price_close',
  'exec_n',
  'units',
  'desk_units',
  'holder_units',
  'notional',
  'open',
  'high',
  'low',
  'close',
  'vwap',
  'sold',
  'revenue',
  'active',
  'inventory',
  'inventory_value',
  'quoted',
  'velocity',
  'demand_index',
  'sell_through',
  'menu_n',
  'cost_floor',
  'cost_mean',
  'supply_units',
  'supply_value',
  'advancers',
  'decliners',
] as const;

/** Fields a tape row carries only once its session has settled. */
export const SETTLED_TAPE_FIELDS = [
  'desk_pnl',
  'holder_pnl',
  'profitable_rate',
  'downside_rate',
  'exec_rate',
] as const;

export type TapeValues = Record<string, number | null>;

/** k / n with 4 decimals; null when n is 0 (no denominator, no rate). */
export function rate(k: number, n: number): number | null {
  return n > 0 ? Math.round((k / n) * 1e4) / 1e4 : null;
}

/** A stored tape row in SPEC order; a field the row lacks is null. */
export function orderedTapeRow(row: Record<string, unknown>): TapeValues {
  const out: TapeValues = {};
  for (const f of TAPE_FIELDS) {
    const v = row[f];
    out[f] = typeof v === 'number' ? v : null;
  }
  return out;
}

/** What the record says about one settled session (or one family of it). */
export interface SettledCounts {
  housePnlCents: number;
  holderPnlCents: number;
  /** Settled trades, and those in profit / with a downside regime. */
  settled: number;
  profitable: number;
  downside: number;
  /** Menu rows, and rows executed by anyone. */
  menuRows: number;
  executedRows: number;
}

export function settledTapeFields(
  c: SettledCounts,
): Record<(typeof SETTLED_TAPE_FIELDS)[number], number | null> {
  return {
    desk_pnl: centsToNumber(c.housePnlCents),
    holder_pnl: centsToNumber(c.holderPnlCents),
    profitable_rate: rate(c.profitable, c.settled),
    downside_rate: rate(c.downside, c.settled),
    exec_rate: rate(c.executedRows, c.menuRows),
  };
}

/** A tape row as the book reads it (served numbers). */
export interface BookTapeRow {
  tick: number;
  price_close: number | null;
  price_high: number | null;
  price_low: number | null;
  units: number | null;
  sold: number | null;
}

export interface BookOptions {
  step: number;
  levels: number;
  /** Minimum spread as a fraction of mid (the floor of chooseSpread). */
  floorFrac: number;
  /** The session the book stands at (the open session). */
  tick: number;
  /** Listings of the current menu: count and lowest / highest list price (null when none). */
  listed: { n: number; low: number | null; high: number | null };
}

export type ServedBook = Omit<Book, 'listed_low' | 'listed_high'> & {
  listed_low: number | null;
  listed_high: number | null;
};

const sig6 = (x: number | null) => (x === null ? null : Number(x.toPrecision(6)));

/**
 * The synthetic book from tape rows in tick order:
 *   mid = the last price_close; spread by chooseSpread (Roll on the closes, Corwin-Schultz on the
 *   session highs and lows, else the floor), at most the mid itself; level sizes from units executed per session;
 *   buy_volume = units executed over the window, sell_volume = units sold by positions over it;
 *   price_impact = Kyle's lambda of close-to-close changes on the session's signed flow
 *   (units executed - units sold), 6 significant digits.
 * Null when no row has a close (nothing to centre the book on).
 */
export function bookFromTape(rows: readonly BookTapeRow[], o: BookOptions): ServedBook | null {
  const priced = rows.filter((r) => r.price_close !== null);
  if (!priced.length) return null;
  const closes = priced.map((r) => r.price_close as number);
  const mid = closes[closes.length - 1];
  const hl = priced.filter((r) => r.price_high !== null && r.price_low !== null);
  const chosen = chooseSpread({
    prices: closes,
    highs: hl.map((r) => r.price_high as number),
    lows: hl.map((r) => r.price_low as number),
    mid,
    floorFrac: o.floorFrac,
  });
  // Capped at the mid, so the best bid stays at or above half the mid (a book with positive bids).
  const spread = Math.min(chosen.spread, mid);
  const method = chosen.method;
  const dp: number[] = [];
  const flow: number[] = [];
  for (let i = 1; i < priced.length; i++) {
    dp.push(closes[i] - closes[i - 1]);
    flow.push((priced[i].units ?? 0) - (priced[i].sold ?? 0));
  }
  const buy = rows.reduce((s, r) => s + (r.units ?? 0), 0);
  const sell = rows.reduce((s, r) => s + (r.sold ?? 0), 0);
  const book = syntheticBook({
    mid,
    spread,
    spreadMethod: method,
    step: o.step,
    levels: o.levels,
    depthUnits: rows.map((r) => r.units ?? 0),
    buyVolume: buy,
    sellVolume: sell,
    priceImpact: sig6(kyleLambda(dp, flow)),
    listed: o.listed.n,
    listedLow: o.listed.low ?? 0,
    listedHigh: o.listed.high ?? 0,
    tick: o.tick,
  });
  return {
    ...book,
    imbalance: Math.round(book.imbalance * 1e4) / 1e4,
    listed_low: o.listed.low === null ? null : round2(o.listed.low),
    listed_high: o.listed.high === null ? null : round2(o.listed.high),
  };
}
