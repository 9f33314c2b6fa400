// Record routes: the market's executed trades and the dataset CSV frames. The queries run as read
// tasks on the worker pool (actors/record/trades.ts).
import Type, { type Static } from 'typebox';
import type { DatasetArgs, TradesArgs, TradesReply } from '../../../actors/record/messages.js';
import {
  media,
  route,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import { TradesAnswer } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { MarketParams, marketOr404 } from '../../api/market-params.js';
import {
  DATASET_SPAN,
  JSON_TYPE,
  TRADES_SPAN,
  TickRange,
  allRecorded,
  cacheable,
  checkSpan,
  recordAnswer,
  fragmentPiece,
  jsonWithArray,
  recordPosition,
  type Assembled,
  type Piece,
  type RecordPosition,
} from '../record-query.js';
import { csvLine, datasetHeader } from '../../analytics/dataset.js';
import type { Fragment } from '../record-cache.js';

const TradesQuery = Type.Object({
  ...TickRange,
  actor: Type.Optional(
    Type.Union([Type.Literal('house'), Type.Literal('user')], {
      description: 'only trades of the house or of holders',
    }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 10000, default: 2000 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
type TradesQuery = Static<typeof TradesQuery>;
type MarketParam = Static<typeof MarketParams>;

const DatasetQuery = Type.Object({
  ...TickRange,
  split: Type.Union([Type.Literal('labeled'), Type.Literal('unlabeled')], {
    default: 'labeled',
    description: `labeled: executed trades of settled sessions (at most ${DATASET_SPAN.labeled} sessions); unlabeled: every menu row of closed recorded sessions with execution flags (at most ${DATASET_SPAN.unlabeled})`,
  }),
  expand_qty: Type.Boolean({
    default: false,
    description: `labeled only: one row per volume 1..max_qty of every executed deal with the profit there (at most ${DATASET_SPAN.expanded} sessions)`,
  }),
});
type DatasetQuery = Static<typeof DatasetQuery>;

const CSV_TYPE = 'text/csv; charset=utf-8';

/**
 * The page `offset`, `limit` of the sessions' trades (of `actor` only if given) as pieces of the
 * sessions' fragments: runs of consecutive trades are one slice each.
 */
export function tradesPage(
  parts: Fragment[],
  actor: 'house' | 'user' | undefined,
  offset: number,
  limit: number,
): { total: number; pieces: Piece[] } {
  const want = actor === undefined ? undefined : actor === 'house' ? 104 /* h */ : 117; /* u */
  let total = 0;
  for (const f of parts)
    total += want === undefined ? f.items : want === 104 ? f.houses! : f.items - f.houses!;
  const pieces: Piece[] = [];
  let skip = offset;
  let left = limit;
  for (const f of parts) {
    if (left === 0) break;
    const starts = f.starts!;
    const slice = (i: number, j: number) =>
      pieces.push(fragmentPiece(f, starts[i], starts[j] - 1, `${i}-${j}`));
    if (want === undefined) {
      if (skip >= f.items) {
        skip -= f.items;
        continue;
      }
      const end = Math.min(f.items, skip + left);
      slice(skip, end);
      left -= end - skip;
      skip = 0;
      continue;
    }
    let run = -1;
    for (let k = 0; k < f.items && left > 0; k++) {
      let take = f.actors!.charCodeAt(k) === want;
      if (take && skip > 0) {
        skip--;
        take = false;
      }
      if (take) {
        if (run < 0) run = k;
        if (--left === 0) {
          slice(run, k + 1);
          run = -1;
        }
      } else if (run >= 0) {
        slice(run, k);
        run = -1;
      }
    }
    if (run >= 0) slice(run, f.items);
  }
  return { total, pieces };
}

export function tradesRoutes(s: Services): Route[] {
  return [
    route<MarketParam, TradesQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/trades',
      operationId: 'list_market_trades',
      auth: 'none',
      summary: `Executed trades of closed sessions, revealed as far as time allows (at most ${TRADES_SPAN} sessions per call)`,
      params: MarketParams,
      query: TradesQuery,
      response: { 200: TradesAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market' },
      },
      handler: (c) => listMarketTrades(s, c),
    }),
    route<MarketParam, DatasetQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/dataset.csv',
      operationId: 'get_dataset_csv',
      auth: 'none',
      summary:
        'The record as a CSV frame: labeled (settled trades, or profit by volume) or unlabeled (menu rows with execution flags)',
      params: MarketParams,
      query: DatasetQuery,
      response: {
        200: media(
          'text/csv; charset=utf-8',
          "CSV with a header line; every row carries the listing's list_price, unit_cost and listed_at; velocity markets add sv and isv, ranking markets sales_rank, sales_rank_avg, rank_drops, rank_drops_long and nsellers",
        ),
      },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market' },
      },
      handler: (c) => getDatasetCsv(s, c),
    }),
  ];
}

async function listMarketTrades(
  s: Services,
  { params, query, req }: PublicContext<MarketParam, TradesQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  checkSpan(query, TRADES_SPAN);
  const pos = recordPosition(s, market);
  const args: TradesArgs = {
    market,
    from: query.from_tick,
    to: Math.min(query.to_tick, pos.lastClosed),
    actor: query.actor,
    limit: query.limit,
    offset: query.offset,
  };
  const head = {
    market,
    from_tick: query.from_tick,
    to_tick: query.to_tick,
    last_closed: pos.lastClosed,
    last_settled: pos.lastSettled,
    actor: query.actor ?? null,
  };
  const settledOnly = query.to_tick <= pos.lastSettled;
  if (!s.record.enabled) {
    const r = await s.runtime.read<TradesReply>('trades.list', args);
    const answer = {
      ...head,
      total: r.total,
      limit: query.limit,
      offset: query.offset,
      trades: r.trades,
    };
    return cacheable(s, req, market, { json: answer }, settledOnly);
  }
  return recordAnswer(s, req, market, pos.open, settledOnly, () =>
    tradesFromRecord(s, args, head, pos),
  );
}

/** From the record: the page of the sessions' trades, as slices of their fragments. */
async function tradesFromRecord(
  s: Services,
  args: TradesArgs,
  head: Record<string, unknown>,
  pos: RecordPosition,
): Promise<Assembled> {
  const parts = await s.record.sessions(
    { kind: 'trades', market: args.market },
    args.from,
    args.to,
    pos,
  );
  const page = tradesPage(parts, args.actor, args.offset, args.limit);
  const pieces = jsonWithArray(
    { ...head, total: page.total, limit: args.limit, offset: args.offset },
    'trades',
    page.pieces,
  );
  return { pieces, contentType: JSON_TYPE, final: allRecorded(parts) };
}

async function getDatasetCsv(
  s: Services,
  { params, query, req }: PublicContext<MarketParam, DatasetQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const labeled = query.split === 'labeled';
  checkSpan(
    query,
    labeled
      ? query.expand_qty
        ? DATASET_SPAN.expanded
        : DATASET_SPAN.labeled
      : DATASET_SPAN.unlabeled,
  );
  const pos = recordPosition(s, market);
  const args: DatasetArgs = {
    market,
    from: query.from_tick,
    to: Math.min(query.to_tick, labeled ? pos.lastSettled : pos.lastClosed),
    split: query.split,
    expandQty: labeled && query.expand_qty,
  };
  const settledOnly = query.to_tick <= pos.lastSettled;
  const name = `${market}-${query.split}${args.expandQty ? '-expanded' : ''}-${query.from_tick}-${query.to_tick}.csv`;
  if (!s.record.enabled) return datasetFromRuntime(s, req, args, name, settledOnly);
  return recordAnswer(s, req, market, pos.open, settledOnly, () =>
    datasetFromRecord(s, args, name, pos),
  );
}

/** The CSV's own headers: its file name and its row count. */
const datasetHeaders = (name: string, rows: number) => ({
  'content-disposition': `inline; filename="${name}"`,
  'x-rows': String(rows),
});

/** Without the record: the CSV made by the worker pool. */
async function datasetFromRuntime(
  s: Services,
  req: RequestInfo,
  args: DatasetArgs,
  name: string,
  settledOnly: boolean,
): Promise<Reply> {
  const r = await s.runtime.read<{ csv: string; rows: number }>('trades.dataset', args);
  const reply = cacheable(s, req, args.market, { text: r.csv, contentType: CSV_TYPE }, settledOnly);
  reply.headers = { ...reply.headers, ...datasetHeaders(name, r.rows) };
  return reply;
}

/** From the record: the header line, then the sessions' fragments. */
async function datasetFromRecord(
  s: Services,
  args: DatasetArgs,
  name: string,
  pos: RecordPosition,
): Promise<Assembled> {
  const parts = await s.record.sessions(
    { kind: 'dataset', market: args.market, split: args.split, expandQty: args.expandQty },
    args.from,
    args.to,
    pos,
  );
  const pieces = [
    { bytes: Buffer.from(csvLine(datasetHeader(args.market, args))) },
    ...parts.map((f) => fragmentPiece(f)),
  ];
  return {
    pieces,
    contentType: CSV_TYPE,
    final: allRecorded(parts),
    headers: datasetHeaders(
      name,
      parts.reduce((n, f) => n + f.items, 0),
    ),
  };
}
