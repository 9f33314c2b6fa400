// A test file's bound on a hang. Waits in the tests have no deadline of their own (wait.ts,
// no-wall-clock.test.ts): what ends a wait that never ends is tap's time-out for the file,
// package.json's "tap".timeout (120 s). A file whose real work can take longer than about half of
// that on a loaded 2-core CI machine declares a larger bound with fileTimeout, as its first
// statement, with what makes it long (the bound: above 2.5 times its CI time and 1.2 times its
// slowest seen under load). test/README.md lists them.
import t from 'tap';

/**
 * Sets this test file's time-out to `seconds` from now: tap's t.setTimeout on the root test, which
 * also resets the runner's time-out for this file's process (the root test tells its parent,
 * @tapjs/core TAP.setTimeout). A longer time-out given to the run (`--timeout=N`) wins, and
 * `--timeout=0` (none, to debug) stays none.
 */
export function fileTimeout(seconds: number): void {
  const run = Number(process.env.TAP_TIMEOUT ?? 30); // tap's default when no runner set it
  if (run === 0) return;
  t.setTimeout(Math.max(seconds, run) * 1000);
}
