// Headless Chromium for the web tests (test/web/): the system's browser at /usr/bin/chromium, or
// CHROMIUM_PATH; closed when the test ends. Screenshots go to test-artifacts/ (git ignores it).
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { timed } from './timing.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = path.resolve('test-artifacts');

export async function launchChromium(t: { teardown: (fn: () => unknown) => void }): Promise<Browser> {
  const browser = await timed('browser launch', () => chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage'] }));
  t.teardown(() => browser.close());
  return browser;
}

/** Where a screenshot named `name` goes (the folder is made). */
export function artifact(name: string): string {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}
