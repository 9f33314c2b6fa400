// The supervisor drives the clock: it opens each market's first session, replays closes missed
// during downtime in order, then closes every session when its time comes. It only asks; the
// market actor decides, exactly once per (market, tick), so two supervisors on one database (or a
// restart mid-close) never double-close. Of several processes on one database, the one holding the
// closes' lease runs the closes, payouts and competitions; the others follow the closes (a NOTIFY
// per close, a poll as its net) and take the lease over when its holder dies, replaying what it
// missed in order. Every failure is retried with bounded exponential backoff (a failing close, a
// backfill chunk, the start itself), logged with its cause and counted.
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import { Sleeper, backoffMs, causeOf, type Backoff, type BoundedBackoff } from './backoff.js';
import { AskTimedOut, type ActorRuntime } from '../../actors/runtime/client.js';
import { marketRef, type CloseReply } from '../../actors/market/messages.js';
import { payoutsRef } from '../../actors/payouts/messages.js';
import { receiptsRef } from '../../actors/receipts/messages.js';
import { competitionRef } from '../../actors/competition/messages.js';
import type { DeliverReport } from '../../actors/webhooks/messages.js';
import { WebhookPasses } from './webhook-passes.js';
export { WEBHOOK_BACKLOG_WARN_SECONDS } from './webhook-passes.js';
import {
  COMPETITION_WINDOW_SESSIONS,
  SETTLEMENT_HORIZON_SESSIONS,
  competitionId,
} from '../rules.js';

export type Asker = Pick<ActorRuntime, 'ask'>;
export type ScheduledMarket = { id: string; interval_seconds: number };
/** The closes' lease (actors/runtime/close-lease.ts): whether this process may run the closes. */
export type Lease = { readonly held: boolean; tryTake(): Promise<boolean> };

/** What the supervisor counts (src/metrics.ts implements it). */
export type SupervisorMetrics = {
  closeFailed(market: string): void;
  ordersQuarantined(market: string, n: number): void;
  backfillChunkFailed(market: string, abandoned: boolean): void;
  startFailed(): void;
  /** A webhook delivery pass's attempts, those in flight and the backlog it saw. */
  webhookPass(r: DeliverReport): void;
};

export type SupervisorOptions = {
  /** At most this many missed sessions are replayed one by one; older ones are skipped. */
  catchupLimit: number;
  /** Days of past sessions recorded per market on first start (history backfill). */
  backfillDays?: number;
  /** Sessions recorded per backfill turn: bounds how long a live close may wait behind one. */
  backfillChunk?: number;
  /** A failed close is retried after these delays (default 1 s doubling to 60 s), for as long as it fails. */
  closeRetry?: Backoff;
  /** A failed backfill chunk is retried, then given up (default 1 s doubling to 60 s, 5 attempts). */
  backfillRetry?: BoundedBackoff;
  /** A failed start is retried, then `start()` rejects (default 1 s doubling, 5 attempts: about a minute with the ask timeouts). */
  startRetry?: BoundedBackoff;
  log: Logger;
  metrics?: SupervisorMetrics;
  onClose?: (market: string, tick: number, reply: CloseReply) => void;
  /**
   * After a close that brought a market up to date, before the record's position moves to the new
   * open session (recordOpenTick): builds what the close settled, so no request builds it. A failure
   * is logged; the position moves anyway.
   */
  warm?: (market: string, prevOpen: number, open: number) => Promise<void>;
  /** The longest wait between looks for due payouts and competitions (default PAYOUT_SWEEP_MS). */
  payoutSweepMs?: number;
  /** The closes' lease shared by the processes of one database; without one this process runs the closes. */
  lease?: Lease;
  /** How often a process without the lease tries to take it (default LEASE_TRY_MS). */
  leaseTryMs?: number;
  /** Webhooks may be delivered to private addresses (SVC_WEBHOOK_ALLOW_PRIVATE). */
  webhookAllowPrivate?: boolean;
  /** How often webhook deliveries are looked for (default WEBHOOK_PASS_MS). */
  webhookPassMs?: number;
  /** How long a webhook attempt may take (SVC_WEBHOOK_TIMEOUT_MS; default the webhooks actor's). */
  webhookTimeoutMs?: number;
};

/**
 * The longest wait between looks for due payouts and competitions: each look also learns when the
 * next is due (the earliest scheduled payout, the next competition window), and the next look is
 * then, at the latest after this. A payout is scheduled days of service time ahead.
 */
const PAYOUT_SWEEP_MS = 60_000;
/** A failed look is tried again after this long. */
const SWEEP_RETRY_MS = 2000;
/** Looks run this long after what they wait for is due: past the close that ends a window. */
const SWEEP_MARGIN_MS = 1000;

/** How long the sweep waits (ms) for the earliest of `dueAts` (real unix seconds), within [0, capMs]. */
export function sweepDelayMs(nowS: number, dueAts: (number | null)[], capMs: number): number {
  const due = dueAts.filter((d): d is number => d !== null);
  if (!due.length) return capMs;
  const ms = (Math.min(...due) - nowS) * 1000 + SWEEP_MARGIN_MS;
  return Math.min(capMs, Math.max(0, Math.ceil(ms)));
}
/** How often a process without the closes' lease tries to take it: a takeover within CONTRACT.md's 5 s. */
const LEASE_TRY_MS = 1000;
/** A follower whose market's close is due and not yet seen looks again this often (a missed NOTIFY's net). */
const FOLLOW_POLL_MS = 250;
const CLOSE_RETRY: Backoff = { baseMs: 1000, capMs: 60_000 };
/** A close whose ask timed out is asked again at once this many times before backing off. */
export const CLOSE_TIMEOUTS_RETRIED_AT_ONCE = 2;
const BACKFILL_RETRY: BoundedBackoff = { baseMs: 1000, capMs: 60_000, attempts: 5 };
const START_RETRY: BoundedBackoff = { baseMs: 1000, capMs: 60_000, attempts: 5 };

/**
 * The closes that moved a market's open session from `prev` to `open`, as [closed tick, next open]:
 * one a session, but past the catch-up bound the holder closed `prev` straight into the last
 * `limit - 1` sessions (catchUp), skipping those before them.
 */
export function closedBetween(prev: number, open: number, limit: number): [number, number][] {
  const out: [number, number][] = [];
  let tick = prev;
  if (open - prev > limit) {
    out.push([prev, open - limit + 1]);
    tick = open - limit + 1;
  }
  for (; tick < open; tick++) out.push([tick, tick + 1]);
  return out;
}

export class Supervisor {
  private readonly open = new Map<string, number>();
  /** The open session the record is served at: `open` once the close's warming is done. */
  private readonly recordOpen = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  /** Consecutive failed closes per market: the backoff's attempt number. */
  private readonly failures = new Map<string, number>();
  private readonly sleeper = new Sleeper();
  private backfilling: Promise<void> | undefined;
  private readonly loaded = new Set<string>();
  private mark: Record<string, number> | undefined;
  /** Requests waiting for the record to open a session the clock has already started (recordOpened). */
  private readonly waiting = new Map<string, { tick: number; done: (opened: boolean) => void }[]>();
  private stopped = false;
  /** Whether this process runs the closes (holds the lease, or has none to share). */
  private leading = false;
  /** When the earliest scheduled payout is due (real unix seconds), as the last look found; null: none. */
  private nextPayoutAt: number | null = null;
  /** Markets whose timer's turn is under way, and those woken meanwhile (their next turn follows at once). */
  private readonly turning = new Set<string>();
  private readonly woken = new Set<string>();
  /** Webhook passes: whether the last saw a live webhook, one is running, a wake came during it, one is armed by a wake. */
  ready = false;
  private readonly webhooks: WebhookPasses;

  constructor(
    private readonly actors: Asker,
    private readonly clock: Clock,
    private readonly markets: ScheduledMarket[],
    private readonly opts: SupervisorOptions,
  ) {
    this.webhooks = new WebhookPasses(actors, clock, opts, this.running, () => this.stopped);
  }

  /**
   * Opens or recovers every market, replays missed closes, then schedules the next ones. A failed
   * attempt (every step is idempotent) is retried with backoff; after the last one this rejects,
   * so the process can exit and be restarted. Resolves without starting if stopped meanwhile.
   */
  async start(): Promise<void> {
    const p = this.opts.startRetry ?? START_RETRY;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce();
      } catch (err) {
        if (this.stopped) return;
        this.opts.metrics?.startFailed();
        if (attempt >= p.attempts) {
          this.opts.log.error(
            { err, attempt },
            `supervisor failed to start after ${attempt} attempts: ${causeOf(err)}`,
          );
          throw err;
        }
        const delayMs = backoffMs(attempt, p);
        // A failure that will be retried is a warning (a slow first start under load is one); giving up is the error.
        this.opts.log.warn(
          { err, attempt, retryInMs: Math.round(delayMs) },
          `supervisor failed to start: ${causeOf(err)}; retrying`,
        );
        await this.sleeper.sleep(delayMs);
        if (this.stopped) return;
      }
    }
  }

  private async startOnce(): Promise<void> {
    const leading = await this.tryLease();
    const plans = await Promise.all(
      this.markets.map((m) => (leading ? this.lead(m) : this.follow(m).then(() => undefined))),
    );
    if (leading) await this.runCompetitions();
    // The approval receipts' first signing key, made once for every process (before readiness: a
    // holder's payment signs with it), with the start's own retries.
    await this.actors.ask(receiptsRef, { kind: 'ensureKey' });
    this.ready = !this.stopped;
    for (const m of this.markets) this.schedule(m);
    if (leading) this.schedulePayouts();
    this.webhooks.start();
    this.scheduleLease();
    if (leading) this.backfilling = this.backfillRest(plans.filter((p) => p !== undefined));
  }

  /**
   * A market's start as the process running its closes: opens its first session if it has none,
   * records the sessions still selling, replays the missed closes in order. Every step is
   * idempotent, so a takeover repeats what the previous holder did without doing it twice.
   */
  private async lead(
    m: ScheduledMarket,
  ): Promise<{ m: ScheduledMarket; from: number; to: number }> {
    const to = marketRef(m.id);
    const reply = await this.actors.ask(to, {
      kind: 'start',
      tick: this.clock.tick(m.interval_seconds),
      backfillDays: this.opts.backfillDays ?? 0,
    });
    if (!this.open.has(m.id)) {
      this.setOpen(m.id, reply.open);
      this.recordOpen.set(m.id, reply.open);
    }
    // The sessions whose positions are still selling interact with live closes: record them
    // first, so every live close advances them.
    const recent = Math.max(reply.fromTick, reply.liveStart - SETTLEMENT_HORIZON_SESSIONS);
    if (recent < reply.liveStart)
      await this.actors.ask(to, { kind: 'backfill', from: recent, to: reply.liveStart - 1 });
    await this.catchUp(m);
    return { m, from: reply.fromTick, to: recent - 1 };
  }

  /**
   * A market's state as the record has it, for a process that does not run the closes: opens the
   * market if no process has yet (the holder of the lease may not have started), then moves this
   * process's open session (and its record's, after warming) to the database's.
   */
  private async follow(m: ScheduledMarket): Promise<void> {
    if (!this.open.has(m.id)) {
      const reply = await this.actors.ask(marketRef(m.id), {
        kind: 'start',
        tick: this.clock.tick(m.interval_seconds),
        backfillDays: this.opts.backfillDays ?? 0,
      });
      this.setOpen(m.id, reply.open);
      this.recordOpen.set(m.id, reply.open);
    }
    const status = await this.actors.ask(marketRef(m.id), { kind: 'status' });
    if (status.historyLoaded) this.markLoaded(m.id);
    const prev = this.open.get(m.id)!;
    if (status.open === null || status.open <= prev) return;
    this.setOpen(m.id, status.open);
    // Seen, not performed: this process's close metrics and log (MarketNotClosing) follow the record
    // here too, one report per session closed (a holder's catch-up closes several at once).
    for (const [tick, next] of closedBetween(prev, status.open, this.opts.catchupLimit))
      this.opts.onClose?.(m.id, tick, { closed: false, open: next, ms: 0, quarantined: [] });
    if (this.opts.warm && status.open >= this.clock.tick(m.interval_seconds))
      await this.warmRecord(m.id, this.recordOpen.get(m.id) ?? prev, status.open);
    this.recordOpen.set(m.id, status.open);
  }

  /** Whether this process runs the closes now (CONTRACT.md: `/readyz` `closes`). */
  get holdsCloses(): boolean {
    return this.leading;
  }

  /** Takes the lease if it is free; without a lease to share, this process leads. A failed try is a no. */
  private async tryLease(): Promise<boolean> {
    const lease = this.opts.lease;
    if (!lease) return (this.leading = true);
    try {
      this.leading = await lease.tryTake();
    } catch (err) {
      this.opts.log.warn(
        { err },
        `the closes' lease could not be tried: ${causeOf(err)}; trying again`,
      );
      this.leading = false;
    }
    if (this.leading) {
      this.opts.log.info("this process runs the market closes (it holds the closes' lease)");
    }
    return this.leading;
  }

  /**
   * Tries to take the lease every leaseTryMs while another process holds it; on taking it, does what
   * a leading start does (the missed closes replayed in order, the history finished) and wakes every
   * market's timer, which now closes.
   */
  private scheduleLease(): void {
    if (this.stopped || !this.opts.lease) return;
    const timer = setTimeout(() => {
      const run = (async () => {
        if (this.leading) {
          if (this.opts.lease!.held) return;
          this.leading = false;
          clearTimeout(this.timers.get('payouts'));
          this.opts.log.error(
            "this process lost the closes' lease (its database connection ended): it follows the closes until it can take them again",
          );
        }
        if (!(await this.tryLease()) || this.stopped) return;
        try {
          const plans = await Promise.all(this.markets.map((m) => this.lead(m)));
          await this.runCompetitions();
          const rest = plans.filter((p) => !this.loaded.has(p.m.id));
          if (rest.length)
            this.backfilling = Promise.all([this.backfilling, this.backfillRest(rest)]).then(
              () => undefined,
            );
        } catch (err) {
          this.opts.log.warn(
            { err },
            `taking over the closes: ${causeOf(err)}; the markets' timers retry`,
          );
        }
        for (const m of this.markets) this.wake(m);
        this.schedulePayouts();
      })().finally(() => {
        this.running.delete(run);
        this.scheduleLease();
      });
      this.running.add(run);
    }, this.opts.leaseTryMs ?? LEASE_TRY_MS);
    this.timers.set('lease', timer);
  }

  /**
   * A close was committed (the sessions NOTIFY: `market/tick`, or `*` after the listener
   * reconnected): a process following the closes looks at once instead of at its next poll.
   */
  heardClose(payload: string): void {
    if (this.stopped || this.leading || !this.ready) return;
    const market = payload === '*' ? undefined : payload.split('/')[0];
    for (const m of this.markets) if (market === undefined || m.id === market) this.wake(m);
  }

  /** Runs the market's timer turn now, or right after the one under way. */
  private wake(m: ScheduledMarket): void {
    if (this.stopped) return;
    if (this.turning.has(m.id)) {
      this.woken.add(m.id);
      return;
    }
    clearTimeout(this.timers.get(m.id));
    this.schedule(m, 0);
  }

  /**
   * Marks the payouts whose time has come paid (CONTRACT.md: 3 days of service time after they were
   * scheduled). The payouts actor pays each once, whichever supervisor asks first.
   */
  async payDue(): Promise<number[]> {
    const { paid, nextAt } = await this.actors.ask(payoutsRef, {
      kind: 'payDue',
      at: this.clock.realNow(),
    });
    this.nextPayoutAt = nextAt;
    if (paid.length) this.opts.log.info({ payouts: paid }, `${paid.length} payout(s) paid`);
    return paid;
  }

  /**
   * Looks for due payouts and competitions to open or finish when the next is due, at the latest
   * every PAYOUT_SWEEP_MS; a failed look is logged and retried after SWEEP_RETRY_MS.
   */
  private schedulePayouts(delayMs = 0): void {
    if (this.stopped || !this.leading) return;
    const timer = setTimeout(() => {
      let next = SWEEP_RETRY_MS;
      const run = this.payDue()
        .then(() => this.runCompetitions())
        .then(
          () => {
            const cap = this.opts.payoutSweepMs ?? PAYOUT_SWEEP_MS;
            const dueAts = [this.nextPayoutAt, this.nextCompetitionAt()];
            next = sweepDelayMs(this.clock.realNow(), dueAts, cap);
          },
          (err) =>
            this.opts.log.warn(
              { err },
              `paying due payouts or running competitions failed: ${causeOf(err)}; the next sweep retries`,
            ),
        )
        .finally(() => {
          this.running.delete(run);
          this.schedulePayouts(next);
        });
      this.running.add(run);
    }, delayMs);
    this.timers.set('payouts', timer);
  }

  /** When the current competition window of a market ends and the next opens (real unix seconds); null without competitions. */
  private nextCompetitionAt(): number | null {
    const ends = this.markets.flatMap((m) => {
      const n = COMPETITION_WINDOW_SESSIONS[m.id];
      if (!n) return [];
      const w = Math.floor(this.clock.tick(m.interval_seconds) / n);
      return [this.clock.closesAt((w + 1) * n - 1, m.interval_seconds)];
    });
    return ends.length ? Math.min(...ends) : null;
  }

  /** Records the older history in the background, newest sessions first, in bounded turns. */
  private async backfillRest(
    plans: { m: ScheduledMarket; from: number; to: number }[],
  ): Promise<void> {
    const chunk = this.opts.backfillChunk ?? 24;
    await Promise.all(
      plans.map(async ({ m, from, to }) => {
        const t0 = Date.now();
        let recorded = 0;
        let abandoned = 0;
        for (let hi = to; hi >= from && !this.stopped; hi -= chunk) {
          const n = await this.backfillChunk(m, Math.max(from, hi - chunk + 1), hi);
          if (n === null) abandoned++;
          else recorded += n;
        }
        if (this.stopped) return;
        // An abandoned chunk leaves a gap: the history is not complete, so it is never served as final.
        if (abandoned)
          this.opts.log.error(
            { market: m.id, chunks: abandoned },
            `history backfill of ${m.id} incomplete: ${abandoned} chunk(s) abandoned`,
          );
        else this.markLoaded(m.id);
        if (recorded)
          this.opts.log.info(
            { market: m.id, sessions: recorded, ms: Date.now() - t0 },
            'history backfill finished',
          );
      }),
    );
  }

  /** One backfill turn, retried with backoff; null when given up (or stopped). */
  private async backfillChunk(
    m: ScheduledMarket,
    from: number,
    to: number,
  ): Promise<number | null> {
    const p = this.opts.backfillRetry ?? BACKFILL_RETRY;
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.actors.ask(marketRef(m.id), { kind: 'backfill', from, to })).recorded;
      } catch (err) {
        if (this.stopped) return null;
        const giveUp = attempt >= p.attempts;
        this.opts.metrics?.backfillChunkFailed(m.id, giveUp);
        if (giveUp) {
          this.opts.log.error(
            { err, market: m.id, from, to, attempt },
            `backfill chunk ${m.id} ${from}..${to} abandoned after ${attempt} attempts: ${causeOf(err)}`,
          );
          return null;
        }
        const delayMs = backoffMs(attempt, p);
        this.opts.log.error(
          { err, market: m.id, from, to, attempt, retryInMs: Math.round(delayMs) },
          `backfill chunk failed: ${causeOf(err)}; retrying`,
        );
        await this.sleeper.sleep(delayMs);
      }
    }
  }

  /** Whether this process has seen the market's whole history recorded. */
  historyLoaded(market: string): boolean {
    return this.loaded.has(market);
  }

  /** Resolves when the background history backfill has finished (tests, bench). */
  async backfilled(): Promise<void> {
    await this.backfilling;
  }

  /** Closes every session whose time has passed, on every market, and pays due payouts (what the timers do). */
  async runDue(): Promise<void> {
    await Promise.all(this.markets.map((m) => this.catchUp(m)));
    await this.payDue();
    await this.runCompetitions();
  }

  /**
   * Keeps a running competition on every market (the window of the current session, src/rules.ts
   * COMPETITION_WINDOW_SESSIONS) and finishes the ended ones. Each competition's actor decides:
   * opening is keyed by the window's id, finishing flips its status once with the prizes, so two
   * supervisors, or one after a restart, never open or pay twice.
   */
  async runCompetitions(): Promise<string[]> {
    const at = this.clock.realNow();
    const finished: string[] = [];
    for (const m of this.markets) {
      const n = COMPETITION_WINDOW_SESSIONS[m.id];
      if (!n) continue;
      const w = Math.floor(this.clock.tick(m.interval_seconds) / n);
      const { due } = await this.actors.ask(competitionRef(competitionId(m.id, w)), {
        kind: 'open',
        market: m.id,
        name: `${m.id} challenge #${w}`,
        at,
        startsAt: this.clock.closesAt(w * n - 1, m.interval_seconds),
        endsAt: this.clock.closesAt((w + 1) * n - 1, m.interval_seconds),
      });
      for (const id of due) {
        const r = await this.actors.ask(competitionRef(id), { kind: 'finish', at });
        if (r.finished) {
          finished.push(id);
          this.opts.log.info({ competition: id, prizes: r.prizes }, `competition ${id} finished`);
        }
      }
    }
    return finished;
  }

  /** The open session of a market as the record has it. */
  openTick(market: string): number | undefined {
    return this.open.get(market);
  }

  /**
   * Resolves true once the record has opened session `tick` of `market` (or a later one), false
   * after `timeoutMs` of real time. The menu follows the clock; the record opens a session at the
   * previous one's close, a moment after the boundary: an order on the new menu waits for it here.
   */
  recordOpened(market: string, tick: number, timeoutMs: number): Promise<boolean> {
    if ((this.open.get(market) ?? -Infinity) >= tick) return Promise.resolve(true);
    if (this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const list = this.waiting.get(market) ?? [];
      const w = {
        tick,
        done: (opened: boolean) => {
          clearTimeout(timer);
          const l = this.waiting.get(market) ?? [];
          const i = l.indexOf(w);
          if (i >= 0) l.splice(i, 1);
          resolve(opened);
        },
      };
      const timer = setTimeout(() => w.done(false), timeoutMs);
      list.push(w);
      this.waiting.set(market, list);
    });
  }

  /**
   * What this process has seen committed of the record, each market's open session, for the reads
   * a replica may serve (actors/record/replica.ts); undefined while a market's history is still
   * loading: those sessions are written outside the closes, so their reads stay on the primary.
   */
  readMark(): Record<string, number> | undefined {
    return this.mark;
  }

  private markLoaded(market: string): void {
    this.loaded.add(market);
    this.remark();
  }

  private remark(): void {
    const whole = this.markets.every((m) => this.loaded.has(m.id) && this.open.has(m.id));
    this.mark = whole
      ? Object.fromEntries(this.markets.map((m) => [m.id, this.open.get(m.id)!]))
      : undefined;
  }

  private setOpen(market: string, tick: number): void {
    this.open.set(market, tick);
    this.remark();
    for (const w of [...(this.waiting.get(market) ?? [])]) if (w.tick <= tick) w.done(true);
  }

  /** The open session as the record's routes serve it: moves after the close's warming. */
  recordOpenTick(market: string): number | undefined {
    return this.recordOpen.get(market);
  }

  /** Closes every session of `m` whose time has passed, oldest first. */
  private async catchUp(m: ScheduledMarket): Promise<void> {
    const current = this.clock.tick(m.interval_seconds);
    let open = this.open.get(m.id)!;
    while (open < current && !this.stopped) {
      const behind = current - open;
      const next =
        behind > this.opts.catchupLimit ? current - this.opts.catchupLimit + 1 : open + 1;
      if (next > open + 1) {
        this.opts.log.warn(
          { market: m.id, from: open, to: next },
          'downtime beyond the catch-up bound: sessions skipped',
        );
      }
      const reply = await this.actors.ask(marketRef(m.id), { kind: 'close', tick: open, next });
      this.quarantined(m.id, open, reply);
      this.opts.onClose?.(m.id, open, reply);
      const prev = this.recordOpen.get(m.id) ?? open;
      open = reply.open;
      this.setOpen(m.id, open);
      // Warm only the close that brings the market up to date: a catch-up's earlier ones settle
      // sessions nobody reads before the last one.
      if (this.opts.warm && open >= current) await this.warmRecord(m.id, prev, open);
      this.recordOpen.set(m.id, open);
    }
  }

  private async warmRecord(market: string, prevOpen: number, open: number): Promise<void> {
    try {
      await this.opts.warm!(market, prevOpen, open);
    } catch (err) {
      this.opts.log.warn(
        { err, market, open },
        `warming the record after the close of ${market} failed: ${causeOf(err)}; requests build it`,
      );
    }
  }

  /** Orders the close refunded instead of filling: each an error for operators, the session closed anyway. */
  private quarantined(market: string, tick: number, reply: CloseReply): void {
    const q = reply.quarantined ?? [];
    if (!q.length) return;
    this.opts.metrics?.ordersQuarantined(market, q.length);
    for (const o of q) {
      this.opts.log.error(
        {
          market,
          tick,
          order: o.order_id,
          account: o.account_id,
          total_cents: o.total_cents,
          refunded_cents: o.refunded_cents,
          reason: o.reason,
        },
        `close of ${market} ${tick} refunded order ${o.order_id} instead of filling it: ${o.reason}`,
      );
    }
  }

  /**
   * Arms the timer of `m`: at its next close, or after `delayMs` (retrying a failed one, a woken
   * turn). Its turn closes what is due when this process runs the closes, else follows them (again
   * every FOLLOW_POLL_MS while a due close is not yet seen).
   */
  private schedule(m: ScheduledMarket, delayMs?: number): void {
    if (this.stopped) return;
    const open = this.open.get(m.id)!;
    const dueMs =
      delayMs ??
      this.clock.closesAt(open, m.interval_seconds) * 1000 - this.clock.realNow() * 1000 + 5;
    const timer = setTimeout(
      () => {
        const leading = this.leading;
        this.turning.add(m.id);
        const run = (leading ? this.catchUp(m) : this.follow(m))
          .then(
            () => {
              this.failures.delete(m.id);
              const behind = !leading && this.open.get(m.id)! < this.clock.tick(m.interval_seconds);
              return behind ? FOLLOW_POLL_MS : undefined;
            },
            (err) => (leading ? this.closeFailed(m, err) : this.followFailed(m, err)),
          )
          .then((next) => {
            this.turning.delete(m.id);
            this.schedule(m, this.woken.delete(m.id) ? 0 : next);
          })
          .finally(() => this.running.delete(run));
        this.running.add(run);
      },
      Math.max(0, Math.min(dueMs, 2 ** 31 - 1)),
    );
    this.timers.set(m.id, timer);
  }

  /** A follower's look at the record failed: logged, and looked again after FOLLOW_POLL_MS (the database's own trouble shows elsewhere). */
  private followFailed(m: ScheduledMarket, err: unknown): number {
    if (!this.stopped)
      this.opts.log.warn(
        { err, market: m.id },
        `following the closes of ${m.id} failed: ${causeOf(err)}; looking again`,
      );
    return FOLLOW_POLL_MS;
  }

  /**
   * Logs and counts a failed close; returns the delay before the next attempt. A close whose
   * market actor did not answer in time (its turn may have gone through, or the process was too
   * busy to hear it) is asked again at once, up to CLOSE_TIMEOUTS_RETRIED_AT_ONCE times: the actor
   * closes a session once, so a second ask answers at once if the first turn closed it, and a
   * backoff would only make the session later.
   */
  private closeFailed(m: ScheduledMarket, err: unknown): number | undefined {
    if (this.stopped) return undefined;
    const attempt = (this.failures.get(m.id) ?? 0) + 1;
    this.failures.set(m.id, attempt);
    const atOnce = err instanceof AskTimedOut && attempt <= CLOSE_TIMEOUTS_RETRIED_AT_ONCE;
    const delayMs = atOnce ? 0 : backoffMs(attempt, this.opts.closeRetry ?? CLOSE_RETRY);
    this.opts.metrics?.closeFailed(m.id);
    this.opts.log.error(
      { err, market: m.id, tick: this.open.get(m.id), attempt, retryInMs: Math.round(delayMs) },
      `close of ${m.id} ${this.open.get(m.id)} failed: ${causeOf(err)}; retrying${atOnce ? ' at once' : ''}`,
    );
    return delayMs;
  }

  /** One webhook delivery pass now (tests; the passes run by themselves). */
  deliverWebhooks(): Promise<DeliverReport> {
    return this.webhooks.deliver();
  }

  /** An account's log grew (the svc_events NOTIFY): the next delivery pass runs soon (WebhookPasses.wake). */
  wakeWebhooks(): void {
    this.webhooks.wake();
  }

  /** Stops scheduling and waits for closes under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.webhooks.stop();
    for (const t of this.timers.values()) clearTimeout(t);
    for (const list of this.waiting.values()) for (const w of [...list]) w.done(false);
    this.sleeper.wakeAll();
    await Promise.all([...this.running, this.backfilling]);
  }
}
