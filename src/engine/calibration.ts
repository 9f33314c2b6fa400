// The calibration figures of ENGINE.md, measured the way a backfill would record them: every
// session of `days` days ending at `endUnix` on every market, the house executing its own bids.
// Used by the calibration test and by operators checking a parameter change.

import { type MarketId, MARKET_IDS, MARKETS } from './markets.js';
import { settleDeal, sessionRows } from './outcome.js';
import { isVelocityDeal } from './types.js';

export interface CalibrationFigures {
  menu_rows: number;
  desk_trades: number;
  /** House trades with realized_pnl > 0. */
  profitable_rate: number;
  /** House trades with a downside regime. */
  downside_rate: number;
  /** Menu rows the house executed. */
  exec_rate: number;
  /** House trades with nothing left at settlement. */
  sold_out_rate: number;
  /** House P&L in cents. */
  desk_pnl_cents: number;
}

export interface CalibrationReport {
  overall: CalibrationFigures;
  markets: Record<MarketId, CalibrationFigures>;
  /** Velocity markets: Pearson correlation over (family, fill session) points of the family's
   *  quoted velocity and the realised units sold per session (mean over the horizon) of the
   *  house's trades of that family filled in that session — the tape's `quoted` vs `velocity`. */
  velocity_corr: Partial<Record<MarketId, number>>;
  /** The same with each family's points averaged over the whole window first (one point per
   *  family, at least 5 trades): how well the quote ranks families in the long run. */
  velocity_corr_family_means: Partial<Record<MarketId, number>>;
}

function tally() {
  return { rows: 0, trades: 0, profitable: 0, downside: 0, soldOut: 0, pnl: 0 };
}
type Tally = ReturnType<typeof tally>;

function figures(t: Tally): CalibrationFigures {
  const r = (n: number) => (t.trades ? n / t.trades : 0);
  return {
    menu_rows: t.rows,
    desk_trades: t.trades,
    profitable_rate: r(t.profitable),
    downside_rate: r(t.downside),
    exec_rate: t.rows ? t.trades / t.rows : 0,
    sold_out_rate: r(t.soldOut),
    desk_pnl_cents: t.pnl,
  };
}

export function pearson(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

export function calibrate(seed: number, endUnix: number, days = 30): CalibrationReport {
  const all = tally();
  const markets = {} as Record<MarketId, CalibrationFigures>;
  const velocity_corr: Partial<Record<MarketId, number>> = {};
  const velocity_corr_family_means: Partial<Record<MarketId, number>> = {};
  for (const market of MARKET_IDS) {
    const spec = MARKETS[market];
    const last = Math.floor(endUnix / spec.interval_seconds) - 1;
    const first = last - Math.floor((days * 86400) / spec.interval_seconds) + 1;
    const t = tally();
    const fam = new Map<number, { sv: number; sold: number; n: number }>();
    const xs: number[] = [];
    const ys: number[] = [];
    for (let tick = first; tick <= last; tick++) {
      const session = new Map<number, { sv: number; sold: number; n: number }>();
      for (const { deal, inputs } of sessionRows(seed, market, tick)) {
        t.rows++;
        if (!deal.house_accepted) continue;
        const pos = settleDeal(market, deal, inputs, deal.house_qty);
        t.trades++;
        if (pos.realized_pnl_cents > 0) t.profitable++;
        if (pos.regime) t.downside++;
        if (pos.sold_out) t.soldOut++;
        t.pnl += pos.realized_pnl_cents;
        if (isVelocityDeal(deal)) {
          for (const m of [fam, session]) {
            const f = m.get(deal.cluster) ?? { sv: 0, sold: 0, n: 0 };
            f.sv += deal.sales_velocity;
            f.sold += pos.units_sold / spec.settlement_horizon_ticks;
            f.n++;
            m.set(deal.cluster, f);
          }
        }
      }
      for (const f of session.values()) {
        xs.push(f.sv / f.n);
        ys.push(f.sold / f.n);
      }
    }
    markets[market] = figures(t);
    for (const k of Object.keys(all) as Array<keyof Tally>) all[k] += t[k];
    if (spec.quotes_velocity) {
      const fs = [...fam.values()].filter((f) => f.n >= 5);
      velocity_corr_family_means[market] = pearson(
        fs.map((f) => f.sv / f.n),
        fs.map((f) => f.sold / f.n),
      );
      velocity_corr[market] = pearson(xs, ys);
    }
  }
  return { overall: figures(all), markets, velocity_corr, velocity_corr_family_means };
}
