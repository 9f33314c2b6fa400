// Waiting without a clock: a condition is polled until it holds, with no deadline of its own (tap's
// per-file time-out is the cap on a hang), so no outcome depends on how fast the machine is.
// The only sleep the tests use lives here (test/unit/no-wall-clock.test.ts refuses others).

/** Resolves after `ms` of real time: a polling interval, never a wait for something to happen. */
const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` every ~20 ms until it returns something truthy (or a promise of it), and resolves
 * with that value. `what` names the condition in the error a throwing probe is wrapped in.
 */
export async function eventually<T>(probe: () => T | Promise<T>, what: string, everyMs = 20): Promise<NonNullable<Awaited<T>>> {
  for (;;) {
    let v: Awaited<T>;
    try {
      v = await probe();
    } catch (err) {
      throw new Error(`waiting for ${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (v) return v as NonNullable<Awaited<T>>;
    await pause(everyMs);
  }
}

