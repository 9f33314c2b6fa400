// The whole site crawled from `/` as a visitor and from `/console` as a logged-in holder with an
// agent, an order and a cart: every link, script, stylesheet and image answers
// 2xx or 3xx; every page is valid HTML (html-validate's standard and document rules) with a <title>
// and carries the security headers. A page kind is checked on a few of its pages, not all of them.
import t from 'tap';
import { HtmlValidate } from 'html-validate';
import { registerAgent } from '../../helpers/agents.js';
import { crawl, shapeOf, type Fetched } from '../../helpers/crawl.js';
import { registerHolder, sharedRecordedSite } from '../../helpers/web.js';

// A frozen clock on a day of history: the record has closed and settled sessions to link to.
const svc = await sharedRecordedSite();

// Subresource integrity matters for other origins' files; every script and stylesheet here is the site's own.
const validator = new HtmlValidate({
  extends: ['html-validate:standard', 'html-validate:document'],
  rules: { 'require-sri': ['error', { target: 'crossorigin' }] },
});
const html = (f: Fetched) => f.type.startsWith('text/html');

async function checkAll(t: Tap.Test, pages: Fetched[]): Promise<void> {
  const broken = pages
    .filter((p) => p.status < 200 || p.status >= 400)
    .map((p) => `${p.status} ${p.url} (linked from ${p.from})`);
  t.same(broken, [], 'every link answers 2xx or 3xx');
  const checked = new Set<string>();
  for (const p of pages.filter((p) => html(p) && p.status === 200)) {
    const shape = shapeOf(p.url);
    if (checked.has(shape)) continue;
    checked.add(shape);
    t.match(p.text, /<title>[^<]*\S[^<]*<\/title>/, `${p.url}: has a title`);
    const csp = p.headers.get('content-security-policy') ?? '';
    t.match(csp, /frame-ancestors 'none'/, `${p.url}: no framing`);
    t.match(csp, /script-src 'self'/, `${p.url}: scripts only from the site`);
    t.notMatch(csp, /unsafe-inline/, `${p.url}: no inline script or style allowed`);
    t.equal(p.headers.get('x-content-type-options'), 'nosniff', `${p.url}: nosniff`);
    t.ok(p.headers.get('referrer-policy'), `${p.url}: a referrer policy`);
    const report = await validator.validateString(p.text, p.url);
    const problems = report.results.flatMap((r) =>
      r.messages.map((m) => `${m.ruleId} line ${m.line}: ${m.message}`),
    );
    t.same(problems, [], `${p.url}: valid HTML`);
  }
}

t.test('a visitor: every link from the home page works and every page is valid', async (t) => {
  const pages = await crawl(svc, ['/', '/no-such-page'], { skip: (p) => p.startsWith('/logout') });
  const kinds = new Set(pages.filter(html).map((p) => shapeOf(p.url)));
  for (const kind of ['/', '/markets', '/login', '/register'])
    t.ok(kinds.has(kind), `the crawl reached ${kind}`);
  const missing = pages.find((p) => p.url === '/no-such-page')!;
  t.equal(missing.status, 404, 'an unknown page is 404');
  t.match(missing.type, /^text\/html/, 'a browser gets the 404 as a page');
  t.match(missing.text, /Page not found/);
  await checkAll(
    t,
    pages.filter((p) => p !== missing),
  );
});

t.test('a holder with an agent, an order and a cart: the console and its links', async (t) => {
  const { cookie } = await registerHolder(svc, 'crawler@example.org');
  const agent = await registerAgent(svc);
  const menu = await svc.getJson('/api/v1/markets/h2/deals?limit=5');
  const order = await agent.post('/api/v1/orders', {
    market: 'h2',
    offer_key: menu.body.deals[0].key,
    qty: 1,
  });
  t.equal(order.status, 201, 'an order to pay');
  const item = await agent.post('/api/v1/cart/items', {
    market: 'h2',
    offer_key: menu.body.deals[1].key,
    qty: 1,
  });
  t.equal(item.status, 201, 'a cart line');
  const starts = [
    '/console',
    new URL(order.body.purchase_url).pathname,
    new URL(item.body.checkout_url).pathname,
  ];
  const pages = await crawl(svc, starts, { cookie, skip: (p) => p.startsWith('/logout') });
  const kinds = new Set(pages.filter(html).map((p) => shapeOf(p.url)));
  for (const kind of ['/console', '/console/agents', '/checkout/:token', '/carts/:token'])
    t.ok(kinds.has(kind), `the crawl reached ${kind}`);
  await checkAll(t, pages);
});
