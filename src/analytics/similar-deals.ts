/**
 * How a family's settled deals ended (SPEC.md "Projection": `realised[]`, the settled similar deals
 * of the lookback), in the figures a holder reads before paying:
 *
 * - results: how many lost money (realised P&L below 0), and the median and worst result per unit
 *   bought (realised P&L / qty: deals differ in size, so a result per unit is the one a holder can
 *   hold against an order of any quantity);
 * - calibration: how many ended below the low scenario the projection would have given them when
 *   they were bought: for a deal filled at session u, the projection of a deal of u's menu with the
 *   same lookback and fit (the family's tape up to u - 1, the scenarios from the deals settled by
 *   then), priced at the deal's own quantity, cost, resale price and fees. Only the record's own
 *   rows are used, so the check needs no more than the tape and trades of twice the lookback.
 */
import { round2, toCents } from './money.js';
import { cashPnl, projectedPath, scenariosFrom, type HistoryRow } from './projection.js';
import { quantile } from './stats.js';
import { rate } from './tape.js';

/** A settled deal of the family (a trade of the record), money in cents. */
export interface SettledDeal {
  tick: number;
  horizon: number;
  qty: number;
  unitsSold: number;
  unitCostCents: number;
  listPriceCents: number;
  feeCents: number;
  holdingCents: number;
  pnlCents: number;
}

/** The realised result of a deal per unit bought, in (fractional) cents. */
const perUnitCents = (d: Pick<SettledDeal, 'qty' | 'pnlCents'>) => d.pnlCents / d.qty;

/** How the settled deals ended: how many, how many lost money, the median and worst result per unit (USD, to the cent). */
export function settledResults(deals: readonly Pick<SettledDeal, 'qty' | 'pnlCents'>[]) {
  const sized = deals.filter((d) => d.qty > 0);
  const perUnit = sized.map(perUnitCents).sort((x, y) => x - y);
  const median = quantile(perUnit, 0.5);
  return {
    settled: sized.length,
    lost: sized.filter((d) => d.pnlCents < 0).length,
    median_pnl_per_unit: median === null ? null : round2(median / 100),
    worst_pnl_per_unit: perUnit.length ? round2(perUnit[0] / 100) : null,
  };
}

/**
 * The settlement surcharges of the settled deals: a downside event brings one, debited at settlement
 * (ENGINE.md). How often it happened (the share of settled deals with one) and its median per unit
 * bought when it did (USD, to the cent); null when nothing settled or none was hit.
 */
export function surchargeRecord(
  deals: readonly { qty: number; downside: boolean; surchargeCents: number }[],
) {
  const sized = deals.filter((d) => d.qty > 0);
  const hit = sized.filter((d) => d.downside);
  const median = quantile(
    hit.map((d) => d.surchargeCents / d.qty).sort((x, y) => x - y),
    0.5,
  );
  return {
    events: hit.length,
    rate: sized.length ? Math.round((hit.length / sized.length) * 1e4) / 1e4 : null,
    median_per_unit: median === null ? null : round2(median / 100),
  };
}

/**
 * The deals settled by the open of session `open` among those filled in its lookback: the ones a
 * projection of `open`'s menu draws its scenarios from (a deal filled at t settles at the close of
 * t + horizon).
 */
export function settledBy<D extends Pick<SettledDeal, 'tick' | 'horizon'>>(
  deals: readonly D[],
  open: number,
  lookback: number,
): D[] {
  return deals.filter((d) => d.tick >= open - lookback && d.tick + d.horizon <= open - 1);
}

export interface CalibrationInput {
  /** The family's tape rows with positions selling (as the projection's history), from `from - lookback` on. */
  history: readonly HistoryRow[];
  /** The family's settled deals filled from `from - lookback` on. */
  settled: readonly SettledDeal[];
  /** The deals checked: those filled at `from` or later (the projection's lookback). */
  from: number;
  lookback: number;
  fit: 'trend' | 'mean';
  /** Sessions between a deal's session and its first sale (the projection's lead). */
  lead: number;
  pathDigits?: number;
}

/** The low scenario's sales path the projection would have given a deal of session `open`'s menu. */
export function lowPathAt(
  input: Omit<CalibrationInput, 'from'>,
  open: number,
  horizon: number,
): number[] {
  const history = input.history.filter(
    (r) => r.tick >= open - input.lookback && r.tick <= open - 1,
  );
  const { projection } = projectedPath({
    history,
    fit: input.fit,
    horizon,
    lastTick: open - 1,
    lead: input.lead,
    pathDigits: input.pathDigits,
  });
  const { scenarios } = scenariosFrom(
    settledBy(input.settled, open, input.lookback).map((d) => d.unitsSold / d.horizon),
  );
  return projection.map((v) => v * scenarios.low_mult);
}

/** A deal's P&L (cents) on a sales path, by the projection's cash rule. */
const pnlOnPath = (d: SettledDeal, path: number[]) =>
  toCents(
    cashPnl(
      d.qty,
      path,
      d.unitCostCents / 100,
      d.listPriceCents / 100,
      d.feeCents / 100,
      d.holdingCents / 100,
    ),
  );

/** Of the settled deals filled at `from` or later, how many ended below the low scenario they would have been given. */
export function belowLowScenario(input: CalibrationInput) {
  const checked = input.settled.filter((d) => d.tick >= input.from);
  // Deals of one session share their path: one fit per session, not per deal.
  const paths = new Map<string, number[]>();
  const pathOf = (d: SettledDeal) => {
    const key = `${d.tick}/${d.horizon}`;
    if (!paths.has(key)) paths.set(key, lowPathAt(input, d.tick, d.horizon));
    return paths.get(key)!;
  };
  const below = checked.filter((d) => d.pnlCents < pnlOnPath(d, pathOf(d))).length;
  return { settled: checked.length, below_low: below, below_low_rate: rate(below, checked.length) };
}
