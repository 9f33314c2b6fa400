// What every record route shares: the from_tick/to_tick query with its per-call span cap
// (CONTRACT.md: 422 at ["query","to_tick"]), the record's position (open, last closed, last
// settled session), and cacheable answers: an ETag on every answer, immutable for answers that
// only cover settled sessions of a fully loaded history.
import { createHash } from 'node:crypto';
import Type from 'typebox';
import { MARKETS, type MarketId } from '../../engine/index.js';
import { HttpError, type Reply, type RequestInfo } from '../route.js';
import type { Services } from '../services.js';

export const TickRange = {
  from_tick: Type.Integer({ minimum: 0, description: 'first session (tick) of the range' }),
  to_tick: Type.Integer({ minimum: 0, description: 'last session (tick) of the range, inclusive' }),
};

/** Refuses a range that is reversed or spans more than `cap` sessions. */
export function checkSpan(q: { from_tick: number; to_tick: number }, cap: number): void {
  if (q.to_tick < q.from_tick) {
    throw new HttpError(422, [
      { loc: ['query', 'to_tick'], msg: `Input should be greater than or equal to from_tick (${q.from_tick})`, type: 'greater_than_equal', input: q.to_tick, ctx: { ge: q.from_tick } },
    ]);
  }
  const span = q.to_tick - q.from_tick + 1;
  if (span > cap) {
    throw new HttpError(422, [
      { loc: ['query', 'to_tick'], msg: `The range spans ${span} sessions; at most ${cap} per call`, type: 'span_too_large', input: q.to_tick, ctx: { max_span: cap, from_tick: q.from_tick } },
    ]);
  }
}

export type RecordPosition = { open: number; lastClosed: number; lastSettled: number; horizon: number };

/** Where the market's record stands now: closed sessions are < open; settled ones <= lastSettled. */
export function recordPosition(s: Services, market: MarketId): RecordPosition {
  const m = MARKETS[market];
  const open = s.supervisor.openTick(market) ?? s.clock.tick(m.interval_seconds);
  const horizon = m.settlement_horizon_ticks;
  return { open, lastClosed: open - 1, lastSettled: open - 1 - horizon, horizon };
}

/**
 * A JSON (or other) answer with an ETag. The tag covers the request and the record's state; an
 * answer about settled sessions of a fully loaded history never changes and may be cached for a day.
 */
export function cacheable(
  s: Services,
  req: RequestInfo,
  market: MarketId,
  body: { json: unknown } | { text: string; contentType: string },
  settledOnly: boolean,
): Reply {
  const immutable = settledOnly && s.supervisor.historyLoaded(market);
  // Serialise once: the same bytes are hashed and sent.
  const [payload, contentType] = 'json' in body ? [JSON.stringify(body.json), 'application/json'] : [body.text, body.contentType];
  const state = `${s.config.seed}|${req.url}|${immutable ? 'final' : recordPosition(s, market).open}|`;
  const etag = `W/"${createHash('sha1').update(state).update(payload).digest('base64url').slice(0, 22)}"`;
  const headers = { etag, 'cache-control': immutable ? 'public, max-age=86400, immutable' : 'no-cache' };
  if (req.headers['if-none-match'] === etag) return { status: 304, headers };
  return { body: payload, contentType, headers };
}
