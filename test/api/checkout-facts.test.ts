// The holder decides on facts: the purchase page and the cart link show, beside what is
// charged, the deal's resale price and margin, the desk's own bid, the family's settled record (the
// numbers of GET /markets/{id}/families) and the projection's low/mid/high curve for the chosen
// quantity (the numbers of GET /markets/{id}/deals/{key}/projection) as a chart with a text
// alternative and a sentence on the risk; the countdown to the close is in seconds. After the close
// the facts are gone and the page says so, with a 200.
import t from 'tap';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send } from '../helpers/agents.js';
import { getPage } from '../helpers/web.js';

// The clock is the test's: it stands still until the test moves it past a close. It starts a minute
// into a session of h10 (sessions are aligned to the epoch at time scale 1), so an m15, h2 and h10
// session all open together and two m15 closes pass long before the h2 session's.
let nowMs = (Math.floor(Date.now() / 36_000_000) * 36_000 + 60) * 1000;
const svc = await startTestService(t, { SVC_BACKFILL_DAYS: '1' }, { realMs: () => nowMs });
await svc.services.supervisor.backfilled();

const usd = (x: number) => x.toFixed(2);
const pct = (x: number | null) => (x === null ? 'none yet' : `${(x * 100).toFixed(2)} %`);
const units = (n: number) => `${n} unit${n === 1 ? '' : 's'}`;
const hhmmss = (unix: number) => new Date(unix * 1000).toISOString().slice(11, 19);
/** A page's text without tags, whitespace collapsed. */
const words = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');

/** The JSON API's answers about a deal: the deal, its projection and its family's row. */
async function apiFacts(market: string, key: string) {
  const deal = (await send(svc, 'GET', `/api/v1/markets/${market}/deals/${key}`)).body;
  const projection = (await send(svc, 'GET', `/api/v1/markets/${market}/deals/${key}/projection`))
    .body;
  const family = (await send(svc, 'GET', `/api/v1/markets/${market}/families`)).body.families.find(
    (f: any) => f.cluster === deal.cluster,
  );
  return { deal, projection, family };
}

/** A deal of `market` whose family has settled trades in the families window, with room for `qty` units. */
async function tradedDeal(market: string, qty: number) {
  const fams = (await send(svc, 'GET', `/api/v1/markets/${market}/families`)).body.families;
  const deals = (await send(svc, 'GET', `/api/v1/markets/${market}/deals`)).body.deals;
  const settled = new Set(fams.filter((f: any) => f.settled > 0).map((f: any) => f.cluster));
  const d = deals.find((x: any) => settled.has(x.cluster) && x.max_qty >= qty);
  if (!d) throw new Error(`no deal of a traded family on ${market}`);
  return d;
}

/** What the facts of `qty` units of a deal read as, from the JSON answers. */
function checkFacts(
  t: Tap.Test,
  html: string,
  f: Awaited<ReturnType<typeof apiFacts>>,
  qty: number,
) {
  const text = words(html);
  const { deal, projection: p, family } = f;
  t.match(text, `Resale price ${usd(deal.list_price)} USD per unit`, "the deal's resale price");
  t.match(text, `Margin ${usd(deal.margin)} USD per unit`, 'its margin');
  t.match(
    text,
    deal.house_accepted
      ? `The desk bids on this deal itself: ${units(deal.house_qty)}.`
      : 'The desk does not bid on this deal.',
    "the desk's own bid",
  );
  t.ok(family.settled > 0);
  t.match(
    text,
    `${family.settled} settled trades of ${family.executed} in the last 48 sessions: ${pct(family.profitable_rate)} profitable, ${pct(family.downside_rate)} hit by a downside, mean result ${usd(family.mean_pnl)} USD per trade.`,
    "the family's settled record, as the families answer has it",
  );
  const i = p.qty.indexOf(qty);
  t.ok(i >= 0, 'the quantity is on the curve');
  const [low, mid, high] = [p.curve.low[i], p.curve.mid[i], p.curve.high[i]];
  const c = p.calibration;
  t.equal(c.settled, p.samples.settled, 'the calibration checks every settled similar deal');
  t.match(
    text,
    `The naive projection puts this order at ${usd(low)} USD in its low scenario, ${usd(mid)} USD on its projected path and ${usd(high)} USD in its high scenario; on the record, ${c.below_low} of ${c.settled} similar settled deals ended below the low scenario it would have given them`,
    'the risk in words, from the projection and its calibration',
  );
  // How similar deals ended: the projection's settled similar deals, said before the projection's figures.
  const s = p.samples;
  t.ok(s.settled > 0);
  const ended = `How similar deals ended: of the ${s.settled} settled deal${s.settled === 1 ? '' : 's'} of ${p.sku_family} in the last 48 sessions, ${s.lost} lost money; per unit bought, the median result was ${usd(s.median_pnl_per_unit)} USD and the worst ${usd(s.worst_pnl_per_unit)} USD.`;
  t.match(text, ended, 'how many lost money, the median and the worst result per unit');
  t.match(
    text,
    `On the record, ${c.below_low} of ${c.settled} similar settled deal${c.settled === 1 ? '' : 's'} ended below the low scenario this projection would have given them when they were bought.`,
    'the calibration in words',
  );
  t.ok(
    text.indexOf(ended) < text.indexOf('The naive projection puts'),
    'the record first, the projection after',
  );
  t.notMatch(text, /low scenario[^.]*\b(makes|gain)/i, 'the low scenario is never called a gain');
  const chart = new RegExp(
    `<svg class="chart" role="img" aria-labelledby="(chart-\\d+)-t \\1-d"[^>]*><title id="\\1-t">Projected P&amp;L of ${p.sku_family} by quantity</title><desc id="\\1-d">([^<]+)</desc>`,
  ).exec(html);
  t.ok(chart, 'the curve as an SVG chart with a title and a description');
  const money = (v: number) => (Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(2));
  // The chart runs from 1 unit to a little past the chosen quantity (twice it, at least 4 more), not the deal's whole range.
  const upTo = Math.min(p.qty[p.qty.length - 1], Math.max(qty * 2, qty + 4));
  t.match(
    chart?.[2] ?? '',
    `projected path from ${money(p.curve.mid[0])} to ${money(p.curve.mid[upTo - 1])}`,
    'the description tells the curve',
  );
  t.match(chart?.[2] ?? '', `over units 1 to ${upTo}`, "bounded to the order's range");
  t.match(
    html.slice(chart?.index ?? 0),
    new RegExp(`<g class="marker">[^]*?your ${units(qty)}</text></g>`),
    'the chosen quantity is marked',
  );
  t.match(
    text,
    /You pay [\d.]+ USD for \d+ units? and can lose all of it, plus a holding fee of [\d.]+ USD a unit for each session a unit stays unsold and, if a downside event hits the deal, a settlement surcharge when its position settles;/,
    'what can be lost, first, in one plain sentence, the surcharge with it',
  );
  t.match(text, /A naive projection, not a promise/, 'the projection labelled as what it is');
  t.notMatch(text, /Even the low scenario/, 'never a gain promised');
  t.match(text, /Why the band is this wide\./, 'why the band is narrow or wide');
  const caption =
    /<figcaption>([^<]+)<\/figcaption>/.exec(html.slice(chart?.index ?? 0))?.[1] ?? '';
  t.match(
    caption,
    `At ${units(qty)}: low ${usd(low)}, projected ${usd(mid)}, high ${usd(high)} USD.`,
    "the caption gives the chosen quantity's three results",
  );
  t.match(html, /<path class="band" d="M/, 'the low-high band is drawn');
}

const agent = await registerAgent(svc, { name: 'Facts Scout' });

t.test(
  'the purchase page: the facts of the order, the countdown in seconds; after the close, facts absent',
  async (t) => {
    const d = await tradedDeal('m15', 3);
    const order = (await agent.post('/api/v1/orders', { market: 'm15', offer_key: d.key, qty: 3 }))
      .body;
    t.equal(order.qty, 3);
    const path = new URL(order.purchase_url).pathname;
    const page = await getPage(svc, path);
    t.equal(page.status, 200);
    checkFacts(t, page.text, await apiFacts('m15', d.key), 3);
    t.match(
      page.text,
      `Goods</th><td class="num">${usd(order.gross_amount)} USD`,
      'what is charged stays beside it',
    );
    const left = Math.ceil(order.closes_at - nowMs / 1000);
    t.ok(left > 0);
    t.match(
      page.text,
      `<span class="countdown" data-closes="${order.closes_at}">closes in ${left} s (${hhmmss(order.closes_at)} UTC)</span>`,
      'the seconds to the close, written by the server with the time',
    );
    t.match(
      page.text,
      '<script src="/static/countdown.js"></script>',
      'kept current by the script',
    );
    const script = await (await svc.get('/static/countdown.js')).text();
    t.match(script, "'closes in ' + left + ' s '", 'the script counts seconds too');

    // The close passes: first by the clock alone, then the supervisor turns the session over.
    nowMs = (order.closes_at + 1) * 1000;
    for (const when of ['by the clock', 'after the session turned over']) {
      const closed = await getPage(svc, path);
      t.equal(closed.status, 200, `closed ${when}: the page still answers`);
      const text = words(closed.text);
      t.match(
        text,
        `Session ${order.tick} of m15 closed at ${hhmmss(order.closes_at)} UTC: its desk bid, its family's record and its projection are no longer shown.`,
        `facts absent ${when}, said so`,
      );
      t.match(
        text,
        `Resale price ${usd(order.list_price)} USD per unit`,
        "the order's own resale price stays",
      );
      t.notMatch(closed.text, 'Projected P&amp;L', 'no chart');
      t.notMatch(closed.text, 'class="countdown"', 'no countdown on a closed order');
      t.match(closed.text, 'This purchase link expired');
      if (when === 'by the clock') await svc.services.supervisor.runDue();
    }
  },
);

t.test('the cart link: the facts of each open line, and the countdown in seconds', async (t) => {
  const menu = (await send(svc, 'GET', '/api/v1/markets/h2/deals')).body;
  const dm = await tradedDeal('m15', 2);
  const dh = await tradedDeal('h2', 1);
  const a = await registerAgent(svc, { name: 'Cart Scout' });
  const first = (
    await a.post('/api/v1/cart/items', { market: 'm15', offer_key: dm.key, qty: 2, note: 'cheap' })
  ).body;
  const second = (await a.post('/api/v1/cart/items', { market: 'h2', offer_key: dh.key, qty: 1 }))
    .body;
  const path = new URL(second.checkout_url).pathname;
  const page = await getPage(svc, path);
  t.equal(page.status, 200);
  const lines = [
    { id: first.item_id, market: 'm15', deal: dm, qty: 2 },
    { id: second.item_id, market: 'h2', deal: dh, qty: 1 },
  ];
  for (const l of lines) {
    const at = page.text.indexOf(`<article class="facts" aria-labelledby="facts-${l.id}">`);
    t.ok(at >= 0, `line ${l.id} has its facts`);
    const block = page.text.slice(at, page.text.indexOf('</article>', at));
    t.match(block, `: ${units(l.qty)} on ${l.market}</h3>`);
    checkFacts(t, block, await apiFacts(l.market, l.deal.key), l.qty);
  }
  const left = Math.ceil(menu.closes_at - nowMs / 1000);
  t.match(
    page.text,
    `<span class="countdown" data-closes="${menu.closes_at}">closes in ${left} s (${hhmmss(menu.closes_at)} UTC)</span>`,
    'each line counts down in seconds',
  );

  // The m15 line's session closes: the page still answers, its line has no facts any more.
  const m15 = (await send(svc, 'GET', '/api/v1/markets/m15/deals?limit=1')).body;
  t.ok(m15.closes_at < menu.closes_at, 'the m15 session closes before the h2 one');
  nowMs = (m15.closes_at + 1) * 1000;
  const later = await getPage(svc, path);
  t.equal(later.status, 200);
  t.notMatch(later.text, `aria-labelledby="facts-${first.item_id}"`, 'a stale line has no facts');
  t.match(later.text, `aria-labelledby="facts-${second.item_id}"`, 'the open line keeps its facts');
});

t.test(
  'facts of what is off the menu are absent, never a 500; a cart page shows those of its first lines',
  async (t) => {
    const { dealFacts, cartFacts, FACTS_PER_PAGE } = await import('../../src/web/deal-facts.js');
    const d = (await send(svc, 'GET', '/api/v1/markets/h10/deals?limit=1')).body;
    const deal = d.deals[0];
    const base = {
      market: 'h10',
      tick: d.tick,
      offer_key: deal.key,
      qty: 1,
      unit_cost: deal.unit_cost,
      list_price: deal.list_price,
    };
    const [open, gone, closed, unknown] = await dealFacts(svc.services, [
      { ...base, closes_at: d.closes_at },
      { ...base, offer_key: 'not-a-key', closes_at: d.closes_at },
      { ...base, closes_at: nowMs / 1000 - 1 },
      { ...base, market: 'zz', closes_at: d.closes_at },
    ]);
    t.equal(open.available, true);
    t.same([gone.available, closed.available, unknown.available], [false, false, false]);
    t.match(gone.absent, 'The deal is no longer on the menu of h10');
    t.match(closed.absent, `Session ${d.tick} of h10 closed at`);
    t.same(
      [closed.list_price, closed.margin],
      [usd(deal.list_price), usd(deal.margin)],
      'the resale price and margin stay',
    );

    const line = (id: number, extra: Record<string, unknown> = {}) => ({
      id,
      deal_title: `line ${id}`,
      status: 'in_cart',
      stale: false,
      ...base,
      closes_at: d.closes_at,
      ...extra,
    });
    const items = [
      line(1, { status: 'ordered' }),
      line(2, { stale: true }),
      ...Array.from({ length: FACTS_PER_PAGE + 2 }, (_, i) => line(10 + i)),
    ];
    const many = await cartFacts(svc.services, { items } as any);
    t.same(
      many.facts.map((f) => f.line_id),
      Array.from({ length: FACTS_PER_PAGE }, (_, i) => 10 + i),
      'ordered and stale lines have none; the first open lines have theirs',
    );
    t.equal(many.facts_left_out, '2 more lines', 'the others are named as left out');
    t.ok(many.facts.every((f) => f.available));
  },
);
