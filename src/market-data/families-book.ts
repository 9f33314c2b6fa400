// The families and book answers of the record (they change only at a close): the book's query and
// its defaults, the answers as the routes build them, and the default ones warmed at each close.
import Type, { type Static } from 'typebox';
import type { ServedBook } from '../analytics/tape.js';
import type { MarketId } from '../engine/index.js';
import { HttpError } from '../http/route.js';
import type { Services } from '../http/services.js';
import { clusterField } from '../api/market-params.js';
import { FAMILIES_WINDOW, keptCloseAnswer, type CloseJson } from './record-query.js';

/** The book of a request without a query (warmed at each close). */
const BOOK_DEFAULTS = { step: 1.0, levels: 10, window: 48 };
export const BookQuery = Type.Object({
  cluster: Type.Optional(clusterField('default: the whole market')),
  step: Type.Number({
    exclusiveMinimum: 0.05,
    maximum: 10,
    default: BOOK_DEFAULTS.step,
    description: 'price distance between levels',
  }),
  levels: Type.Integer({
    minimum: 1,
    maximum: 50,
    default: BOOK_DEFAULTS.levels,
    description: 'levels per side',
  }),
  window: Type.Integer({
    minimum: 2,
    maximum: 500,
    default: BOOK_DEFAULTS.window,
    description: 'closed sessions of tape the book is drawn from',
  }),
});
export type BookQuery = Static<typeof BookQuery>;

/** A book query (defaults applied) as a key of the close-keyed answers. */
export const bookKey = (q: BookQuery) =>
  `book|${q.cluster ?? ''}|${q.step}|${q.levels}|${q.window}`;

export async function bookJson(
  s: Services,
  market: MarketId,
  query: BookQuery,
  open: number,
): Promise<CloseJson> {
  const cluster = query.cluster ?? -1;
  const r = await s.runtime.read<{ sessions: number; book: ServedBook } | null>('analytics.book', {
    market,
    cluster,
    window: query.window,
    step: query.step,
    levels: query.levels,
    open,
  });
  if (!r)
    throw new HttpError(
      404,
      `no tape with prices for ${query.cluster === undefined ? 'the market' : `cluster ${cluster}`} in the last ${query.window} sessions`,
    );
  return {
    json: {
      market,
      cluster: query.cluster ?? null,
      window: query.window,
      sessions: r.sessions,
      ...r.book,
    },
    settledOnly: false,
  };
}

export async function familiesJson(
  s: Services,
  market: MarketId,
  window: number,
  open: number,
): Promise<CloseJson> {
  const r = await s.runtime.read<{ sessions: number; families: unknown[] }>('analytics.families', {
    market,
    window,
    open,
  });
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
  const keep = (path: string, key: string, build: () => Promise<CloseJson>) =>
    keptCloseAnswer(s, path, market, key, open, true, build);
  await Promise.all([
    keep(`${base}/families`, `families|${FAMILIES_WINDOW}`, () =>
      familiesJson(s, market, FAMILIES_WINDOW, open),
    ),
    // No tape in the window yet: a 404, nothing to keep.
    keep(`${base}/book`, bookKey(BOOK_DEFAULTS), () =>
      bookJson(s, market, BOOK_DEFAULTS, open),
    ).catch((err) => {
      if (!(err instanceof HttpError)) throw err;
    }),
  ]);
}
