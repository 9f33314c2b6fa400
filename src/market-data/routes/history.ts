// Record routes: history rows of closed sessions, and the record's coverage. The queries run as
// read tasks on the worker pool (actors/record/history.ts).
import Type, { type Static } from 'typebox';
import type { CoverageReply, HistoryArgs, HistoryReply } from '../../../actors/record/messages.js';
import { HttpError, route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import { Coverage, HistoryAnswer } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { MarketParams, marketOr404 } from '../../api/market-params.js';
import {
  HISTORY_SPAN,
  TickRange,
  cacheable,
  checkSpan,
  recordAnswer,
  recordPosition,
  rowsAnswer,
  type Assembled,
  type RecordPosition,
} from '../record-query.js';

const HistoryQuery = Type.Object({
  ...TickRange,
  reveal: Type.Union([Type.Literal('house'), Type.Literal('full')], {
    default: 'house',
    description:
      'full: also the counterfactual outcomes of rejected rows; 403 unless the oracle switch (SVC_ORACLE=1) is on',
  }),
  include_bundle: Type.Boolean({
    default: false,
    description: 'the whole bundle instead of its title',
  }),
});
type HistoryQuery = Static<typeof HistoryQuery>;
type MarketParam = Static<typeof MarketParams>;

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

export function historyRoutes(s: Services): Route[] {
  return [
    route<MarketParam, HistoryQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/history',
      operationId: 'get_history',
      auth: 'none',
      summary: `History rows of closed sessions (at most ${HISTORY_SPAN} sessions per call)`,
      params: MarketParams,
      query: HistoryQuery,
      response: { 200: HistoryAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        403: { description: 'reveal=full without the oracle switch' },
        404: { description: 'unknown market' },
      },
      handler: (c) => getHistory(s, c),
    }),
    route<MarketParam>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/coverage',
      operationId: 'get_coverage',
      auth: 'none',
      summary:
        'Recorded range, history-load progress, live start, trade count and the frozen engine identity',
      params: MarketParams,
      response: { 200: Coverage },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market' },
      },
      handler: (c) => getCoverage(s, c),
    }),
  ];
}

async function getHistory(
  s: Services,
  { params, query, req }: PublicContext<MarketParam, HistoryQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  checkSpan(query, HISTORY_SPAN);
  if (query.reveal === 'full' && !s.config.oracle) {
    throw new HttpError(
      403,
      'reveal=full needs the oracle switch (SVC_ORACLE=1), which is off on this service',
    );
  }
  const pos = recordPosition(s, market);
  const args: HistoryArgs = {
    market,
    from: query.from_tick,
    to: Math.min(query.to_tick, pos.lastClosed),
    lastSettled: pos.lastSettled,
    includeBundle: query.include_bundle,
    oracle: query.reveal === 'full',
  };
  const head = {
    market,
    from_tick: query.from_tick,
    to_tick: query.to_tick,
    open_tick: pos.open,
    last_closed: pos.lastClosed,
    last_settled: pos.lastSettled,
    reveal: query.reveal,
    include_bundle: query.include_bundle,
  };
  const settledOnly = query.to_tick <= pos.lastSettled;
  if (!s.record.enabled) {
    const r = await s.runtime.read<HistoryReply>('history.rows', args);
    const answer = {
      ...head,
      sessions: r.sessions,
      recorded_sessions: r.recorded_sessions,
      rows: r.rows,
    };
    return cacheable(s, req, market, { json: answer }, settledOnly);
  }
  return recordAnswer(s, req, market, pos.open, settledOnly, () =>
    historyFromRecord(s, args, head, pos),
  );
}

/** From the record: the sessions' fragments assembled into the answer. */
async function historyFromRecord(
  s: Services,
  args: HistoryArgs,
  head: Record<string, unknown>,
  pos: RecordPosition,
): Promise<Assembled> {
  const parts = await s.record.sessions(
    {
      kind: 'history',
      market: args.market,
      includeBundle: args.includeBundle,
      oracle: args.oracle,
    },
    args.from,
    args.to,
    pos,
  );
  const counts = {
    sessions: parts.length,
    recorded_sessions: parts.filter((f) => f.recorded).length,
  };
  return rowsAnswer({ ...head, ...counts }, parts);
}

async function getCoverage(
  s: Services,
  { params, req }: PublicContext<MarketParam>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const pos = recordPosition(s, market);
  const c = await s.runtime.read<CoverageReply>('history.coverage', { market });
  const p = c.plan;
  const answer = {
    market,
    open_tick: pos.open,
    last_closed_tick: pos.lastClosed,
    last_settled_tick: pos.lastSettled,
    live_start_tick: p?.live_start_tick ?? null,
    first_recorded_tick: c.recorded.first_tick,
    last_recorded_tick: c.recorded.last_tick,
    recorded_sessions: c.recorded.sessions,
    history_load: p && historyLoad(p),
    trade_count: c.trades.total,
    trades: { house: c.trades.house, user: c.trades.user },
    engine: p
      ? {
          name: p.engine.name,
          version: p.engine.version,
          params_hash: p.engine.params_hash,
          seed: p.engine.seed,
        }
      : null,
  };
  return cacheable(s, req, market, { json: answer }, false);
}

/** The history load's progress, from the record's load plan. */
function historyLoad(p: NonNullable<CoverageReply['plan']>) {
  return {
    from_tick: p.from_tick,
    to_tick: p.live_start_tick - 1,
    sessions_total: p.sessions_total,
    sessions_loaded: p.sessions_loaded,
    fraction: p.sessions_total ? round4(Math.min(1, p.sessions_loaded / p.sessions_total)) : 1,
    complete: p.sessions_loaded >= p.sessions_total,
    started_at: p.started_at,
    finished_at: p.finished_at,
  };
}
