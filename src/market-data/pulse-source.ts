// Ticker and pulse (SPEC.md "Ticker", "Pulse"): both change only when a market closes a session, so
// their record part is computed once per set of open sessions (single flight) and kept until the
// next close of any market; the ticker's clock is added per request. The pulse also keeps the
// per-day figures of final days (days whose every close has happened), so a recompute after a close
// scans only the trades of recent days. While a market's history is still loading nothing is kept
// (the backfill changes the record between closes).
import {
  MARKETS,
  MARKET_IDS,
  centsToNumber,
  numberToCents,
  type MarketId,
} from '../engine/index.js';
import type { Services } from '../http/services.js';
import type { MenuSnapshots } from './snapshots.js';
import { marketStatus } from './live-session.js';
import { builtAnswer, recordPosition } from './record-query.js';
import type { CachedAnswer } from './record-fragments.js';
import type { FinalDays, PulseArgs, PulseReply, TickerArgs } from '../../actors/record/messages.js';

type Pulse = PulseReply['answer'];

type TapeRow = { market: MarketId; tick: number; row: Record<string, number | null> };

export const PRICE_BASIS =
  "price_close of the last closed session's whole-market tape row: the resale price (list_price) of its last listing in listed_at order";

/** Keeps one value per key; concurrent callers of the same key share one computation. */
class CloseCache<T> {
  private entry: { key: string; value: Promise<T> } | undefined;
  get(key: string, keep: boolean, compute: () => Promise<T>): Promise<T> {
    if (this.entry?.key === key) return this.entry.value;
    const value = compute();
    if (keep) {
      this.entry = { key, value };
      value.catch(() => {
        if (this.entry?.value === value) this.entry = undefined;
      });
    }
    return value;
  }
}

export type PulseSource = {
  /** The record part of the ticker: the last two whole-market tape rows of each market. */
  tickerRows: () => Promise<TapeRow[]>;
  /** The pulse answer, kept until the next close of any market. */
  pulse: () => Promise<Pulse>;
  /** The same as the API serves it: its bytes and ETag, made once with it (a request only sends them). */
  pulseAnswer: () => Promise<CachedAnswer>;
};

/** Where /api/v1/pulse is served (its ETag names it). */
export const PULSE_PATH = '/api/v1/pulse';

const sources = new WeakMap<Services, PulseSource>();

/** One pulse and ticker cache per Services: the API routes and the site's pages share it. */
export function pulseSource(s: Services): PulseSource {
  let src = sources.get(s);
  if (src) return src;
  const opens = () =>
    Object.fromEntries(MARKET_IDS.map((m) => [m, recordPosition(s, m).open])) as Record<
      MarketId,
      number
    >;
  const keyOf = (open: Record<MarketId, number>) => MARKET_IDS.map((m) => open[m]).join(',');
  const tickerCache = new CloseCache<TapeRow[]>();
  const pulseCache = new CloseCache<{ pulse: Pulse; answer: CachedAnswer }>();
  let finalDays: FinalDays | null = null;
  src = {
    tickerRows: () => {
      const open = opens();
      const args: TickerArgs = { markets: MARKET_IDS.map((m) => ({ market: m, hi: open[m] - 1 })) };
      return tickerCache.get(keyOf(open), true, () =>
        s.runtime.read<TapeRow[]>('projection.ticker', args),
      );
    },
    pulse: async () => (await pulseKept()).pulse,
    pulseAnswer: async () => (await pulseKept()).answer,
  };
  /** The pulse with its answer, kept per set of open sessions (only once every history is loaded). */
  function pulseKept() {
    const open = opens();
    const loaded = MARKET_IDS.every((m) => s.supervisor.historyLoaded(m));
    return pulseCache.get(keyOf(open), loaded, async () => {
      // Final days (every close of theirs done) are kept, so a recompute scans only recent trades.
      const args: PulseArgs = { open, final: loaded ? finalDays : null, keep: loaded };
      const reply = await s.runtime.read<PulseReply>('projection.pulse', args);
      if (reply.final) finalDays = reply.final;
      // The record counts in service seconds; every instant served is real unix seconds (CONTRACT.md
      // "Strict requests"), while the days stay days of the service clock.
      const real = (service: number) => Math.round(s.clock.toReal(service) * 1000) / 1000;
      const pulse = {
        ...reply.answer,
        as_of: real(reply.answer.as_of),
        recent: reply.answer.recent.map((r) => ({ ...r, settled_at: real(r.settled_at) })),
      };
      return {
        pulse,
        answer: builtAnswer(s, PULSE_PATH, 'm15', open.m15, { json: pulse, settledOnly: false }),
      };
    });
  }
  sources.set(s, src);
  return src;
}

/** The ticker of every market: the record's last closes with the clock of now. */
export async function tickerNow(s: Services, snapshots: MenuSnapshots) {
  const rows = await pulseSource(s).tickerRows();
  return MARKET_IDS.map((m) =>
    tickerOf(
      m,
      rows.filter((r) => r.market === m),
      marketStatus(m, s.clock, snapshots.get(m)),
    ),
  );
}

function tickerOf(market: MarketId, rows: TapeRow[], status: ReturnType<typeof marketStatus>) {
  const [last, prev] = [...rows].sort((a, b) => b.tick - a.tick);
  const price = (r: TapeRow | undefined) => (r?.row.price_close ?? null) as number | null;
  const [p, q] = [price(last), price(prev)];
  const change = p !== null && q !== null ? numberToCents(p) - numberToCents(q) : null;
  return {
    market,
    label: MARKETS[market].label,
    tick: last?.tick ?? null,
    last: p,
    price_basis: PRICE_BASIS,
    prev_close: q,
    change: change === null ? null : centsToNumber(change),
    change_pct:
      change === null || !q ? null : Math.round((10_000 * change) / numberToCents(q)) / 100,
    cost: (last?.row.vwap ?? null) as number | null,
    units: (last?.row.units ?? null) as number | null,
    executions: (last?.row.exec_n ?? null) as number | null,
    notional: (last?.row.notional ?? null) as number | null,
    demand_index: MARKETS[market].quotes_velocity
      ? ((last?.row.demand_index ?? null) as number | null)
      : null,
    clock: {
      current_tick: status.current_tick,
      tick_closes_at: status.tick_closes_at,
      seconds_to_close: status.seconds_to_close,
    },
  };
}
