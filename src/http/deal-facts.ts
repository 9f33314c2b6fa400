// What the holder bets on when paying (issue 13, "the holder decides on facts"): beside what is
// charged, the deal's resale price and margin, the desk's own bid on it, the family's settled record
// (the families read, as GET /markets/{id}/families answers it) and the projection's low/mid/high
// P&L curve (the read of GET /markets/{id}/deals/{key}/projection with its default query) for the
// quantity chosen, with one sentence on the risk. The menu facts exist while the deal's session is
// open: after its close the page says they are gone instead of failing.
import type { CartDetail } from '../../actors/cart/messages.js';
import { read } from '../../actors/runtime/client.js';
import { centsToNumber, numberToCents, type MarketId, isMarketId } from '../engine/index.js';
import { closeTime } from './cart-view.js';
import { figure, lineChart } from './charts.js';
import { money, percent } from './family-view.js';
import { FAMILIES_WINDOW, recordPosition } from './record-query.js';
import { menuSnapshots } from './live-session.js';
import { PROJECTION_DEFAULTS, projectDeal } from './deal-projection.js';
import type { Services } from './services.js';
import { usd } from './web.js';

/** What is being paid: an order, or a line of a cart. Money in USD as served. */
export type Paying = { market: string; tick: number; offer_key: string; qty: number; unit_cost: number; list_price: number; closes_at: number };

/** Lines of one cart page that get their facts (each costs a projection read); the rest are named as left out. */
export const FACTS_PER_PAGE = 10;

type Projection = Awaited<ReturnType<typeof projectDeal>>;
type Families = Awaited<ReturnType<typeof readFamilies>>;

const readFamilies = (s: Services, market: MarketId) =>
  read(s.runtime, 'analytics.families', { market, window: FAMILIES_WINDOW, open: recordPosition(s, market).open });


/** "1 unit", "3 units". */
export const units = (n: number) => `${n} unit${n === 1 ? '' : 's'}`;

/** "makes 4.00 USD", "loses 2.50 USD", "breaks even". */
const outcome = (pnl: number) => (pnl > 0 ? `makes ${usd(pnl)} USD` : pnl < 0 ? `loses ${usd(-pnl)} USD` : 'breaks even');

/** The risk of the chosen quantity in plain words. */
export function riskWords(low: number, mid: number, high: number): string {
  return `In the low scenario this order ${outcome(low)}; on the projected path it ${outcome(mid)}; in the high scenario it ${outcome(high)}.`;
}

/** The projection's part of the facts for `qty` units: the curve as a chart, the three results and the risk sentence. */
export function projectionView(p: Projection, qty: number) {
  const i = p.qty.indexOf(Math.min(qty, p.qty[p.qty.length - 1]));
  if (i < 0) return null;
  const [low, mid, high] = [p.curve.low[i], p.curve.mid[i], p.curve.high[i]];
  const chart = lineChart({
    title: `Projected P&L of ${p.sku_family} by quantity`,
    x: p.qty, xLabel: 'units', yLabel: 'P&L, USD', yFormat: money,
    series: [{ name: 'projected path', values: p.curve.mid }],
    band: { low: p.curve.low, high: p.curve.high },
    width: 420, height: 200,
  });
  return {
    qty_words: units(p.qty[i]), low: usd(low), mid: usd(mid), high: usd(high), risk: riskWords(low, mid, high),
    low_neg: low < 0, mid_neg: mid < 0, high_neg: high < 0,
    chart: figure(chart, `The shaded band runs from the low to the high scenario. At ${units(p.qty[i])}: low ${usd(low)}, projected ${usd(mid)}, high ${usd(high)} USD.`),
    lookback: p.params.lookback, fit: p.fit.kind, sessions_fitted: p.fit.points, settled_samples: p.samples.settled,
    scenario_basis: p.scenarios.basis === 'per_deal_velocity' ? `from the sales of ${p.samples.settled} settled deals of the family` : 'default multipliers (too few settled deals of the family)',
    best_qty: p.best_qty,
  };
}

/** The family's settled record over the families window, as the families answer has it. */
function familyView(market: MarketId, f: Families['families'][number] | undefined, window: number) {
  if (!f) return null;
  return {
    sku_family: f.sku_family, cluster: f.cluster, path: `/assets/${market}/${f.cluster}`, window,
    executed: f.executed, settled: f.settled, has_settled: f.settled > 0,
    profitable: percent(f.profitable_rate), downside: percent(f.downside_rate), mean_pnl: usd(f.mean_pnl), mean_pnl_neg: (f.mean_pnl ?? 0) < 0,
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
      const base = { market: it.market, offer_key: it.offer_key, qty: it.qty, qty_words: units(it.qty), list_price: usd(it.list_price), margin: usd(margin), margin_neg: margin < 0 };
      const snap = isMarketId(it.market) ? snapshots.get(it.market) : undefined;
      const deal = snap && snap.tick === it.tick ? snap.byKey.get(it.offer_key) : undefined;
      // CONTRACT.md "Session boundary": the clock ends a deal, even before the record closes its session.
      if (!snap || !deal || it.closes_at <= now) {
        const gone = it.closes_at <= now ? `Session ${it.tick} of ${it.market} closed at ${closeTime(it.closes_at)}` : `The deal is no longer on the menu of ${it.market}`;
        return { ...base, available: false, absent: `${gone}: its desk bid, its family's record and its projection are no longer shown.` };
      }
      const market = snap.market;
      if (!families.has(market)) families.set(market, readFamilies(s, market));
      const key = `${market}/${deal.key}`;
      if (!projections.has(key)) projections.set(key, projectDeal(s, snap, deal, PROJECTION_DEFAULTS));
      const [fam, proj] = await Promise.all([families.get(market)!, projections.get(key)!]);
      return {
        ...base, available: true,
        desk_bids: deal.house_accepted, desk_qty: units(deal.house_qty),
        family: familyView(market, fam.families.find((f) => f.cluster === deal.cluster), FAMILIES_WINDOW),
        sku_family: deal.sku_family, family_path: `/assets/${market}/${deal.cluster}`,
        projection: projectionView(proj, it.qty),
        projection_path: `/api/v1/markets/${market}/deals/${encodeURIComponent(deal.key)}/projection`,
      };
    }),
  );
}

/** The facts of a cart's lines still to pay (the first FACTS_PER_PAGE), each with its line; how many more there are. */
export async function cartFacts(s: Services, cart: CartDetail) {
  const open = cart.items.filter((l) => l.status !== 'ordered' && !l.stale);
  const shown = open.slice(0, FACTS_PER_PAGE);
  const facts = await dealFacts(s, shown);
  return {
    facts: facts.map((f, i) => ({ ...f, line_id: shown[i].id, deal_title: shown[i].deal_title })),
    has_facts: shown.length > 0, facts_left_out: open.length > shown.length ? `${open.length - shown.length} more line${open.length - shown.length === 1 ? '' : 's'}` : '',
    facts_cap: FACTS_PER_PAGE,
  };
}
