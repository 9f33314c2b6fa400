// Record routes: the synthetic book, the families of the current menu and ranking signals.
import Type, { type Static } from 'typebox';
import { FAMILIES, MARKETS } from '../../engine/index.js';
import type { ServedBook } from '../../analytics/tape.js';
import type { MarketId } from '../../engine/index.js';
import { HttpError, route, type Route } from '../route.js';
import type { Services } from '../services.js';
import { MarketParams, marketOr404 } from './markets.js';
import { TickRange, checkSpan, closeAnswer, keptCloseAnswer, recordPosition, type CloseJson } from './record-common.js';
import { BookAnswer, FamiliesAnswer, SignalsAnswer } from '../../schemas/index.js';

export const SIGNALS_CAP = 2000;
export const SIGNALS_DEFAULT = 120;
/** Closed sessions of outcomes a families answer covers unless asked otherwise (the pages use it too). */
export const FAMILIES_WINDOW = 48;

export const clusterField = (what: string) => Type.Integer({ minimum: 0, description: `family (cluster id, 0..${FAMILIES.length - 1}); ${what}` });

/** A cluster id of the catalog, or 404. */
export function clusterOr404(cluster: number): number {
  if (cluster >= FAMILIES.length) throw new HttpError(404, `unknown cluster ${cluster}; clusters are 0..${FAMILIES.length - 1}`);
  return cluster;
}

/** The book of a request without a query (warmed at each close). */
const BOOK_DEFAULTS = { step: 1.0, levels: 10, window: 48 };
const BookQuery = Type.Object({
  cluster: Type.Optional(clusterField('default: the whole market')),
  step: Type.Number({ exclusiveMinimum: 0.05, maximum: 10, default: BOOK_DEFAULTS.step, description: 'price distance between levels' }),
  levels: Type.Integer({ minimum: 1, maximum: 50, default: BOOK_DEFAULTS.levels, description: 'levels per side' }),
  window: Type.Integer({ minimum: 2, maximum: 500, default: BOOK_DEFAULTS.window, description: 'closed sessions of tape the book is drawn from' }),
});
type BookQuery = Static<typeof BookQuery>;
const FamiliesQuery = Type.Object({ window: Type.Integer({ minimum: 1, maximum: 400, default: FAMILIES_WINDOW, description: 'closed sessions of outcomes' }) });
type FamiliesQuery = Static<typeof FamiliesQuery>;
const SignalsParams = Type.Object({ market_id: MarketParams.properties.market_id, cluster: clusterField('the family') });
const SignalsQuery = Type.Object({ from_tick: Type.Optional(TickRange.from_tick), to_tick: Type.Optional(TickRange.to_tick) });
type SignalsQuery = Static<typeof SignalsQuery>;

export function bookRoutes(s: Services): Route[] {
  return [
    route<{ market_id: string }, BookQuery>({
      method: 'GET', path: '/api/v1/markets/{market_id}/book', auth: 'none', summary: 'Synthetic order book around the resale price',
      params: MarketParams,
      query: BookQuery,
      response: { 200: BookAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market or cluster, or no tape in the window' },
      },
      handler: async ({ params, query, req }) => {
        const market = marketOr404(params.market_id);
        if (query.cluster !== undefined) clusterOr404(query.cluster);
        return closeAnswer(s, req, market, bookKey(query), (open) => bookJson(s, market, query, open));
      },
    }),
    route<{ market_id: string }, FamiliesQuery>({
      method: 'GET', path: '/api/v1/markets/{market_id}/families', auth: 'none', summary: 'Item families on the current menu with recorded outcome statistics',
      params: MarketParams,
      query: FamiliesQuery,
      response: { 200: FamiliesAnswer },
      responses: { 304: { description: 'If-None-Match matched' }, 404: { description: 'unknown market' } },
      handler: async ({ params, query, req }) => {
        const market = marketOr404(params.market_id);
        return closeAnswer(s, req, market, `families|${query.window}`, (open) => familiesJson(s, market, query.window, open));
      },
    }),
    route<Static<typeof SignalsParams>, SignalsQuery>({
      method: 'GET', path: '/api/v1/markets/{market_id}/families/{cluster}/signals', auth: 'none',
      summary: `Signals of a family per session (ranking markets only): rows up to and including the open session; default the last ${SIGNALS_DEFAULT} sessions, at most ${SIGNALS_CAP} per call`,
      params: SignalsParams,
      query: SignalsQuery,
      response: { 200: SignalsAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market or cluster, or a market that quotes velocity' },
      },
      handler: async ({ params, query, req }) => {
        const market = marketOr404(params.market_id);
        if (MARKETS[market].quotes_velocity) throw new HttpError(404, `market ${market} quotes velocity; signals exist on ranking markets (h2, h10)`);
        const cluster = clusterOr404(params.cluster);
        const { open } = recordPosition(s, market);
        const to = query.to_tick ?? open;
        const from = query.from_tick ?? Math.max(0, to - SIGNALS_DEFAULT + 1);
        checkSpan({ from_tick: from, to_tick: to }, SIGNALS_CAP);
        // Rows come from the seed; the answer still moves with the open session (rows up to it, the ETag).
        return closeAnswer(s, req, market, `signals|${from}|${to}`, async (open) => {
          const last = Math.min(to, open);
          const rows = await s.runtime.read('analytics.signals', { market, cluster, from, to: last });
          return { json: { market, cluster, sku_family: FAMILIES[cluster].sku_family, from_tick: from, to_tick: last, rows }, settledOnly: to < open };
        });
      },
    }),
  ];
}

/** A book query (defaults applied) as a key of the close-keyed answers. */
const bookKey = (q: BookQuery) => `book|${q.cluster ?? ''}|${q.step}|${q.levels}|${q.window}`;

async function bookJson(s: Services, market: MarketId, query: BookQuery, open: number): Promise<CloseJson> {
  const cluster = query.cluster ?? -1;
  const r = await s.runtime.read<{ sessions: number; book: ServedBook } | null>('analytics.book', {
    market, cluster, window: query.window, step: query.step, levels: query.levels, open,
  });
  if (!r) throw new HttpError(404, `no tape with prices for ${query.cluster === undefined ? 'the market' : `cluster ${cluster}`} in the last ${query.window} sessions`);
  return { json: { market, cluster: query.cluster ?? null, window: query.window, sessions: r.sessions, ...r.book }, settledOnly: false };
}

async function familiesJson(s: Services, market: MarketId, window: number, open: number): Promise<CloseJson> {
  const r = await s.runtime.read<{ sessions: number; families: unknown[] }>('analytics.families', { market, window, open });
  return { json: { market, tick: open, window, ...r }, settledOnly: false };
}

/**
 * At a close (supervisor option `warm`, before the record's position moves to `open`): builds the
 * default families and book answers of the new session and keeps them, so no request after the
 * close computes them. Nothing is kept while the market's history is still loading.
 */
export async function warmCloseAnswers(s: Services, market: MarketId, open: number): Promise<void> {
  if (!s.record.enabled || !s.supervisor.historyLoaded(market)) return;
  const base = `/api/v1/markets/${market}`;
  const keep = (path: string, key: string, build: () => Promise<CloseJson>) => keptCloseAnswer(s, path, market, key, open, true, build);
  await Promise.all([
    keep(`${base}/families`, `families|${FAMILIES_WINDOW}`, () => familiesJson(s, market, FAMILIES_WINDOW, open)),
    // No tape in the window yet: a 404, nothing to keep.
    keep(`${base}/book`, bookKey(BOOK_DEFAULTS), () => bookJson(s, market, BOOK_DEFAULTS, open)).catch((err) => {
      if (!(err instanceof HttpError)) throw err;
    }),
  ]);
}
