// The supervisor drives the clock: it opens each market's first session, replays closes missed
// during downtime in order, then closes every session when its time comes. It only asks; the
// market actor decides, exactly once per (market, tick), so two supervisors on one database (or a
// restart mid-close) never double-close.
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { CloseReply, StartReply } from '../../actors/market.js';

export type Asker = { ask<T>(to: string, msg: { kind: string; [k: string]: unknown }): Promise<T> };
export type ScheduledMarket = { id: string; interval_seconds: number };

export type SupervisorOptions = {
  /** At most this many missed sessions are replayed one by one; older ones are skipped. */
  catchupLimit: number;
  log: Logger;
  onClose?: (market: string, tick: number, reply: CloseReply) => void;
};

export class Supervisor {
  private readonly open = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
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
    await Promise.all(
      this.markets.map(async (m) => {
        const reply = await this.actors.ask<StartReply>(`market:${m.id}`, { kind: 'start', tick: this.clock.tick(m.interval_seconds) });
        this.open.set(m.id, reply.open);
        await this.catchUp(m);
      }),
    );
    this.ready = !this.stopped;
    for (const m of this.markets) this.schedule(m);
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
    await Promise.all([...this.running]);
  }
}
