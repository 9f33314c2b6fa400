// Headless Chromium for the web tests (test/web/): the system's browser at /usr/bin/chromium, or
// CHROMIUM_PATH; closed when the test ends. Screenshots go to test-artifacts/ (git ignores it).
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { timed } from './timing.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = path.resolve('test-artifacts');

/**
 * The browser's environment: the test process's, without libfaketime. Under a moved date (`faketime`,
 * a rehearsal of .ci/run on another day) Chromium is many times slower to start and load a page, so
 * it runs on the real date instead, and a page whose script reads the time gets the
 * service's clock (useServiceClock), never the browser's date.
 */
const browserEnv = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => e[1] !== undefined && !/^(LD_PRELOAD$|FAKETIME)/.test(e[0]),
    ),
  );

export async function launchChromium(t: {
  teardown: (fn: () => unknown) => void;
}): Promise<Browser> {
  const browser = await timed('browser launch', () =>
    chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage'],
      env: browserEnv(),
    }),
  );
  t.teardown(() => browser.close());
  return browser;
}

/**
 * Gives the pages of `context` the service's clock: `Date` in every page (and frame) of the context
 * reads the service's instant, so a page's script (a countdown to a close) computes from the same
 * now as the service that rendered the page, not from the machine's. Call it before the context's
 * first page loads, and again after the test moves a clocked service's clock (ClockedService).
 *
 * Fixed time (Playwright's `clock.setFixedTime`): `Date` stands at the service's instant, as a
 * clocked or recorded service's clock stands until the test moves it; the page's timers keep
 * running on real time, so a countdown's script still ticks. Not `clock.install({ time })` nor
 * `setSystemTime`: their clock runs on from the instant given, and each page that loads moves it on
 * by the browser's `Date.now()` minus this process's at the call. With the machine's date moved by
 * faketime (Chromium keeps the real date, browserEnv) that is the whole move: under
 * `faketime -f -3d` every page would start 3 days ahead of the instant asked; fixed time is exact.
 */
export async function useServiceClock(
  context: BrowserContext,
  svc: { services: { clock: { realNow(): number } } },
): Promise<void> {
  await context.clock.setFixedTime(svc.services.clock.realNow() * 1000);
}

/** Where a screenshot named `name` goes (the folder is made). */
export function artifact(name: string): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}
