// The real service with a clock the test drives: real time stands still until the test moves it,
// so a session closes exactly when the test says (at runDue), whatever the machine's speed.
//
// The supervisor's own timers stay armed: each is set from the injected clock's distance to the
// next close, in real milliseconds. With the clock frozen a timer that fires finds nothing due and
// re-arms; one firing beside runDue asks for the same close, which the market actor performs once
// per (market, tick). So the timers never decide when a session closes here.
import { MARKETS, type MarketId } from '../../src/engine/index.js';
import type { StartOptions } from '../../src/service.js';
import { startTestService, type TestService } from './service.js';

type T = Parameters<typeof startTestService>[0];

export type ClockedService = {
  svc: TestService;
  /** The injected real time, unix milliseconds. */
  now: () => number;
  /** Moves real time to `ms` (never backwards); closes nothing by itself (see runDue). */
  advanceTo: (ms: number) => void;
  /** Moves real time forward by `ms`. */
  advanceBy: (ms: number) => void;
  /** When the open session of `market` closes, in real unix milliseconds (by the clock, not the record). */
  closesAtMs: (market: MarketId) => number;
  /** Performs every close whose time has passed, payouts and competitions (what the timers do). */
  runDue: () => Promise<void>;
  /**
   * Moves the clock just past the close of `market`'s open session and performs every close due
   * (other markets' too when their time came); returns the new open session of `market`.
   */
  closeSession: (market: MarketId) => Promise<number>;
};

/**
 * Where a clocked service starts unless told: a fixed instant, 50 ms into a session of m15, m45 and
 * h2 (h10's session started 4 hours before), whatever the day the test runs:
 * menus are functions of the tick, fees of the month and limits of the UTC day, so a run's data do
 * not depend on its date (ARCHITECTURE rule 7). 2026-11-26 12:00:00.050 UTC.
 */
export const CLOCKED_START_MS = Date.UTC(2026, 10, 26, 12) + 50;

/**
 * Starts the service (startTestService's config and env) on a clock that moves only when told,
 * from `startMs` (CLOCKED_START_MS by default: the first start anchors service time at it, so at
 * any SVC_TIME_SCALE every m15 session, the first included, lasts its whole interval: the m15
 * timer, armed that far ahead in real time, does not fire during a test at scale 1).
 */
export async function startClockedService(
  t: T,
  env: Record<string, string> = {},
  opts: StartOptions & { startMs?: number } = {},
): Promise<ClockedService> {
  const { startMs, ...start } = opts;
  return withClock((realMs) => startTestService(t, env, { ...start, realMs }), startMs);
}

/** The same for a service another helper starts (startWebService): `start` gets the injected real-time source. */
export async function withClock(
  start: (realMs: () => number) => Promise<TestService>,
  startMs?: number,
): Promise<ClockedService> {
  let nowMs = startMs ?? CLOCKED_START_MS;
  const svc = await start(() => nowMs);
  const s = svc.services;
  const advanceTo = (ms: number) => {
    if (ms < nowMs) throw new Error(`the clock does not run backwards (${ms} < ${nowMs})`);
    nowMs = ms;
  };
  const closesAtMs = (market: MarketId) =>
    s.clock.closesAt(s.supervisor.openTick(market)!, MARKETS[market].interval_seconds) * 1000;
  const runDue = () => s.supervisor.runDue();
  return {
    svc,
    now: () => nowMs,
    advanceTo,
    advanceBy: (ms) => advanceTo(nowMs + ms),
    closesAtMs,
    runDue,
    closeSession: async (market) => {
      const open = s.supervisor.openTick(market)!;
      advanceTo(Math.max(nowMs, closesAtMs(market) + 50));
      await runDue();
      const next = s.supervisor.openTick(market)!;
      if (next !== open + 1)
        throw new Error(`closing ${market} ${open} opened ${next}, not ${open + 1}`);
      return next;
    },
  };
}
