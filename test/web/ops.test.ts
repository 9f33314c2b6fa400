// The operators' pages in headless Chromium (issue 30): /ops and /ops/bench have no serious or
// critical axe violation and break no CSP; /ops's script follows the feed and its figures move
// after traffic; without JavaScript the page still shows the figures. Screenshots go to test-artifacts/.
import t from 'tap';
import fs from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import { artifact, launchChromium } from '../helpers/browser.js';
import { eventually } from '../helpers/wait.js';
import { startWebService } from '../helpers/web.js';

const svc = await startWebService(t);
const browser = await launchChromium(t);

async function axeProblems(page: import('playwright-core').Page): Promise<string[]> {
  const axe = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return axe.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

t.test('/ops follows the live feed: the request count moves after traffic', async (t) => {
  const context = await browser.newContext({ baseURL: svc.config.baseUrl });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  await page.goto('/ops');
  const live = page.locator('#ops-live');
  await eventually(async () => /^Live: updated every second from pid \d+/.test((await live.textContent()) ?? ''), 'the script to follow the feed');
  const total = page.locator('[data-f="requests.total"]');
  const before = Number(((await total.textContent()) ?? '').replace(/,/g, ''));
  for (let i = 0; i < 25; i++) await (await svc.get('/api/v1/markets')).arrayBuffer();
  const after = await eventually(async () => {
    const n = Number(((await total.textContent()) ?? '').replace(/,/g, ''));
    return n >= before + 25 ? n : 0;
  }, 'the page to show the new requests');
  t.ok(after >= before + 25, `requests since start on the page: ${before} → ${after}`);
  await eventually(async () => (await page.locator('#ops-routes tbody th code', { hasText: 'GET /api/v1/markets' }).count()) > 0, 'the route in the live table');
  t.pass('the routes table, rebuilt by the script, lists the route');

  t.same(await axeProblems(page), [], '/ops: axe');
  await page.screenshot({ path: artifact('ops-live.png'), fullPage: true });
  t.ok(fs.statSync(artifact('ops-live.png')).size > 0, 'screenshot kept');
  t.same(violations, [], 'no CSP violation');
});

t.test('/ops reads right without JavaScript', async (t) => {
  const context = await browser.newContext({ baseURL: svc.config.baseUrl, javaScriptEnabled: false });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto('/ops');
  t.match((await page.locator('#ops-live').textContent()) ?? '', 'reload for new ones', 'says the figures are as of loading');
  t.match((await page.locator('h1').textContent()) ?? '', 'Operators: live figures');
  t.ok(Number(((await page.locator('[data-f="requests.total"]').textContent()) ?? '').replace(/,/g, '')) > 0, 'the request count is in the page');
  t.ok((await page.locator('#ops-routes tbody th code').count()) > 0, 'the routes table has rows');
});

t.test('/ops/bench: charts, the latest runs, axe-clean', async (t) => {
  const context = await browser.newContext({ baseURL: svc.config.baseUrl });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto('/ops/bench');
  t.ok((await page.locator('svg.chart').count()) >= 4, 'a chart per scenario at least');
  t.ok((await page.locator('caption', { hasText: 'Latest run:' }).count()) >= 3, 'a latest-run table per scenario');
  t.same(await axeProblems(page), [], '/ops/bench: axe');
  await page.screenshot({ path: artifact('ops-bench.png'), fullPage: true });
  t.ok(fs.statSync(artifact('ops-bench.png')).size > 0, 'screenshot kept');
});
