// The webhook attempts one process has in flight (CONTRACT.md "Events" → Webhooks: one agent's slow
// or dead receivers never delay another agent's deliveries): a bounded set that the delivery turn
// refills as attempts end, never waiting for its slowest, with the counts per endpoint and per
// account that the claim's caps need (queue.ts `claim`). An attempt outlives the turn that started
// it: its result waits here for the next turn to record it. The set is the worker's (module state
// of actor.ts), not an activation's: an activation dropped after a failed turn must not forget what
// is still in flight, or the caps would be exceeded.
import {
  ACCOUNT_IN_FLIGHT,
  ENDPOINT_IN_FLIGHT,
  IN_FLIGHT_MAX,
  type Busy,
  type Claimed,
  type Result,
} from './queue.js';

type Running = { webhookId: number; accountId: number; endpointCap: number };

export class InFlight {
  private readonly running = new Map<number, Running>();
  private finished: Result[] = [];
  private wake: (() => void) | undefined;

  constructor(readonly max = IN_FLIGHT_MAX) {}

  /** Attempts in flight now. */
  get size(): number {
    return this.running.size;
  }

  /** Places free for new attempts. */
  get free(): number {
    return Math.max(0, this.max - this.running.size);
  }

  /** The delivery ids in flight. */
  ids(): number[] {
    return [...this.running.keys()];
  }

  /** Tracks `attempt` (which never rejects) of claimed delivery `c` until it ends; its result then waits for take(). */
  start(c: Claimed, attempt: Promise<Result>): void {
    this.running.set(c.id, {
      webhookId: c.webhook_id,
      accountId: c.account_id,
      endpointCap: c.failing ? 1 : ENDPOINT_IN_FLIGHT,
    });
    void attempt.then((r) => {
      this.running.delete(c.id);
      this.finished.push(r);
      this.wake?.();
    });
  }

  /** The results of the attempts that ended since the last call. */
  take(): Result[] {
    const out = this.finished;
    this.finished = [];
    return out;
  }

  /** Puts back results taken but not recorded (the statement failed): the next take() has them again. */
  restore(results: Result[]): void {
    this.finished.unshift(...results);
  }

  /** Resolves once an attempt has ended unrecorded (at once if one has), or after `ms` of real time, whichever is first. */
  settled(ms: number): Promise<void> {
    if (this.finished.length || !this.running.size) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  /** In flight per webhook and per account, and those at their cap (the claim skips their rows). */
  busy(): Busy {
    const webhooks = new Map<number, { n: number; cap: number }>();
    const accounts = new Map<number, number>();
    for (const r of this.running.values()) {
      const w = webhooks.get(r.webhookId) ?? { n: 0, cap: r.endpointCap };
      webhooks.set(r.webhookId, { n: w.n + 1, cap: Math.min(w.cap, r.endpointCap) });
      accounts.set(r.accountId, (accounts.get(r.accountId) ?? 0) + 1);
    }
    return {
      webhooks: [...webhooks].map(([id, w]) => ({ id, n: w.n })),
      accounts: [...accounts].map(([id, n]) => ({ id, n })),
      fullWebhooks: [...webhooks].filter(([, w]) => w.n >= w.cap).map(([id]) => id),
      fullAccounts: [...accounts].filter(([, n]) => n >= ACCOUNT_IN_FLIGHT).map(([id]) => id),
    };
  }
}
