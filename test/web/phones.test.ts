// Phones, in headless Chromium at 375 and 1280 px: a market's page lists 50 deals a page
// (/markets/h10 at most 8 000 px tall at 1280 px, page 2 one click away, a page past the end says so)
// with a readable deal column; at 375 px the console's positions, orders and agents (with the limits
// form) and the cart's lines and checkout become one card per row, every figure of a row in view
// with nothing wider than the phone, while the table stays a table for screen readers; the home
// page's charts scale to their box; a figure or an instant never breaks across lines.
// On a recorded day (the home page's charts have data) with the service's clock driven: two m15
// closes fill the holder's orders into positions with a P&L so far; an agent's cart stays unpaid.
import t from 'tap';
import type { BrowserContext, CDPSession, Locator, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { registerAgent } from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';
import { artifact, launchChromium, useServiceClock } from '../helpers/browser.js';
import { getPage, startRecordedSite } from '../helpers/web.js';
import { withClock } from '../helpers/clocked.js';
import { RECORDED_DAY_MS } from '../helpers/service.js';

const clocked = await withClock((realMs) => startRecordedSite(t, { realMs }), RECORDED_DAY_MS);
const svc = clocked.svc;
const browser = await launchChromium(t);

// The holder pays three m15 orders of its agent; two closes later they are positions selling through.
const holder = await registerHolder(svc, 'phones@example.org');
const agent = await registerAgent(svc, { name: 'Heron scout' });
const orderIds: number[] = [];
for (const deal of (await svc.getJson('/api/v1/markets/m15/deals')).body.deals.slice(0, 3)) {
  const placed = await agent.post('/api/v1/orders', { market: 'm15', offer_key: deal.key, qty: 2 });
  if (placed.status !== 201)
    throw new Error(`order: ${placed.status} ${JSON.stringify(placed.body)}`);
  const paid = await holder.pay(placed.body.purchase_url);
  if (paid.status !== 200) throw new Error(`pay: ${paid.status} ${JSON.stringify(paid.body)}`);
  orderIds.push(placed.body.id);
}
await clocked.closeSession('m15');
await clocked.closeSession('m15');
// The holder grants its agents writing to its carts (the agents page's second table).
const granted = await holder.form('/cart/grant', {
  agent_id: '',
  cart_id: '',
  level: 'write',
  pay_with: 'balance',
  note: 'restocks only',
});
if (granted.status !== 200)
  throw new Error(`grant: ${granted.status} ${JSON.stringify(granted.body)}`);
// Then it proposes five h2 lines in its cart, left to pay.
let checkoutPath = '';
for (const deal of (await svc.getJson('/api/v1/markets/h2/deals')).body.deals.slice(0, 5)) {
  const item = await agent.post('/api/v1/cart/items', {
    market: 'h2',
    offer_key: deal.key,
    qty: 1,
    note: 'cheap for its family, sells fast',
  });
  if (item.status !== 201)
    throw new Error(`cart item: ${item.status} ${JSON.stringify(item.body)}`);
  checkoutPath = new URL(item.body.checkout_url).pathname;
}

async function holderContext(
  t: Tap.Test,
  width: number,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    baseURL: svc.config.baseUrl,
    viewport: { width, height: width === 375 ? 740 : 900 },
  });
  await useServiceClock(context, svc);
  t.teardown(() => context.close());
  const [name, value] = holder.cookie.split('=');
  await context.addCookies([{ name, value, url: svc.config.baseUrl }]);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000); // a missing element fails its check sooner than the file's bound
  return { context, page };
}

const size = (page: Page) =>
  page.evaluate(() => ({
    width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    view: window.innerWidth,
  }));

/**
 * Whether the element is in view across, without scrolling sideways: inside the viewport and inside
 * every box around it that clips (a scrolling table's region).
 */
const inViewAcross = (loc: Locator) =>
  loc.evaluate((el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    let left = 0;
    let right = window.innerWidth;
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (getComputedStyle(a).overflowX === 'visible') continue;
      const b = a.getBoundingClientRect();
      left = Math.max(left, b.left);
      right = Math.min(right, b.right);
    }
    return r.left >= left - 0.5 && r.right <= right + 0.5;
  });

/** Every located element is in view across; `what` names them in the assertion. */
async function allInView(t: Tap.Test, loc: Locator, what: string, atLeast = 1) {
  const n = await loc.count();
  t.ok(n >= atLeast, `${what}: ${n} found`);
  const hidden: number[] = [];
  for (let i = 0; i < n; i++) if (!(await inViewAcross(loc.nth(i)))) hidden.push(i);
  t.same(hidden, [], `${what}: every one in view without scrolling sideways`);
}

/** Figures and instants ("2026-11-26", "12:07", "-98.04", "1995216") split over two lines, outside code and charts. */
const brokenFigures = (page: Page) =>
  page.evaluate(() => {
    const broken: string[] = [];
    const walker = document.createTreeWalker(document.querySelector('main')!, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement!.closest('code, svg, script')) continue;
      for (const m of node.textContent!.matchAll(/-?\d+(?:[.,:/-]\d+)*/g)) {
        if (m[0].length < 2) continue;
        const range = document.createRange();
        range.setStart(node, m.index!);
        range.setEnd(node, m.index! + m[0].length);
        const tops = new Set(
          [...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)),
        );
        if (tops.size > 1) broken.push(m[0]);
      }
    }
    return broken;
  });

/** No serious or critical axe violation (site-quality's rules, run in the page). */
async function noSeriousAxe(t: Tap.Test, page: Page, what: string) {
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
  t.same(bad, [], `${what}: axe`);
}

t.test(
  '/markets/h10: 50 deals a page, at most 8 000 px tall at 1280 px, page 2 a click away',
  async (t) => {
    const { page } = await holderContext(t, 1280);
    await page.goto('/markets/h10');
    const rows = page.locator('table.deals tbody tr');
    t.equal(await rows.count(), 50, '50 deals on the first page');
    const { height, width, view } = await size(page);
    t.ok(height <= 8000, `${height} px tall at 1280 px`);
    t.ok(width <= view, `nothing wider than the window (${width} px)`);
    const table = await page.locator('table.deals').evaluate((el) => ({
      table: el.getBoundingClientRect().width,
      box: el.parentElement!.clientWidth,
    }));
    t.ok(
      table.table <= table.box + 1,
      `every column on a desktop's screen (${table.table} px in ${table.box} px)`,
    );
    const deal = await page
      .locator('table.deals td.deal')
      .first()
      .evaluate((el) => el.getBoundingClientRect().width);
    t.ok(deal >= 200, `a readable deal column (${deal} px)`);
    t.match(
      await page.locator('main').innerText(),
      /this page lists deals 1 to 50 \(page 1 of \d+\)/,
    );
    await page.screenshot({ path: artifact('phones-1280-h10.png'), fullPage: true });

    await page
      .getByRole('navigation', { name: 'Pages of the menu' })
      .getByRole('link', { name: 'Next page' })
      .click();
    await page.waitForURL((u) => u.searchParams.get('page') === '2');
    t.equal(
      await rows.first().locator('td').first().innerText(),
      '51',
      'page 2 starts at the 51st deal',
    );
    t.ok(await page.getByRole('link', { name: 'Previous page' }).count(), 'and leads back');
    t.match(
      await page.getByRole('navigation', { name: 'Pages of the menu' }).innerText(),
      /Page 2 of \d+: deals 51 to 100 of \d+/,
    );
    t.ok((await size(page)).height <= 8000, 'page 2 as short');

    const beyond = await getPage(svc, '/markets/h10?page=99');
    t.equal(beyond.status, 200, 'a page past the end answers');
    t.match(beyond.text, 'This page is past the last one');
    for (const bad of [
      'page=0',
      'page=-1',
      'page=two',
      'page=1.5',
      'page=99999999999999999999',
      'per_page=0',
    ]) {
      const r = await getPage(svc, `/markets/h10?${bad}`);
      t.equal(r.status, 422, `${bad}: refused, not a 5xx`);
    }
  },
);

t.test(
  '/markets/h10 at 375 px: the table scrolls in its own region, the deal column readable',
  async (t) => {
    const { page } = await holderContext(t, 375);
    await page.goto('/markets/h10');
    const { width, view } = await size(page);
    t.ok(width <= view, `nothing wider than the phone (${width} px)`);
    const region = page.getByRole('region', { name: 'Deals of the menu' });
    const scrolls = await region.evaluate((el) => el.scrollWidth > el.clientWidth);
    t.ok(scrolls, "the figures slide inside the table's region");
    const deal = page.locator('table.deals td.deal').first();
    t.ok(
      (await deal.evaluate((el) => el.getBoundingClientRect().width)) >= 180,
      'the deal column is not squeezed',
    );
    t.ok(await inViewAcross(deal), 'and in view');
    await page.screenshot({ path: artifact('phones-375-h10.png'), fullPage: true });
  },
);

/**
 * The body cells of the column headed `header` in the first table of `main` that has one (the
 * column's place read from the header row, so the same check runs on any layout).
 */
async function column(page: Page, header: string): Promise<Locator> {
  const at = await page.locator('main table').evaluateAll((tables, h) => {
    for (const [i, table] of tables.entries()) {
      const k = [...table.querySelectorAll('thead th')].findIndex(
        (th) => th.textContent!.trim() === h,
      );
      if (k >= 0) return { table: i, nth: k + 1 };
    }
    return null;
  }, header);
  if (!at) throw new Error(`no column ${header}`);
  return page.locator('main table').nth(at.table).locator(`tbody > tr > td:nth-child(${at.nth})`);
}

/** Each page's key figures and controls: columns by their header, or elements by selector. */
const KEYS: { path: () => string; name: string; columns: string[]; elements: string[] }[] = [
  {
    name: 'positions',
    path: () => '/console/positions',
    columns: ['Id', 'Deal', 'P&L so far', 'Status'],
    elements: [],
  },
  {
    name: 'orders',
    path: () => '/console/orders',
    columns: ['Id', 'Deal', 'Total', 'Status', 'Receipt'],
    elements: [],
  },
  {
    name: 'agents',
    path: () => '/console/agents',
    columns: ['Agent'],
    elements: [
      'form.limits input[name="max_order"]',
      'form.limits input[name="max_day"]',
      'form.limits input[name="markets"]',
      'form.limits button',
      'button[aria-label^="Revoke grant"]',
    ],
  },
  {
    name: 'cart checkout',
    path: () => checkoutPath,
    columns: ['Deal', 'Total', 'Status'],
    elements: ['#pay-button'],
  },
  {
    name: 'carts',
    path: () => '/cart',
    columns: ['Deal', 'Total', 'Status'],
    elements: ['button[aria-label^="Remove line"]'],
  },
];

/** The rows, column headers and cells Chromium's accessibility tree holds under the first element matching `selector`. */
async function axTable(
  cdp: CDPSession,
  selector: string,
): Promise<Record<'row' | 'columnheader' | 'cell', number>> {
  const { result } = await cdp.send('Runtime.evaluate', {
    expression: `document.querySelector(${JSON.stringify(selector)})`,
  });
  const count = async (role: string) =>
    (await cdp.send('Accessibility.queryAXTree', { objectId: result.objectId, role })).nodes.filter(
      (n) => !n.ignored,
    ).length;
  return {
    row: await count('row'),
    columnheader: await count('columnheader'),
    cell: await count('cell'),
  };
}

t.test(
  "at 375 px the console's and the cart's tables are cards: the key figures in view, nothing wider than the phone",
  async (t) => {
    const { context, page } = await holderContext(t, 375);
    const cdp = await context.newCDPSession(page);
    for (const k of KEYS) {
      await t.test(k.name, async (t) => {
        await page.goto(k.path());
        await page.screenshot({
          path: artifact(`phones-375-${k.name.replace(/ /g, '-')}.png`),
          fullPage: true,
        });
        const { width, view } = await size(page);
        t.ok(width <= view, `${width} px wide at ${view} px`);
        for (const header of k.columns)
          await allInView(t, await column(page, header), `the ${header} column`);
        for (const sel of k.elements) await allInView(t, page.locator(`main ${sel}`), sel);
        const spilled = await page
          .locator('main table.phone-cards > tbody > tr > td')
          .evaluateAll((tds) =>
            tds
              .filter((td) => td.scrollWidth > td.clientWidth + 1)
              .map(
                (td) => `${td.getAttribute('data-label')}: ${td.textContent!.trim().slice(0, 40)}`,
              ),
          );
        t.same(spilled, [], 'no cell spills out of its place on the card');
        t.same(await brokenFigures(page), [], 'no figure broken over two lines');
        // Chromium's own accessibility tree still reads the cards as a table: its rows, headers and cells.
        const table = page.locator('main table.phone-cards').first();
        const shown = await table.evaluate((el) => ({
          row: el.querySelectorAll('tr').length,
          columnheader: el.querySelectorAll('thead th').length,
          cell: el.querySelectorAll('tbody td').length,
        }));
        t.same(await axTable(cdp, 'main table.phone-cards'), shown, 'a table for screen readers');
        await noSeriousAxe(t, page, k.name);
      });
    }
    await cdp.detach();
  },
);

t.test('at 1280 px the same tables stay tables, with their header row', async (t) => {
  const { page } = await holderContext(t, 1280);
  for (const k of KEYS) {
    await page.goto(k.path());
    const shown = await page
      .locator('main table.phone-cards')
      .first()
      .evaluate((el) => ({
        display: getComputedStyle(el).display,
        head: el.querySelector('thead')!.getBoundingClientRect().height,
      }));
    t.same(
      { display: shown.display, head: shown.head > 10 },
      { display: 'table', head: true },
      k.name,
    );
    for (const header of k.columns)
      await allInView(t, await column(page, header), `${k.name}: the ${header} column`);
    for (const sel of k.elements)
      await allInView(t, page.locator(`main ${sel}`), `${k.name}: ${sel}`);
  }
});

for (const width of [375, 1280]) {
  t.test(`at ${width} px the home page's charts fit their box, and no figure breaks`, async (t) => {
    const { page } = await holderContext(t, width);
    await page.goto('/');
    const charts = await page.locator('main figure.chart').evaluateAll((figs) =>
      figs.map((f) => {
        const box = f.getBoundingClientRect();
        const svg = f.querySelector('svg')!.getBoundingClientRect();
        const ticks = [...f.querySelectorAll('.axis text:not(.axis-title)')].map(
          (x) => x.getBoundingClientRect().height,
        );
        return {
          box: box.width,
          scrolls: f.scrollWidth > f.clientWidth + 1,
          left: svg.left - box.left,
          right: box.right - svg.right,
          svg: svg.width,
          tick: Math.min(...ticks),
        };
      }),
    );
    t.ok(charts.length >= 2, `${charts.length} charts`);
    charts.forEach((c, i) => {
      t.notOk(c.scrolls, `chart ${i}: nothing to scroll to`);
      t.ok(c.left >= -0.5 && c.right >= -0.5, `chart ${i}: inside its box`);
      t.ok(
        c.svg >= Math.min(c.box, 960) - 1,
        `chart ${i}: as wide as its box (${c.svg} of ${c.box} px)`,
      );
      t.ok(c.tick >= 9, `chart ${i}: its axis text ${c.tick.toFixed(1)} px tall`);
    });
    const { width: w, view } = await size(page);
    t.ok(w <= view, `${w} px wide at ${view} px`);
    t.same(await brokenFigures(page), [], 'no figure broken over two lines');
    await page.goto('/console');
    t.same(await brokenFigures(page), [], "nor on the console's overview (its activity's dates)");
    await page.screenshot({ path: artifact(`phones-${width}-console.png`), fullPage: true });
  });
}
