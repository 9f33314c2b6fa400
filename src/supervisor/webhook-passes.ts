// The webhook delivery passes the supervisor runs on every process (CONTRACT.md "Events" →
// Webhooks): one pass at a time, every WEBHOOK_PASS_MS (less often while no webhook is live), at
// once again while there is work, and soon after an account's log grew. Split from the supervisor: it shares only its stop and its running set.
import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import { causeOf } from './backoff.js';
import type { ActorRuntime } from '../../actors/runtime/client.js';
import {
  delivererRef,
  SEND_TIMEOUT_MS,
  type DeliverReport,
} from '../../actors/webhooks/messages.js';

/** How often a webhook delivery pass runs (one after the other: a pass that reached a bound is followed at once). */
const WEBHOOK_PASS_MS = 1000;
/**
 * With no live webhook seen, passes are this many times further apart: an idle node stays quiet, and
 * an account's new events (a webhook may have just been made) still wake one within WEBHOOK_PASS_MS.
 */
const WEBHOOK_IDLE_FACTOR = 10;
/** A pass woken by a NOTIFY (an account's log grew) runs this soon: NOTIFYs of one burst share it. */
const WEBHOOK_WAKE_MS = 50;
/**
 * While attempts are in flight a pass waits at most this long for one to end (never for the
 * slowest), and the next pass follows at once: new events and due retries wait at most this long
 * behind attempts that hang.
 */
const WEBHOOK_WAIT_MS = 500;
/** Deliveries due this long (seconds) and not yet sent are a backlog worth a warning (CONTRACT.md promises 10 s)... */
export const WEBHOOK_BACKLOG_WARN_SECONDS = 10;
/** ...logged at most once in this many seconds of the service clock. */
const WEBHOOK_BACKLOG_WARN_EVERY_SECONDS = 60;

export type WebhookPassOptions = {
  log: Logger;
  metrics?: { webhookPass(r: DeliverReport): void };
  webhookAllowPrivate?: boolean;
  webhookPassMs?: number;
  webhookTimeoutMs?: number;
};

export class WebhookPasses {
  /** Whether the last pass saw a live webhook, one is running, a wake came during it, one is armed by a wake. */
  private readonly pass = {
    live: false,
    running: false,
    again: false,
    woken: false,
    warnedAt: Number.NEGATIVE_INFINITY,
  };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly actors: Pick<ActorRuntime, 'ask'>,
    private readonly clock: Clock,
    private readonly opts: WebhookPassOptions,
    /** The supervisor's work under way, which its stop awaits. */
    private readonly running: Set<Promise<void>>,
    private readonly stopped: () => boolean,
  ) {}

  start(): void {
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /**
   * One webhook delivery pass (CONTRACT.md "Events" → Webhooks): the webhooks actor records the
   * attempts that ended, enqueues from the event log, claims due deliveries fairly into its free
   * places (no other process holds them) and starts them, waiting for none but the first to end.
   * A backlog (deliveries due WEBHOOK_BACKLOG_WARN_SECONDS and not yet sent) is logged at warn.
   */
  async deliver(): Promise<DeliverReport> {
    const at = this.clock.realNow();
    const r = await this.actors.ask(delivererRef, {
      kind: 'deliver',
      at,
      allowPrivate: this.opts.webhookAllowPrivate ?? false,
      timeoutMs: this.opts.webhookTimeoutMs ?? SEND_TIMEOUT_MS,
      waitMs: WEBHOOK_WAIT_MS,
    });
    this.opts.metrics?.webhookPass(r);
    const w = this.pass;
    if (
      r.backlog.oldestSeconds >= WEBHOOK_BACKLOG_WARN_SECONDS &&
      at - w.warnedAt >= WEBHOOK_BACKLOG_WARN_EVERY_SECONDS
    ) {
      w.warnedAt = at;
      this.opts.log.warn(
        { webhookBacklog: r.backlog, inFlight: r.inFlight },
        `webhook delivery backlog: ${r.backlog.due} deliveries due and not yet sent, the oldest due ${Math.round(r.backlog.oldestSeconds)} s ago (${r.inFlight} attempts in flight here)`,
      );
    }
    return r;
  }

  /**
   * Runs a delivery pass every WEBHOOK_PASS_MS, at once again after a pass that did or left work or
   * while attempts are in flight (each such pass waited up to WEBHOOK_WAIT_MS for one to end), and
   * soon after a wake (wake); a failed pass is logged, the next retries.
   */
  schedule(delayMs = this.passMs()): void {
    if (this.stopped()) return;
    const w = this.pass;
    const timer = setTimeout(() => {
      let next: number | undefined;
      Object.assign(w, { running: true, again: false, woken: false });
      const run = this.deliver()
        .then(
          (r) => {
            w.live = r.live;
            if (r.sent || r.enqueued || r.delivered || r.retried || r.failed) {
              this.opts.log.info(
                { webhooks: r },
                `webhooks: ${r.enqueued} enqueued, ${r.sent} sent, ${r.delivered} delivered, ${r.retried} to retry, ${r.failed} failed for good, ${r.inFlight} in flight`,
              );
            }
            // Work begets work: a place freed may take a delivery its endpoint's or account's cap held back.
            if (r.more || r.inFlight || r.sent || r.delivered || r.retried || r.failed) next = 0;
          },
          (err) =>
            this.opts.log.warn(
              { err },
              `webhook delivery pass failed: ${causeOf(err)}; the next pass retries`,
            ),
        )
        .finally(() => {
          w.running = false;
          this.running.delete(run);
          this.schedule(next ?? this.restMs());
        });
      this.running.add(run);
    }, delayMs);
    this.timer = timer;
  }

  /**
   * An account's log grew (the svc_events NOTIFY): the next delivery pass runs within
   * WEBHOOK_WAKE_MS instead of at its time when a webhook is live, within WEBHOOK_PASS_MS when none
   * was (one may have just been made). Coalesced: a burst of wakes arms one pass; a wake during a
   * pass runs another after it.
   */
  wake(): void {
    const w = this.pass;
    if (this.stopped() || !this.timer) return;
    if (w.running) {
      w.again = true;
      return;
    }
    if (w.woken) return;
    w.woken = true;
    clearTimeout(this.timer);
    this.schedule(w.live ? WEBHOOK_WAKE_MS : this.passMs());
  }

  private passMs(): number {
    return this.opts.webhookPassMs ?? WEBHOOK_PASS_MS;
  }

  /** How long a pass that found nothing to do waits for the next: soon when woken meanwhile, long when nothing is live. */
  private restMs(): number {
    const w = this.pass;
    if (w.again) return w.live ? WEBHOOK_WAKE_MS : this.passMs();
    return w.live ? this.passMs() : WEBHOOK_IDLE_FACTOR * this.passMs();
  }
}
