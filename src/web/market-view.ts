// The market page's menu (GET /markets/{id}, GET /markets/{id}/menu.csv): pure functions of a menu
// snapshot and the page's query. The score, the sorts and the filters are defined here once; the
// route only renders and caches what they give.
import { stringify } from 'csv-stringify/sync';
import { MARKETS, centsToNumber, type MarketId, type ServedDeal } from '../engine/index.js';
import type { MenuSnapshot } from '../market-data/snapshots.js';

/** The page's query after validation (defaults filled in). */
export type MenuQuery = {
  family: number;
  min_margin?: number;
  min_sv?: number;
  house: 0 | 1;
  sort: SortName;
  page: number;
  per_page: number;
};

/**
 * Deals a page shows unless asked: 50 keeps a page short enough to scan; `per_page` still asks for
 * more, up to `max`.
 */
export const PER_PAGE = { default: 50, max: 500 } as const;

const velocityOf = (d: ServedDeal) => ('sales_velocity' in d ? d.sales_velocity : null);
const rankOf = (d: ServedDeal) => ('sales_rank' in d ? d.sales_rank : null);

/**
 * Each deal's demand share on its menu, in (0, 1]: the fraction of the menu's deals whose demand
 * signal is no better than its own (quoted velocity, higher is better; on ranking markets the sales
 * rank, lower is better). A share, not the signal, so both kinds of market score alike.
 */
export function demandShares(deals: readonly ServedDeal[]): Map<string, number> {
  const signal = (d: ServedDeal) => velocityOf(d) ?? -(rankOf(d) ?? 0);
  const sorted = deals.map(signal).sort((a, b) => a - b);
  const atMost = (v: number) => {
    let lo = 0,
      hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid] <= v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return new Map(deals.map((d) => [d.key, atMost(signal(d)) / sorted.length]));
}

/**
 * The page's default order, a naive first look (not advice): the margin left after the fulfilment
 * fee, per unit, times the deal's demand share. It ignores volume, carry and the downside the
 * record shows; the projection of each deal is one link away.
 */
export function scores(market: MarketId, deals: readonly ServedDeal[]): Map<string, number> {
  const fee = centsToNumber(MARKETS[market].fees.fulfilment_per_unit_cents);
  const share = demandShares(deals);
  return new Map(
    deals.map((d) => [d.key, Math.round((d.margin - fee) * share.get(d.key)! * 100) / 100]),
  );
}

type Compare = (a: ServedDeal, b: ServedDeal, score: Map<string, number>) => number;

/** Sorts of the page: name, words for the page, and the order (highest first but for cost and listing order; ties keep the menu's listed_at order). */
export const SORTS = {
  score: {
    label: 'score (net margin × demand share)',
    compare: ((a, b, s) => s.get(b.key)! - s.get(a.key)!) as Compare,
  },
  margin: { label: 'margin', compare: ((a, b) => b.margin - a.margin) as Compare },
  margin_pct: {
    label: 'margin in % of the cost',
    compare: ((a, b) => b.margin / b.unit_cost - a.margin / a.unit_cost) as Compare,
  },
  cost: {
    label: 'landed cost, lowest first',
    compare: ((a, b) => a.unit_cost - b.unit_cost) as Compare,
  },
  price: { label: 'resale price', compare: ((a, b) => b.list_price - a.list_price) as Compare },
  velocity: {
    label: 'demand (fastest sellers first)',
    compare: ((a, b) =>
      (velocityOf(b) ?? -(rankOf(b) ?? 0)) - (velocityOf(a) ?? -(rankOf(a) ?? 0))) as Compare,
  },
  qty: { label: 'maximum volume', compare: ((a, b) => b.max_qty - a.max_qty) as Compare },
  desk: { label: 'desk bid volume', compare: ((a, b) => b.house_qty - a.house_qty) as Compare },
  listed: { label: 'listing order', compare: (() => 0) as Compare },
} as const;
export type SortName = keyof typeof SORTS;
export const SORT_NAMES = Object.keys(SORTS) as SortName[];

const scoreCache = new WeakMap<MenuSnapshot, Map<string, number>>();
/** The scores of a snapshot's menu, computed once per snapshot. */
export function snapshotScores(snap: MenuSnapshot): Map<string, number> {
  let s = scoreCache.get(snap);
  if (!s) scoreCache.set(snap, (s = scores(snap.market, snap.deals)));
  return s;
}

export type MenuPage = {
  /** Deals that pass the filters. */
  total: number;
  pages: number;
  page: number;
  rows: { deal: ServedDeal; score: number; rank: number }[];
};

/** Filters, sorts and pages a menu. `min_sv` only filters markets that quote velocity. */
export function menuPage(
  deals: readonly ServedDeal[],
  score: Map<string, number>,
  q: MenuQuery,
): MenuPage {
  const picked = deals.filter(
    (d) =>
      (q.family < 0 || d.cluster === q.family) &&
      (q.min_margin === undefined || d.margin >= q.min_margin) &&
      (q.min_sv === undefined || velocityOf(d) === null || velocityOf(d)! >= q.min_sv) &&
      (q.house === 0 || d.house_accepted),
  );
  const compare = SORTS[q.sort].compare;
  // Array.prototype.sort is stable: ties keep the listed_at order of the menu.
  const sorted = q.sort === 'listed' ? picked : [...picked].sort((a, b) => compare(a, b, score));
  const pages = Math.max(1, Math.ceil(sorted.length / q.per_page));
  const from = (q.page - 1) * q.per_page;
  return {
    total: sorted.length,
    pages,
    page: q.page,
    rows: sorted
      .slice(from, from + q.per_page)
      .map((deal, i) => ({ deal, score: score.get(deal.key)!, rank: from + i + 1 })),
  };
}

/** The page's address with `changes` applied; values at their default are left out. */
export function menuHref(market: MarketId, q: MenuQuery, changes: Partial<MenuQuery>): string {
  const next = { ...q, ...changes };
  const params = new URLSearchParams();
  if (next.family !== -1) params.set('family', String(next.family));
  if (next.min_margin !== undefined) params.set('min_margin', String(next.min_margin));
  if (next.min_sv !== undefined) params.set('min_sv', String(next.min_sv));
  if (next.house !== 0) params.set('house', '1');
  if (next.sort !== 'score') params.set('sort', next.sort);
  if (next.page !== 1) params.set('page', String(next.page));
  if (next.per_page !== PER_PAGE.default) params.set('per_page', String(next.per_page));
  const qs = params.toString();
  return `/markets/${market}${qs ? `?${qs}` : ''}`;
}

/** The key of a query for the fragment cache: every field, defaults included. */
export const queryKey = (q: MenuQuery) =>
  `${q.family}|${q.min_margin ?? ''}|${q.min_sv ?? ''}|${q.house}|${q.sort}|${q.page}|${q.per_page}`;

const VELOCITY_COLUMNS = ['sales_velocity', 'inverse_sv'] as const;
const RANKING_COLUMNS = [
  'sales_rank',
  'sales_rank_avg',
  'rank_drops',
  'rank_drops_long',
  'nsellers',
] as const;

/** The CSV columns of a market's menu: the Deal object's fields, the bundle flattened, then the score. */
export function menuCsvColumns(market: MarketId): string[] {
  return [
    'key',
    'tick',
    'sku_family',
    'cluster',
    'title',
    'unit',
    'origin',
    'items',
    'unit_cost',
    'list_price',
    'margin',
    'listed_at',
    ...(MARKETS[market].quotes_velocity ? VELOCITY_COLUMNS : RANKING_COLUMNS),
    'max_qty',
    'house_accepted',
    'house_qty',
    'score',
  ];
}

/** The whole menu as CSV (header line first), in listed_at order. */
export function menuCsv(
  market: MarketId,
  deals: readonly ServedDeal[],
  score: Map<string, number>,
): string {
  const columns = menuCsvColumns(market);
  const rows = deals.map((d) => {
    const flat: Record<string, unknown> = {
      ...d,
      title: d.bundle.title,
      unit: d.bundle.unit,
      origin: d.bundle.origin,
      items: d.bundle.items.map((i) => `${i.qty} x ${i.name} (${i.grade})`).join('; '),
      score: score.get(d.key),
    };
    return columns.map((c) => flat[c]);
  });
  return stringify(rows, {
    header: true,
    columns,
    cast: { boolean: (b) => (b ? 'true' : 'false') },
  });
}
