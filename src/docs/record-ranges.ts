// Which record routes take a from_tick/to_tick range and how many sessions one call may span: the
// caps are the routes' own constants (src/market-data/record-query.ts, imported, never restated), so
// /llms.txt, the docs pages and the 422 an over-wide call gets all say the same number.
import {
  DATASET_SPAN,
  HISTORY_SPAN,
  SIGNALS_CAP,
  SIGNALS_DEFAULT,
  STATS_CAP,
  TAPE_CAP,
  TRADES_SPAN,
} from '../market-data/record-query.js';

export type RecordRange = {
  /** The route under the API base, OpenAPI style. */
  path: string;
  /** Whether from_tick and to_tick must be sent. */
  required: boolean;
  /** Most sessions (to_tick - from_tick + 1) one call may span, per variant of the query. */
  caps: { cap: number; when?: string }[];
  note?: string;
};

export const RECORD_RANGES: RecordRange[] = [
  { path: '/markets/{market_id}/history', required: true, caps: [{ cap: HISTORY_SPAN }] },
  { path: '/markets/{market_id}/trades', required: true, caps: [{ cap: TRADES_SPAN }] },
  {
    path: '/markets/{market_id}/dataset.csv',
    required: true,
    caps: [
      { cap: DATASET_SPAN.labeled, when: 'split=labeled (the default)' },
      { cap: DATASET_SPAN.expanded, when: 'split=labeled&expand_qty=true' },
      { cap: DATASET_SPAN.unlabeled, when: 'split=unlabeled' },
    ],
  },
  { path: '/markets/{market_id}/stats', required: true, caps: [{ cap: STATS_CAP }] },
  { path: '/markets/{market_id}/tape', required: true, caps: [{ cap: TAPE_CAP }] },
  {
    path: '/markets/{market_id}/families/{cluster}/signals',
    required: false,
    caps: [{ cap: SIGNALS_CAP }],
    note: `optional: default the last ${SIGNALS_DEFAULT} sessions; ranking markets only`,
  },
];

/** Where an agent finds the range a market has on record (first and last recorded session). */
export const COVERAGE_PATH = '/markets/{market_id}/coverage';

/** "at most 400 sessions with split=labeled (the default), 50 with ...": one line per route. */
export function capWords(r: RecordRange): string {
  return (
    r.caps
      .map(
        (c, i) => `${i === 0 ? 'at most ' : ''}${c.cap} sessions${c.when ? ` with ${c.when}` : ''}`,
      )
      .join(', ') + ' per call'
  );
}

/** What happens beyond the cap, in the words of the 422 (CONTRACT.md "Span caps"). */
export const SPAN_REFUSAL =
  'a wider range answers 422 with a detail entry at loc ["query","to_tick"] (type span_too_large, ctx.max_span the cap)';
