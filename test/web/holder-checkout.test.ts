// A new holder pays an agent's order in headless Chromium, on a phone (375 px) and on a desktop
// (1280 px): registers, opens the purchase link (then finds the order waiting on the
// console and follows it back), finds the one total (the order and the
// month's fee) on the primary button with the risk in words above the fold's end, types the card
// (grouped, its brand named), pays, lands on the confirmation (what was charged, the card's last 4
// digits, what happens next), follows it to the order, and finds it on the console's dashboard.
// Nothing on the way is wider than the phone. Screenshots of every step go to test-artifacts/.
import t from 'tap';
import type { Page } from 'playwright-core';
import { currentMenu, registerAgent } from '../helpers/agents.js';
import { artifact, launchChromium, useServiceClock } from '../helpers/browser.js';
import { startWebService } from '../helpers/web.js';
import { withClock } from '../helpers/clocked.js';

const PASSWORD = 'a long passphrase';

// The service's clock stands at CLOCKED_START_MS, 50 ms into an h2 session: the session stays open
// for the whole test, so the order can be paid, whatever the hour the file runs (on the machine's
// clock, within 2 minutes of an even UTC hour, h2's close, currentMenu would wait for the next
// session, past the file's 120 s bound). The pages' clock stands there too (useServiceClock).
const clocked = await withClock((realMs) =>
  startWebService(t, { SVC_TIME_SCALE: '1' }, { realMs }),
);
const { svc } = clocked;
const browser = await launchChromium(t);

const usd = (n: number) => n.toFixed(2);

async function noWiderThanViewport(t: Tap.Test, page: Page, what: string) {
  const w = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    view: window.innerWidth,
  }));
  t.ok(w.page <= w.view, `${what}: ${w.page} px wide at ${w.view} px`);
}

for (const width of [375, 1280]) {
  t.test(
    `a new holder pays an agent's order at ${width} px and finds it on the console`,
    async (t) => {
      const context = await browser.newContext({
        baseURL: svc.config.baseUrl,
        viewport: { width, height: width === 375 ? 740 : 900 },
      });
      await useServiceClock(context, svc);
      t.teardown(() => context.close());
      const page = await context.newPage();
      // Each step twice: the whole page, and the first screen as the holder sees it.
      const shot = async (name: string) => {
        await page.screenshot({ path: artifact(`holder-${width}-${name}.png`), fullPage: true });
        await page.screenshot({ path: artifact(`holder-${width}-${name}-screen.png`) });
      };

      // Register through the site.
      await page.goto('/register');
      await page.getByLabel('E-mail').fill(`payer-${width}@example.org`);
      await page.getByLabel('Display name').fill(`Payer ${width}`);
      await page.getByLabel('Password', { exact: false }).first().fill(PASSWORD);
      await page.getByLabel('Password again').fill(PASSWORD);
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForURL('**/console');
      await shot('1-console-new');
      await noWiderThanViewport(t, page, 'the new console');

      // An agent asks for 3 units of an h2 deal.
      const agent = await registerAgent(svc, {
        name: `Scout ${width}`,
        agent: { model: 'gpt-walk' },
        purpose: 'restock',
      });
      const menu = await currentMenu(svc, 'h2', 120);
      const deal = menu.deals.find((d: any) => d.max_qty >= 3) ?? menu.deals[0];
      const qty = Math.min(3, deal.max_qty);
      const placed = await agent.post('/api/v1/orders', { market: 'h2', offer_key: deal.key, qty });
      t.equal(placed.status, 201);
      const total = placed.body.total_amount as number;
      const charged = usd(total + 15);

      // Opening the purchase link connects the agent; from then on the console lists what waits.
      await page.goto(new URL(placed.body.purchase_url).pathname);
      await page.goto('/console');
      const waiting = page.getByRole('region', { name: 'Waiting for you' });
      t.match(
        await waiting.innerText(),
        `Order ${placed.body.id}: ${qty} × ${deal.bundle.title} on h2`,
        'the order waits for the holder on the console',
      );
      t.match(await waiting.innerText(), /Pay before .* \(closes in \d+ s/, 'with its deadline');
      await shot('1b-console-waiting');
      await waiting.getByRole('link', { name: `Review and pay order ${placed.body.id}` }).click();
      await page.waitForURL((u) => u.pathname.startsWith('/checkout/'));
      await shot('2-checkout');
      await noWiderThanViewport(t, page, 'the purchase page');
      const pay = page.getByRole('button', { name: `Pay ${charged} USD` });
      t.equal(
        await pay.count(),
        1,
        `one button carries the one total (${total} + 15.00 fee = ${charged})`,
      );
      t.match(await pay.getAttribute('class'), /\bprimary\b/, 'the primary button');
      const summary = await page.locator('table.summary').innerText();
      t.match(summary, 'Fulfilment fee', 'the fee is its own line');
      t.match(
        summary,
        /Monthly participation fee[^\n]*\n?[^\n]*15\.00 USD/,
        "the month's fee is its own line",
      );
      t.match(summary, `${charged} USD`, 'one total');
      const box = await page.locator('.risk').first();
      t.match(
        await box.getAttribute('class'),
        /^risk( compact)? (loss|mixed|unknown)$/,
        'the risk box is coloured by the record, never as a gain',
      );
      t.match(
        await box.innerText(),
        /can lose all of it, plus a holding fee of [\d.]+ USD a unit/,
        'what can be lost, in one plain sentence',
      );
      // No history is recorded here (SVC_BACKFILL_DAYS 0, no close yet): the record has none, said plainly.
      t.match(
        await box.innerText(),
        `How similar deals ended: the record has no settled deal of ${deal.sku_family} in the last 48 sessions, so nothing says how such a deal ends. Nor does it say how often results fell below this projection's low scenario.`,
        'how similar deals ended: none on record, said so',
      );
      t.notMatch(
        await page.locator('main').innerText(),
        /low scenario[^.;]*\b(makes|gain|profit)/i,
        'the low scenario never called a gain',
      );
      t.ok((await box.boundingBox())!.y < (await pay.boundingBox())!.y, 'above the pay button');
      t.ok(
        await page.locator('.risk ~ .facts-chart .marker, .facts-chart .marker').count(),
        'the chart marks the chosen quantity',
      );
      t.match(
        await page.locator('time.local').first().innerText(),
        /your time$/,
        "the deadline in the reader's own time",
      );
      t.equal(
        await page.evaluate(() => Date.now()),
        clocked.now(),
        "the page's clock is the service's",
      );
      t.match(
        await page.locator('.countdown').first().innerText(),
        `closes in ${Math.ceil((clocked.closesAtMs('h2') - clocked.now()) / 1000)} s `,
        "a live countdown from the service's now",
      );
      t.equal(
        await page.getByLabel('Save this card for next time').isChecked(),
        false,
        'saving the card is opt-in',
      );
      if (width === 375) {
        t.ok(await page.locator('.sticky-total').isVisible(), 'the total stays in view on a phone');
        const box = await page.locator('.sticky-total').boundingBox();
        t.ok(box && box.y + box.height <= 740 + 0.5, 'at the bottom of the screen');
      } else {
        t.ok(!(await page.locator('.sticky-total').isVisible()), 'no sticky bar on a desktop');
        const b = await pay.boundingBox();
        t.ok(b && b.y + b.height <= 900, 'the pay button is on the first screen on a desktop');
      }

      await page.getByLabel('Card number').pressSequentially('4242424242424242');
      t.equal(
        await page.getByLabel('Card number').inputValue(),
        '4242 4242 4242 4242',
        'the number in groups of four',
      );
      t.match(await page.locator('.brand').first().innerText(), 'Visa', 'its brand named');
      await page.getByLabel('Expiry (MM/YY)').pressSequentially('1239');
      t.equal(await page.getByLabel('Expiry (MM/YY)').inputValue(), '12/39');
      await page.getByLabel('CVC').fill('123');
      await shot('3-checkout-filled');
      await pay.click();

      await page.waitForURL((u) => u.pathname.endsWith('/done'));
      await shot('4-confirmation');
      await noWiderThanViewport(t, page, 'the confirmation');
      const done = await page.locator('main').innerText();
      t.match(
        await page.getByRole('heading', { level: 1 }).innerText(),
        `order ${placed.body.id} is paid`,
      );
      t.match(done, `${charged} USD`, 'the amount charged');
      t.match(done, '•••• 4242', "the card's last 4 digits");
      t.match(done, /fills when session \d+ of h2 closes/, 'what happens next');
      t.match(done, /settles at about/, 'and when');
      const served = (await agent.get(`/api/v1/orders/${placed.body.id}`)).body;
      t.equal(served.status, 'paid');
      // The signed receipt is shown once the order carries one (CONTRACT.md "Signed approval receipts"); none is made up.
      if (served.receipt)
        t.equal(
          await page.locator('code.jws').textContent(),
          served.receipt,
          "the order's signed receipt",
        );
      else t.notMatch(done, /receipt/i, 'no receipt made up');

      await page.getByRole('link', { name: `Order ${placed.body.id} in your orders` }).click();
      await page.waitForURL('**/console/orders*');
      t.match(await page.locator(`#order-${placed.body.id}`).innerText(), 'paid');
      await shot('5-orders');
      await noWiderThanViewport(t, page, 'the orders');

      await page
        .getByRole('navigation', { name: 'Console' })
        .getByRole('link', { name: 'Overview' })
        .click();
      await page.waitForURL('**/console');
      const dash = await page.locator('main').innerText();
      t.match(dash, `Scout ${width}`, 'the agent is on the console');
      t.match(dash, /Orders in flight\s*1/, 'the paid order is in flight');
      t.match(dash, `${usd(-15)}`, 'the fee is in the recent activity');
      t.ok(
        await page.locator('figure.chart svg[role="img"]').count(),
        'the balance over time, charted',
      );
      await shot('6-console');
      await noWiderThanViewport(t, page, 'the console');
    },
  );
}

t.test('without JavaScript the purchase page still takes the payment', async (t) => {
  const context = await browser.newContext({
    baseURL: svc.config.baseUrl,
    viewport: { width: 375, height: 740 },
    javaScriptEnabled: false,
  });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto('/register');
  await page.getByLabel('E-mail').fill('no-script@example.org');
  await page.getByLabel('Password', { exact: false }).first().fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Register' }).click();
  await page.waitForURL('**/console');
  const agent = await registerAgent(svc, { name: 'Plain Scout' });
  const menu = await currentMenu(svc, 'h2', 120);
  const placed = await agent.post('/api/v1/orders', {
    market: 'h2',
    offer_key: menu.deals[0].key,
    qty: 1,
  });
  t.equal(placed.status, 201);
  await page.goto(new URL(placed.body.purchase_url).pathname);
  t.match(
    await page.locator('.deadline').innerText(),
    /Pay before \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC: closes in \d+ s/,
    'the deadline in UTC as the server wrote it',
  );
  await noWiderThanViewport(t, page, 'the purchase page without scripts');
  await page.getByLabel('Card number').fill('4242 4242 4242 4242');
  await page.getByLabel('Expiry (MM/YY)').fill('12/39');
  await page.getByLabel('CVC').fill('123');
  await page.getByRole('button', { name: `Pay ${usd(placed.body.total_amount + 15)} USD` }).click();
  await page.waitForURL((u) => u.pathname.endsWith('/done'));
  t.match(await page.locator('main').innerText(), '•••• 4242');
  await page.screenshot({ path: artifact('holder-375-noscript-confirmation.png'), fullPage: true });
});
