// Read tasks of the record: history rows of closed sessions and the record's coverage.
import { dealToJson, menu, type MarketId } from '../../src/engine/index.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineReads } from '../runtime/read.js';
import type { CoverageReply, HistoryArgs, HistoryReply } from './messages.js';
import { historyRow, Outcomes, tradesByRow, type DealJson } from './history-rows.js';
import { TRADE_FROM, TRADE_SELECT, type TradeRow } from './trade-json.js';

/** Recorded sessions of a range. */
export async function recordedTicks(
  em: EntityManager,
  market: string,
  from: number,
  to: number,
): Promise<Set<number>> {
  const rows = await em.execute(
    'select tick::float8 as tick from market_session where market = ? and tick between ? and ? and recorded',
    [market, from, to],
  );
  return new Set(rows.map((r) => r.tick as number));
}

/** Trades of a range in (tick, id) order, optionally only settled ones. */
export async function rangeTrades(
  em: EntityManager,
  market: string,
  from: number,
  to: number,
  settledOnly = false,
): Promise<TradeRow[]> {
  return (await em.execute(
    `select ${TRADE_SELECT} from ${TRADE_FROM}
      where t.market = ? and t.tick between ? and ? ${settledOnly ? 'and t.settled' : ''} order by t.tick, t.id`,
    [market, from, to],
  )) as TradeRow[];
}

/** A session's history rows, and whether the session is recorded. */
export type HistorySession = { tick: number; recorded: boolean; rows: Record<string, unknown>[] };

/** History rows of sessions a.from..a.to (closed ones: the route clips `to`), session by session. */
export async function historySessions(
  em: EntityManager,
  seed: number,
  a: HistoryArgs,
): Promise<HistorySession[]> {
  if (a.to < a.from) return [];
  // First: a session seen recorded here has all its rows committed for the queries below.
  const recorded = await recordedTicks(em, a.market, a.from, a.to);
  const menuRows = (await em.execute(
    `select tick::float8 as tick, idx, deal from menu_row where market = ? and tick between ? and ? order by tick, idx`,
    [a.market, a.from, a.to],
  )) as { tick: number; idx: number; deal: DealJson }[];
  const trades = tradesByRow(await rangeTrades(em, a.market, a.from, a.to));
  const byTick = new Map<number, { idx: number; deal: DealJson }[]>();
  for (const r of menuRows)
    if (recorded.has(r.tick)) (byTick.get(r.tick) ?? byTick.set(r.tick, []).get(r.tick)!).push(r);
  const outcomes = new Outcomes(seed, a.market);
  const out: HistorySession[] = [];
  for (let tick = a.from; tick <= a.to; tick++) {
    const isRecorded = recorded.has(tick);
    // A session not recorded yet: its menu from the engine, with no outcomes.
    const deals = isRecorded
      ? (byTick.get(tick) ?? [])
      : menu(seed, a.market, tick).map((d, idx) => ({
          idx,
          deal: dealToJson(d) as unknown as DealJson,
        }));
    const ctx = {
      recorded: isRecorded,
      settled: tick <= a.lastSettled,
      includeBundle: a.includeBundle,
      oracle: a.oracle,
      outcomes,
    };
    out.push({
      tick,
      recorded: isRecorded,
      rows: deals.map(({ idx, deal }) =>
        historyRow(deal, idx, isRecorded ? (trades.get(`${tick}:${idx}`) ?? []) : [], ctx),
      ),
    });
  }
  return out;
}

export const historyReads = defineReads({
  'history.rows': async ({ em, seed }, a: HistoryArgs): Promise<HistoryReply> => {
    if (a.to < a.from) return { sessions: 0, recorded_sessions: 0, rows: [] };
    const sessions = await historySessions(em, seed, a);
    return {
      sessions: a.to - a.from + 1,
      recorded_sessions: sessions.filter((x) => x.recorded).length,
      rows: sessions.flatMap((x) => x.rows),
    };
  },

  'history.coverage': async ({ em }, a: { market: MarketId }): Promise<CoverageReply> => {
    const [rec] = await em.execute(
      `select min(tick)::float8 as first_tick, max(tick)::float8 as last_tick, count(*)::int as sessions
         from market_session where market = ? and recorded`,
      [a.market],
    );
    const [plan] = await em.execute(
      `select live_start::float8 as live_start_tick, from_tick::float8 as from_tick, sessions_total, sessions_loaded,
              extract(epoch from started_at)::float8 as started_at, extract(epoch from finished_at)::float8 as finished_at, engine
         from history_load where market = ?`,
      [a.market],
    );
    const [tr] = await em.execute(
      `select count(*)::int as total, count(*) filter (where actor = 'house')::int as house_n,
              count(*) filter (where actor = 'user')::int as user_n from trade where market = ?`,
      [a.market],
    );
    return {
      recorded: { first_tick: rec.first_tick, last_tick: rec.last_tick, sessions: rec.sessions },
      plan: (plan as CoverageReply['plan']) ?? null,
      trades: { total: tr.total, house: tr.house_n, user: tr.user_n },
    };
  },
});
