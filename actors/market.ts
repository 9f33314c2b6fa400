// MarketActor ("market:m15"): owns a market's sessions. Opening the first session and closing a
// session are its turns; a close is keyed by (market, tick) and happens exactly once, across
// restarts and across processes sharing the database (ARCHITECTURE rule 3).
import { ActorError, defineActor, type TurnContext } from './runtime/actor.js';

export type MarketMessage =
  /** Opens session `tick` if the market has no open session yet; answers the open session. */
  | { kind: 'start'; tick: number }
  /**
   * Closes session `tick` and opens the next one, once. `next` (default tick + 1) lets a catch-up
   * after long downtime skip sessions beyond its bound; skipped sessions never existed.
   */
  | { kind: 'close'; tick: number; next?: number };

export type MarketState = { market: string; openTick: number | null };

export type StartReply = { open: number };
export type CloseReply = { closed: boolean; open: number; ms: number };

async function openSession(ctx: TurnContext): Promise<number | null> {
  const rows = await ctx.em.execute(
    'select max(tick)::float8 as tick from market_session where market = ? and closed_at is null',
    [ctx.id],
  );
  return rows[0]?.tick ?? null;
}

export const marketActor = defineActor<MarketState, MarketMessage>({
  kind: 'market',

  async activate(ctx) {
    return { market: ctx.id, openTick: await openSession(ctx) };
  },

  handlers: {
    async start(state, msg, ctx): Promise<StartReply> {
      state.openTick = await openSession(ctx);
      if (state.openTick === null) {
        await ctx.em.execute(
          'insert into market_session (market, tick) values (?, ?) on conflict do nothing',
          [ctx.id, msg.tick],
        );
        state.openTick = await openSession(ctx);
      }
      if (state.openTick === null) throw new ActorError(500, `market ${ctx.id} has no open session`);
      return { open: state.openTick };
    },

    async close(state, msg, ctx): Promise<CloseReply> {
      const t0 = Date.now();
      const closed = await ctx.em.transactional(async (em) => {
        // Serialises closes of this market across processes; the conditional update below is
        // what makes a repeated close a no-op.
        await em.execute('select pg_advisory_xact_lock(hashtext(?))', [`close:${ctx.id}`]);
        const done = await em.execute(
          `update market_session set closed_at = now(), close_ms = ?
            where market = ? and tick = ? and closed_at is null returning tick`,
          [0, ctx.id, msg.tick],
        );
        if (done.length !== 1) return false;
        const next = Math.max(msg.tick + 1, msg.next ?? msg.tick + 1);
        await em.execute('insert into market_session (market, tick) values (?, ?) on conflict do nothing', [ctx.id, next]);
        await em.execute('update market_session set close_ms = ? where market = ? and tick = ?', [
          Date.now() - t0,
          ctx.id,
          msg.tick,
        ]);
        return true;
      });
      state.openTick = await openSession(ctx);
      if (state.openTick === null) throw new ActorError(500, `market ${ctx.id} has no open session after close`);
      return { closed, open: state.openTick, ms: Date.now() - t0 };
    },
  },
});
