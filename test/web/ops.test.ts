// The operators' pages in headless Chromium, at 1280 and 375 px: /ops draws its
// charts on first load, and under traffic a chart moves without a reload; a real 5xx turns the
// status line to name it and is listed with its time and route; closes and backlog come before the
// routes; no serious or critical axe violation and no CSP violation; without JavaScript the page
// still shows the figures. /ops/bench draws target lines and rings a missed target. Every wait is
// bounded in polls (helpers/wait.ts within). Screenshots go to test-artifacts/.
import t from 'tap';
import fs from 'node:fs';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { artifact, launchChromium } from '../helpers/browser.js';
import { within } from '../helpers/wait.js';
import { startWebService } from '../helpers/web.js';
import { answerA5xx } from '../helpers/ops.js';

// Chart points of 1 s (the service's default is 5 s) so a chart moves within a bounded wait; the
// record cache off so the tape reads the database (answerA5xx).
const svc = await startWebService(t, { SVC_RECORD_CACHE_MB: '0' }, { ops: { pointSeconds: 1 } });
const browser = await launchChromium(t);
/** 200 polls 50 ms apart: at least 10 s of real time for what the feed shows within 1-2 s. */
const POLLS = 200;

async function axeProblems(page: Page): Promise<string[]> {
  const axe = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze();
  return axe.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    );
}

/** The newest requests/s the requests chart draws (its caption: "requests/s from x to y (low ..."). */
async function chartLatest(page: Page): Promise<number> {
  const caption = (await page.locator('#ops-chart-requests figcaption').textContent()) ?? '';
  return Number(/ to ([\d.]+) \(low/.exec(caption)?.[1] ?? Number.NaN);
}

/** Requests from 4 clients until `until` settles (traffic that lasts several points). */
async function whileLoaded<T>(until: () => Promise<T>): Promise<T> {
  let running = true;
  const load = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (running) await (await svc.get('/api/v1/markets')).arrayBuffer();
    }),
  );
  try {
    return await until();
  } finally {
    running = false;
    await load;
  }
}

await within(
  POLLS,
  () => svc.services.opsFeed.history().points.length >= 3,
  'three chart points before the first page',
);
let answered5xx = false;

for (const width of [1280, 375]) {
  t.test(
    `/ops at ${width} px: charts at once, moving under traffic, the status line and the recent 5xx`,
    async (t) => {
      const context = await browser.newContext({
        baseURL: svc.config.baseUrl,
        viewport: { width, height: 900 },
      });
      t.teardown(() => context.close());
      const page = await context.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto('/ops');

      // Drawn on first load: each chart a path of points (the server's, then the script's).
      for (const id of ['requests', 'errors', 'mailbox', 'loop']) {
        const d =
          (await page.locator(`#ops-chart-${id} svg path.line`).first().getAttribute('d')) ?? '';
        t.match(d, /^M[\d.]+,[\d.]+L[\d.]+,[\d.]+/, `the ${id} chart has a line`);
      }
      // Latency is unknown in a point without requests: its line has gaps, but something is drawn.
      t.match(
        (await page.locator('#ops-chart-latency svg path.line').first().getAttribute('d')) ?? '',
        /^M[\d.]+,[\d.]+/,
        'the latency chart has its points',
      );
      t.ok(
        (await page.locator('#ops-chart-mailbox g.level line').count()) === 1,
        'the mailbox chart draws its threshold',
      );
      await within(
        POLLS,
        async () =>
          /^Live: updated every second from pid \d+/.test(
            (await page.locator('#ops-live').textContent()) ?? '',
          ),
        'the script to follow the feed',
      );

      // Under traffic the requests chart rises, without a reload (the page's own marker stays).
      await page.evaluate(
        () => ((window as unknown as { notReloaded: boolean }).notReloaded = true),
      );
      const before = await within(
        POLLS,
        async () => ((await chartLatest(page)) < 20 ? String(await chartLatest(page)) : ''),
        'a quiet newest point',
      );
      t.ok(Number(before) < 20, `before the traffic: ${before} requests/s in the newest point`);
      const after = await whileLoaded(() =>
        within(
          POLLS,
          async () => ((await chartLatest(page)) >= 20 ? chartLatest(page) : 0),
          'the requests chart to show the traffic',
        ),
      );
      t.ok(after >= 20, `under traffic the newest point drawn: ${after} requests/s`);
      t.equal(
        await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded),
        true,
        'without a reload',
      );

      // A 5xx: the status line names the figure past its threshold, and the 5xx is listed.
      if (!answered5xx) {
        t.equal(await answerA5xx(svc), 500, 'a real 5xx');
        answered5xx = true;
      }
      const status = page.locator('#ops-status');
      await within(
        POLLS,
        async () =>
          /5xx answers per second: [\d.]+ per second in the last 5 min/.test(
            (await status.textContent()) ?? '',
          ),
        'the status line to name the 5xx',
      );
      t.equal(await status.getAttribute('class'), 'error', 'the status line reads as an error');
      const row = page.locator('#ops-recent-5xx tbody tr').first();
      await within(
        POLLS,
        async () =>
          (await row.locator('code').textContent()) === 'GET /api/v1/markets/{market_id}/tape',
        'the 5xx in the list',
      );
      t.match(
        (await row.locator('td').first().textContent()) ?? '',
        /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
        'with its time',
      );
      t.equal(await row.locator('td.num').textContent(), '500', 'and its status');
      t.ok(
        (await page.locator('#ops-chart-errors svg path.line.series-1').count()) === 1,
        'the 5xx line drawn',
      );

      // Closes and backlog before the routes; the routes without traffic folded.
      t.ok(
        await page.evaluate(() => {
          const at = (sel: string) => document.querySelector(sel)!;
          return (
            !!(
              at('#ops-markets').compareDocumentPosition(at('#ops-routes')) &
              Node.DOCUMENT_POSITION_FOLLOWING
            ) &&
            !!(
              at('#ops-backlog').compareDocumentPosition(at('#ops-routes')) &
              Node.DOCUMENT_POSITION_FOLLOWING
            )
          );
        }),
        'closes and backlog come first',
      );
      t.equal(
        await page.locator('#ops-quiet').evaluate((e) => e.tagName),
        'DETAILS',
        'routes with no traffic under a <details>',
      );
      t.ok(
        await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
        'no sideways scroll',
      );

      t.same(await axeProblems(page), [], '/ops: axe');
      await page.screenshot({ path: artifact(`ops-live-${width}.png`), fullPage: true });
      t.ok(fs.statSync(artifact(`ops-live-${width}.png`)).size > 0, 'screenshot kept');
      t.same(violations, [], 'no CSP violation');
    },
  );
}

t.test('/ops reads right without JavaScript', async (t) => {
  const context = await browser.newContext({
    baseURL: svc.config.baseUrl,
    javaScriptEnabled: false,
  });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto('/ops');
  t.match(
    (await page.locator('#ops-live').textContent()) ?? '',
    'reload for new ones',
    'says the figures are as of loading',
  );
  t.match((await page.locator('h1').textContent()) ?? '', 'Operators: live figures');
  t.ok(
    Number(
      ((await page.locator('[data-f="requests.total"]').textContent()) ?? '').replace(/,/g, ''),
    ) > 0,
    'the request count is in the page',
  );
  t.ok(
    (await page.locator('#ops-chart-requests svg path.line').count()) === 1,
    'the charts are drawn by the server',
  );
  t.ok(
    (await page.locator('#ops-routes tbody th code, #ops-quiet-routes code').count()) > 0,
    'the routes are listed',
  );
});

t.test('/ops/bench: charts with their targets, missed ones ringed, axe-clean', async (t) => {
  for (const width of [1280, 375]) {
    const context = await browser.newContext({
      baseURL: svc.config.baseUrl,
      viewport: { width, height: 900 },
    });
    t.teardown(() => context.close());
    const page = await context.newPage();
    await page.goto('/ops/bench');
    t.ok((await page.locator('svg.chart').count()) >= 4, 'a chart per scenario at least');
    t.ok((await page.locator('svg.chart g.level line').count()) >= 4, 'target lines drawn');
    t.ok((await page.locator('svg.chart circle.ring').count()) >= 1, 'a missed target ringed');
    t.match(
      (await page.locator('svg.chart circle.ring title').first().textContent()) ?? '',
      /missed its target on /,
      'and named',
    );
    t.ok(
      (await page.locator('caption', { hasText: 'Latest run:' }).count()) >= 3,
      'a latest-run table per scenario',
    );
    t.same(await axeProblems(page), [], `/ops/bench at ${width} px: axe`);
    await page.screenshot({ path: artifact(`ops-bench-${width}.png`), fullPage: true });
    t.ok(fs.statSync(artifact(`ops-bench-${width}.png`)).size > 0, 'screenshot kept');
  }
});
