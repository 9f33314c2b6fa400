// The console answers every form, in headless Chromium on a phone (375 px) and a desktop
// (1280 px): a holder tops up, requests a payout and saves an agent's limits, and each time the page
// says what happened with the amounts; a bad daily limit is refused naming the field, and the value
// typed stays in it; an agent's order paid on its purchase link says the card was stored, and its
// receipt opens from the orders page, readable. Nothing is wider than the phone. The service's clock
// and the pages' stand at CLOCKED_START_MS (the payout's date is fixed; the m15 session stays open).
import t from 'tap';
import type { Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { registerAgent } from '../helpers/agents.js';
import { artifact, launchChromium, useServiceClock } from '../helpers/browser.js';
import { startWebService } from '../helpers/web.js';
import { withClock } from '../helpers/clocked.js';

const PASSWORD = 'a long passphrase';

const { svc } = await withClock((realMs) =>
  startWebService(t, { SVC_TIME_SCALE: '1' }, { realMs }),
);
const browser = await launchChromium(t);

async function noWiderThanViewport(t: Tap.Test, page: Page, what: string) {
  const w = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    view: window.innerWidth,
  }));
  t.ok(w.page <= w.view, `${what}: ${w.page} px wide at ${w.view} px`);
}

/** Clicks a form's button and waits for the page it leads to (Playwright's bounded navigation wait). */
async function submit(page: Page, button: ReturnType<Page['getByRole']>): Promise<void> {
  await Promise.all([page.waitForEvent('framenavigated'), button.click()]);
  await page.waitForLoadState();
}

/** No serious or critical axe violation on the page as it stands (site-quality's rules, run in the page). */
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

const notice = (page: Page) => page.locator('main p.success[role="status"]');
const tab = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true });

for (const width of [375, 1280]) {
  t.test(`the console answers every form at ${width} px`, async (t) => {
    const context = await browser.newContext({
      baseURL: svc.config.baseUrl,
      viewport: { width, height: width === 375 ? 740 : 900 },
    });
    await useServiceClock(context, svc);
    t.teardown(() => context.close());
    const page = await context.newPage();
    const shot = (name: string) =>
      page.screenshot({ path: artifact(`console-answers-${width}-${name}.png`), fullPage: true });

    await page.goto('/register');
    await page.getByLabel('E-mail').fill(`answers-${width}@example.org`);
    await page.getByLabel('Password', { exact: false }).first().fill(PASSWORD);
    await page.getByLabel('Password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForURL('**/console');
    await tab(page, 'Money').click();
    await page.waitForURL('**/console/money');
    const deskId = await page
      .locator('form[action="/console/topup"] select[name="account_id"] option')
      .first()
      .getAttribute('value');

    await t.test('a top-up says what was added, where, and the balance', async (t) => {
      const form = page.locator('form[action="/console/topup"]');
      await form.getByLabel('Amount (USD)').fill('50');
      await form.getByLabel('Card number').fill('4242 4242 4242 4242');
      await form.getByLabel('Expiry (MM/YY)').fill('12/39');
      await form.getByLabel(/Save this card/).check();
      await submit(page, form.getByRole('button', { name: 'Top up' }));
      t.equal(
        new URL(page.url()).pathname + new URL(page.url()).search,
        '/console/money',
        'sent on, nothing in the address',
      );
      t.equal(
        await notice(page).innerText(),
        `Added 50.00 USD to Manual desk (account ${deskId}) by card. Its balance is now 50.00 USD.`,
      );
      await shot('1-topup');
      await noWiderThanViewport(t, page, 'the money page');
      await noSeriousAxe(t, page, 'the money page with its notice');
      await page.reload();
      t.equal(await notice(page).count(), 0, 'said once: a reload does not repeat it');
    });

    await t.test('a payout says its commission, the net amount and when it is paid', async (t) => {
      const form = page.locator('form[action="/console/payout"]');
      await form.getByLabel('Amount (USD)').fill('20');
      await submit(page, form.getByRole('button', { name: 'Request a payout' }));
      t.match(
        await notice(page).innerText(),
        /^Payout \d+ requested from Manual desk \(account \d+\): 20\.00 USD left the balance now\. You will be paid 18\.80 USD \(20\.00 USD minus the 6 % commission of 1\.20 USD\) on 2026-11-29 12:00 UTC\.$/,
      );
      await shot('2-payout');
    });

    const agentName = `Wren ${width}`;
    await t.test('limits saved say which limits and their values', async (t) => {
      await tab(page, 'Agents').click();
      await page.waitForURL('**/console/agents');
      const make = page.locator('form[action="/console/agents"]');
      await make.getByLabel('Name').fill(agentName);
      await submit(page, make.getByRole('button', { name: 'Make the key' }));
      await page.goto('/console/agents');
      const limits = page.locator('form.limits').first();
      await limits.getByLabel('Most per order (USD)').fill('25');
      await limits.getByLabel('Most per day (USD)').fill('100');
      const markets = limits.getByRole('group', { name: /Markets/ });
      await markets.getByRole('checkbox', { name: /^m15:/ }).check();
      await markets.getByRole('checkbox', { name: /^h2:/ }).check();
      await submit(page, limits.getByRole('button', { name: 'Set limits' }));
      t.equal(
        await notice(page).innerText(),
        `Limits saved for ${agentName}: at most 25.00 USD per order; at most 100.00 USD per UTC day; markets m15, h2.`,
      );
      t.equal(
        await page.locator('form.limits').first().getByLabel('Most per order (USD)').inputValue(),
        '25.00',
        'the form shows them',
      );
      t.same(
        await page
          .locator('form.limits')
          .first()
          .locator('input[name="markets"]:checked')
          .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)),
        ['m15', 'h2'],
        'the markets ticked',
      );
      await shot('3-limits');
    });

    await t.test(
      'a bad daily limit is refused naming the field, and what was typed stays',
      async (t) => {
        const limits = page.locator('form.limits').first();
        await limits.getByLabel('Most per order (USD)').fill('30');
        await limits.getByLabel('Most per day (USD)').fill('12,50');
        await submit(page, limits.getByRole('button', { name: 'Set limits' }));
        t.match(
          await page.getByRole('alert').innerText(),
          /^Most per day \(USD\): must be an amount in USD/,
          'the field, named as labelled',
        );
        const again = page.locator('form.limits').first();
        t.equal(
          await again.getByLabel('Most per day (USD)').inputValue(),
          '12,50',
          'the value typed, not the stored one',
        );
        t.equal(
          await again.getByLabel('Most per day (USD)').getAttribute('aria-invalid'),
          'true',
          'marked as the one at fault',
        );
        t.equal(
          await again.getByLabel('Most per order (USD)').inputValue(),
          '30',
          'the other field as typed too',
        );
        t.same(
          await again
            .locator('input[name="markets"]:checked')
            .evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value)),
          ['m15', 'h2'],
          'the markets as ticked',
        );
        await shot('4-limit-refused');
        await noWiderThanViewport(t, page, 'the refused agents page');
        await noSeriousAxe(t, page, 'the refused agents page');
      },
    );

    await t.test('a paid order: the card stored, and its receipt readable', async (t) => {
      const agent = await registerAgent(svc, { name: `Robin ${width}` });
      const menu = await svc.getJson('/api/v1/markets/m15/deals');
      const deal = menu.body.deals[0];
      const placed = await agent.post('/api/v1/orders', {
        market: 'm15',
        offer_key: deal.key,
        qty: 1,
      });
      t.equal(placed.status, 201);
      await page.goto(new URL(placed.body.purchase_url).pathname);
      await page.getByLabel('Card number').fill('5555 5555 5555 4444');
      await page.getByLabel('Expiry (MM/YY)').fill('11/38');
      await page.getByLabel('CVC').fill('123');
      await page.getByLabel('Save this card for next time').check();
      await page.getByRole('button', { name: /^Pay / }).click();
      await page.waitForURL((u) => u.pathname.endsWith('/done'));
      const stored = page
        .locator('dl.receipt dt', { hasText: 'Card stored' })
        .locator('xpath=following-sibling::dd[1]');
      t.equal(
        await stored.innerText(),
        'Yes: mastercard •••• 4444, 11/38 is stored for your next payments (brand, last 4 digits and expiry only; remove it any time).',
      );
      await shot('5-confirmation');

      await page.goto('/console/orders');
      const link = page.getByRole('link', { name: `Receipt of order ${placed.body.id}` });
      t.equal(await link.innerText(), 'Receipt', 'the word on the orders page');
      await link.click();
      await page.waitForURL(`**/console/orders/${placed.body.id}/receipt`);
      t.equal(
        await page.getByRole('heading', { level: 1 }).innerText(),
        `Receipt of order ${placed.body.id}`,
      );
      const main = await page.locator('main').innerText();
      t.match(main, /Signature valid: checked just now/);
      t.match(main, `Order ${placed.body.id}: 1 × ${deal.bundle.title}`, 'what was bought');
      t.match(main, `${(placed.body.total_amount + 15).toFixed(2)} USD charged`, 'how much');
      t.match(main, 'by you: you paid it yourself', 'approved how');
      const served = (await agent.get(`/api/v1/orders/${placed.body.id}`)).body.receipt;
      t.equal(await page.locator('#receipt-jws').innerText(), served, 'the JWS, whole, to copy');
      t.match(
        await page.getByRole('region', { name: 'How to verify it' }).innerText(),
        `${svc.config.baseUrl}/.well-known/jwks.json`,
      );
      await shot('6-receipt');
      await noWiderThanViewport(t, page, 'the receipt');
      await noSeriousAxe(t, page, 'the receipt');
    });
  });
}
