// The home page's pulse (templates/home-pulse.mustache): the pulse's figures (last 24 hours, last 30
// days, the record) and the ticker, as figures and two charts. Pure: from the answers of the pulse
// and ticker (src/market-data/routes/pulse.ts) to what the template shows.
import { MARKETS, type MarketId } from '../engine/index.js';
import { barChart, figure, lineChart } from './charts.js';
import { compact } from './explore-view.js';
import { usd } from './answers.js';

type Figures = {
  executions: number;
  units: number;
  turnover: number;
  units_sold: number;
  pnl: number;
};
export type PulseLike = {
  last_24h: Figures;
  window: Figures & { days: number; per_day: { turnover: number } };
  totals: Figures & { days_on_record: number; sessions_recorded: number };
  days: (Figures & { day: string })[];
  markets: { market: string; tape: Record<string, unknown>[] }[];
};
export type TickerLike = {
  market: string;
  tick: number | null;
  last: number | null;
  change: number | null;
  change_pct: number | null;
  cost: number | null;
  units: number | null;
  executions: number | null;
  demand_index: number | null;
};

const DAY_MS = 86_400_000;
const dayNumber = (iso: string) => Math.round(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);
const dayLabel = (n: number) => new Date(n * DAY_MS).toISOString().slice(5, 10);
/** 602792.21 → 602,792.21: big sums read at a glance. */
const grouped = (v: number) =>
  v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const figures = (f: Figures) => ({
  turnover: grouped(f.turnover),
  units: f.units,
  executions: f.executions,
  units_sold: f.units_sold,
  pnl: grouped(f.pnl),
  pnl_neg: f.pnl < 0,
});
const signed = (v: number, text: string) => (v > 0 ? `+${text}` : text);

/**
 * Each market's mean landed cost over its last closes, indexed to its own mean over those sessions
 * (= 100), by sessions before the last close: markets of different price levels on one axis.
 */
function indexedCosts(markets: PulseLike['markets']) {
  const n = Math.max(0, ...markets.map((m) => m.tape.length));
  const x = Array.from({ length: n }, (_, i) => i - (n - 1));
  const series = markets.map((m) => {
    const costs = m.tape.map((r) => (typeof r.cost_mean === 'number' ? r.cost_mean : null));
    const known = costs.filter((c): c is number => c !== null);
    const mean = known.length ? known.reduce((a, b) => a + b, 0) / known.length : 0;
    const values: (number | null)[] = Array(n - costs.length).fill(null);
    for (const c of costs)
      values.push(c === null || mean <= 0 ? null : Math.round((c / mean) * 1000) / 10);
    return { name: `${m.market} (${MARKETS[m.market as MarketId]?.label ?? m.market})`, values };
  });
  return lineChart({
    title: "Mean landed cost of each market's menu, indexed",
    x,
    xLabel: 'sessions before the last close',
    yLabel: 'index (mean shown = 100)',
    yFormat: (v) => v.toFixed(1),
    series,
  });
}

export function pulseView(p: PulseLike, ticker: TickerLike[]) {
  const days = p.days
    .slice(-p.window.days || undefined)
    .map((d) => ({ n: dayNumber(d.day), turnover: d.turnover }));
  const turnover = barChart({
    title: 'Turnover per day (executed landed cost, all markets)',
    x: days.map((d) => d.n),
    xLabel: 'day (UTC)',
    xFormat: dayLabel,
    yLabel: 'USD',
    yFormat: compact,
    series: [{ name: 'turnover', values: days.map((d) => d.turnover) }],
  });
  return {
    last_24h: figures(p.last_24h),
    window: {
      ...figures(p.window),
      days: p.window.days,
      per_day: grouped(p.window.per_day.turnover),
    },
    totals: {
      ...figures(p.totals),
      days: p.totals.days_on_record,
      sessions: p.totals.sessions_recorded,
    },
    turnover_chart: figure(turnover, 'Turnover in USD.'),
    ticker: ticker.map((t) => ({
      market: t.market,
      label: MARKETS[t.market as MarketId]?.label ?? t.market,
      tick: t.tick,
      last: t.last === null ? '' : usd(t.last),
      change:
        t.change === null
          ? ''
          : `${signed(t.change, usd(t.change))} (${signed(t.change_pct ?? 0, `${(t.change_pct ?? 0).toFixed(2)} %`)})`,
      change_neg: (t.change ?? 0) < 0,
      change_pos: (t.change ?? 0) > 0,
      cost: t.cost === null ? '' : usd(t.cost),
      units: t.units ?? '',
      executions: t.executions ?? '',
      demand: t.demand_index === null ? 'not quoted' : t.demand_index.toFixed(2),
    })),
    cost_chart: figure(indexedCosts(p.markets)),
  };
}
