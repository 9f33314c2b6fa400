// The supervisor drives the clock: it opens each market's first session, replays closes missed
// during downtime in order, then closes every session when its time comes. It only asks; the
// market actor decides, exactly once per (market, tick), so two supervisors on one database (or a
// restart mid-close) never double-close.
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { BackfillReply, CloseReply, StartReply } from '../../actors/market/actor.js';

const HORIZON = 8;

export type Asker = { ask<T>(to: string, msg: { kind: string; [k: string]: unknown }): Promise<T> };
export type ScheduledMarket = { id: string; interval_seconds: number };

export type SupervisorOptions = {
  /** At most this many missed sessions are replayed one by one; older ones are skipped. */
  catchupLimit: number;
  /** Days of past sessions recorded per market on first start (history backfill). */
  backfillDays?: number;
  /** Sessions recorded per backfill turn: bounds how long a live close may wait behind one. */
  backfillChunk?: number;
  log: Logger;
  onClose?: (market: string, tick: number, reply: CloseReply) => void;
};

export class Supervisor {
  private readonly open = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private backfilling: Promise<void> | undefined;
  private readonly loaded = new Set<string>();
  private stopped = false;
  ready = false;

  constructor(
    private readonly actors: Asker,
    private readonly clock: Clock,
    private readonly markets: ScheduledMarket[],
    private readonly opts: SupervisorOptions,
  ) {}

  /** Opens or recovers every market, replays missed closes, then schedules the next ones. */
  async start(): Promise<void> {
    const plans = await Promise.all(
      this.markets.map(async (m) => {
        const to = `market:${m.id}`;
        const reply = await this.actors.ask<StartReply>(to, {
          kind: 'start',
          tick: this.clock.tick(m.interval_seconds),
          backfillDays: this.opts.backfillDays ?? 0,
        });
        this.open.set(m.id, reply.open);
        // The sessions whose positions are still selling interact with live closes: record them
        // first, so every live close advances them.
        const recent = Math.max(reply.fromTick, reply.liveStart - HORIZON);
        if (recent < reply.liveStart) await this.actors.ask<BackfillReply>(to, { kind: 'backfill', from: recent, to: reply.liveStart - 1 });
        await this.catchUp(m);
        return { m, from: reply.fromTick, to: recent - 1 };
      }),
    );
    this.ready = !this.stopped;
    for (const m of this.markets) this.schedule(m);
    this.backfilling = this.backfillRest(plans);
  }

  /** Records the older history in the background, newest sessions first, in bounded turns. */
  private async backfillRest(plans: { m: ScheduledMarket; from: number; to: number }[]): Promise<void> {
    const chunk = this.opts.backfillChunk ?? 24;
    await Promise.all(
      plans.map(async ({ m, from, to }) => {
        const t0 = Date.now();
        let recorded = 0;
        for (let hi = to; hi >= from && !this.stopped; hi -= chunk) {
          try {
            const r = await this.actors.ask<BackfillReply>(`market:${m.id}`, { kind: 'backfill', from: Math.max(from, hi - chunk + 1), to: hi });
            recorded += r.recorded;
          } catch (err) {
            if (this.stopped) return;
            this.opts.log.error({ err, market: m.id, hi }, 'backfill chunk failed; retrying');
            hi += chunk;
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
        if (this.stopped) return;
        this.loaded.add(m.id);
        if (recorded) this.opts.log.info({ market: m.id, sessions: recorded, ms: Date.now() - t0 }, 'history backfill finished');
      }),
    );
  }

  /** Whether this process has seen the market's whole history recorded. */
  historyLoaded(market: string): boolean {
    return this.loaded.has(market);
  }

  /** Resolves when the background history backfill has finished (tests, bench). */
  async backfilled(): Promise<void> {
    await this.backfilling;
  }

  /** Closes every session whose time has passed, on every market (what the timers do). */
  async runDue(): Promise<void> {
    await Promise.all(this.markets.map((m) => this.catchUp(m)));
  }

  /** The open session of a market as the record has it. */
  openTick(market: string): number | undefined {
    return this.open.get(market);
  }

  /** Closes every session of `m` whose time has passed, oldest first. */
  private async catchUp(m: ScheduledMarket): Promise<void> {
    const current = this.clock.tick(m.interval_seconds);
    let open = this.open.get(m.id)!;
    while (open < current && !this.stopped) {
      const behind = current - open;
      const next = behind > this.opts.catchupLimit ? current - this.opts.catchupLimit + 1 : open + 1;
      if (next > open + 1) {
        this.opts.log.warn({ market: m.id, from: open, to: next }, 'downtime beyond the catch-up bound: sessions skipped');
      }
      const reply = await this.actors.ask<CloseReply>(`market:${m.id}`, { kind: 'close', tick: open, next });
      this.opts.onClose?.(m.id, open, reply);
      open = reply.open;
      this.open.set(m.id, open);
    }
  }

  private schedule(m: ScheduledMarket): void {
    if (this.stopped) return;
    const open = this.open.get(m.id)!;
    const dueMs = this.clock.closesAt(open, m.interval_seconds) * 1000 - this.clock.realNow() * 1000;
    const timer = setTimeout(() => {
      const run = this.catchUp(m)
        .catch((err) => this.opts.log.error({ err, market: m.id }, 'close failed; retrying'))
        .finally(() => {
          this.running.delete(run);
          this.schedule(m);
        });
      this.running.add(run);
    }, Math.max(0, Math.min(dueMs + 5, 2 ** 31 - 1)));
    this.timers.set(m.id, timer);
  }

  /** Stops scheduling and waits for closes under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    await Promise.all([...this.running, this.backfilling]);
  }
}
