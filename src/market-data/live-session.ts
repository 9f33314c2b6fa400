// The live session of each market as the front end serves it, from the injected clock and the
// in-memory menu snapshots (no worker hop, ARCHITECTURE rule 5): its status and length, the current
// menus, and the wait until the record has opened the session.
import { MARKETS, centsToNumber as cents, type MarketId } from '../engine/index.js';
import { HttpError } from '../http/route.js';
import { MenuSnapshots, type MenuSnapshot } from './snapshots.js';
import type { Clock } from '../supervisor/clock.js';
import type { Services } from '../http/services.js';

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** A session's real length (SVC_TIME_SCALE divides every interval), in the largest fitting unit. */
export function sessionLength(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60) return `${Math.round((seconds / 60) * 10) / 10} min`;
  return `${Math.round(seconds * 10) / 10} s`;
}

export function marketStatus(id: MarketId, clock: Clock, snap: MenuSnapshot) {
  const m = MARKETS[id];
  const tick = clock.tick(m.interval_seconds);
  const closesAt = clock.closesAt(tick, m.interval_seconds);
  return {
    id: m.id,
    label: m.label,
    interval_seconds: m.interval_seconds,
    current_tick: tick,
    tick_closes_at: round3(closesAt),
    seconds_to_close: round3(Math.max(0, closesAt - clock.realNow())),
    settlement_horizon_ticks: m.settlement_horizon_ticks,
    fees: {
      currency: 'USD',
      fulfilment_per_unit: cents(m.fees.fulfilment_per_unit_cents),
      holding_per_unit_session: cents(m.fees.holding_per_unit_session_cents),
    },
    quote: snap.quote,
    menu_size: snap.menuSize,
    max_qty: m.max_qty,
    pricing: { model: m.pricing_model },
    quotes_velocity: m.quotes_velocity,
  };
}

/**
 * The status as JSON text. Only the three clock fields change per request; the rest (the quote's
 * decimals above all) is serialised once per snapshot, not four quotes again on every /markets
 * request. The text is derived from marketStatus, so both stay one definition.
 */
export function statusWriter(clock: Clock) {
  const parts = new Map<MarketId, { snap: MenuSnapshot; head: string; tail: string }>();
  return (id: MarketId, snap: MenuSnapshot): string => {
    let p = parts.get(id);
    if (p?.snap !== snap) {
      const st = marketStatus(id, clock, snap);
      const {
        id: _i,
        label: _l,
        interval_seconds: _n,
        current_tick: _t,
        tick_closes_at: _c,
        seconds_to_close: _s,
        ...rest
      } = st;
      const head = JSON.stringify({
        id: st.id,
        label: st.label,
        interval_seconds: st.interval_seconds,
        current_tick: 0,
      }).slice(0, -2); // without `0}`
      parts.set(id, (p = { snap, head, tail: `,${JSON.stringify(rest).slice(1)}` }));
    }
    const m = MARKETS[id];
    const tick = clock.tick(m.interval_seconds);
    const closesAt = clock.closesAt(tick, m.interval_seconds);
    const toClose = round3(Math.max(0, closesAt - clock.realNow()));
    return `${p.head}${tick},"tick_closes_at":${round3(closesAt)},"seconds_to_close":${toClose}${p.tail}`;
  };
}

const shared = new WeakMap<Services, MenuSnapshots>();

/**
 * The snapshots of the session the clock is in (ARCHITECTURE rule 5: a menu is a pure function of
 * seed, market and tick, so it flips at the boundary whatever the record's close is doing). One
 * instance per Services, so every route family reads the same menus, built once per session.
 */
export function menuSnapshots(s: Services): MenuSnapshots {
  let snaps = shared.get(s);
  if (!snaps) {
    snaps = new MenuSnapshots(
      s.config.seed,
      (m) => s.clock.tick(MARKETS[m].interval_seconds),
      (m, tick) => s.clock.closesAt(tick, MARKETS[m].interval_seconds),
    );
    shared.set(s, snaps);
  }
  return snaps;
}

/**
 * Waits until the record has opened the snapshot's session: the menu flips at the boundary, the
 * record a moment later, when the previous session's close ran. 503 if that takes too long.
 */
export async function recordOpen(
  s: Services,
  snap: { market: string; tick: number },
): Promise<void> {
  if (await s.supervisor.recordOpened(snap.market, snap.tick, s.config.askTimeoutMs)) return;
  throw new HttpError(
    503,
    `session ${snap.tick} of ${snap.market} is not open in the record yet (the close of the session before it is still running); nothing was placed: retry with the same Idempotency-Key`,
    { 'retry-after': '1' },
  );
}
