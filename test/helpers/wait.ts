// Waiting without a clock: a condition is polled until it holds, with no deadline of its own (tap's
// per-file time-out is the cap on a hang), so no outcome depends on how fast the machine is. The
// one exception, `within`, is for what the service promises in real time (a webhook delivery
// within 10 s while other receivers hang): a bound counted in polls, never in clock readings.
// The only sleep the tests use lives here (test/unit/no-wall-clock.test.ts refuses others).

/** Resolves after `ms` of real time: a polling interval, never a wait for something to happen. */
const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` every ~20 ms until it returns something truthy (or a promise of it), and resolves
 * with that value. `what` names the condition in the error a throwing probe is wrapped in.
 */
export function eventually<T>(
  probe: () => T | Promise<T>,
  what: string,
  everyMs = 20,
): Promise<NonNullable<Awaited<T>>> {
  return poll(probe, what, everyMs, Number.POSITIVE_INFINITY);
}

/**
 * Like eventually, but fails after `polls` polls `everyMs` apart: at least polls × everyMs of real
 * time (more on a loaded machine, never less), so a promise of the service's in real time ("within
 * 10 s") fails within seconds of its bound instead of at the file's time-out.
 */
export function within<T>(
  polls: number,
  probe: () => T | Promise<T>,
  what: string,
  everyMs = 50,
): Promise<NonNullable<Awaited<T>>> {
  return poll(probe, what, everyMs, polls);
}

async function poll<T>(
  probe: () => T | Promise<T>,
  what: string,
  everyMs: number,
  polls: number,
): Promise<NonNullable<Awaited<T>>> {
  for (let i = 0; ; i++) {
    let v: Awaited<T>;
    try {
      v = await probe();
    } catch (err) {
      throw new Error(`waiting for ${what}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    if (v) return v as NonNullable<Awaited<T>>;
    if (i >= polls)
      throw new Error(
        `${what}: not within ${polls} polls ${everyMs} ms apart (${(polls * everyMs) / 1000} s of real time or more)`,
      );
    await pause(everyMs);
  }
}
