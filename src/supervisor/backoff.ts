// Retry delays for the supervisor (ARCHITECTURE rule 6: every retry has a bound, never a hot loop), and how a failure is named in its log.

export type Backoff = {
  /** First delay in milliseconds; each further attempt doubles it... */
  baseMs: number;
  /** ...up to this cap. */
  capMs: number;
};

export type BoundedBackoff = Backoff & {
  /** Attempts in all, the first included; after the last failure the caller gives up. */
  attempts: number;
};

/**
 * The delay after failed attempt `attempt` (1-based): base doubling to the cap, with "equal
 * jitter" (half fixed, half random) so many processes retrying one database spread out, while a
 * delay is never shorter than the one before it until the cap is reached.
 */
export function backoffMs(attempt: number, p: Backoff, random: () => number = Math.random): number {
  const d = Math.min(p.capMs, p.baseMs * 2 ** Math.min(attempt - 1, 40));
  return d / 2 + (random() * d) / 2;
}

/** A sleep that `wakeAll` ends early (a stopping supervisor must not wait out a 60 s backoff). */
export class Sleeper {
  private readonly waiting = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiting.add(done);
    });
  }

  wakeAll(): void {
    for (const done of [...this.waiting]) done();
  }
}

/** A failure's message for a log line (the error itself goes to the log's `err`). */
export const causeOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
