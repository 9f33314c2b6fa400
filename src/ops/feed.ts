// The operators' live feed (GET /ops/feed) and the history of /ops's charts. From the service's
// start the metrics are sampled at least once a point (POINT_S): each point is the figures over its
// span (src/ops/figures.ts), kept for HISTORY_POINTS points (15 minutes) so a page draws its
// charts at once. While someone follows the feed, a sample a second becomes the figures sent to each
// follower as a Server-Sent Event `figures`; a new point goes as `point`, and a follower gets the
// whole history as `history` when it connects (again after a reconnection: no gap).
// Five-second points: 180 a chart, a path a phone draws at once and at most ~60 KB of history a
// connection (and little sampling while nobody looks), while a burst of 5xx or a late
// close still shows as itself; a point's p99 then has 5 s of requests.
// Everything is bounded: the followers (MAX_FOLLOWERS, more get 503), the samples of the rate window,
// the points, the recent 5xx (RECENT_5XX), and a follower that leaves more unread than a stream may
// is dropped.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Metrics } from '../metrics.js';
import type { Breach, FiguresShape, History, Point, ServerError } from '../schemas/ops.js';
import { figuresOf, pointOf, sampleOf, type Sample } from './figures.js';
import { breachesOf, thresholdsWith, type OpsThreshold, type ThresholdId } from './thresholds.js';

/** Followers of the feed at once, per process. */
export const MAX_FOLLOWERS = 16;
/** Seconds the live figures' rates and quantiles are taken over. */
export const WINDOW_S = 10;
/** Samples kept for that window at most. */
const WINDOW_SAMPLES_MAX = 32;
/** Seconds a chart point spans (the service's options may shorten it: tests). */
export const POINT_S = 5;
/** Points kept: 15 minutes of POINT_S points. */
export const HISTORY_POINTS = 180;
/** 5xx answers listed, the newest. */
export const RECENT_5XX = 20;
const PERIOD_MS = 1000;

export type OpsFeedOptions = {
  /** Seconds a chart point spans (at least 1; default POINT_S). */
  pointSeconds?: number;
  /** Thresholds replaced (thresholds.ts), e.g. a test's low one. */
  thresholds?: Partial<Record<ThresholdId, number>>;
};

type Follower = { write: (chunk: string) => boolean; end: () => void };
const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const monotonicS = () => performance.now() / 1000;

export class OpsFeed {
  private readonly window: Sample[] = [];
  private readonly points: Point[] = [];
  private readonly errors: ServerError[] = [];
  private readonly followers = new Set<Follower>();
  private readonly pointS: number;
  private readonly thresholds: OpsThreshold[];
  private timer?: NodeJS.Timeout;
  private last?: FiguresShape;
  private sampling?: Promise<FiguresShape>;
  /** The sample that opened the current point's span, and the last close counted in a point. */
  private pointBase?: Sample;
  private closeSeq = 0;
  private breaches: Breach[] = [];
  private stopped = false;
  readonly who = { pid: process.pid, host: os.hostname() };

  constructor(
    private readonly metrics: Pick<Metrics, 'snapshot' | 'closesAfter'>,
    /** Real unix milliseconds from the service's clock (the figures' and the 5xx's instants). */
    private readonly realMs: () => number,
    opts: OpsFeedOptions = {},
    /** Monotonic seconds: the spans of points and windows (a unit test drives it). */
    private readonly monotonic: () => number = monotonicS,
  ) {
    this.pointS = Math.max(1, opts.pointSeconds ?? POINT_S);
    this.thresholds = thresholdsWith(opts.thresholds);
  }

  /** Starts sampling: a point every pointS seconds from now on, and a sample a second while followed. */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => {
      if (this.followers.size > 0 || this.pointDue(this.monotonic())) this.sample().catch(() => {}); // a failed read skips a tick
    }, PERIOD_MS);
    this.timer.unref();
    this.sample().catch(() => {});
  }

  /** The figures now: a new sample (or the one under way). */
  current(): Promise<FiguresShape> {
    return this.sample();
  }

  /** The chart points kept (oldest first) and what they are compared with. */
  history(): History {
    return {
      point_s: this.pointS,
      max_points: HISTORY_POINTS,
      points: this.points,
      thresholds: this.thresholds,
    };
  }

  /** The figures past their thresholds as of the newest point. */
  status(): Breach[] {
    return this.breaches;
  }

  /** An answer was sent: a 5xx is kept with its instant (the service's clock) and route pattern. */
  served(method: string, route: string, status: number): void {
    if (status < 500) return;
    this.errors.unshift({ at: Math.round(this.realMs()) / 1000, method, route, status });
    if (this.errors.length > RECENT_5XX) this.errors.pop();
  }

  /** How many follow the feed now. */
  followerCount(): number {
    return this.followers.size;
  }

  /**
   * Adds a follower: `write` gets the history, then each sample's figures and each new point. Returns
   * what removes it, or undefined when MAX_FOLLOWERS already follow.
   */
  follow(write: (chunk: string) => boolean, end: () => void): (() => void) | undefined {
    if (this.stopped || this.followers.size >= MAX_FOLLOWERS) return undefined;
    const f: Follower = { write, end };
    this.followers.add(f);
    // The reconnection delay, the charts' history and the latest figures at once (no second's wait).
    f.write(`retry: ${PERIOD_MS * 2}\n\n`);
    if (this.send(f, event('history', this.history())) && this.last)
      this.send(f, event('figures', this.last));
    return () => this.followers.delete(f);
  }

  /** Stops the sampler and ends every follower's stream (the service is stopping). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    for (const f of this.followers) f.end();
    this.followers.clear();
  }

  /** Whether a sample at monotonic `t` ends the current point's span (half a tick early is on time). */
  private pointDue(t: number): boolean {
    return !this.pointBase || t - this.pointBase.t >= this.pointS - PERIOD_MS / 2000;
  }

  private sample(): Promise<FiguresShape> {
    // One read at a time: a slow read is not piled up behind by the next tick.
    return (this.sampling ??= (async () => {
      try {
        const s = sampleOf(await this.metrics.snapshot(), this.monotonic(), this.realMs() / 1000);
        this.window.push(s);
        while (this.window.length > 2 && s.t - this.window[1].t >= WINDOW_S) this.window.shift();
        // Samples asked for faster than the ticks (page loads): the oldest stays the window's start.
        if (this.window.length > WINDOW_SAMPLES_MAX) this.window.splice(1, 1);
        const point = this.pointDue(s.t) ? this.addPoint(s) : undefined;
        const figures: FiguresShape = {
          ...figuresOf(s, this.window.length > 1 ? this.window[0] : undefined, this.who),
          status: this.breaches,
          recent_5xx: [...this.errors],
        };
        this.last = figures;
        const chunk = (point ? event('point', point) : '') + event('figures', figures);
        for (const f of this.followers) this.send(f, chunk);
        return figures;
      } finally {
        this.sampling = undefined;
      }
    })());
  }

  /** Ends the current point's span at `s` (the first sample only opens one). */
  private addPoint(s: Sample): Point | undefined {
    const base = this.pointBase;
    this.pointBase = s;
    if (!base) return undefined;
    const closes = this.metrics.closesAfter(this.closeSeq);
    if (closes.length) this.closeSeq = closes[closes.length - 1].seq;
    const point = pointOf(figuresOf(s, base, this.who), closes);
    this.points.push(point);
    if (this.points.length > HISTORY_POINTS) this.points.shift();
    this.breaches = breachesOf(this.points, this.thresholds, this.pointS);
    return point;
  }

  /** Writes to a follower; one that left more unread than a stream may (STREAM_BUFFER_BYTES) is dropped. */
  private send(f: Follower, chunk: string): boolean {
    if (f.write(chunk)) return true;
    this.followers.delete(f);
    f.end();
    return false;
  }
}
