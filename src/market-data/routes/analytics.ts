// Record routes: analytics. Tape and stats here; book, families and signals in analytics-book.ts.
import Type, { type Static } from 'typebox';
import { route, type PublicContext, type Reply, type Route } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { MarketParams, clusterField, clusterOr404, marketOr404 } from '../../api/market-params.js';
import {
  STATS_CAP,
  TAPE_CAP,
  TickRange,
  cacheable,
  checkSpan,
  recordAnswer,
  recordPosition,
  rowsAnswer,
} from '../record-query.js';
import { StatsAnswer, TapeAnswer } from '../../schemas/index.js';

const TapeQuery = Type.Object({
  ...TickRange,
  cluster: Type.Optional(clusterField('default: the whole market')),
});
const StatsQuery = Type.Object({ ...TickRange });
type MarketParam = Static<typeof MarketParams>;
type TapeQuery = Static<typeof TapeQuery>;
type StatsQuery = Static<typeof StatsQuery>;

export function analyticsRoutes(s: Services): Route[] {
  return [
    route<MarketParam, TapeQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/tape',
      operationId: 'get_tape',
      auth: 'none',
      summary: `Tape rows per closed session (at most ${TAPE_CAP} sessions per call); settled sessions also carry desk_pnl, holder_pnl, profitable_rate, downside_rate, exec_rate`,
      params: MarketParams,
      query: TapeQuery,
      response: { 200: TapeAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market or cluster' },
      },
      handler: (c) => getTape(s, c),
    }),
    route<MarketParam, StatsQuery>({
      method: 'GET',
      path: '/api/v1/markets/{market_id}/stats',
      operationId: 'get_stats',
      auth: 'none',
      summary: `Per-session stats of settled sessions (at most ${STATS_CAP} sessions per call); \`oracle\` only with the oracle switch`,
      params: MarketParams,
      query: StatsQuery,
      response: { 200: StatsAnswer },
      responses: {
        304: { description: 'If-None-Match matched' },
        404: { description: 'unknown market' },
      },
      handler: (c) => getStats(s, c),
    }),
  ];
}

async function getTape(
  s: Services,
  { params, query, req }: PublicContext<MarketParam, TapeQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  checkSpan(query, TAPE_CAP);
  const cluster = query.cluster === undefined ? -1 : clusterOr404(query.cluster);
  const pos = recordPosition(s, market);
  const head = {
    market,
    cluster: query.cluster ?? null,
    from_tick: query.from_tick,
    to_tick: query.to_tick,
  };
  const settledOnly = query.to_tick <= pos.lastSettled;
  if (!s.record.enabled) {
    const rows = await s.runtime.read('analytics.tape', {
      market,
      from: query.from_tick,
      to: query.to_tick,
      cluster,
      open: pos.open,
      lastSettled: pos.lastSettled,
    });
    return cacheable(s, req, market, { json: { ...head, rows } }, settledOnly);
  }
  return recordAnswer(s, req, market, pos.open, settledOnly, async () => {
    // Closed sessions only: the open one has no tape yet.
    const parts = await s.record.sessions(
      { kind: 'tape', market, cluster },
      query.from_tick,
      Math.min(query.to_tick, pos.open - 1),
      pos,
    );
    return rowsAnswer(head, parts);
  });
}

async function getStats(
  s: Services,
  { params, query, req }: PublicContext<MarketParam, StatsQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  checkSpan(query, STATS_CAP);
  const pos = recordPosition(s, market);
  const to = Math.min(query.to_tick, pos.lastSettled);
  const head = { market, from_tick: query.from_tick, to_tick: query.to_tick };
  const settledOnly = query.to_tick <= pos.lastSettled;
  if (!s.record.enabled) {
    const rows =
      to < query.from_tick
        ? []
        : await s.runtime.read('analytics.stats', {
            market,
            from: query.from_tick,
            to,
            oracle: s.config.oracle,
          });
    return cacheable(s, req, market, { json: { ...head, rows } }, settledOnly);
  }
  return recordAnswer(s, req, market, pos.open, settledOnly, async () => {
    const parts = await s.record.sessions(
      { kind: 'stats', market, oracle: s.config.oracle },
      query.from_tick,
      to,
      pos,
    );
    return rowsAnswer(head, parts);
  });
}
