// A market's page (GET /markets/{id}): the open session's menu with filters, sorts, pages, each
// deal's prices, margin, demand signal, desk bid and a link to its projection, and a countdown to
// the close; and the same menu as CSV (GET /markets/{id}/menu.csv). Served from the in-memory menu
// snapshots (no worker hop); the menu part of the page is rendered once per session and query and
// kept in a bounded cache, so a request renders only the countdown and the layout, and a visitor
// who is not logged in gets the whole page's bytes kept (per session, query and countdown words).
import Type, { type Static, type TSchema } from 'typebox';
import { FAMILIES, MARKETS, type MarketId } from '../../engine/index.js';
import { holderOf } from '../../http/authenticators/holder-session.js';
import { countdown } from '../cart-view.js';
import { FragmentCache, visitorPage } from '../fragment-cache.js';
import {
  PER_PAGE,
  SORTS,
  SORT_NAMES,
  menuCsv,
  menuHref,
  menuPage,
  queryKey,
  snapshotScores,
  type MenuQuery,
} from '../market-view.js';
import { renderFragment, renderPage } from '../pages.js';
import {
  htmlPage,
  media,
  route,
  type PublicContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { etagMatches, type MenuSnapshot } from '../../market-data/snapshots.js';
import { usd } from '../answers.js';
import { MarketParams, marketOr404 } from '../../api/market-params.js';
import { menuSnapshots, sessionLength } from '../../market-data/live-session.js';

/** An optional number a GET form may send empty (an empty field means no bound). */
const blankOr = (schema: TSchema) => Type.Optional(Type.Union([schema, Type.Literal('')]));

const MenuQuerySchema = Type.Object({
  family: Type.Integer({
    minimum: -1,
    maximum: FAMILIES.length - 1,
    default: -1,
    description: `family (cluster id, 0..${FAMILIES.length - 1}); -1: every family`,
  }),
  min_margin: blankOr(
    Type.Number({
      minimum: -1e6,
      maximum: 1e6,
      description: 'only deals with at least this margin (USD per unit); empty: no bound',
    }),
  ),
  min_sv: blankOr(
    Type.Number({
      minimum: 0,
      maximum: 1e6,
      description:
        'only deals with at least this quoted sales velocity (markets that quote velocity); empty: no bound',
    }),
  ),
  house: Type.Union([Type.Literal(0), Type.Literal(1)], {
    default: 0,
    description: '1: only deals the desk bids on',
  }),
  sort: Type.Union(
    SORT_NAMES.map((n) => Type.Literal(n)),
    { default: 'score', description: 'order of the deals' },
  ),
  page: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 1,
    description: 'page of the filtered menu, from 1; a page past the last one says so',
  }),
  per_page: Type.Integer({
    minimum: 1,
    maximum: PER_PAGE.max,
    default: PER_PAGE.default,
    description: `deals a page lists (${PER_PAGE.default} unless asked)`,
  }),
});
type RawMenuQuery = Static<typeof MenuQuerySchema>;

const menuQuery = (q: RawMenuQuery): MenuQuery => ({
  ...q,
  min_margin: q.min_margin === '' ? undefined : (q.min_margin as number | undefined),
  min_sv: q.min_sv === '' ? undefined : (q.min_sv as number | undefined),
  house: q.house as 0 | 1,
  sort: q.sort as MenuQuery['sort'],
});

/** Menu fragments, and visitors' whole pages, kept: a few queries of every market's open session. */
const CACHE = { entries: 256, chars: 16 * 1024 * 1024 };

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** What the menu part of the page shows (templates/market-menu.mustache). */
function menuView(snap: MenuSnapshot, q: MenuQuery) {
  const market = snap.market;
  const velocity = MARKETS[market].quotes_velocity;
  const page = menuPage(snap.deals, snapshotScores(snap), q);
  const families = [...snap.byFamily.values()]
    .map((deals) => ({ cluster: deals[0].cluster, name: deals[0].sku_family, deals: deals.length }))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((f) => ({ ...f, selected: f.cluster === q.family }));
  const unknownFamily = q.family >= 0 && !families.some((f) => f.selected);
  return {
    market,
    velocity,
    families,
    all_families: q.family < 0,
    unknown_family: unknownFamily,
    family_asked: q.family,
    min_margin: q.min_margin ?? '',
    min_sv: q.min_sv ?? '',
    sv_ignored: !velocity && q.min_sv !== undefined,
    house: q.house === 1,
    sorts: SORT_NAMES.map((name) => ({
      name,
      label: SORTS[name].label,
      selected: name === q.sort,
    })),
    per_page: q.per_page,
    sort_label: SORTS[q.sort].label,
    total: page.total,
    menu_size: snap.menuSize,
    page: page.page,
    pages: page.pages,
    beyond: page.rows.length === 0 && page.total > 0,
    first_href: menuHref(market, q, { page: 1 }),
    prev_href:
      page.page > 1 ? menuHref(market, q, { page: Math.min(page.page - 1, page.pages) }) : null,
    next_href: page.page < page.pages ? menuHref(market, q, { page: page.page + 1 }) : null,
    has_rows: page.rows.length > 0,
    first_row: page.rows[0]?.rank ?? 0,
    last_row: page.rows.at(-1)?.rank ?? 0,
    rows: page.rows.map(({ deal: d, score, rank }) => ({
      rank,
      key: d.key,
      title: d.bundle.title,
      family: d.sku_family,
      cluster: d.cluster,
      unit_cost: usd(d.unit_cost),
      list_price: usd(d.list_price),
      margin: usd(d.margin),
      margin_neg: d.margin < 0,
      margin_pct: pct(d.margin / d.unit_cost),
      demand: 'sales_velocity' in d ? d.sales_velocity.toFixed(2) : String(d.sales_rank),
      sellers: 'nsellers' in d ? d.nsellers : null,
      max_qty: d.max_qty,
      desk_bid: d.house_accepted ? d.house_qty : null,
      score: usd(score),
      projection: `/api/v1/markets/${market}/deals/${encodeURIComponent(d.key)}/projection`,
      family_href: `/assets/${market}/${d.cluster}`,
    })),
  };
}

export function webMarketRoutes(s: Services): Route[] {
  const caches: MenuCaches = {
    fragments: new FragmentCache(CACHE.entries, CACHE.chars),
    pages: new FragmentCache<Uint8Array>(CACHE.entries, CACHE.chars),
    csvs: new WeakMap<MenuSnapshot, string>(),
  };
  const notFound = { description: 'unknown market' };

  return [
    route<{ market_id: string }, RawMenuQuery>({
      method: 'GET',
      path: '/markets/{market_id}',
      auth: 'none',
      summary:
        "A market's open session: its menu with filters, sorts and pages, and the countdown to the close",
      params: MarketParams,
      query: MenuQuerySchema,
      response: { 200: htmlPage('the market page') },
      responses: { 404: notFound },
      handler: (c) => showMarket(s, caches, c),
    }),
    route<{ market_id: string }>({
      method: 'GET',
      path: '/markets/{market_id}/menu.csv',
      auth: 'none',
      summary: "The open session's menu as CSV",
      params: MarketParams,
      response: {
        200: media(
          'text/csv; charset=utf-8',
          "CSV with a header line: the Deal fields with the bundle flattened (title, unit, origin, items), then the page's score",
        ),
      },
      responses: {
        304: { description: 'If-None-Match matched: the menu has not changed' },
        404: notFound,
      },
      handler: (c) => getMenuCsv(s, caches, c),
    }),
  ];
}

/** Menu fragments and visitors' whole pages (per session and query), and each snapshot's CSV. */
type MenuCaches = {
  fragments: FragmentCache;
  pages: FragmentCache<Uint8Array>;
  csvs: WeakMap<MenuSnapshot, string>;
};

async function showMarket(
  s: Services,
  { fragments, pages }: MenuCaches,
  { params, query, req }: PublicContext<{ market_id: string }, RawMenuQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const snap = menuSnapshots(s).get(market);
  const q = menuQuery(query);
  const key = `${market}|${snap.tick}|${queryKey(q)}`;
  const m = MARKETS[market];
  const holder = await holderOf(s, req);
  // The countdown's words are part of a visitor's kept page: they change once a minute.
  const closes = countdown(snap.closesAt, s.clock.realNow());
  return visitorPage(pages, `${key}|${closes}`, holder !== null, () =>
    renderPage('market', {
      title: `${m.label} (${market})`,
      holder,
      scripts: ['/static/countdown.js'],
      market,
      label: m.label,
      tick: snap.tick,
      length: sessionLength(m.interval_seconds / s.config.timeScale),
      closes_at: snap.closesAt,
      closes,
      menu: fragments.get(key, () => renderFragment('market-menu', menuView(snap, q))),
    }),
  );
}

function getMenuCsv(
  s: Services,
  { csvs }: MenuCaches,
  { params, req }: PublicContext<{ market_id: string }>,
): Reply {
  const market: MarketId = marketOr404(params.market_id);
  const snap = menuSnapshots(s).get(market);
  if (etagMatches(req.headers['if-none-match'], snap.etag))
    return { status: 304, headers: snap.headers };
  let body = csvs.get(snap);
  if (body === undefined)
    csvs.set(snap, (body = menuCsv(market, snap.deals, snapshotScores(snap))));
  return {
    body,
    contentType: 'text/csv; charset=utf-8',
    headers: {
      ...snap.headers,
      'content-disposition': `inline; filename="${market}-menu-${snap.tick}.csv"`,
    },
  };
}
