// The record's answers by session: a range is the settled sessions' fragments from memory
// (record-cache.ts) plus, read from the workers (a gap in one part per worker: splitRange), the
// sessions not kept (evicted, never read, or not settled yet: those are read as the record stands
// and never kept).
// The close warms the sessions it settled (supervisor option `warm`), so the first request after
// a close finds them built. An answer made only of settled, recorded sessions is also kept whole
// for the record's current position (a quarter of the cap), so a repeated request is one lookup.
import type { Logger } from 'pino';
import { read, type ActorRuntime } from '../../actors/runtime/client.js';
import type { FragmentSpec, FragmentsArgs } from '../../actors/record/messages.js';
import { MARKETS, type MarketId } from '../engine/index.js';
import {
  ByteLru,
  fragmentSize,
  fromReply,
  seriesKey,
  type CacheStats,
  type Fragment,
} from './record-cache.js';

/** Where the record stands (record-query.ts recordPosition). */
export type Position = { open: number; lastSettled: number };

/** At most this many newly settled sessions are warmed by one close (a catch-up settles more). */
export const WARM_MAX = 8;

/** A range not kept is read in parts of at least this many sessions, one part per worker. */
export const MIN_PART = 4;

/**
 * Sessions from..to in at most `parts` contiguous ranges of at least `minPart` sessions each, in
 * order, their sizes differing by at most one: a cold range is built by every worker at once (a
 * session's fragment depends on no other session), not by one while the others idle.
 */
export function splitRange(
  from: number,
  to: number,
  parts: number,
  minPart = MIN_PART,
): [number, number][] {
  const n = to - from + 1;
  if (n <= 0) return [];
  const k = Math.max(1, Math.min(parts, Math.floor(n / minPart)));
  const out: [number, number][] = [];
  let start = from;
  for (let i = 0; i < k; i++) {
    const size = Math.floor(n / k) + (i < n % k ? 1 : 0);
    out.push([start, start + size - 1]);
    start += size;
  }
  return out;
}

/** A whole answer as sent (headers: ETag, cache-control and the route's own). */
export type CachedAnswer = Readonly<{
  body: Buffer;
  contentType: string;
  headers: Readonly<Record<string, string>>;
}>;
const answerSize = (a: CachedAnswer) => a.body.length + 512;

export class RecordFragments {
  /** Undefined with a cap of 0: every answer is read whole from a worker, as before the cache. */
  readonly cache: ByteLru<Fragment> | undefined;
  /** Whole answers by request (URL and whether final) and open session. */
  private readonly answers: ByteLru<CachedAnswer> | undefined;
  /** Every series kept so far, by key (bounded: the specs the routes can form). */
  private readonly kept = new Map<string, FragmentSpec>();
  /** Reads of a range in flight: concurrent requests for the same gap share one. */
  private readonly inflight = new Map<string, Promise<Fragment[]>>();
  /** Close-keyed answers being built: concurrent misses share one build. */
  private readonly building = new Map<string, Promise<CachedAnswer>>();
  /** Sessions read from workers (on requests or warming). */
  built = 0;
  /** Read tasks sent for requests (a gap in parts: one per part). */
  reads = 0;
  warmed = 0;

  constructor(
    private readonly runtime: ActorRuntime,
    capBytes: number,
    private readonly log: Logger,
    /** The series every close warms even before anyone asked for them. */
    private readonly defaults: (market: MarketId) => FragmentSpec[],
  ) {
    this.cache =
      capBytes > 0
        ? new ByteLru<Fragment>(capBytes - Math.floor(capBytes / 4), fragmentSize)
        : undefined;
    this.answers =
      capBytes > 0 ? new ByteLru<CachedAnswer>(Math.floor(capBytes / 4), answerSize) : undefined;
  }

  get enabled(): boolean {
    return this.cache !== undefined;
  }

  /** Sessions kept (fragments) and the bytes of fragments and whole answers together. */
  stats(): CacheStats & { built: number; warmed: number; answers: CacheStats } {
    const none = { entries: 0, bytes: 0, capBytes: 0, hits: 0, misses: 0, stored: 0, evicted: 0 };
    const c = this.cache?.stats() ?? none;
    const a = this.answers?.stats() ?? none;
    return {
      ...c,
      bytes: c.bytes + a.bytes,
      capBytes: c.capBytes + a.capBytes,
      built: this.built,
      warmed: this.warmed,
      answers: a,
    };
  }

  /** A whole answer kept for `request` at the record's open session `open`. */
  answer(request: string, open: number): CachedAnswer | undefined {
    return this.answers?.get(request, open);
  }

  keepAnswer(request: string, open: number, a: CachedAnswer): void {
    this.answers?.set(request, open, a);
  }

  /**
   * An answer that changes only at a close (families, book, signals), kept whole for the record's
   * open session when `keep` (the record under it is complete). Concurrent misses share one build,
   * so a burst of requests after a close computes it once.
   */
  closeAnswer(
    request: string,
    open: number,
    keep: boolean,
    build: () => Promise<CachedAnswer>,
  ): Promise<CachedAnswer> {
    const kept = keep ? this.answers?.get(request, open) : undefined;
    if (kept) return Promise.resolve(kept);
    const id = `${request}|${open}|${+keep}`;
    let p = this.building.get(id);
    if (!p) {
      p = build()
        .then((a) => {
          if (keep) this.answers?.set(request, open, a);
          return a;
        })
        .finally(() => this.building.delete(id));
      this.building.set(id, p);
    }
    return p;
  }

  /** Fragments of sessions from..to of a series, in order (none when to < from). */
  async sessions(spec: FragmentSpec, from: number, to: number, pos: Position): Promise<Fragment[]> {
    if (to < from) return [];
    const key = seriesKey(spec);
    const out = new Array<Fragment>(to - from + 1);
    const gaps: [number, number][] = [];
    for (let tick = from; tick <= to; tick++) {
      const f = tick <= pos.lastSettled ? this.cache?.get(key, tick) : undefined;
      if (f) out[tick - from] = f;
      else if (gaps.length && gaps[gaps.length - 1][1] === tick - 1)
        gaps[gaps.length - 1][1] = tick;
      else gaps.push([tick, tick]);
    }
    if (gaps.length) {
      const parts = gaps.flatMap(([a, b]) => splitRange(a, b, this.runtime.shardCount));
      const read = await Promise.all(
        parts.map(([a, b]) =>
          this.readRange(key, {
            spec,
            from: a,
            to: b,
            open: pos.open,
            lastSettled: pos.lastSettled,
          }),
        ),
      );
      // Kept in session order once every part is in, whichever part answered first: the range's
      // last session is the most recently used.
      for (const list of read) {
        for (const f of list) {
          out[f.tick - from] = f;
          // Settled and recorded: these bytes are final.
          if (f.recorded && f.tick <= pos.lastSettled) this.keep(key, spec, f);
        }
      }
    }
    return out;
  }

  /**
   * After a close moved the market's open session from `prevOpen` to `open`: builds and keeps the
   * sessions it settled in every series kept for the market and the default ones, in one read task.
   */
  async warm(market: MarketId, prevOpen: number, open: number): Promise<void> {
    if (!this.cache) return;
    const horizon = MARKETS[market].settlement_horizon_ticks;
    const to = open - 1 - horizon;
    const from = Math.max(prevOpen - horizon, to - WARM_MAX + 1, 0);
    if (to < from) return;
    const specs = new Map<string, FragmentSpec>();
    for (const spec of [...this.defaults(market), ...this.kept.values()])
      if (spec.market === market) specs.set(seriesKey(spec), spec);
    const jobs: FragmentsArgs[] = [...specs.values()].map((spec) => ({
      spec,
      from,
      to,
      open,
      lastSettled: to,
    }));
    const replies = await read(this.runtime, 'record.warm', { jobs });
    replies.forEach((list, i) => {
      const key = seriesKey(jobs[i].spec);
      for (const f of list) {
        this.built++;
        if (!f.recorded) continue;
        this.keep(key, jobs[i].spec, fromReply(f));
        this.warmed++;
      }
    });
    this.log.debug({ market, from, to, series: jobs.length }, 'record sessions warmed');
  }

  private keep(key: string, spec: FragmentSpec, f: Fragment): void {
    if (!this.cache) return;
    this.kept.set(key, spec);
    this.cache.set(key, f.tick, f);
  }

  private readRange(key: string, a: FragmentsArgs): Promise<Fragment[]> {
    const id = `${key}|${a.from}|${a.to}|${a.open}`;
    let p = this.inflight.get(id);
    if (!p) {
      this.reads++;
      p = read(this.runtime, 'record.fragments', a)
        .then((list) =>
          list.map((reply) => {
            this.built++;
            return fromReply(reply);
          }),
        )
        .finally(() => this.inflight.delete(id));
      this.inflight.set(id, p);
    }
    return p;
  }
}
