// The checkout tells the truth first, in Chromium at 375 and 1280 px, on a day of recorded
// history: above the pay button of the purchase link and of the cart a holder reaches from the
// console, the page says what can be lost, the holding fee a unit and session, how many of the
// settled similar deals lost money with their median and worst result per unit, and how many of them
// ended below the projection's low scenario (its calibration), each figure the projection answer's;
// nothing of the projection is worded or coloured as a gain.
import t from 'tap';
import type { Page } from 'playwright-core';
import { registerAgent } from '../helpers/agents.js';
import { artifact, launchChromium, useServiceClock } from '../helpers/browser.js';
import { registerHolder, startRecordedSite } from '../helpers/web.js';
import { withClock } from '../helpers/clocked.js';
import { RECORDED_DAY_MS } from '../helpers/service.js';
import { MARKETS } from '../../src/engine/index.js';

// The clock stands at the recorded day's instant, 7 minutes into an h2 session that closes at 14:00:
// the deals stay open for the whole file and the pages' clock is the service's.
const clocked = await withClock((realMs) => startRecordedSite(t, { realMs }), RECORDED_DAY_MS);
const { svc } = clocked;
const browser = await launchChromium(t);
const MARKET = 'h2';
const HOLDING = (MARKETS[MARKET].fees.holding_per_unit_session_cents / 100).toFixed(2);
const usd = (n: number) => n.toFixed(2);
const plural = (n: number) => (n === 1 ? '' : 's');

/** h2 deals of the open session whose family has settled deals on record, with their projections; those with results below their low scenario first. */
async function dealsWithRecord(t: Tap.Test, n: number) {
  const menu = (await svc.getJson(`/api/v1/markets/${MARKET}/deals`)).body;
  const out: { deal: any; p: any }[] = [];
  for (const deal of menu.deals) {
    if (deal.max_qty < 2 || out.some((o) => o.deal.cluster === deal.cluster)) continue;
    const p = (await svc.getJson(`/api/v1/markets/${MARKET}/deals/${deal.key}/projection`)).body;
    if (p.samples.settled > 0) out.push({ deal, p });
  }
  out.sort((a, b) => b.p.calibration.below_low - a.p.calibration.below_low);
  if (out.length < n)
    throw new Error(`${out.length} h2 families with settled deals on record, ${n} needed`);
  t.ok(out[0].p.calibration.below_low > 0, 'the record has results below the low scenario to tell');
  return out.slice(0, n);
}

/** The sentences the projection answer `p` gives for how similar deals ended. */
function similarSentences(p: any) {
  const s = p.samples,
    c = p.calibration;
  return {
    ended: `of the ${s.settled} settled deal${plural(s.settled)} of ${p.sku_family} in the last ${p.params.lookback} sessions, ${s.lost} lost money; per unit bought, the median result was ${usd(s.median_pnl_per_unit)} USD and the worst ${usd(s.worst_pnl_per_unit)} USD.`,
    calibration: `On the record, ${c.below_low} of ${c.settled} similar settled deal${plural(c.settled)} ended below the low scenario this projection would have given them when they were bought.`,
  };
}

/** The risk box before the pay button: where it is, what it says, and its colour from the record. */
async function riskFirst(t: Tap.Test, page: Page, width: number) {
  const box = page.getByRole('note', { name: 'What you can lose' });
  t.equal(await box.count(), 1, 'one risk box before paying');
  const pay = page.locator('#pay-button');
  const [b, p] = [await box.boundingBox(), await pay.boundingBox()];
  t.ok(
    b && p && b.y + (width === 375 ? b.height : 0) <= p.y,
    `above the pay button (${width === 375 ? 'wholly, on a phone' : 'its top, beside the pay panel'})`,
  );
  t.match(
    await box.getAttribute('class'),
    /^risk compact (loss|mixed)$/,
    'coloured by the record (it has settled deals), never as a gain',
  );
  return (await box.innerText()).replace(/\s+/g, ' ');
}

/** Nothing of the projection reads or looks like a gain: no gain or positive class, no gain colour, no gain word by the low scenario. */
async function noGainOnProjection(t: Tap.Test, page: Page) {
  const gain = await page.evaluate(() =>
    getComputedStyle(document.documentElement).getPropertyValue('--gain').trim(),
  );
  const found = await page.evaluate((gainColour) => {
    const probe = document.createElement('span');
    probe.style.color = gainColour;
    document.body.append(probe);
    const green = getComputedStyle(probe).color;
    probe.remove();
    const nodes = [...document.querySelectorAll('.risk, .risk *, .scenarios *, .facts-chart *')];
    return {
      classes: nodes.filter((n) => /\b(gain|pos)\b/.test(n.getAttribute('class') ?? '')).length,
      green: nodes.filter(
        (n) =>
          getComputedStyle(n).color === green ||
          getComputedStyle(n).stroke === green ||
          getComputedStyle(n).fill === green,
      ).length,
      scenarios: document.querySelectorAll('.scenarios').length,
    };
  }, gain);
  t.ok(found.scenarios > 0, "the projection's scenarios are on the page");
  t.equal(found.classes, 0, 'no gain class on the risk box or the projection');
  t.equal(found.green, 0, 'nothing in the gain colour there');
  const text = (await page.locator('main').innerText()).replace(/\s+/g, ' ');
  t.notMatch(
    text,
    /low scenario[^.;]*\b(makes|gain|profit|earns)/i,
    'the low scenario is never called a gain',
  );
  t.notMatch(text, /Even the low scenario/);
}

for (const width of [375, 1280]) {
  t.test(
    `the purchase link and the console's cart checkout tell the truth first at ${width} px`,
    async (t) => {
      const [one, two] = await dealsWithRecord(t, 2);
      const { cookie } = await registerHolder(svc, `truth-${width}@example.org`);
      const [name, value] = cookie.split('=');
      const context = await browser.newContext({
        baseURL: svc.config.baseUrl,
        viewport: { width, height: width === 375 ? 740 : 900 },
      });
      await useServiceClock(context, svc);
      await context.addCookies([{ name, value, url: svc.config.baseUrl }]);
      t.teardown(() => context.close());
      const page = await context.newPage();
      t.equal(
        await page.evaluate(() => Date.now()),
        clocked.now(),
        "the page's clock is the service's",
      );

      // The purchase link of an order of 2 units.
      const agent = await registerAgent(svc, { name: `Truth Scout ${width}` });
      const order = await agent.post('/api/v1/orders', {
        market: MARKET,
        offer_key: one.deal.key,
        qty: 2,
      });
      t.equal(order.status, 201);
      await page.goto(new URL(order.body.purchase_url).pathname);
      await page.screenshot({ path: artifact(`truth-${width}-purchase.png`), fullPage: true });
      const said = await riskFirst(t, page, width);
      t.match(
        said,
        `You pay ${usd(order.body.total_amount)} USD for 2 units and can lose all of it`,
        'what can be lost: the cash paid',
      );
      t.match(
        said,
        `plus a holding fee of ${HOLDING} USD a unit for each session a unit stays unsold`,
        'the holding fee a unit and session',
      );
      t.match(said, 'units still unsold at the end become your goods');
      const words = similarSentences(one.p);
      t.match(
        said,
        `How similar deals ended: ${words.ended}`,
        'how many similar settled deals lost money, their median and worst result',
      );
      t.match(
        said,
        words.calibration,
        `the calibration: ${one.p.calibration.below_low} of ${one.p.calibration.settled} below the low scenario`,
      );
      await noGainOnProjection(t, page);

      // The cart the agent proposes, paid the way the console leads to it: /cart, then "Review and pay".
      for (const d of [one, two])
        t.equal(
          (
            await agent.post('/api/v1/cart/items', {
              market: MARKET,
              offer_key: d.deal.key,
              qty: 1,
              note: 'on the record',
            })
          ).status,
          201,
        );
      const cart = (await agent.get('/api/v1/cart')).body;
      await page.goto(new URL(cart.checkout_url).pathname); // opening the link connects the agent's cart to the holder
      await page.goto('/cart');
      await page
        .locator(`a[href="${new URL(cart.checkout_url).pathname}"]`)
        .first()
        .click();
      await page.waitForURL((u) => u.pathname === new URL(cart.checkout_url).pathname);
      await page.screenshot({ path: artifact(`truth-${width}-cart.png`), fullPage: true });
      const cartSaid = await riskFirst(t, page, width);
      t.match(
        cartSaid,
        /You pay [\d.]+ USD for 2 lines and can lose all of it/,
        'what paying the cart can lose',
      );
      t.match(
        cartSaid,
        `a holding fee a unit for each session a unit stays unsold (${HOLDING} USD on ${MARKET})`,
        "the holding fee of the lines' market",
      );
      for (const d of [one, two]) {
        const w = similarSentences(d.p);
        t.match(
          cartSaid,
          `${d.deal.bundle.title} on ${MARKET}: ${w.ended} ${w.calibration}`,
          `line ${d.deal.bundle.title}: how similar deals ended and the calibration`,
        );
      }
      await noGainOnProjection(t, page);
    },
  );
}
