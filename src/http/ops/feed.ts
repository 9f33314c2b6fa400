// The operators' live feed: once someone opens /ops, the metrics are sampled every second; each
// sample becomes the figures (src/http/ops/figures.ts) sent to every follower of GET /ops/feed as a
// Server-Sent Event, and a short point of the page's charts. Everything is bounded: the followers
// (MAX_FOLLOWERS, more get 503), the samples kept for the rate window (WINDOW_SAMPLES), the chart
// history (HISTORY_POINTS), and a follower that leaves more unread than a stream may is dropped.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Metrics } from '../../metrics.js';
import { figuresOf, sampleOf, type Figures, type Sample } from './figures.js';

/** Followers of the feed at once, per process. */
export const MAX_FOLLOWERS = 16;
/** Rates and quantiles are taken over this many samples (seconds at one sample a second). */
export const WINDOW_SAMPLES = 10;
/** Points kept for the page's charts: five minutes at one a second. */
export const HISTORY_POINTS = 300;
const PERIOD_MS = 1000;
/** Seconds without a page view or a follower after which the sampler stops (and forgets its samples). */
const IDLE_S = 300;

/** One point of the page's charts. */
export type Point = { at: number; rate: number; p99_ms: number | null; errors_5xx: number; rss_mb: number | null; loop_p99_ms: number | null; mailbox: number };

type Follower = { write: (chunk: string) => boolean; end: () => void };

export class OpsFeed {
  private readonly window: Sample[] = [];
  private readonly points: Point[] = [];
  private readonly followers = new Set<Follower>();
  private timer?: NodeJS.Timeout;
  private last?: Figures;
  private sampling?: Promise<Figures>;
  private stopped = false;
  /** Monotonic seconds of the last page view or follower: the sampler stops when nobody looked for IDLE_S. */
  private wanted = 0;
  readonly who = { pid: process.pid, host: os.hostname() };

  constructor(
    private readonly metrics: Pick<Metrics, 'snapshot'>,
    /** Real unix milliseconds (the figures' timestamps). */
    private readonly realMs: () => number = Date.now,
  ) {}

  /** The figures now (taking a sample if none is recent), and the sampler started. */
  async current(): Promise<Figures> {
    const running = this.start();
    return running && this.last ? this.last : await this.sample();
  }

  /** The chart points kept (oldest first). */
  history(): readonly Point[] {
    return this.points;
  }

  /** How many follow the feed now. */
  followerCount(): number {
    return this.followers.size;
  }

  /**
   * Adds a follower: `write` gets each sample's figures as an SSE `figures` event. Returns what
   * removes it, or undefined when MAX_FOLLOWERS already follow.
   */
  follow(write: (chunk: string) => boolean, end: () => void): (() => void) | undefined {
    if (this.stopped || this.followers.size >= MAX_FOLLOWERS) return undefined;
    this.start();
    const f: Follower = { write, end };
    this.followers.add(f);
    // The reconnection delay, then the latest figures at once (the page need not wait a second).
    f.write(`retry: ${PERIOD_MS * 2}\n\n`);
    if (this.last) this.send(f, this.last);
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

  /** Starts the sampler unless it runs; says whether it was running (its latest figures are current). */
  private start(): boolean {
    this.wanted = performance.now() / 1000;
    if (this.timer || this.stopped) return !!this.timer;
    this.timer = setInterval(() => {
      if (this.followers.size === 0 && performance.now() / 1000 - this.wanted > IDLE_S) return this.idle();
      this.sample().catch(() => {}); // a failed read skips one tick; the next one tries again
    }, PERIOD_MS);
    this.timer.unref();
    return false;
  }

  /** Nobody looks: stop sampling and forget the samples (the next look starts afresh, no gap in the charts). */
  private idle(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.window.length = 0;
    this.points.length = 0;
    this.last = undefined;
  }

  private sample(): Promise<Figures> {
    // One read at a time: a slow read is not piled up behind by the next tick.
    return (this.sampling ??= (async () => {
      try {
        const s = sampleOf(await this.metrics.snapshot(), performance.now() / 1000, this.realMs() / 1000);
        this.window.push(s);
        if (this.window.length > WINDOW_SAMPLES + 1) this.window.shift();
        const figures = figuresOf(s, this.window.length > 1 ? this.window[0] : undefined, this.who);
        this.last = figures;
        this.points.push({
          at: figures.at, rate: figures.requests.rate, p99_ms: figures.requests.p99_ms, errors_5xx: figures.requests.errors_5xx,
          rss_mb: figures.process.rss_bytes === null ? null : Math.round(figures.process.rss_bytes / 2 ** 20),
          loop_p99_ms: figures.process.event_loop_p99_ms, mailbox: figures.shards.reduce((n, x) => n + x.mailbox, 0),
        });
        if (this.points.length > HISTORY_POINTS) this.points.shift();
        for (const f of this.followers) this.send(f, figures);
        return figures;
      } finally {
        this.sampling = undefined;
      }
    })());
  }

  private send(f: Follower, figures: Figures): void {
    // Not sent: the follower left more unread than a stream may (STREAM_BUFFER_BYTES): dropped.
    if (!f.write(`event: figures\ndata: ${JSON.stringify(figures)}\n\n`)) {
      this.followers.delete(f);
      f.end();
    }
  }
}
