// The pages under their Content-Security-Policy in headless Chromium: no violation reported on any
// page (styles and scripts are served files), and the API docs (Swagger UI) still render.
import t from 'tap';
import type { Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startWebService } from '../helpers/web.js';

t.test('pages hold under their CSP', async (t) => {
  const svc = await startWebService(t);
  const browser = await launchChromium(t);
  const page = await browser.newPage({ baseURL: svc.config.baseUrl });
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  const visit = async (p: Page, path: string) => {
    const res = await p.goto(path);
    t.ok(res, path);
    t.match(res!.headers()['content-security-policy'], /script-src 'self'/, path);
  };

  for (const path of ['/', '/markets', '/login', '/register', '/checkout/unknown-token'])
    await visit(page, path);
  t.equal(
    await page.evaluate(() => getComputedStyle(document.body).margin),
    '0px',
    'the site stylesheet applies',
  );

  await visit(page, '/api/docs');
  await page.locator('.swagger-ui .opblock').first().waitFor({ timeout: 30_000 });
  t.ok(
    (await page.locator('.swagger-ui .opblock').count()) > 10,
    'Swagger UI lists the operations',
  );
  await page.locator('.swagger-ui .opblock-summary').first().click();
  await page.waitForTimeout(500);
  t.same(violations, [], 'no CSP violation on any page');
});
