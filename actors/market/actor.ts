// MarketActor ("market:m15"): owns a market's sessions and its public record. Its turns open the
// first session, close sessions (exactly once per market and tick, ARCHITECTURE rule 3) and load
// past sessions (the history backfill). Close and backfill take the same advisory lock, so they
// never interleave across processes either.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MARKETS,
  engineIdentity,
  menu,
  outcomeInputsMemo,
  sessionRows,
  type Deal,
  type MarketId,
} from '../../src/engine/index.js';
import { ActorError, defineActor, type TurnContext } from '../runtime/actor.js';
import { safeError, type SafeError } from '../runtime/log.js';
import { Laps } from '../runtime/laps.js';
import { instantSql, intArrayParam, jsonParam } from '../runtime/sql.js';
import {
  advanceTrade,
  houseTrade,
  menuRecords,
  tapeRows,
  type Fill,
  type Sale,
  type TradeRecord,
} from './rows.js';
import { insertHouseTrades, insertMenu, insertTape, openTrades, updateTrades } from './store.js';
import { exclusiveSessionLock } from './session-lock.js';
import { SESSIONS_CHANNEL } from '../events/messages.js';
import {
  appendCloseEvents,
  bookHolderSessions,
  expireUnpaidOrders,
  fillPaidOrders,
  type Quarantined,
} from './holder-orders.js';
import type {
  BackfillReply,
  CloseReply,
  MarketMessage,
  MarketReplies,
  StartReply,
  StatusReply,
} from './messages.js';

export type MarketState = { market: MarketId; openTick: number | null };

const lock = (em: EntityManager, market: string) =>
  em.execute('select pg_advisory_xact_lock(hashtext(?))', [`record:${market}`]);

async function openSession(em: EntityManager, market: string): Promise<number | null> {
  const rows = await em.execute(
    'select max(tick)::float8 as tick from market_session where market = ? and closed_at is null',
    [market],
  );
  return rows[0]?.tick ?? null;
}

/**
 * Why a close or backfill failed, for the supervisor's error log (the worker passes only an
 * ActorError's detail on): what the shared serializer keeps (a database error's statement kind,
 * SQLSTATE and masked server message, never its SQL or values), and where a plain error was thrown.
 */
export function failureCause(err: unknown): string {
  const e = safeError(err) as Partial<SafeError> | string;
  if (typeof e !== 'object' || e === null) return String(e);
  const what = [e.type ?? 'Error', e.code, e.statement && `in ${e.statement}`]
    .filter(Boolean)
    .join(' ');
  const at = e.statement
    ? undefined
    : String(e.stack ?? '')
        .split('\n')
        .find((l) => /^\s+at /.test(l))
        ?.trim();
  return `${what}: ${String(e.message ?? '')
    .split('\n')[0]
    .slice(0, 300)}${at ? ` (${at})` : ''}`;
}

/** Runs a close or backfill; a failure other than a refusal comes back with its cause named. */
async function naming<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ActorError) throw err;
    throw new ActorError(500, failureCause(err));
  }
}

function marketOf(ctx: TurnContext): MarketId {
  if (!(ctx.id in MARKETS)) throw new ActorError(404, `unknown market ${ctx.id}`);
  return ctx.id as MarketId;
}

export const marketActor = defineActor<MarketState, MarketMessage, MarketReplies>({
  kind: 'market',

  async activate(ctx) {
    return { market: marketOf(ctx), openTick: await openSession(ctx.em, ctx.id) };
  },

  handlers: {
    async start(state, msg, ctx): Promise<StartReply> {
      const { market } = state;
      const sessionsPerDay = 86_400 / MARKETS[market].interval_seconds;
      await ctx.em.transactional(async (em) => {
        await lock(em, market);
        let open = await openSession(em, market);
        if (open === null) {
          await openNext(em, market, msg.tick, ctx.at);
          await insertMenu(em, menuRecords(market, menu(ctx.seed, market, msg.tick)));
          open = msg.tick;
        }
        const total = Math.floor(msg.backfillDays * sessionsPerDay);
        await em.execute(
          `insert into history_load (market, live_start, from_tick, sessions_total, engine, finished_at, started_at)
           values (?, ?, ?, ?, ?::jsonb, case when ? = 0 then ${instantSql()} end, ${instantSql()})
           on conflict (market) do nothing`,
          [
            market,
            open,
            open - total,
            total,
            jsonParam(engineIdentity(ctx.seed)),
            total,
            ctx.at,
            ctx.at,
          ],
        );
        state.openTick = open;
      });
      const rec = await ctx.em.execute(
        'select live_start::float8 as live_start, from_tick::float8 as from_tick from history_load where market = ?',
        [market],
      );
      return { open: state.openTick!, liveStart: rec[0].live_start, fromTick: rec[0].from_tick };
    },

    close: (state, msg, ctx) => naming(() => closeSession(state, msg, ctx)),

    async backfill(state, msg, ctx): Promise<BackfillReply> {
      const t0 = Date.now();
      const recorded = await naming(() =>
        ctx.em.transactional(async (em) => {
          await lock(em, state.market);
          return recordPast(em, ctx.seed, state.market, msg.from, msg.to, ctx.at);
        }),
      );
      return { recorded, ms: Date.now() - t0 };
    },

    async status(state, _msg, ctx): Promise<StatusReply> {
      // Read afresh: another process may have closed since this actor last looked.
      state.openTick = await openSession(ctx.em, state.market);
      const rec = await ctx.em.execute(
        'select finished_at is not null as done from history_load where market = ?',
        [state.market],
      );
      return { open: state.openTick, historyLoaded: rec[0]?.done === true };
    },
  },
});

/** Opens session `tick` of `market` at `at` (once: a replay is a no-op). */
async function openNext(
  em: EntityManager,
  market: string,
  tick: number,
  at: number,
): Promise<void> {
  await em.execute(
    `insert into market_session (market, tick, opened_at) values (?, ?, ${instantSql()}) on conflict do nothing`,
    [market, tick, at],
  );
}

/** PostgreSQL's sort and hash memory for a close's transaction. */
const CLOSE_WORK_MEM = '64MB';

/** Closes session `msg.tick` and opens the next one, once (the exactly-once gate is closed_at). */
async function closeSession(
  state: MarketState,
  msg: { tick: number; next?: number },
  ctx: TurnContext,
): Promise<CloseReply> {
  const t0 = Date.now();
  const { market } = state;
  let quarantined: Quarantined[] = [];
  const laps = new Laps();
  const closed = await ctx.em.transactional(async (em) => {
    await lock(em, market);
    // Payments into this session finish first; later ones will find it closed.
    await exclusiveSessionLock(em, market);
    // The close sorts and hashes whole sessions' rows (a large close's events outgrow the default
    // 4 MB): in memory, not spilled to disk. For this transaction only.
    await em.execute(`set local work_mem = '${CLOSE_WORK_MEM}'`);
    laps.mark('locks');
    // The exactly-once gate: only the turn that flips closed_at does the close's work.
    const done = await em.execute(
      `update market_session set closed_at = ${instantSql()}, recorded = true
        where market = ? and tick = ? and closed_at is null returning tick`,
      [ctx.at, market, msg.tick],
    );
    if (done.length !== 1) return false;
    quarantined = await recordLiveClose(em, ctx.seed, ctx.baseUrl, market, msg.tick, laps, ctx.at);
    const next = Math.max(msg.tick + 1, msg.next ?? msg.tick + 1);
    await openNext(em, market, next, ctx.at);
    await insertMenu(em, menuRecords(market, menu(ctx.seed, market, next)));
    laps.mark('next_menu');
    await em.execute('update market_session set close_ms = ? where market = ? and tick = ?', [
      Date.now() - t0,
      market,
      msg.tick,
    ]);
    // The public market streams hear of it at commit (CONTRACT.md "Events": session.closed).
    await em.execute('select pg_notify(?, ?)', [SESSIONS_CHANNEL, `${market}/${msg.tick}`]);
    return true;
  });
  laps.mark('commit');
  state.openTick = await openSession(ctx.em, market);
  if (state.openTick === null)
    throw new ActorError(500, `market ${market} has no open session after close`);
  return { closed, open: state.openTick, ms: Date.now() - t0, quarantined, steps: laps.ms };
}

/**
 * The close of session `tick`: open trades advance one session (and settle after the horizon) and
 * holders' positions are booked, the house executes its bids, paid orders fill as `user` trades
 * (or are refunded when they cannot: returned), unpaid ones expire, and the session's tape rows are
 * written.
 */
async function recordLiveClose(
  em: EntityManager,
  seed: number,
  baseUrl: string,
  market: MarketId,
  tick: number,
  laps: Laps,
  at: number,
): Promise<Quarantined[]> {
  const deals = menu(seed, market, tick);
  await insertMenu(em, menuRecords(market, deals));
  laps.mark('menu');
  const open = await openTrades(em, market, tick);
  laps.mark('open_trades_read');
  // Many trades share a menu row (every open position of a deal): its outcome inputs are drawn once per close.
  const inputs = outcomeInputsMemo(seed, market);
  const advanced = open.map((t) => ({ id: t.id, ...advanceTrade(t, t, inputs(t.tick, t.idx)) }));
  laps.mark('advance');
  await updateTrades(em, advanced, at);
  laps.mark('trades_update');
  const booked = await bookHolderSessions(em, market, tick, open, advanced, laps, at);
  const house = deals.flatMap((d, idx) =>
    d.house_accepted ? [houseTrade(seed, market, d, idx, inputs(tick, idx), 0)] : [],
  );
  await insertHouseTrades(em, house, at);
  laps.mark('house_trades');
  const holders = await fillPaidOrders(em, seed, market, tick, deals, inputs, laps, at);
  const expired = await expireUnpaidOrders(em, market, tick);
  laps.mark('expire');
  const sales: Sale[] = open.map((t, i) => ({
    cluster: t.cluster,
    sold: advanced[i].units_sold - t.units_sold,
    revenue_cents: advanced[i].revenue_cents - t.revenue_cents,
    held_after: advanced[i].qty_left,
    list_price_cents: t.list_price_cents,
  }));
  await insertTape(
    em,
    market,
    tapeOf(seed, market, tick, deals, fillsOf([...house, ...holders.trades], deals), sales),
  );
  laps.mark('tape');
  await appendCloseEvents(
    em,
    baseUrl,
    { booked, filled: holders.filled, refunded: holders.quarantined, expired },
    at,
  );
  laps.mark('events');
  return holders.quarantined;
}

/** The session's executions, each at the listed_at of the menu row it executed. */
function fillsOf(trades: TradeRecord[], deals: Deal[]): Fill[] {
  return trades.map((t) => ({
    cluster: t.cluster,
    qty: t.qty,
    unit_cost_cents: t.unit_cost_cents,
    listed_at: deals[t.idx].listed_at,
    actor: t.actor,
  }));
}

function tapeOf(
  seed: number,
  market: MarketId,
  tick: number,
  deals: Deal[],
  fills: Fill[],
  sales: Sale[],
) {
  return [...tapeRows(seed, market, tick, deals, fills, sales)].map(([cluster, row]) => ({
    tick,
    cluster,
    row,
  }));
}

/**
 * Records past sessions from..to (ascending) that are not recorded yet, with the house's trades
 * revealed as far as the market's open session allows. Sales of the 8 sessions before `from` are
 * computed too, so every session's tape sees the positions it carried.
 */
async function recordPast(
  em: EntityManager,
  seed: number,
  market: MarketId,
  from: number,
  to: number,
  at: number,
): Promise<number> {
  const open = await openSession(em, market);
  if (open === null) throw new ActorError(409, `market ${market} has not started`);
  const last = Math.min(to, open - 1);
  if (last < from) return 0;
  const done = new Set(
    (
      await em.execute(
        'select tick::float8 as tick from market_session where market = ? and tick between ? and ? and recorded',
        [market, from, last],
      )
    ).map((r) => r.tick as number),
  );
  const past = pastRecord(seed, market, { from, last, open }, done);
  if (!past.ticks.length) return 0;
  await writePast(em, market, past, at);
  return past.ticks.length;
}

/** A past session's menu rows and its house trades fully played out. */
type PlayedSession = { rows: ReturnType<typeof sessionRows>; trades: TradeRecord[]; deals: Deal[] };

/** Each session's house trades fully played out (for the tape's sales), computed once. */
function playedSessions(
  seed: number,
  market: MarketId,
  horizon: number,
): (tick: number) => PlayedSession {
  const played = new Map<number, PlayedSession>();
  return (tick) => {
    let s = played.get(tick);
    if (!s) {
      const rows = sessionRows(seed, market, tick);
      const trades = rows.flatMap((r, idx) =>
        r.deal.house_accepted ? [houseTrade(seed, market, r.deal, idx, r.inputs, horizon)] : [],
      );
      played.set(tick, (s = { rows, trades, deals: rows.map((r) => r.deal) }));
    }
    return s;
  };
}

/** What a backfill writes: the sessions' menus, house trades and tape rows, and the sessions recorded. */
type PastRecord = {
  menus: Parameters<typeof insertMenu>[1];
  trades: TradeRecord[];
  tape: Parameters<typeof insertTape>[2];
  ticks: number[];
};

/** The record of the sessions from..last not in `done`, as of the open session `open`. */
function pastRecord(
  seed: number,
  market: MarketId,
  range: { from: number; last: number; open: number },
  done: Set<number>,
): PastRecord {
  const horizon = MARKETS[market].settlement_horizon_ticks;
  const session = playedSessions(seed, market, horizon);
  const out: PastRecord = { menus: [], trades: [], tape: [], ticks: [] };
  for (let tick = range.from; tick <= range.last; tick++) {
    if (done.has(tick)) continue;
    const { rows, deals, trades: full } = session(tick);
    const revealed = Math.min(horizon, range.open - 1 - tick);
    out.menus.push(...menuRecords(market, deals));
    out.trades.push(
      ...rows.flatMap((r, idx) =>
        r.deal.house_accepted ? [houseTrade(seed, market, r.deal, idx, r.inputs, revealed)] : [],
      ),
    );
    const sales = pastSales(session, tick, horizon);
    out.tape.push(...tapeOf(seed, market, tick, deals, fillsOf(full, deals), sales));
    out.ticks.push(tick);
  }
  return out;
}

/** What session `tick` sold of the house trades of the `horizon` sessions before it. */
function pastSales(
  session: (tick: number) => PlayedSession,
  tick: number,
  horizon: number,
): Sale[] {
  const sales: Sale[] = [];
  for (let k = 1; k <= horizon; k++) {
    for (const t of session(tick - k).trades) {
      const sold = t.sales_by_tick[k - 1];
      const soldBefore = t.sales_by_tick.slice(0, k).reduce((a, b) => a + b, 0);
      sales.push({
        cluster: t.cluster,
        sold,
        revenue_cents: sold * t.list_price_cents,
        held_after: t.qty - soldBefore,
        list_price_cents: t.list_price_cents,
      });
    }
  }
  return sales;
}

/** Writes a backfill's record, then its sessions as recorded and the history load's progress. */
async function writePast(
  em: EntityManager,
  market: MarketId,
  past: PastRecord,
  at: number,
): Promise<void> {
  await insertMenu(em, past.menus);
  await insertHouseTrades(em, past.trades, at);
  await insertTape(em, market, past.tape);
  // Recorded now (`at`): opened and closed are when the record took them, not the sessions' own times.
  await em.execute(
    `insert into market_session (market, tick, opened_at, closed_at, source, recorded)
     select ?, t, ${instantSql()}, ${instantSql()}, 'backfill', true from unnest(?::bigint[]) as t on conflict do nothing`,
    [market, at, at, intArrayParam(past.ticks)],
  );
  await em.execute(
    `update history_load set sessions_loaded = sessions_loaded + ?,
        finished_at = case when sessions_loaded + ? >= sessions_total then ${instantSql()} end where market = ?`,
    [past.ticks.length, past.ticks.length, at, market],
  );
}
