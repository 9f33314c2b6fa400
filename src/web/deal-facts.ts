// What the holder bets on when paying (the holder decides on facts): beside what is
// charged, the deal's resale price and margin, the desk's own bid on it, the family's settled record
// (the families read, as GET /markets/{id}/families answers it) and the projection's low/mid/high
// P&L curve (the read of GET /markets/{id}/deals/{key}/projection with its default query) for the
// quantity chosen, with one sentence on the risk. How similar deals ended, said before the pay button
// is the projection's: its settled similar deals (samples) and how often they fell below
// its low scenario (calibration). The menu facts exist while the deal's session is open: after its
// close the page says they are gone instead of failing.
import type { CartDetail } from '../../actors/cart/messages.js';
import { read } from '../../actors/runtime/client.js';
import {
  MARKETS,
  centsToNumber,
  numberToCents,
  type MarketId,
  isMarketId,
} from '../engine/index.js';
import { orderAmounts } from '../rules.js';
import { closeTime } from './cart-view.js';
import { figure, lineChart } from './charts.js';
import { money, percent } from './family-view.js';
import { FAMILIES_WINDOW, recordPosition } from '../market-data/record-query.js';
import { menuSnapshots } from '../market-data/live-session.js';
import { PROJECTION_DEFAULTS, projectDeal } from '../api/deal-projection.js';
import type { Services } from '../http/services.js';
import { usd } from './answers.js';

/** What is being paid: an order, or a line of a cart. Money in USD as served. */
export type Paying = {
  market: string;
  tick: number;
  offer_key: string;
  qty: number;
  unit_cost: number;
  list_price: number;
  closes_at: number;
};

/** Lines of one cart page that get their facts (each costs a projection read); the rest are named as left out. */
export const FACTS_PER_PAGE = 10;

type Projection = Awaited<ReturnType<typeof projectDeal>>;
type Families = Awaited<ReturnType<typeof readFamilies>>;

const readFamilies = (s: Services, market: MarketId) =>
  read(s.runtime, 'analytics.families', {
    market,
    window: FAMILIES_WINDOW,
    open: recordPosition(s, market).open,
  });

/** "1 unit", "3 units". */
export const units = (n: number) => `${n} unit${n === 1 ? '' : 's'}`;

/** The projection's settled similar deals and its calibration, as its answer serves them. */
export type SimilarDeals = Pick<
  Projection['samples'],
  'settled' | 'lost' | 'downside_events' | 'median_pnl_per_unit' | 'worst_pnl_per_unit'
>;
type Calibration = Projection['calibration'];

/** "7 of 10". */
const share = (k: number, n: number) => `${k} of ${n}`;

/**
 * The projection's figures for the chosen quantity in plain words, none of them called a gain: a
 * scenario is a figure of a naive model, and the record's calibration says how often results fell
 * below the low one.
 */
export function riskWords(low: number, mid: number, high: number, c: Calibration): string {
  const figures = `The naive projection puts this order at ${usd(low)} USD in its low scenario, ${usd(mid)} USD on its projected path and ${usd(high)} USD in its high scenario`;
  if (c.settled === 0)
    return `${figures}; the record has no settled similar deal to check its low scenario against.`;
  const below = `on the record, ${share(c.below_low, c.settled)} similar settled deals ended below the low scenario it would have given them`;
  return `${figures}; ${below}${c.below_low ? ': the low scenario is no floor.' : ', which promises nothing for this one.'}`;
}

/**
 * How similar deals ended (the family's settled deals of the projection's lookback) and how often
 * they fell below the low scenario, each a sentence; plainly said when the record has none.
 */
export function similarWords(skuFamily: string, lookback: number, s: SimilarDeals, c: Calibration) {
  const span = `${skuFamily} in the last ${lookback} sessions`;
  if (s.settled === 0) {
    return {
      ended: `the record has no settled deal of ${span}, so nothing says how such a deal ends.`,
      calibration: "Nor does it say how often results fell below this projection's low scenario.",
    };
  }
  const deals = `settled deal${s.settled === 1 ? '' : 's'}`;
  return {
    ended: `of the ${s.settled} ${deals} of ${span}, ${s.lost} lost money; per unit bought, the median result was ${usd(s.median_pnl_per_unit)} USD and the worst ${usd(s.worst_pnl_per_unit)} USD.`,
    calibration: `On the record, ${share(c.below_low, c.settled)} similar ${deals} ended below the low scenario this projection would have given them when they were bought.`,
  };
}

/** The chart's quantities: from 1 to a little past the chosen one (twice it, at least 4 more), within the deal's maximum. */
export function chartRange(qty: number, maxQty: number): number {
  return Math.max(1, Math.min(maxQty, Math.max(qty * 2, qty + 4)));
}

/**
 * The colour of the risk box, from the record, never from the projection (a green box must not
 * promise a gain its family's record does not support): "loss" when half or more of the similar
 * settled deals lost money or were hit by a downside, or their median result is a loss; "mixed"
 * otherwise; "unknown" without a settled deal. Never a gain: the cash paid can always be lost.
 */
export function recordClass(s: SimilarDeals | undefined): 'loss' | 'mixed' | 'unknown' {
  if (!s || s.settled === 0) return 'unknown';
  if (
    s.lost * 2 >= s.settled ||
    s.downside_events * 2 >= s.settled ||
    (s.median_pnl_per_unit ?? 0) < 0
  )
    return 'loss';
  return 'mixed';
}

/**
 * The headline of the risk box: what the holder can lose, first and in plain words: the cash paid,
 * the holding fees while units stay unsold, a downside event's surcharge, and what happens to units
 * left unsold.
 */
/** What a downside event adds to a loss (the engine's settlement surcharge), in the risk boxes' words. */
const SURCHARGE_WORDS =
  'and, if a downside event hits the deal, a settlement surcharge when its position settles';

export function lossHeadline(paid: number, qty: number, holdingPerUnitSession: number): string {
  return `You pay ${usd(paid)} USD for ${units(qty)} and can lose all of it, plus a holding fee of ${usd(holdingPerUnitSession)} USD a unit for each session a unit stays unsold ${SURCHARGE_WORDS}; units still unsold at the end become your goods.`;
}

/**
 * Why the scenario band is as narrow or wide as it is. The scenarios only speed up or slow down the
 * family's projected sales (x low_mult .. x high_mult): when even the slow path sells every unit, or
 * even the fast one leaves units unsold, the scenarios agree, whatever the family's record says.
 */
export function bandWords(
  p: Projection,
  qty: number,
  low: number,
  high: number,
  paid: number,
): string {
  const sold = p.projection.reduce((t, v) => t + v, 0);
  const slow = sold * p.scenarios.low_mult;
  const fast = sold * p.scenarios.high_mult;
  const width = high - low;
  const narrow = paid > 0 ? width < paid * 0.1 : width < 1;
  const sells = `The scenarios only change how fast the family sells: ${slow.toFixed(1)} units in ${p.projection.length} sessions on the slow path, ${sold.toFixed(1)} projected, ${fast.toFixed(1)} on the fast one`;
  if (narrow && slow >= qty)
    return `${sells}. Even the slow path sells all ${units(qty)}, so the band is narrow (${usd(low)} to ${usd(high)} USD). It does not cover a fall in the resale price or a downside: the family's record below says how often those happened.`;
  if (narrow && fast < qty)
    return `${sells}. Even the fast path leaves some of the ${units(qty)} unsold, so the band is narrow (${usd(low)} to ${usd(high)} USD): each scenario is held back by slow sales, not by price.`;
  if (narrow)
    return `${sells}, so the band is narrow (${usd(low)} to ${usd(high)} USD). It does not cover a fall in the resale price: see the family's record.`;
  return `${sells}. Whether all ${units(qty)} sell depends on that speed, so the band is wide (${usd(low)} to ${usd(high)} USD).`;
}

/** The projection's part of the facts for `qty` units: the curve as a chart, the three results and the risk in words. `paid`: what the order costs (USD). */
export function projectionView(p: Projection, qty: number, paid = 0) {
  const i = p.qty.indexOf(Math.min(qty, p.qty[p.qty.length - 1]));
  if (i < 0) return null;
  const [low, mid, high] = [p.curve.low[i], p.curve.mid[i], p.curve.high[i]];
  const upTo = chartRange(p.qty[i], p.qty[p.qty.length - 1]);
  const n = p.qty.findIndex((q) => q > upTo);
  const end = n < 0 ? p.qty.length : n;
  const chart = lineChart({
    title: `Projected P&L of ${p.sku_family} by quantity`,
    x: p.qty.slice(0, end),
    xLabel: 'units',
    yLabel: 'P&L, USD',
    yFormat: money,
    series: [{ name: 'projected path', values: p.curve.mid.slice(0, end) }],
    band: {
      low: p.curve.low.slice(0, end),
      high: p.curve.high.slice(0, end),
      name: 'low to high scenario',
    },
    marker: { x: p.qty[i], label: `your ${units(p.qty[i])}` },
    width: 560,
    height: 220,
  });
  return {
    qty_words: units(p.qty[i]),
    low: usd(low),
    mid: usd(mid),
    high: usd(high),
    risk: riskWords(low, mid, high, p.calibration),
    band_words: bandWords(p, p.qty[i], low, high, paid),
    low_neg: low < 0,
    mid_neg: mid < 0,
    high_neg: high < 0,
    chart: figure(
      chart,
      `The shaded band runs from the low to the high scenario; the dashed line marks your quantity. At ${units(p.qty[i])}: low ${usd(low)}, projected ${usd(mid)}, high ${usd(high)} USD.`,
    ),
    lookback: p.params.lookback,
    fit: p.fit.kind,
    sessions_fitted: p.fit.points,
    settled_samples: p.samples.settled,
    scenario_basis:
      p.scenarios.basis === 'per_deal_velocity'
        ? `from the sales of ${p.samples.settled} settled deals of the family`
        : 'default multipliers (too few settled deals of the family)',
    best_qty: p.best_qty,
  };
}

/** The family's settled record over the families window, as the families answer has it. */
function familyView(market: MarketId, f: Families['families'][number] | undefined, window: number) {
  if (!f) return null;
  return {
    sku_family: f.sku_family,
    cluster: f.cluster,
    path: `/assets/${market}/${f.cluster}`,
    window,
    executed: f.executed,
    settled: f.settled,
    has_settled: f.settled > 0,
    profitable: percent(f.profitable_rate),
    downside: percent(f.downside_rate),
    mean_pnl: usd(f.mean_pnl),
    mean_pnl_neg: (f.mean_pnl ?? 0) < 0,
  };
}

/**
 * The facts of what each of `items` pays for. One request reads each market's families once and
 * each deal's projection once, however many lines share them.
 */
export async function dealFacts(s: Services, items: Paying[]) {
  const snapshots = menuSnapshots(s);
  const now = s.clock.realNow();
  const families = new Map<MarketId, Promise<Families>>();
  const projections = new Map<string, Promise<Projection>>();
  return Promise.all(
    items.map(async (it) => {
      const margin = centsToNumber(numberToCents(it.list_price) - numberToCents(it.unit_cost));
      const base = {
        market: it.market,
        offer_key: it.offer_key,
        qty: it.qty,
        qty_words: units(it.qty),
        list_price: usd(it.list_price),
        margin: usd(margin),
        margin_neg: margin < 0,
      };
      const snap = isMarketId(it.market) ? snapshots.get(it.market) : undefined;
      const deal = snap && snap.tick === it.tick ? snap.byKey.get(it.offer_key) : undefined;
      // CONTRACT.md "Session boundary": the clock ends a deal, even before the record closes its session.
      if (!snap || !deal || it.closes_at <= now) {
        const gone =
          it.closes_at <= now
            ? `Session ${it.tick} of ${it.market} closed at ${closeTime(it.closes_at)}`
            : `The deal is no longer on the menu of ${it.market}`;
        return {
          ...base,
          available: false,
          absent: `${gone}: its desk bid, its family's record and its projection are no longer shown.`,
        };
      }
      const market = snap.market;
      if (!families.has(market)) families.set(market, readFamilies(s, market));
      const key = `${market}/${deal.key}`;
      if (!projections.has(key))
        projections.set(key, projectDeal(s, snap, deal, PROJECTION_DEFAULTS));
      const [fam, proj] = await Promise.all([families.get(market)!, projections.get(key)!]);
      const family = fam.families.find((f) => f.cluster === deal.cluster);
      const fees = MARKETS[market].fees;
      const paid = centsToNumber(
        orderAmounts(it.qty, numberToCents(it.unit_cost), fees.fulfilment_per_unit_cents)
          .totalCents,
      );
      return {
        ...base,
        available: true,
        headline: lossHeadline(paid, it.qty, centsToNumber(fees.holding_per_unit_session_cents)),
        outcome: recordClass(proj.samples),
        similar: similarWords(
          deal.sku_family,
          proj.params.lookback,
          proj.samples,
          proj.calibration,
        ),
        desk_bids: deal.house_accepted,
        desk_qty: units(deal.house_qty),
        family: familyView(market, family, FAMILIES_WINDOW),
        sku_family: deal.sku_family,
        family_path: `/assets/${market}/${deal.cluster}`,
        projection: projectionView(proj, it.qty, it.qty * it.unit_cost),
        projection_path: `/api/v1/markets/${market}/deals/${encodeURIComponent(deal.key)}/projection`,
      };
    }),
  );
}

/**
 * A trade cart's risk, said before its pay button: what paying `paid` (USD) for its open lines can
 * lose, the holding fee of each of their markets, and the box's colour from the lines' records (the
 * worst of them; an own cart buys goods outright and has none).
 */
export function cartRiskFirst(
  paid: number,
  lines: { market: string }[],
  outcomes: ('loss' | 'mixed' | 'unknown')[],
) {
  const markets = [...new Set(lines.map((l) => l.market))].filter(isMarketId).sort();
  const fees = markets
    .map((m) => `${usd(centsToNumber(MARKETS[m].fees.holding_per_unit_session_cents))} USD on ${m}`)
    .join(', ');
  return {
    headline: `You pay ${usd(paid)} USD for ${lines.length} line${lines.length === 1 ? '' : 's'} and can lose all of it, plus a holding fee a unit for each session a unit stays unsold (${fees}) ${SURCHARGE_WORDS}; units still unsold at the end become your goods.`,
    outcome: outcomes.includes('loss')
      ? 'loss'
      : outcomes.length && outcomes.every((o) => o === 'unknown')
        ? 'unknown'
        : 'mixed',
  };
}

/** A cart's lines a payment now would pay: not ordered yet, their session still open. */
export const payableLines = (cart: CartDetail) =>
  cart.items.filter((l) => l.status !== 'ordered' && !l.stale);

/** The facts of a cart's lines still to pay (the first FACTS_PER_PAGE), each with its line; how many more there are. */
export async function cartFacts(s: Services, cart: CartDetail) {
  const open = payableLines(cart);
  const shown = open.slice(0, FACTS_PER_PAGE);
  const facts = await dealFacts(s, shown);
  return {
    facts: facts.map((f, i) => ({ ...f, line_id: shown[i].id, deal_title: shown[i].deal_title })),
    has_facts: shown.length > 0,
    facts_left_out:
      open.length > shown.length
        ? `${open.length - shown.length} more line${open.length - shown.length === 1 ? '' : 's'}`
        : '',
    facts_cap: FACTS_PER_PAGE,
  };
}
