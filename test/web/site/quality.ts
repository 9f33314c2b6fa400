// Every kind of page of the site in headless Chromium: axe-core finds no serious
// or critical accessibility violation, and at a phone's 375 px nothing widens the page (wide tables
// scroll in their own box), and no page breaks its CSP. The pages are found by crawling, as a visitor and as a holder with an
// agent, an order and a cart; one page of each kind is checked, once: a market's page stands for the
// four markets' (one template), and the holder checks the pages a visitor cannot reach plus the home
// page under the holder's own header; the visitor also checks /api/docs once Swagger UI has drawn it
// (its styles are not the site's). A page that fails a check leaves its 375 px
// screenshot in test-artifacts/.
import t from 'tap';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser } from 'playwright-core';
import { registerAgent } from '../../helpers/agents.js';
import { artifact, launchChromium, useServiceClock } from '../../helpers/browser.js';
import { crawl, shapeOf } from '../../helpers/crawl.js';
import { registerHolder, sharedRecordedSite } from '../../helpers/web.js';

// A frozen clock on a day of history: the record has closed and settled sessions to link to.
const svc = await sharedRecordedSite();
const browser: Browser = await launchChromium(t);

/**
 * A page's kind: its path's shape (test/helpers/crawl.ts) with a market or competition id folded
 * in, since every market's pages share one template; query variants (sorts, filters) share it too.
 */
const kindOf = (url: string) =>
  shapeOf(url.split('?')[0]).replace(/\b(?:m15|m45|h2|h10)(?:-:n|-\d+)?\b/g, ':market');

/** One page of each kind that answers 200 with HTML, as the crawl found them, less the kinds in `checked`. */
async function pageKinds(
  starts: string[],
  checked: Set<string>,
  cookie?: string,
): Promise<string[]> {
  const pages = await crawl(svc, starts, {
    cookie,
    perShape: 1,
    skip: (p) => p.startsWith('/logout') || p.startsWith('/api/docs'),
  });
  const kinds = new Map<string, string>();
  for (const p of pages)
    if (
      p.status === 200 &&
      p.type.startsWith('text/html') &&
      !checked.has(kindOf(p.url)) &&
      !kinds.has(kindOf(p.url))
    )
      kinds.set(kindOf(p.url), p.url);
  return [...kinds.values()];
}
/** The kinds of page the visitor checked: the holder checks the others (and the home page). */
const visitorKinds = new Set<string>();

async function holderWithWork(): Promise<{ cookie: string; starts: string[] }> {
  const { cookie } = await registerHolder(svc, 'quality@example.org');
  const agent = await registerAgent(svc);
  const menu = await svc.getJson('/api/v1/markets/h2/deals?limit=5');
  const order = await agent.post('/api/v1/orders', {
    market: 'h2',
    offer_key: menu.body.deals[0].key,
    qty: 1,
  });
  const item = await agent.post('/api/v1/cart/items', {
    market: 'h2',
    offer_key: menu.body.deals[1].key,
    qty: 1,
  });
  if (order.status !== 201 || item.status !== 201)
    throw new Error(`setup: ${order.status} ${item.status}`);
  return {
    cookie,
    starts: [
      '/console',
      new URL(order.body.purchase_url).pathname,
      new URL(item.body.checkout_url).pathname,
    ],
  };
}

const cookieFor = (value: string) => {
  const [name, v] = value.split('=');
  return [{ name, value: v, url: svc.config.baseUrl }];
};

for (const who of ['visitor', 'holder'] as const) {
  t.test(`${who}: no serious or critical axe violation, nothing wider than a phone`, async (t) => {
    const setup = who === 'holder' ? await holderWithWork() : { cookie: undefined, starts: ['/'] };
    const found = await pageKinds(
      setup.starts,
      who === 'holder' ? visitorKinds : new Set(),
      setup.cookie,
    );
    if (who === 'visitor') for (const p of found) visitorKinds.add(kindOf(p));
    const paths = who === 'holder' ? ['/', ...found] : [...found, '/api/docs'];
    t.ok(
      found.length >= (who === 'holder' ? 8 : 12),
      `${found.length} kinds of page found: ${found.join(' ')}`,
    );
    const context = await browser.newContext({ baseURL: svc.config.baseUrl });
    await useServiceClock(context, svc);
    t.teardown(() => context.close());
    if (setup.cookie) await context.addCookies(cookieFor(setup.cookie));
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(`${page.url()}: ${m.text()}`);
    });
    for (const path of paths) {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(path);
      if (path === '/api/docs')
        await page.locator('.swagger-ui .opblock').first().waitFor({ timeout: 30_000 });
      // Legacy mode: axe.run in the page itself. The default runs axe per frame, then starts a new
      // page for each check to merge the frames' results (the site's pages have no frame of their
      // own): the same findings, compared page by page, at a much higher cost.
      const axe = await new AxeBuilder({ page })
        .setLegacyMode(true)
        .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
        .analyze();
      const bad = axe.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map(
          (v) =>
            `${v.id} (${v.impact}): ${v.nodes
              .slice(0, 3)
              .map((n) => n.target.join(' '))
              .join(', ')}`,
        );
      t.same(bad, [], `${path}: axe`);
      await page.setViewportSize({ width: 375, height: 800 });
      const widths = await page.evaluate(() => {
        // What sticks out, to name in the message: the first few elements past the right edge.
        const wide = [...document.querySelectorAll('body *')]
          .filter(
            (e) =>
              e.getBoundingClientRect().right > window.innerWidth + 0.5 &&
              !e.parentElement?.closest('table'),
          )
          .slice(0, 3)
          .map(
            (e) =>
              `${e.tagName.toLowerCase()}${e.className ? '.' + String(e.className).split(' ')[0] : ''}`,
          );
        return { page: document.documentElement.scrollWidth, view: window.innerWidth, wide };
      });
      t.ok(
        widths.page <= widths.view,
        `${path}: ${widths.page} px wide at ${widths.view} px ${widths.wide.join(' ')}`,
      );
      // The screenshot of a page that failed a check only (a full page at 375 px costs time).
      if (bad.length || widths.page > widths.view)
        await page.screenshot({
          path: artifact(`site-375-${who}-${shapeOf(path).replace(/[^a-z0-9]+/gi, '_')}.png`),
          fullPage: true,
        });
    }
    t.same(
      violations,
      [],
      'no page breaks its Content-Security-Policy (no inline script or style)',
    );
  });
}
