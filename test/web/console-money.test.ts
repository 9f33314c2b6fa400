// The holder's money in a real browser (headless Chromium): a holder registers, opens the console's
// Money tab (the money forms have their own tab), tops up their
// Manual desk by card (a crypto choice first: refused, nothing charged), buys a Gold Coin pack,
// requests a payout, and finds all three in the timeline. Every form is a plain HTML form (no
// script). Screenshots go to test-artifacts/ (kept by CI, never committed).
import t from 'tap';
import fs from 'node:fs';
import type { Locator, Page } from 'playwright-core';
import { artifact, launchChromium } from '../helpers/browser.js';
import { startWebService } from '../helpers/web.js';

const PASSWORD = 'a long passphrase';

/** Types the approved test card into the top-up's card fields (SPEC.md's: number, expiry, name; no cvc). */
async function fillCard(form: Locator): Promise<void> {
  await form.getByLabel('Card number').fill('4242 4242 4242 4242');
  await form.getByLabel('Expiry (MM/YY)').fill('12/39');
  await form.getByLabel('Name on card').fill('Hedy L');
  await form.getByLabel(/Save this card/).check(); // the coin pack below pays with it
}

/** Submits a form by its button and waits for the page it leads to (a 303 to the Money tab, or the form again with a refusal). */
async function submit(page: Page, button: Locator): Promise<string> {
  await Promise.all([page.waitForEvent('framenavigated'), button.click()]);
  await page.waitForLoadState();
  return new URL(page.url()).pathname;
}

const section = (page: Page, heading: string) =>
  page.getByRole('region', { name: heading, exact: true });

t.test('a holder runs their money from the console in Chromium', async (t) => {
  const svc = await startWebService(t, { SVC_TIME_SCALE: '1' });
  const browser = await launchChromium(t);
  const page = await browser.newPage({ baseURL: svc.config.baseUrl });

  await page.goto('/register');
  await page.getByLabel('E-mail').fill('hedy@example.com');
  await page.getByLabel('Password', { exact: false }).first().fill(PASSWORD);
  await page.getByLabel('Password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Register' }).click();
  await page.waitForURL('**/console');
  await page
    .getByRole('navigation', { name: 'Console' })
    .getByRole('link', { name: 'Money' })
    .click();
  await page.waitForURL('**/console/money');
  const accounts = section(page, 'Your accounts');
  t.match(
    await accounts.textContent(),
    'Manual desk',
    'the Manual desk is there from registration',
  );
  t.match(await section(page, 'Gold Coins').textContent(), '5.00 GC');

  await t.test('tops up the Manual desk (crypto is refused first, nothing charged)', async (t) => {
    const form = page.locator('form[action="/console/topup"]');
    await form.getByLabel('Amount (USD)').fill('50');
    await form.getByRole('radio', { name: /Crypto/ }).check();
    await submit(page, form.getByRole('button', { name: 'Top up' }));
    t.match(await page.getByRole('alert').textContent(), 'crypto payments are not ready');
    t.match(
      await accounts.getByRole('row', { name: /Manual desk/ }).textContent(),
      '0.00',
      'nothing charged',
    );

    await form.getByLabel('Amount (USD)').fill('50');
    await form.getByRole('radio', { name: 'A card (demo: test cards only)' }).check();
    t.equal(await form.getByLabel('CVC').count(), 0, 'the top-up asks no cvc');
    await fillCard(form);
    t.equal(await submit(page, form.getByRole('button', { name: 'Top up' })), '/console/money');
    t.match(await accounts.getByRole('row', { name: /Manual desk/ }).textContent(), '50.00');
  });

  await t.test('buys a pack of 10 Gold Coins', async (t) => {
    const form = page.locator('form[action="/console/coins"]');
    await form.getByLabel('Pack').selectOption('10');
    await form.getByRole('radio', { name: /A stored card/ }).check();
    t.equal(
      await submit(page, form.getByRole('button', { name: 'Buy the pack' })),
      '/console/money',
    );
    t.match(
      await section(page, 'Gold Coins').textContent(),
      '15.00 GC',
      '5 from registration + 10',
    );
    t.match(
      await section(page, 'Participation fee').textContent(),
      /fee for \d{4}-\d{2} is paid/,
      'the pack was the first checkout of the month',
    );
  });

  await t.test('requests a payout', async (t) => {
    const form = page.locator('form[action="/console/payout"]');
    await form.getByLabel('Amount (USD)').fill('20');
    t.equal(
      await submit(page, form.getByRole('button', { name: 'Request a payout' })),
      '/console/money',
    );
    const row = section(page, 'Payouts').getByRole('row').nth(1);
    t.match(await row.textContent(), /20\.00\s*1\.20\s*18\.80\s*scheduled/);
    t.match(
      await accounts.getByRole('row', { name: /Manual desk/ }).textContent(),
      '30.00',
      'it left the balance',
    );
    await page.screenshot({ path: artifact('console-money-overview.png'), fullPage: true });
  });

  await t.test('sees all three in the timeline', async (t) => {
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Timeline' })
      .click();
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Timeline');
    // Events in words (no codes on the page), newest first.
    const kinds = await page.locator('tbody tr th').allTextContents();
    t.notOk(
      kinds.some((k) => k.includes('_')),
      'no event code shown',
    );
    const steps = kinds.filter((k) =>
      ['Top-up', 'Gold Coins bought', 'Payout requested'].includes(k),
    );
    t.same(steps, ['Payout requested', 'Gold Coins bought', 'Top-up'], 'newest first');
    t.match(await page.getByRole('row', { name: /^Top-up / }).textContent(), 'Top-up by card');
    t.match(await page.getByRole('row', { name: /^Gold Coins bought / }).textContent(), '10.00');
    t.match(await page.getByRole('row', { name: /^Payout requested / }).textContent(), '-20.00');
    await page.screenshot({ path: artifact('console-money-timeline.png'), fullPage: true });
    t.ok(fs.statSync(artifact('console-money-timeline.png')).size > 0, 'screenshot kept');
  });
});
