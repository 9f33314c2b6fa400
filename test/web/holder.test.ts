// A holder in a real browser (headless Chromium): registers from the login redirect, lands on the
// console, logs out, logs in again, walks the console pages; then pays an agent's order on its
// purchase link (a declined card first, then a good one) and finds it paid in the console.
// Chromium sends Origin and Sec-Fetch-Site on every form post, so this also shows the cross-site
// guard lets the site's own forms through.
import t from 'tap';
import type { Page } from 'playwright-core';
import { launchChromium, useServiceClock } from '../helpers/browser.js';
import { registerAgent } from '../helpers/agents.js';
import { startWebService } from '../helpers/web.js';
import { withClock } from '../helpers/clocked.js';

const EMAIL = 'grace@example.com';
const PASSWORD = 'a long passphrase';

const path = (page: Page) => {
  const u = new URL(page.url());
  return u.pathname + u.search;
};

t.test('a holder in Chromium', async (t) => {
  // The service's clock stands at CLOCKED_START_MS, 50 ms into an m15 session: the session stays open
  // for the whole test, so the order can be paid (on the machine's clock an m15 close could fall
  // between the menu and the payment). The page's clock stands there too: the purchase page and the
  // console count down to the close from the service's now (useServiceClock).
  const { svc } = await withClock((realMs) =>
    startWebService(t, { SVC_TIME_SCALE: '1' }, { realMs }),
  );
  const browser = await launchChromium(t);
  const page = await browser.newPage({ baseURL: svc.config.baseUrl });
  await useServiceClock(page.context(), svc);

  await t.test('registers from the login redirect and lands on the console', async (t) => {
    await page.goto('/console');
    t.equal(path(page), '/login?next=%2Fconsole', 'the console asks for a login first');
    await page.getByRole('link', { name: 'Register' }).last().click();
    t.equal(path(page), '/register?next=%2Fconsole');
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Display name').fill('Grace');
    await page.getByLabel('Password', { exact: false }).first().fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL('**/console');
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Console');
    t.match(await page.textContent('main'), EMAIL);
    const [cookie] = await page.context().cookies();
    t.match(cookie, { name: 'holder_session', httpOnly: true, sameSite: 'Lax', path: '/' });
    t.equal(
      await page.evaluate(() => document.cookie),
      '',
      'scripts cannot read the session cookie',
    );
  });

  await t.test('logs out, is sent to the login form again, logs back in', async (t) => {
    await page.getByRole('link', { name: 'Log out' }).click();
    await page.waitForURL((u) => u.pathname === '/');
    t.same(await page.context().cookies(), [], 'cookie cleared');
    await page.goto('/console/ledger');
    t.equal(path(page), '/login?next=%2Fconsole%2Fledger');
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Log in' }).click();
    t.match(await page.getByRole('alert').textContent(), 'wrong e-mail or password');
    t.equal(await page.getByLabel('E-mail').inputValue(), EMAIL, 'the e-mail stays filled in');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL('**/console/ledger');
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Ledger');
  });

  await t.test('walks the console pages by their tabs', async (t) => {
    for (const [tab, heading] of [
      ['Overview', 'Console'],
      ['Positions', 'Positions'],
      ['Orders', 'Orders'],
      ['Ledger', 'Ledger'],
      ['Agents', 'Agents'],
      ['Money', 'Money'],
    ]) {
      await page
        .getByRole('navigation', { name: 'Console' })
        .getByRole('link', { name: tab })
        .click();
      t.equal(await page.getByRole('heading', { level: 1 }).textContent(), heading, tab);
      t.equal(
        await page.getByRole('link', { name: tab, exact: true }).getAttribute('aria-current'),
        'page',
      );
    }
    await page.goto('/console/positions');
    await page.getByLabel('Show').selectOption('settled');
    await page.getByRole('button', { name: 'Filter' }).click();
    t.equal(path(page), '/console/positions?status=settled');
    t.match(await page.textContent('main'), 'No positions with status settled');
  });

  await t.test("pays an agent's order on its purchase link", async (t) => {
    const agent = await registerAgent(svc, {
      name: 'Orchid Buyer',
      agent: { model: 'gpt-browser' },
      purpose: 'restock',
    });
    const deal = (await svc.getJson('/api/v1/markets/m15/deals?limit=1')).body.deals[0];
    const placed = await agent.post('/api/v1/orders', {
      market: 'm15',
      offer_key: deal.key,
      qty: 1,
    });
    t.equal(placed.status, 201);
    await page.goto(placed.body.purchase_url);
    t.match(await page.getByRole('heading', { level: 1 }).textContent(), 'Orchid Buyer');
    t.match(await page.textContent('main'), 'gpt-browser');
    t.match(await page.textContent('main'), `${placed.body.total_amount.toFixed(2)} USD`);

    await page.getByLabel('Card number').fill('4000 0000 0000 0002');
    await page.getByLabel('Expiry (MM/YY)').fill('12/39');
    await page.getByLabel('CVC').fill('123');
    await page.getByRole('button', { name: /^Pay / }).click();
    t.match(await page.getByRole('alert').textContent(), 'card declined');
    t.equal(
      (await agent.get(`/api/v1/orders/${placed.body.id}`)).body.status,
      'awaiting_payment',
      'nothing charged',
    );

    await page.getByLabel('Card number').fill('4242 4242 4242 4242');
    await page.getByLabel('Expiry (MM/YY)').fill('12/39');
    await page.getByLabel('CVC').fill('123');
    await page.getByRole('button', { name: /^Pay / }).click();
    // Paying leads to the confirmation, which links to the order in the console.
    await page.waitForURL((u) => u.pathname.endsWith('/done'));
    t.match(
      await page.getByRole('heading', { level: 1 }).textContent(),
      `order ${placed.body.id} is paid`,
    );
    await page.getByRole('link', { name: `Order ${placed.body.id} in your orders` }).click();
    await page.waitForURL('**/console/orders*');
    const row = page.getByRole('row', { name: new RegExp(`^${placed.body.id} `) });
    t.match(await row.textContent(), 'paid');
    t.match(await row.textContent(), deal.bundle.title);
    t.equal((await agent.get(`/api/v1/orders/${placed.body.id}`)).body.status, 'paid');

    await page.getByRole('link', { name: 'Overview' }).click();
    t.match(await page.textContent('main'), 'Orchid Buyer');
    t.match(await page.textContent('main'), /fee for \d{4}-\d{2} is paid/);
  });
});
