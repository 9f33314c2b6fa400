// The public market stream's one event (CONTRACT.md "Events": `session.closed` with the closed
// tick, the session now open and when it closes), built from the record's market_session rows and
// the injected clock: for a NOTIFY of a close, and for a resuming client's replay.
import { MARKETS, type MarketId } from '../engine/index.js';
import { read, type ActorRuntime } from '../../actors/runtime/client.js';
import type { Clock } from '../supervisor/clock.js';
import type { SessionEvent } from './hub.js';

/** Closed sessions a resuming market stream replays at most (older ones: reconnect later from the current tick). */
export const MARKET_REPLAY_LIMIT = 100;

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The market's sessions closed after `afterTick`, oldest first, as `session.closed` events. */
export async function sessionsClosedAfter(
  runtime: ActorRuntime,
  clock: Clock,
  market: MarketId,
  afterTick: number,
  limit = MARKET_REPLAY_LIMIT,
): Promise<SessionEvent[]> {
  const rows = await read(runtime, 'events.sessionsClosed', { market, afterTick, limit });
  const interval = MARKETS[market].interval_seconds;
  return rows.map((r) => {
    const next = r.next_tick ?? r.tick + 1;
    return {
      market,
      tick: r.tick,
      next_tick: next,
      tick_closes_at: round3(clock.closesAt(next, interval)),
    };
  });
}

/** The `session.closed` event of `tick`, or null when that session is not closed. */
export async function sessionClosedEvent(
  runtime: ActorRuntime,
  clock: Clock,
  market: string,
  tick: number,
): Promise<SessionEvent | null> {
  if (!(market in MARKETS)) return null;
  const [e] = await sessionsClosedAfter(runtime, clock, market as MarketId, tick - 1, 1);
  return e?.tick === tick ? e : null;
}
