// An agent's cart approved by a holder in a real browser (headless Chromium):
// the agent proposes lines through the API; a holder who never saw the service opens the cart link,
// reads who asks and what (notes, prices, the countdown to each close), registers, removes a line,
// pays with the approved test card and finds the orders in the console. A second newcomer registers
// on the pay form itself. Screenshots go to test-artifacts/ (kept by CI, never committed).
import fs from 'node:fs';
import t from 'tap';
import type { Page } from 'playwright-core';
import { artifact, launchChromium, useServiceClock } from '../helpers/browser.js';
import { currentMenu, registerAgent, type TestAgent } from '../helpers/agents.js';
import { startWebService } from '../helpers/web.js';
import { withClock } from '../helpers/clocked.js';
import type { TestService } from '../helpers/service.js';

// The service's clock stands still: the proposed deals stay open for the whole test.
const MARKET = 'h2';

/** An agent that proposed `deals` as lines of its default cart; the line ids and the cart link. */
async function proposing(
  svc: TestService,
  deals: any[],
  profile: Record<string, unknown>,
): Promise<{ agent: TestAgent; itemIds: number[]; link: string }> {
  const agent = await registerAgent(svc, profile);
  const itemIds: number[] = [];
  let link = '';
  for (const [i, d] of deals.entries()) {
    const r = await agent.post('/api/v1/cart/items', {
      market: MARKET,
      offer_key: d.key,
      qty: 1,
      note: `pick ${i + 1}: cheap for its family`,
    });
    if (r.status !== 201) throw new Error(`cart item: ${r.status} ${JSON.stringify(r.body)}`);
    itemIds.push(r.body.item_id);
    link = r.body.checkout_url;
  }
  return { agent, itemIds, link };
}

async function fillCard(page: Page, number: string) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry (MM/YY)').fill('12/39');
  await page.getByLabel('CVC').fill('123');
}

t.test("a holder approves an agent's cart in Chromium", async (t) => {
  // The service's clock stands at CLOCKED_START_MS; the pages' clock stands there too (useServiceClock),
  // whatever the machine's date: the countdown's script computes from the service's now.
  const clocked = await withClock((realMs) =>
    startWebService(t, { SVC_TIME_SCALE: '1' }, { realMs }),
  );
  const { svc } = clocked;
  const deals = (await currentMenu(svc, MARKET, 600)).deals;
  const browser = await launchChromium(t);
  const violations: string[] = [];

  const newcomer = async () => {
    const context = await browser.newContext({ baseURL: svc.config.baseUrl });
    await useServiceClock(context, svc);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    return page;
  };

  await t.test(
    'opens the link, registers, removes a line, pays, and sees the orders',
    async (t) => {
      const { agent, itemIds, link } = await proposing(svc, deals.slice(0, 3), {
        name: 'Orchid Buyer',
        agent: { model: 'gpt-browser', vendor: 'Orchid Labs' },
        operator: { name: 'Orchid Ops' },
        purpose: 'restock the shop',
      });
      const page = await newcomer();
      await page.goto(link);
      t.equal(await page.getByRole('heading', { level: 1 }).textContent(), "Orchid Buyer's cart");
      const main = (await page.textContent('main'))!;
      for (const s of [
        'gpt-browser',
        'Orchid Labs',
        'Orchid Ops',
        'restock the shop',
        'pick 1: cheap for its family',
        deals[0].bundle.title,
      ])
        t.match(main, s, `shows ${s}`);
      t.equal(
        await page.evaluate(() => Date.now()),
        clocked.now(),
        "the page's clock is the service's",
      );
      const closesMs = clocked.closesAtMs(MARKET);
      t.equal(
        await page.locator(`#line-${itemIds[0]} .countdown`).textContent(),
        `closes in ${Math.ceil((closesMs - clocked.now()) / 1000)} s (${new Date(closesMs).toISOString().slice(11, 19)} UTC)`,
        "the countdown from the service's now",
      );
      t.equal(
        await page.getByRole('button', { name: 'Remove' }).count(),
        0,
        'a visitor cannot change the lines',
      );

      // The countdown is live: a close 30 s away reads so within a tick of the page's script.
      await page
        .locator(`#line-${itemIds[0]} .countdown`)
        .evaluate((el) => el.setAttribute('data-closes', String(Date.now() / 1000 + 30)));
      await page.waitForFunction((id) => {
        const m = /^closes in (\d+) s /.exec(
          document.querySelector(`#line-${id} .countdown`)!.textContent!,
        );
        return m !== null && Number(m[1]) <= 30;
      }, itemIds[0]);

      await page.locator('main').getByRole('link', { name: 'register', exact: true }).click();
      await page.getByLabel('E-mail').fill('iris@example.com');
      await page.getByLabel('Display name').fill('Iris');
      await page.getByLabel('Password', { exact: false }).first().fill('a long passphrase');
      await page.getByLabel('Password again').fill('a long passphrase');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForURL(link);
      t.match(
        await page.getByRole('status').first().textContent(),
        'Orchid Buyer is now connected to your account',
      );

      await page.locator(`#line-${itemIds[1]}`).getByRole('button', { name: 'Remove' }).click();
      await page.waitForURL(link);
      t.equal(await page.locator(`#line-${itemIds[1]}`).count(), 0, 'the line is gone');
      t.equal(await page.locator('tr[id^="line-"]').count(), 2);
      await page.screenshot({ path: artifact('cart-link-before-paying.png'), fullPage: true });
      // What paying can lose, before the pay button, coloured by the lines' records and never as a gain.
      const risk = page.locator('div.risk.compact').first();
      const payTotal = /Pay ([\d.]+) USD/.exec(
        (await page.getByRole('button', { name: /^Pay / }).textContent()) ?? '',
      )?.[1];
      t.match(
        await risk.innerText(),
        `You pay ${payTotal} USD for 2 lines and can lose all of it, plus a holding fee a unit`,
        "the cart's risk in one sentence, with the total paid",
      );
      t.match(await risk.getAttribute('class'), /^risk compact (loss|mixed|unknown)$/);
      t.ok(
        (await risk.boundingBox())!.y <
          (await page.getByRole('button', { name: /^Pay / }).boundingBox())!.y,
        'before the pay button',
      );

      await fillCard(page, '4242 4242 4242 4242');
      await page.getByRole('button', { name: /^Pay / }).click();
      // Paying leads to the cart's confirmation: the orders, the amount, the card, then the console.
      await page.waitForURL((u) => u.pathname.endsWith('/done'));
      const orders = (await agent.get('/api/v1/orders')).body.orders;
      t.equal(orders.length, 2, 'one order per remaining line');
      const done = await page.locator('main').innerText();
      t.match(done, 'Payment received');
      t.match(done, '•••• 4242', "the card's last 4 digits");
      const total =
        orders.reduce((c: number, o: any) => c + Math.round(o.total_amount * 100), 0) + 1500;
      t.match(
        done,
        `${(total / 100).toFixed(2)} USD`,
        "the orders and the month's fee, charged at once",
      );
      for (const o of orders) t.match(done, `Order ${o.id}`);
      await page.screenshot({ path: artifact('cart-paid-confirmation.png'), fullPage: true });
      await page.getByRole('link', { name: 'Your orders' }).click();
      await page.waitForURL('**/console/orders');
      for (const o of orders) {
        t.equal(o.status, 'paid');
        const row = page.getByRole('row', { name: new RegExp(`^${o.id} `) });
        t.match(await row.textContent(), 'paid');
        t.match(await row.textContent(), o.deal_title);
      }
      t.notMatch(
        await page.textContent('main'),
        deals[1].bundle.title,
        'the removed line was never ordered',
      );
      await page.screenshot({ path: artifact('cart-paid-console-orders.png'), fullPage: true });
      t.ok(fs.statSync(artifact('cart-paid-console-orders.png')).size > 0, 'screenshot kept');
    },
  );

  await t.test('a newcomer registers on the pay form itself and pays', async (t) => {
    const { agent, link } = await proposing(svc, deals.slice(3, 5), { name: 'Fern Finder' });
    const page = await newcomer();
    await page.goto(link);
    await page.getByLabel('I am new here: register').check();
    await page.getByLabel('E-mail').fill('june@example.com');
    await page.getByLabel('Password (at least 8 characters)').fill('another passphrase');
    await page.getByLabel('Password again (new accounts)').fill('another passphrase');
    await fillCard(page, '4000 0000 0000 0002');
    await page.getByRole('button', { name: /^Pay / }).click();
    t.match(
      await page.getByRole('alert').textContent(),
      'card declined',
      'a declined card: the page again, nothing charged',
    );
    t.same((await agent.get('/api/v1/account')).body.ledger, []);
    t.equal(
      await page.getByLabel('E-mail').inputValue(),
      'june@example.com',
      'the e-mail stays filled in',
    );

    await page.getByLabel('Password (at least 8 characters)').fill('another passphrase');
    await page.getByLabel('Password again (new accounts)').fill('another passphrase');
    await fillCard(page, '4242 4242 4242 4242');
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.waitForURL((u) => u.pathname.endsWith('/done'));
    t.match(
      await page.locator('header.site').textContent(),
      'june@example.com',
      'logged in by paying',
    );
    await page.goto('/console/orders');
    const orders = (await agent.get('/api/v1/orders')).body.orders;
    t.same(
      orders.map((o: any) => o.status),
      ['paid', 'paid'],
    );
    for (const o of orders)
      t.match(await page.getByRole('row', { name: new RegExp(`^${o.id} `) }).textContent(), 'paid');
  });

  t.same(violations, [], 'no CSP violation on the cart pages');
});
