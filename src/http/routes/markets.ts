// The four markets, their live session clock and the current menu. Everything here is served from
// the injected clock and the in-memory menu snapshots: no worker hop (ARCHITECTURE rule 5).
import Type, { type Static } from 'typebox';
import { MARKETS, MARKET_IDS, centsToNumber as cents, isMarketId, type MarketId } from '../../engine/index.js';
import { HttpError, json, route, type Route } from '../route.js';
import { Deal, DealsPage as DealsAnswer, MarketIdParam, MarketList, MarketStatus } from '../../schemas/index.js';
import { dealNotOnMenu } from '../../rules.js';
import { DEFAULT_LIMIT, MenuSnapshots, etagMatches, type DealsPage, type MenuSnapshot } from '../snapshots.js';
import type { Clock } from '../../supervisor/clock.js';
import type { Services } from '../services.js';

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const JSON_TYPE = 'application/json';

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
 * decimals above all) is serialised once per snapshot: stringifying four quotes per /markets
 * request cost ~4.6 µs. The text is derived from marketStatus, so both stay one definition.
 */
function statusWriter(clock: Clock) {
  const parts = new Map<MarketId, { snap: MenuSnapshot; head: string; tail: string }>();
  return (id: MarketId, snap: MenuSnapshot): string => {
    let p = parts.get(id);
    if (p?.snap !== snap) {
      const st = marketStatus(id, clock, snap);
      const { id: _i, label: _l, interval_seconds: _n, current_tick: _t, tick_closes_at: _c, seconds_to_close: _s, ...rest } = st;
      const head = JSON.stringify({ id: st.id, label: st.label, interval_seconds: st.interval_seconds, current_tick: 0 }).slice(0, -2); // without `0}`
      parts.set(id, (p = { snap, head, tail: `,${JSON.stringify(rest).slice(1)}` }));
    }
    const m = MARKETS[id];
    const tick = clock.tick(m.interval_seconds);
    const closesAt = clock.closesAt(tick, m.interval_seconds);
    const toClose = round3(Math.max(0, closesAt - clock.realNow()));
    return `${p.head}${tick},"tick_closes_at":${round3(closesAt)},"seconds_to_close":${toClose}${p.tail}`;
  };
}

export const MarketParams = Type.Object({ market_id: MarketIdParam });
const DealParams = Type.Object({ market_id: MarketParams.properties.market_id, offer_key: Type.String({ description: 'a key of the current menu' }) });

const DealsQuery = Type.Object({
  family: Type.Optional(Type.String({ description: 'only deals of this sku_family' })),
  house_only: Type.Boolean({ default: false, description: 'only deals the house bids on' }),
  limit: Type.Integer({ minimum: 1, maximum: 5000, default: DEFAULT_LIMIT }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
type DealsQuery = Static<typeof DealsQuery>;

export function marketOr404(id: string): MarketId {
  if (!isMarketId(id)) throw new HttpError(404, `unknown market ${JSON.stringify(id)}; markets are ${MARKET_IDS.join(', ')}`);
  return id;
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
export async function recordOpen(s: Services, snap: { market: string; tick: number }): Promise<void> {
  if (await s.supervisor.recordOpened(snap.market, snap.tick, s.config.askTimeoutMs)) return;
  throw new HttpError(
    503,
    `session ${snap.tick} of ${snap.market} is not open in the record yet (the close of the session before it is still running); nothing was placed: retry with the same Idempotency-Key`,
    { 'retry-after': '1' },
  );
}

function page(snap: MenuSnapshot, q: DealsQuery): DealsPage {
  let rows = q.family === undefined ? snap.deals : (snap.byFamily.get(q.family) ?? []);
  if (q.house_only) rows = rows.filter((d) => d.house_accepted);
  const deals = rows.slice(q.offset, q.offset + q.limit);
  return { market: snap.market, tick: snap.tick, closes_at: snap.closesAt, total: rows.length, limit: q.limit, offset: q.offset, deals };
}

export function marketRoutes(s: Services, snapshots: MenuSnapshots = menuSnapshots(s)): Route[] {
  const writeStatus = statusWriter(s.clock);
  const status = (id: MarketId) => writeStatus(id, snapshots.get(id));
  const notFound = { description: 'unknown market' };

  return [
    route({
      method: 'GET', path: '/api/v1/markets', auth: 'none', summary: 'All markets with their current session and close time',
      response: { 200: MarketList },
      handler: () => ({ body: `{"markets":[${MARKET_IDS.map(status).join(',')}],"time_scale":${JSON.stringify(s.config.timeScale)}}`, contentType: JSON_TYPE }),
    }),
    route({
      method: 'GET', path: '/api/v1/markets/{market_id}', auth: 'none', summary: 'One market',
      params: MarketParams,
      response: { 200: MarketStatus },
      responses: { 404: notFound },
      handler: ({ params }) => ({ body: status(marketOr404(params.market_id)), contentType: JSON_TYPE }),
    }),
    route<{ market_id: string }, DealsQuery>({
      method: 'GET', path: '/api/v1/markets/{market_id}/deals', auth: 'none', summary: 'The current menu: deals of the open session',
      params: MarketParams,
      query: DealsQuery,
      response: { 200: DealsAnswer },
      responses: {
        304: { description: 'If-None-Match matched: the menu has not changed' },
        404: notFound,
      },
      handler: ({ params, query: q, req }) => {
        const snap = snapshots.get(marketOr404(params.market_id));
        if (etagMatches(req.headers['if-none-match'], snap.etag)) return { status: 304, headers: snap.headers };
        // The default query (what agents poll) answers the bytes serialised once per session.
        if (q.family === undefined && !q.house_only && q.limit === DEFAULT_LIMIT && q.offset === 0) {
          return { body: snap.defaultPageBytes, contentType: JSON_TYPE, headers: snap.headers };
        }
        return json(page(snap, q), 200, snap.headers);
      },
    }),
    route<{ market_id: string; offer_key: string }>({
      method: 'GET', path: '/api/v1/markets/{market_id}/deals/{offer_key}', auth: 'none', summary: 'One deal of the current menu',
      params: DealParams,
      response: { 200: Deal },
      responses: {
        404: { description: 'unknown market, or the key is not on the current menu (also once its session closed)' },
      },
      handler: ({ params }) => {
        const market = marketOr404(params.market_id);
        const snap = snapshots.get(market);
        const deal = snap.byKey.get(params.offer_key);
        // CONTRACT.md "Session boundary": the clock ends a deal, not the record's close.
        if (!deal || s.clock.realNow() >= snap.closesAt) throw new HttpError(404, dealNotOnMenu(s.config.baseUrl, market, params.offer_key, `is not on the current menu of ${market} (session ${snap.tick})`));
        return json(deal);
      },
    }),
  ];
}
