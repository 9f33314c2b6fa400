// The record for people (GET /explore, /explore/{id}, /explore/{id}/tick/{tick}): the four markets
// with a small chart each, one market's last sessions charted by mode, and one closed session's
// menu with each row's status, executions and outcomes. The data are the JSON API's record reads
// (the pulse, tape and history read tasks); it changes only at a close, so each page's content is
// rendered once per record position and query and kept in a bounded cache (not while a market's
// history is still loading: the backfill changes the record between closes), and so is a visitor's
// whole page (a logged-in holder's name is in the layout: their page is rendered each time).
import Type, { type Static } from 'typebox';
import { FAMILIES, MARKETS, MARKET_IDS, type MarketId } from '../../engine/index.js';
import { read } from '../../../actors/runtime/client.js';
import { holderOf } from '../../http/authenticators/holder-session.js';
import {
  MODES,
  MODE_NAMES,
  STATUSES,
  TICK_SORTS,
  TICK_SORT_NAMES,
  lastTicks,
  modeChart,
  overviewChart,
  sessionRows,
  tickRowView,
  tickRows,
  type HistoryRow,
  type Mode,
  type RowStatus,
  type TapeRow,
  type TickSort,
} from '../explore-view.js';
import { figure } from '../charts.js';
import { FragmentCache, visitorPage } from '../fragment-cache.js';
import { renderFragment, renderPage } from '../pages.js';
import {
  HttpError,
  htmlPage,
  route,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { usd } from '../answers.js';
import { MarketParams, marketOr404 } from '../../api/market-params.js';
import { pulseSource } from '../../market-data/pulse-source.js';
import { TAPE_CAP, recordPosition } from '../../market-data/record-query.js';

const MarketQuery = Type.Object({
  ticks: Type.Integer({
    minimum: 8,
    maximum: TAPE_CAP,
    default: 120,
    description: 'how many of the last closed sessions',
  }),
  mode: Type.Union(
    MODE_NAMES.map((m) => Type.Literal(m)),
    { default: 'cost', description: 'what the chart shows' },
  ),
});
type MarketQuery = Static<typeof MarketQuery>;

const TickParams = Type.Object({
  market_id: MarketParams.properties.market_id,
  tick: Type.Integer({
    minimum: 0,
    maximum: 1e9,
    description: 'a closed session (tick) of the market',
  }),
});
type TickParams = Static<typeof TickParams>;
const TickQuery = Type.Object({
  family: Type.Integer({
    minimum: -1,
    maximum: FAMILIES.length - 1,
    default: -1,
    description: `family (cluster id, 0..${FAMILIES.length - 1}); -1: every family`,
  }),
  sort: Type.Union(
    TICK_SORT_NAMES.map((n) => Type.Literal(n)),
    { default: 'house', description: 'order of the rows' },
  ),
  status_filter: Type.Optional(
    Type.Union([...STATUSES.map((st) => Type.Literal(st)), Type.Literal('')], {
      description: 'only rows of this status; empty: every status',
    }),
  ),
});
type TickQuery = Static<typeof TickQuery>;

/** Page contents kept: every market's pages at a few queries. */
const CACHE = { entries: 256, chars: 24 * 1024 * 1024 };
const TICKS_CHOICES = [48, 120, 240, TAPE_CAP];

export function webExploreRoutes(s: Services): Route[] {
  const caches: PageCaches = {
    fragments: new FragmentCache(CACHE.entries, CACHE.chars),
    pages: new FragmentCache<Uint8Array>(CACHE.entries, CACHE.chars),
  };
  const notFound = { description: 'unknown market' };

  return [
    route({
      method: 'GET',
      path: '/explore',
      auth: 'none',
      summary: 'The record of the four markets, with a chart each',
      response: { 200: htmlPage('the explore page') },
      handler: (c) => showExplore(s, caches, c),
    }),
    route<{ market_id: string }, MarketQuery>({
      method: 'GET',
      path: '/explore/{market_id}',
      auth: 'none',
      summary: "A market's last closed sessions, charted by mode, with a table of the sessions",
      params: MarketParams,
      query: MarketQuery,
      response: { 200: htmlPage("a market's record") },
      responses: { 404: notFound },
      handler: (c) => showExploreMarket(s, caches, c),
    }),
    route<TickParams, TickQuery>({
      method: 'GET',
      path: '/explore/{market_id}/tick/{tick}',
      auth: 'none',
      summary: "One closed session's menu: each row's status, executions and outcomes",
      params: TickParams,
      query: TickQuery,
      response: { 200: htmlPage('a closed session of a market') },
      responses: {
        404: {
          description: 'unknown market, or the session is open, in the future or not on record',
        },
      },
      handler: (c) => showExploreTick(s, caches, c),
    }),
  ];
}

/** The contents rendered once per record position and query, and visitors' whole pages. */
type PageCaches = { fragments: FragmentCache; pages: FragmentCache<Uint8Array> };

/** The page of content `key`: a visitor's whole page is kept like the content itself. */
async function page(
  s: Services,
  { fragments, pages }: PageCaches,
  req: RequestInfo,
  key: string,
  keep: boolean,
  title: string,
  content: () => Promise<string>,
): Promise<Reply> {
  const [holder, body] = await Promise.all([holderOf(s, req), fragments.get(key, content, keep)]);
  return visitorPage(
    pages,
    key,
    holder !== null,
    () => renderPage('explore-page', { title, holder, body }),
    keep,
  );
}

const loaded = (s: Services, m: MarketId) => s.supervisor.historyLoaded(m);

async function showExplore(
  s: Services,
  caches: PageCaches,
  { req }: PublicContext,
): Promise<Reply> {
  const key = `all|${MARKET_IDS.map((m) => recordPosition(s, m).open).join(',')}`;
  return page(
    s,
    caches,
    req,
    key,
    MARKET_IDS.every((m) => loaded(s, m)),
    'Explore the record',
    () => overview(s),
  );
}

async function showExploreMarket(
  s: Services,
  caches: PageCaches,
  { params, query, req }: PublicContext<{ market_id: string }, MarketQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const key = `${market}|${recordPosition(s, market).open}|${query.ticks}|${query.mode}`;
  return page(s, caches, req, key, loaded(s, market), `${MARKETS[market].label}: the record`, () =>
    marketPage(s, market, query),
  );
}

async function showExploreTick(
  s: Services,
  caches: PageCaches,
  { params, query, req }: PublicContext<TickParams, TickQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const { tick } = params;
  const open = recordPosition(s, market).open;
  if (tick === open)
    throw new HttpError(
      404,
      `session ${tick} of ${market} is still open: its menu is on /markets/${market}`,
    );
  if (tick > open)
    throw new HttpError(
      404,
      `session ${tick} of ${market} has not happened yet (the open session is ${open})`,
    );
  const q = { ...query, status_filter: query.status_filter || undefined };
  const key = `${market}|${open}|t${tick}|${q.family}|${q.sort}|${q.status_filter ?? ''}`;
  return page(
    s,
    caches,
    req,
    key,
    loaded(s, market),
    `${MARKETS[market].label}: session ${tick}`,
    () => tickPage(s, market, tick, q),
  );
}

async function overview(s: Services): Promise<string> {
  const pulse = await pulseSource(s).pulse();
  const markets = pulse.markets.map((m) => {
    const id = m.market as MarketId;
    const tape = m.tape as TapeRow[];
    const last = tape.at(-1);
    return {
      id,
      label: MARKETS[id].label,
      chart: overviewChart(id, tape),
      last_tick: last?.tick ?? null,
      last_price: typeof last?.price_close === 'number' ? usd(last.price_close) : null,
      sessions: m.sessions_recorded,
      executions: m.executions,
      units: m.units,
      turnover: usd(m.turnover),
      pnl: usd(m.pnl),
      pnl_neg: m.pnl < 0,
    };
  });
  return renderFragment('explore', { markets });
}

async function marketPage(s: Services, market: MarketId, q: MarketQuery): Promise<string> {
  const pos = recordPosition(s, market);
  const ticks = lastTicks(pos.open, q.ticks);
  const rows = (
    ticks.length
      ? await read(s.runtime, 'analytics.tape', {
          market,
          from: ticks[0],
          to: pos.lastClosed,
          cluster: -1,
          open: pos.open,
          lastSettled: pos.lastSettled,
        })
      : []
  ) as TapeRow[];
  const mode = q.mode as Mode;
  const href = (m: Mode, n: number) =>
    `/explore/${market}${m === 'cost' && n === 120 ? '' : `?ticks=${n}&mode=${m}`}`;
  return renderFragment('explore-market', {
    market,
    label: MARKETS[market].label,
    open: pos.open,
    last_closed: pos.lastClosed,
    last_settled: pos.lastSettled,
    ticks: q.ticks,
    recorded: rows.length,
    mode_label: MODES[mode],
    modes: MODE_NAMES.map((m) => ({ name: m, href: href(m, q.ticks), current: m === mode })),
    spans: TICKS_CHOICES.map((n) => ({ n, href: href(mode, n), current: n === q.ticks })),
    chart: figure(
      modeChart(market, mode, ticks, rows),
      mode === 'volume'
        ? undefined
        : mode === 'pnl'
          ? 'Results in USD.'
          : 'Prices in USD per unit.',
    ),
    has_rows: rows.length > 0,
    rows: sessionRows(market, rows),
  });
}

/** One closed session's menu, or 404 when the session is not on record. */
async function tickPage(
  s: Services,
  market: MarketId,
  tick: number,
  q: TickQuery,
): Promise<string> {
  const pos = recordPosition(s, market);
  const r = await read(s.runtime, 'history.rows', {
    market,
    from: tick,
    to: tick,
    lastSettled: pos.lastSettled,
    includeBundle: false,
    oracle: false,
  });
  const c = await read(s.runtime, 'history.coverage', { market });
  // Unrecorded rows exist only while the history load has yet to reach the session.
  const loading = c.plan !== null && c.plan.sessions_loaded < c.plan.sessions_total;
  const inLoad = (t: number) =>
    loading && c.plan !== null && t >= c.plan.from_tick && t < c.plan.live_start_tick;
  if (r.recorded_sessions === 0 && !inLoad(tick))
    throw new HttpError(404, `session ${tick} of ${market} is not on record`);
  // The session before is linked only when it is on record (or being loaded): the record's first session has none.
  const hasPrev =
    tick > 0 &&
    ((c.recorded.first_tick !== null && tick - 1 >= c.recorded.first_tick) || inLoad(tick - 1));
  const { counts, rows } = tickRows(r.rows as HistoryRow[], {
    family: q.family,
    sort: q.sort as TickSort,
    status_filter: q.status_filter as RowStatus | undefined,
  });
  const settled = tick <= pos.lastSettled;
  const horizon = MARKETS[market].settlement_horizon_ticks;
  const families = [
    ...new Map((r.rows as HistoryRow[]).map((x) => [x.cluster, x.sku_family as string])).entries(),
  ]
    .sort((a, b) => a[1].localeCompare(b[1]))
    .map(([cluster, name]) => ({ cluster, name, selected: cluster === q.family }));
  return renderFragment('explore-tick', {
    market,
    label: MARKETS[market].label,
    tick,
    velocity: MARKETS[market].quotes_velocity,
    settled,
    revealed: Math.min(horizon, pos.lastClosed - tick),
    horizon,
    counts,
    menu_n: r.rows.length,
    shown: rows.length,
    families,
    all_families: q.family < 0,
    sorts: TICK_SORT_NAMES.map((n) => ({
      name: n,
      label: TICK_SORTS[n].label,
      selected: n === q.sort,
    })),
    statuses: STATUSES.map((st) => ({ name: st, selected: st === q.status_filter })),
    no_status: q.status_filter === undefined,
    prev: hasPrev ? tick - 1 : null,
    has_prev: hasPrev,
    next: tick + 1 < pos.open ? tick + 1 : null,
    has_next: tick + 1 < pos.open,
    has_rows: rows.length > 0,
    rows: rows.map(tickRowView),
  });
}
