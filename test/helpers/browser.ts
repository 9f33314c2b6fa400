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
 * a rehearsal of .ci/run on another day) Chromium took 67 s instead of 2 s to start and load a page
 * (2026-11-28); it runs on the real date instead, and a page whose script reads the time gets the
 * service's clock (useServiceClock) or computes from the browser's own.
 */
const browserEnv = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined && !/^(LD_PRELOAD$|FAKETIME)/.test(e[0])));

export async function launchChromium(t: { teardown: (fn: () => unknown) => void }): Promise<Browser> {
  const browser = await timed('browser launch', () => chromium.launch({
    executablePath: CHROMIUM, args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage'], env: browserEnv(),
  }));
  t.teardown(() => browser.close());
  return browser;
}

/**
 * Gives the pages of `context` the service's clock: a page's script (a countdown to a close) reads
 * the same instant as the service that rendered it, not the machine's, which runs on while a test
 * holds the service's clock still.
 */
export async function useServiceClock(context: BrowserContext, svc: { services: { clock: { realNow(): number } } }): Promise<void> {
  await context.clock.setFixedTime(svc.services.clock.realNow() * 1000);
}

/** Where a screenshot named `name` goes (the folder is made). */
export function artifact(name: string): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}
