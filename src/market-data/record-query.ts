// What every record route shares: the from_tick/to_tick query with its per-call span cap
// (CONTRACT.md: 422 at ["query","to_tick"]), the record's position (open, last closed, last
// settled session), and cacheable answers: an ETag on every answer, immutable for answers that
// only cover settled sessions of a fully loaded history.
import { createHash, type Hash } from 'node:crypto';
import Type from 'typebox';
import { MARKETS, type MarketId } from '../engine/index.js';
import { HttpError, type Reply, type RequestInfo } from '../http/route.js';
import type { Services } from '../http/services.js';
import type { Fragment } from './record-cache.js';
import type { CachedAnswer } from './record-fragments.js';

export const TickRange = {
  from_tick: Type.Integer({ minimum: 0, description: 'first session (tick) of the range' }),
  to_tick: Type.Integer({ minimum: 0, description: 'last session (tick) of the range, inclusive' }),
};

// Per-call span caps of the record routes (checkSpan refuses a wider range), quoted by the texts
// (src/docs/record-ranges.ts), and the defaults the routes and pages share.
export const HISTORY_SPAN = 20;
export const TRADES_SPAN = 200;
export const DATASET_SPAN = { labeled: 400, expanded: 50, unlabeled: 20 } as const;
export const TAPE_CAP = 500;
export const STATS_CAP = 400;
export const SIGNALS_CAP = 2000;
export const SIGNALS_DEFAULT = 120;
/** Closed sessions of outcomes a families answer covers unless asked otherwise (the pages use it too). */
export const FAMILIES_WINDOW = 48;

/** Refuses a range that is reversed or spans more than `cap` sessions. */
export function checkSpan(q: { from_tick: number; to_tick: number }, cap: number): void {
  if (q.to_tick < q.from_tick) {
    throw new HttpError(422, [
      {
        loc: ['query', 'to_tick'],
        msg: `Input should be greater than or equal to from_tick (${q.from_tick})`,
        type: 'greater_than_equal',
        input: q.to_tick,
        ctx: { ge: q.from_tick },
      },
    ]);
  }
  const span = q.to_tick - q.from_tick + 1;
  if (span > cap) {
    throw new HttpError(422, [
      {
        loc: ['query', 'to_tick'],
        msg: `The range spans ${span} sessions; at most ${cap} per call`,
        type: 'span_too_large',
        input: q.to_tick,
        ctx: { max_span: cap, from_tick: q.from_tick },
      },
    ]);
  }
}

export type RecordPosition = {
  open: number;
  lastClosed: number;
  lastSettled: number;
  horizon: number;
};

/** Where the market's record stands now: closed sessions are < open; settled ones <= lastSettled. */
export function recordPosition(s: Services, market: MarketId): RecordPosition {
  const m = MARKETS[market];
  // The record's own open session: it moves only once the close has warmed what it settled.
  const open = s.supervisor.recordOpenTick(market) ?? s.clock.tick(m.interval_seconds);
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
  // Serialise once: the same bytes are hashed and sent.
  const [payload, contentType] =
    'json' in body
      ? [JSON.stringify(body.json), 'application/json']
      : [body.text, body.contentType];
  return tagged(
    s,
    req,
    market,
    settledOnly,
    (h) => h.update(payload),
    () => ({ body: payload, contentType }),
  );
}

export const JSON_TYPE = 'application/json';

/** Part of an answer: bytes, and what stands for them in the ETag (a fragment's digest) if not themselves. */
export type Piece = { bytes: Uint8Array; tag?: string };

const COMMA: Piece = { bytes: Buffer.from(',') };
const CLOSE: Piece = { bytes: Buffer.from(']}') };

/** A fragment, or a part of it (a range of its items, named in the tag), as a piece of an answer. */
export const fragmentPiece = (f: Fragment, start = 0, end = f.bytes.length, range = ''): Piece => ({
  bytes: start === 0 && end === f.bytes.length ? f.bytes : f.bytes.subarray(start, end),
  tag: range ? `${f.digest}:${range}` : f.digest,
});

/**
 * `head` as JSON with one more property last, `key`, an array whose items are the pieces' (each a
 * comma-joined list of JSON values, empty ones left out): the bytes JSON.stringify would write.
 */
export function jsonWithArray(head: Record<string, unknown>, key: string, items: Piece[]): Piece[] {
  const open = JSON.stringify({ ...head, [key]: [] });
  const out: Piece[] = [{ bytes: Buffer.from(open.slice(0, -2)) }];
  for (const p of items) {
    if (!p.bytes.length) continue;
    if (out.length > 1) out.push(COMMA);
    out.push(p);
  }
  out.push(CLOSE);
  return out;
}

/** Every session of an answer recorded (with settled ones only, its bytes are final). */
export const allRecorded = (parts: readonly Fragment[]) => parts.every((f) => f.recorded);

/** What a record route assembles from fragments: the pieces, and whether every session is settled and recorded. */
export type Assembled = {
  pieces: Piece[];
  contentType: string;
  final: boolean;
  headers?: Record<string, string>;
};

/** A JSON answer of `head` with its sessions' fragments as the array `rows` (tape, stats, history). */
export const rowsAnswer = (
  head: Record<string, unknown>,
  parts: readonly Fragment[],
): Assembled => ({
  pieces: jsonWithArray(
    head,
    'rows',
    parts.map((f) => fragmentPiece(f)),
  ),
  contentType: JSON_TYPE,
  final: allRecorded(parts),
});

/**
 * `cacheable` for an answer assembled from pieces: the ETag hashes the fragments' digests, not their
 * bytes. An answer about settled, recorded sessions only is kept whole for the record's position
 * (`open`): the same request again is one lookup, until the next close.
 */
export async function recordAnswer(
  s: Services,
  req: RequestInfo,
  market: MarketId,
  open: number,
  settledOnly: boolean,
  assemble: () => Promise<Assembled>,
): Promise<Reply> {
  const request = settledOnly
    ? `${req.url}?${req.query}|${+s.supervisor.historyLoaded(market)}`
    : undefined;
  let kept = request === undefined ? undefined : s.record.answer(request, open);
  if (!kept) {
    const a = await assemble();
    const { etag, headers } = tag(s, req.url, market, settledOnly, (h) => {
      for (const p of a.pieces) {
        if (p.tag === undefined) h.update(p.bytes);
        else h.update(`\u0001${p.tag}`);
      }
    });
    const body = Buffer.concat(a.pieces.map((p) => p.bytes));
    kept = { body, contentType: a.contentType, headers: { ...headers, ...a.headers, etag } };
    if (request !== undefined && a.final) s.record.keepAnswer(request, open, kept);
  }
  if (req.headers['if-none-match'] === kept.headers.etag)
    return { status: 304, headers: kept.headers };
  return { body: kept.body, contentType: kept.contentType, headers: kept.headers };
}

/** What a close-keyed answer is made of: its JSON and whether it only covers settled sessions (see `cacheable`). */
export type CloseJson = { json: unknown; settledOnly: boolean };

/**
 * The answer of `path` (a route's path, query excluded) as `cacheable` makes it, with the record at
 * open session `open`: the same bytes, ETag and headers, built whole to be kept.
 */
export function builtAnswer(
  s: Services,
  path: string,
  market: MarketId,
  open: number,
  a: CloseJson,
): CachedAnswer {
  const body = Buffer.from(JSON.stringify(a.json));
  const { headers } = tag(s, path, market, a.settledOnly, (h) => h.update(body), open);
  return { body, contentType: JSON_TYPE, headers };
}

/**
 * `cacheable` for an answer that changes only at a close (families, book, signals): built once per
 * request (`key`: the query as parsed, defaults applied) and open session, then served from memory
 * until the next close. Kept only once the market's whole history is recorded: before that, the
 * background backfill may change it between closes.
 */
export async function closeAnswer(
  s: Services,
  req: RequestInfo,
  market: MarketId,
  key: string,
  build: (open: number) => Promise<CloseJson>,
): Promise<Reply> {
  const { open } = recordPosition(s, market);
  return keptReply(
    req,
    await keptCloseAnswer(s, req.url, market, key, open, s.supervisor.historyLoaded(market), build),
  );
}

/** A kept answer as a reply: 304 when If-None-Match has its ETag. */
export function keptReply(req: RequestInfo, kept: CachedAnswer): Reply {
  if (req.headers['if-none-match'] === kept.headers.etag)
    return { status: 304, headers: kept.headers };
  return { body: kept.body, contentType: kept.contentType, headers: kept.headers };
}

/** The close-keyed answer of `path` and `key` at open session `open`: kept (when `keep`) or built once for the concurrent callers. */
export function keptCloseAnswer(
  s: Services,
  path: string,
  market: MarketId,
  key: string,
  open: number,
  keep: boolean,
  build: (open: number) => Promise<CloseJson>,
): Promise<CachedAnswer> {
  return s.record.closeAnswer(`${path}|${key}`, open, keep, async () =>
    builtAnswer(s, path, market, open, await build(open)),
  );
}

/** ETag and cache headers of an answer whose body `hashBody` hashes; 304 when If-None-Match has it. */
function tagged(
  s: Services,
  req: RequestInfo,
  market: MarketId,
  settledOnly: boolean,
  hashBody: (h: Hash) => void,
  body: () => Reply,
): Reply {
  const { etag, headers } = tag(s, req.url, market, settledOnly, hashBody);
  if (req.headers['if-none-match'] === etag) return { status: 304, headers };
  return { ...body(), headers };
}

/** `open`: the record's open session the answer is about (a close's warming passes the new one before the position moves). */
function tag(
  s: Services,
  url: string,
  market: MarketId,
  settledOnly: boolean,
  hashBody: (h: Hash) => void,
  open = recordPosition(s, market).open,
) {
  const immutable = settledOnly && s.supervisor.historyLoaded(market);
  const state = `${s.config.seed}|${url}|${immutable ? 'final' : open}|`;
  const h = createHash('sha1').update(state);
  hashBody(h);
  const etag = `W/"${h.digest('base64url').slice(0, 22)}"`;
  return {
    etag,
    headers: { etag, 'cache-control': immutable ? 'public, max-age=86400, immutable' : 'no-cache' },
  };
}
