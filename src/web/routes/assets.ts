// The assets pages (SPEC.md "Web routes"): GET /assets lists the item families of a market's current
// menu with their settled record, in a chosen order; GET /assets/{market_id}/{cluster} shows one
// family's price, sales and outcome history and, on ranking markets, its signals. The numbers are the
// record reads behind GET /markets/{id}/families, /tape?cluster= and /families/{cluster}/signals,
// run with the same arguments; src/web/family-view.ts shapes them.
import Type, { type Static } from 'typebox';
import { read } from '../../../actors/runtime/client.js';
import { FAMILIES, MARKETS, MARKET_IDS, type MarketId } from '../../engine/index.js';
import { holderOf } from '../../http/authenticators/holder-session.js';
import {
  FAMILY_SORTS,
  familiesChart,
  familyCells,
  historyCharts,
  historyTable,
  signalsView,
  sortFamilies,
  type FamilyRow,
  type FamilySort,
  type TapeRow,
} from '../family-view.js';
import { renderPage } from '../pages.js';
import { htmlPage, route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import { MarketIdParam } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { clusterField, clusterOr404, marketOr404 } from '../../api/market-params.js';
import { FAMILIES_WINDOW, TAPE_CAP, recordPosition } from '../../market-data/record-query.js';

/** Closed sessions a family page covers unless asked otherwise. */
export const ASSET_TICKS_DEFAULT = 120;

const SortField = Type.Union(
  Object.keys(FAMILY_SORTS).map((k) => Type.Literal(k)),
  { default: 'house', description: 'order of the families' },
);
type AssetsQuery = Static<typeof AssetsQuery>;
const AssetsQuery = Type.Object({
  market: Type.String({ default: 'm15', description: `market id (${MARKET_IDS.join(', ')})` }),
  sort: SortField,
});
type FamilyParams = Static<typeof FamilyParams>;
const FamilyParams = Type.Object({ market_id: MarketIdParam, cluster: clusterField('the family') });
type FamilyQuery = Static<typeof FamilyQuery>;
const FamilyQuery = Type.Object({
  ticks: Type.Integer({
    minimum: 1,
    maximum: TAPE_CAP,
    default: ASSET_TICKS_DEFAULT,
    description: 'closed sessions of history to show',
  }),
});

const families = (s: Services, market: MarketId) =>
  read(s.runtime, 'analytics.families', {
    market,
    window: FAMILIES_WINDOW,
    open: recordPosition(s, market).open,
  });

export function webAssetRoutes(s: Services): Route[] {
  return [
    route<unknown, AssetsQuery>({
      method: 'GET',
      path: '/assets',
      auth: 'none',
      summary: "The item families of a market's current menu with their settled record",
      query: AssetsQuery,
      response: { 200: htmlPage('the families of the market') },
      responses: { 404: { description: 'unknown market' } },
      handler: (c) => showAssets(s, c),
    }),
    route<FamilyParams, FamilyQuery>({
      method: 'GET',
      path: '/assets/{market_id}/{cluster}',
      auth: 'none',
      summary: "One family's price, sales and outcome history, and its ranking signals",
      params: FamilyParams,
      query: FamilyQuery,
      response: { 200: htmlPage("the family's history") },
      responses: { 404: { description: 'unknown market or cluster' } },
      handler: (c) => showAssetFamily(s, c),
    }),
  ];
}

async function showAssets(
  s: Services,
  { req, query }: PublicContext<unknown, AssetsQuery>,
): Promise<Reply> {
  const market = marketOr404(query.market);
  const sort = query.sort as FamilySort;
  const [holder, fam] = await Promise.all([holderOf(s, req), families(s, market)]);
  const rows = fam.families as FamilyRow[];
  return renderPage('assets', {
    title: `Assets of ${MARKETS[market].label}`,
    holder,
    market,
    label: MARKETS[market].label,
    tick: recordPosition(s, market).open,
    window: FAMILIES_WINDOW,
    sessions: fam.sessions,
    markets: MARKET_IDS.map((id) => ({
      id,
      label: MARKETS[id].label,
      path: `/assets?market=${id}&sort=${sort}`,
      current: id === market,
    })),
    sorts: Object.entries(FAMILY_SORTS).map(([id, words]) => ({
      id,
      words,
      path: `/assets?market=${market}&sort=${id}`,
      current: id === sort,
    })),
    sort_words: FAMILY_SORTS[sort],
    families: sortFamilies(rows, sort).map((f) => familyCells(market, f)),
    has_families: rows.length > 0,
    chart: rows.length ? familiesChart(rows, FAMILIES_WINDOW) : '',
    api_path: `/api/v1/markets/${market}/families`,
  });
}

async function showAssetFamily(
  s: Services,
  { req, params, query }: PublicContext<FamilyParams, FamilyQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const cluster = clusterOr404(params.cluster);
  const pos = recordPosition(s, market);
  const from = Math.max(0, pos.open - query.ticks);
  const to = pos.lastClosed;
  const ranking = !MARKETS[market].quotes_velocity;
  const [holder, fam, tape, signals] = await Promise.all([
    holderOf(s, req),
    families(s, market),
    read(s.runtime, 'analytics.tape', {
      market,
      from,
      to,
      cluster,
      open: pos.open,
      lastSettled: pos.lastSettled,
    }),
    ranking ? read(s.runtime, 'analytics.signals', { market, cluster, from, to: pos.open }) : null,
  ]);
  const name = FAMILIES[cluster].sku_family;
  const onMenu = (fam.families as FamilyRow[]).find((f) => f.cluster === cluster);
  const rows = tape as TapeRow[];
  return renderPage('assets-family', {
    title: `${name} on ${MARKETS[market].label}`,
    holder,
    market,
    label: MARKETS[market].label,
    cluster,
    sku_family: name,
    tick: pos.open,
    window: FAMILIES_WINDOW,
    ticks: query.ticks,
    from,
    to,
    last_settled: pos.lastSettled,
    horizon: pos.horizon,
    spans: [30, ASSET_TICKS_DEFAULT, 400].map((n) => ({
      n,
      path: `/assets/${market}/${cluster}?ticks=${n}`,
      current: n === query.ticks,
    })),
    on_menu: onMenu ? familyCells(market, onMenu) : null,
    ...historyCharts(name, rows, from, to, pos.lastSettled),
    history: historyTable(rows),
    has_history: rows.length > 0,
    ranking,
    ...(signals ? signalsView(name, signals) : {}),
    tape_path: `/api/v1/markets/${market}/tape?cluster=${cluster}&from_tick=${from}&to_tick=${Math.max(from, to)}`,
    signals_path: `/api/v1/markets/${market}/families/${cluster}/signals?from_tick=${from}&to_tick=${pos.open}`,
    families_path: `/assets?market=${market}`,
  });
}
