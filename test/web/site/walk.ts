// A newcomer's walk through the site in headless Chromium, by clicking: home → markets →
// a market's menu → a deal's family → explore → a market's sessions → one closed session → assets →
// a family; then a holder reading an agent's purchase page on a 375 px phone, judging the deal before
// paying. Screenshots of every step go to test-artifacts/ (not committed).
import t from 'tap';
import type { Page } from 'playwright-core';
import { registerAgent } from '../../helpers/agents.js';
import { artifact, launchChromium, useServiceClock } from '../../helpers/browser.js';
import { registerHolder, sharedRecordedSite } from '../../helpers/web.js';

// A frozen clock on a day of history: the record has closed and settled sessions to link to.
const svc = await sharedRecordedSite();
const browser = await launchChromium(t);

async function step(
  t: Tap.Test,
  page: Page,
  name: string,
  path: RegExp,
  heading: RegExp,
): Promise<void> {
  await page.waitForURL((u) => path.test(u.pathname));
  t.match(new URL(page.url()).pathname, path, `${name}: at ${new URL(page.url()).pathname}`);
  t.match(await page.locator('h1').first().innerText(), heading, `${name}: its heading`);
  await page.screenshot({ path: artifact(`walk-${name}.png`), fullPage: true });
}

t.test('a visitor clicks from the home page to a closed session and a family', async (t) => {
  const page = await browser.newPage({
    baseURL: svc.config.baseUrl,
    viewport: { width: 1280, height: 900 },
  });
  await useServiceClock(page.context(), svc);
  t.teardown(() => page.close());
  await page.goto('/');
  await step(t, page, 'home', /^\/$/, /Agent Market-Access/);
  t.ok(
    await page.locator('figure.chart svg[role="img"]').count(),
    'the home page charts the pulse',
  );

  await page
    .getByRole('navigation', { name: 'Site' })
    .getByRole('link', { name: 'Markets' })
    .click();
  await step(t, page, 'markets', /^\/markets$/, /Markets/);
  await page.locator('a[href="/markets/m15"]').first().click();
  await step(t, page, 'market-m15', /^\/markets\/m15$/, /m15/);
  t.ok(await page.locator('.countdown[data-closes]').count(), 'a countdown to the close');
  const rows = page.locator('table tbody tr');
  t.ok((await rows.count()) > 0, 'the menu lists deals');
  const projection = await rows
    .first()
    .getByRole('link', { name: 'projection' })
    .getAttribute('href');
  const p = await svc.getJson(projection!);
  t.equal(p.status, 200, "the first deal's projection link answers");
  t.ok(Array.isArray(p.body.curve.mid), 'with a P&L curve');

  await rows.first().locator('a[href^="/assets/m15/"]').click();
  await step(t, page, 'deal-family', /^\/assets\/m15\/\d+$/, /./);
  t.ok(await page.locator('figure.chart').count(), "the deal's family is charted");

  await page
    .getByRole('navigation', { name: 'Site' })
    .getByRole('link', { name: 'Explore' })
    .click();
  await step(t, page, 'explore', /^\/explore$/, /./);
  await page.locator('a[href="/explore/m15"]').first().click();
  await step(t, page, 'explore-m15', /^\/explore\/m15$/, /m15/);
  // The oldest sessions of the table have settled (a day is on record).
  await page.locator('table a[href^="/explore/m15/tick/"]').last().click();
  await step(t, page, 'closed-session', /^\/explore\/m15\/tick\/\d+$/, /session \d+/);
  const text = await page.locator('main').innerText();
  t.match(text, /observed|rejected/i, 'rows carry their status');

  await page
    .getByRole('navigation', { name: 'Site' })
    .getByRole('link', { name: 'Assets' })
    .click();
  await step(t, page, 'assets', /^\/assets$/, /./);
  await page.locator('table a[href^="/assets/m15/"]').first().click();
  await step(t, page, 'family', /^\/assets\/m15\/\d+$/, /./);
});

t.test("a holder judges an agent's deal on a phone before paying", async (t) => {
  const { cookie } = await registerHolder(svc, 'walker@example.org');
  const agent = await registerAgent(svc);
  const menu = await svc.getJson('/api/v1/markets/h2/deals?limit=1');
  const order = await agent.post('/api/v1/orders', {
    market: 'h2',
    offer_key: menu.body.deals[0].key,
    qty: 2,
  });
  t.equal(order.status, 201);
  const context = await browser.newContext({
    baseURL: svc.config.baseUrl,
    viewport: { width: 375, height: 800 },
  });
  await useServiceClock(context, svc);
  t.teardown(() => context.close());
  const [name, value] = cookie.split('=');
  await context.addCookies([{ name, value, url: svc.config.baseUrl }]);
  const page = await context.newPage();
  await page.goto(new URL(order.body.purchase_url).pathname);
  const main = await page.locator('main').innerText();
  t.match(main, /resale/i, 'the resale price');
  t.match(main, /margin/i, 'the margin');
  t.match(main, /desk/i, "the desk's own bid");
  t.match(main, /scenario/i, 'the risk in plain words');
  t.ok(
    await page.locator('figure.chart svg[role="img"] title').count(),
    'the projection chart with its text alternative',
  );
  t.match(
    await page.locator('.countdown').first().innerText(),
    /\d+ s\b/,
    'the close counts down in seconds',
  );
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    view: window.innerWidth,
  }));
  t.ok(widths.page <= widths.view, `nothing wider than the phone (${widths.page} px)`);
  await page.screenshot({ path: artifact('walk-purchase-375.png'), fullPage: true });
});
