// The market pages over HTTP: GET /markets/{id} with every query, its
// defaults and bounds (422 as JSON and as a page), the rows against the JSON API's menu, the
// countdown the server writes, the pages' links; GET /markets/{id}/menu.csv against the menu;
// 404s; the cached menu part follows the session when the clock closes it. The fragment cache's
// own bounds are checked directly.
import t from 'tap';
import { parse } from 'csv-parse/sync';
import { MARKETS, centsToNumber, type MarketId } from '../../src/engine/index.js';
import { countdown } from '../../src/web/cart-view.js';
import { FragmentCache } from '../../src/web/fragment-cache.js';
import { startTestService } from '../helpers/service.js';
import { getPage } from '../helpers/web.js';
import { registerHolder } from '../helpers/holders.js';
import { T0 } from '../helpers/clock-rig.js';

// The test's clock: 100 s into a session of every market; sessions close when the test says so.
let nowMs = (T0 + 100) * 1000;
const svc = await startTestService(t, {}, { realMs: () => nowMs });

type Deal = Record<string, any>;
const menuOf = async (m: string): Promise<{ tick: number; closes_at: number; deals: Deal[] }> =>
  (await svc.getJson(`/api/v1/markets/${m}/deals`)).body;
const page = (path: string) => getPage(svc, path);

/** The deal rows of a market page, parsed from its table (one <tr> per deal in the body). */
function rows(html: string) {
  const body = html.slice(html.indexOf('<tbody>'), html.indexOf('</tbody>'));
  return [...body.matchAll(/<tr>(.*?)<\/tr>/gs)].map(([, tr]) => {
    const cells = [...tr.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((c) => c[1]);
    return {
      rank: Number(cells[0]),
      key: /<code class="key">([^<]+)<\/code>/.exec(tr)![1],
      cells,
      score: Number(cells.at(-2)),
      projection: /href="([^"]+\/projection)"/.exec(tr)![1],
    };
  });
}

/** The score as the page defines it, computed here independently: (margin - fee) x demand share. */
function expectedScores(m: MarketId, deals: Deal[]): Map<string, number> {
  const fee = centsToNumber(MARKETS[m].fees.fulfilment_per_unit_cents);
  const signal = (d: Deal) => (MARKETS[m].quotes_velocity ? d.sales_velocity : -d.sales_rank);
  return new Map(
    deals.map((d) => {
      const share = deals.filter((x) => signal(x) <= signal(d)).length / deals.length;
      return [d.key, Math.round((d.margin - fee) * share * 100) / 100];
    }),
  );
}

t.test(
  'GET /markets/{id} with the default query: every deal of the open session, by score, with the countdown',
  async (t) => {
    for (const m of ['m15', 'h2'] as MarketId[]) {
      const menu = await menuOf(m);
      const r = await page(`/markets/${m}`);
      t.equal(r.status, 200, m);
      t.match(r.headers.get('content-type'), /^text\/html/);
      t.match(r.text, `Session <strong>${menu.tick}</strong> is open`);
      const words = countdown(menu.closes_at, nowMs / 1000);
      t.match(words, /^closes in \d+ s \(\d\d:\d\d:\d\d UTC\)$/, 'the countdown is in seconds');
      t.match(
        r.text,
        `<span class="countdown" data-closes="${menu.closes_at}">${words}</span>`,
        'the server writes the countdown',
      );
      t.match(
        r.text,
        '<script src="/static/countdown.js"></script>',
        'and the script keeps it current',
      );
      t.match(
        r.text,
        /<div class="table-wrap" tabindex="0" role="region" aria-label="Deals of the menu">/,
      );
      const got = rows(r.text);
      t.equal(got.length, Math.min(50, menu.deals.length), `${m}: the first page of 50`);
      if (menu.deals.length > 50)
        t.match(
          r.text,
          `this page lists deals 1 to 50 (page 1 of ${Math.ceil(menu.deals.length / 50)})`,
          'which deals the page lists',
        );
      t.same(
        got.map((x) => x.rank),
        got.map((_, i) => i + 1),
      );
      const scores = expectedScores(m, menu.deals);
      const byKey = new Map(menu.deals.map((d) => [d.key, d]));
      for (const row of got) {
        const d = byKey.get(row.key)!;
        t.ok(d, `${row.key} is on the menu`);
        t.same(
          row.cells.slice(3, 6),
          [d.unit_cost.toFixed(2), d.list_price.toFixed(2), d.margin.toFixed(2)],
          `${row.key}: cost, price, margin`,
        );
        t.equal(
          row.cells[7],
          MARKETS[m].quotes_velocity ? d.sales_velocity.toFixed(2) : String(d.sales_rank),
          'velocity, or rank on ranking markets',
        );
        t.match(
          row.cells.join(),
          d.house_accepted ? `${d.house_qty} units` : 'none',
          'the desk bid',
        );
        t.equal(row.score, scores.get(d.key), `${row.key}: score`);
        t.equal(row.projection, `/api/v1/markets/${m}/deals/${d.key}/projection`);
      }
      t.ok(
        got.every((x, i) => i === 0 || x.score <= got[i - 1].score),
        'highest score first',
      );
      if (m === 'h2') t.match(r.text, '<th scope="col" class="num">Sales rank</th>');
      const projection = await svc.getJson(got[0].projection);
      t.equal(projection.status, 200, 'the projection link answers');
    }
  },
);

t.test('queries: family, min_margin, min_sv, house, sort, page and per_page', async (t) => {
  const m = 'm45';
  const menu = await menuOf(m);
  const byKey = new Map(menu.deals.map((d) => [d.key, d]));
  // Every deal the query keeps, on one page.
  const keys = async (qs: string) =>
    rows((await page(`/markets/${m}?per_page=500&${qs}`)).text).map((x) => byKey.get(x.key)!);

  const cluster = menu.deals[0].cluster;
  const family = await keys(`family=${cluster}`);
  t.same(
    family.map((d) => d.key).sort(),
    menu.deals
      .filter((d) => d.cluster === cluster)
      .map((d) => d.key)
      .sort(),
    'family: exactly that family',
  );
  const margins = menu.deals.map((d) => d.margin).sort((a, b) => a - b);
  const mid = margins[Math.floor(margins.length / 2)];
  const high = await keys(`min_margin=${mid}`);
  t.equal(high.length, menu.deals.filter((d) => d.margin >= mid).length, 'min_margin');
  t.ok(high.every((d) => d.margin >= mid));
  const svs = menu.deals.map((d) => d.sales_velocity).sort((a, b) => a - b);
  const sv = svs[Math.floor(svs.length / 2)];
  t.equal(
    (await keys(`min_sv=${sv}`)).length,
    menu.deals.filter((d) => d.sales_velocity >= sv).length,
    'min_sv',
  );
  const house = await keys('house=1');
  t.equal(
    house.length,
    (await svc.getJson(`/api/v1/markets/${m}/deals?house_only=true`)).body.total,
    'house=1: the desk bids only',
  );
  t.ok(house.length > 0 && house.every((d) => d.house_accepted));
  t.same(await keys('min_margin=&min_sv='), await keys(''), 'empty form fields are no bounds');

  const sorted = async (sort: string, value: (d: Deal) => number) => {
    const v = (await keys(`sort=${sort}`)).map(value);
    t.equal(v.length, menu.deals.length);
    return v;
  };
  const ascending = (v: number[]) => v.every((x, i) => i === 0 || x >= v[i - 1]);
  const descending = (v: number[]) => v.every((x, i) => i === 0 || x <= v[i - 1]);
  t.ok(ascending(await sorted('cost', (d) => d.unit_cost)), 'sort=cost: cheapest first');
  t.ok(descending(await sorted('margin', (d) => d.margin)), 'sort=margin');
  t.ok(descending(await sorted('margin_pct', (d) => d.margin / d.unit_cost)), 'sort=margin_pct');
  t.ok(descending(await sorted('price', (d) => d.list_price)), 'sort=price');
  t.ok(descending(await sorted('velocity', (d) => d.sales_velocity)), 'sort=velocity');
  t.ok(descending(await sorted('qty', (d) => d.max_qty)), 'sort=qty');
  t.ok(descending(await sorted('desk', (d) => d.house_qty)), 'sort=desk');
  t.same(
    (await keys('sort=listed')).map((d) => d.key),
    menu.deals.map((d) => d.key),
    'sort=listed: the menu order',
  );
  const ranks = rows((await page('/markets/h10?sort=velocity')).text).map((x) =>
    Number(x.cells[7]),
  );
  t.ok(ascending(ranks), 'sort=velocity on a ranking market: best sales rank first');

  // Pages: per_page 10, page 2 holds the 11th to 20th deals of the default order.
  const all = await keys('');
  const second = await page(`/markets/${m}?per_page=10&page=2`);
  const p2 = rows(second.text);
  t.same(
    p2.map((x) => x.key),
    all.slice(10, 20).map((d) => d.key),
    'page 2 of 10',
  );
  t.same(
    p2.map((x) => x.rank),
    [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
  );
  // Without per_page a page lists 50 deals.
  const second50 = await page(`/markets/${m}?page=2`);
  t.same(
    rows(second50.text).map((x) => x.key),
    all.slice(50, 100).map((d) => d.key),
    'page 2 of 50',
  );
  t.match(
    second50.text,
    `<a rel="prev" href="/markets/${m}">`,
    'back to page 1, at its plain address',
  );
  t.match(
    second50.text,
    `Page 2 of ${Math.ceil(menu.deals.length / 50)}: deals 51 to ${Math.min(100, menu.deals.length)} of ${menu.deals.length}`,
  );
  // Mustache escapes "=" and "&" in attributes (the browser reads them back as they were).
  t.match(
    second.text,
    `<a rel="prev" href="/markets/${m}?per_page&#x3D;10">`,
    'a link to page 1 (defaults left out)',
  );
  t.match(second.text, `<a rel="next" href="/markets/${m}?page&#x3D;3&amp;per_page&#x3D;10">`);
  t.match(second.text, `Page 2 of ${Math.ceil(menu.deals.length / 10)}`);
  const last = await page(`/markets/${m}?per_page=10&page=${Math.ceil(menu.deals.length / 10)}`);
  t.notMatch(last.text, 'rel="next"', 'no next link on the last page');
  const beyond = await page(`/markets/${m}?page=50`);
  t.equal(beyond.status, 200);
  t.equal(rows(beyond.text).length, 0);
  t.match(beyond.text, 'This page is past the last one');
  const filtered = await page(`/markets/${m}?sort=cost&house=1&family=${cluster}`);
  t.match(filtered.text, `<option value="${cluster}" selected>`, 'the form shows the query');
  t.match(filtered.text, '<option value="cost" selected>');
  t.match(filtered.text, 'name="house" value="1" checked');
  t.match(
    (await page('/markets/h2?min_sv=1')).text,
    'the minimum sales velocity filters nothing here',
    'min_sv on a ranking market',
  );
  t.equal(
    rows((await page('/markets/h2?min_sv=1')).text).length,
    Math.min(50, (await menuOf('h2')).deals.length),
  );
});

t.test('bounds: a bad query is a 422, as JSON and as a page', async (t) => {
  const bad: [string, string][] = [
    ['per_page=0', 'per_page'],
    ['per_page=501', 'per_page'],
    ['page=0', 'page'],
    ['page=x', 'page'],
    ['family=-2', 'family'],
    ['family=32', 'family'],
    ['sort=best', 'sort'],
    ['house=2', 'house'],
    ['min_margin=abc', 'min_margin'],
    ['min_sv=-1', 'min_sv'],
  ];
  for (const [qs, field] of bad) {
    const j = await getPage(svc, `/markets/m15?${qs}`, { json: true });
    t.equal(j.status, 422, qs);
    t.same(j.body.detail[0].loc, ['query', field], `${qs}: at query.${field}`);
    const h = await page(`/markets/m15?${qs}`);
    t.equal(h.status, 422);
    t.match(h.headers.get('content-type'), /^text\/html/, `${qs}: a page for a browser`);
  }
  t.equal((await page('/markets/m15?per_page=500')).status, 200, 'per_page 500 is the most');
});

t.test('404s: unknown market, page and CSV', async (t) => {
  for (const path of ['/markets/m16', '/markets/m16/menu.csv', '/markets/M15']) {
    const r = await page(path);
    t.equal(r.status, 404, path);
    t.match(r.headers.get('content-type'), /^text\/html/);
    t.match(r.text, 'unknown market');
  }
});

t.test('GET /markets/{id}/menu.csv: the header and one row per deal of the menu', async (t) => {
  const velocity = [
    'key',
    'tick',
    'sku_family',
    'cluster',
    'title',
    'unit',
    'origin',
    'items',
    'unit_cost',
    'list_price',
    'margin',
    'listed_at',
    'sales_velocity',
    'inverse_sv',
    'max_qty',
    'house_accepted',
    'house_qty',
    'score',
  ];
  const ranking = [
    'key',
    'tick',
    'sku_family',
    'cluster',
    'title',
    'unit',
    'origin',
    'items',
    'unit_cost',
    'list_price',
    'margin',
    'listed_at',
    'sales_rank',
    'sales_rank_avg',
    'rank_drops',
    'rank_drops_long',
    'nsellers',
    'max_qty',
    'house_accepted',
    'house_qty',
    'score',
  ];
  for (const m of ['m15', 'h10'] as MarketId[]) {
    const menu = await menuOf(m);
    const res = await svc.get(`/markets/${m}/menu.csv`);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    t.equal(
      res.headers.get('content-disposition'),
      `inline; filename="${m}-menu-${menu.tick}.csv"`,
    );
    const text = await res.text();
    const [header, ...records] = parse(text) as string[][];
    t.same(header, m === 'm15' ? velocity : ranking, `${m}: header`);
    t.equal(records.length, menu.deals.length, 'one row per deal');
    const scores = expectedScores(m, menu.deals);
    records.forEach((rec, i) => {
      const row = Object.fromEntries(header.map((h, k) => [h, rec[k]]));
      const d = menu.deals[i];
      t.equal(row.key, d.key, 'in listed order');
      for (const f of header.filter((h) => h in d && typeof d[h] !== 'object'))
        t.equal(row[f], String(d[f]), `${d.key}.${f}`);
      t.same([row.title, row.unit, row.origin], [d.bundle.title, d.bundle.unit, d.bundle.origin]);
      t.equal(
        row.items,
        d.bundle.items.map((x: any) => `${x.qty} x ${x.name} (${x.grade})`).join('; '),
      );
      t.equal(Number(row.score), scores.get(d.key));
    });
    const again = await svc.get(`/markets/${m}/menu.csv`, {
      headers: { 'if-none-match': res.headers.get('etag')! },
    });
    t.equal(again.status, 304, 'unchanged within the session');
  }
});

t.test('at a close the page and the CSV follow the new session', async (t) => {
  const before = await menuOf('m15');
  const firstKeys = rows((await page('/markets/m15')).text).map((x) => x.key);
  const csvBefore = await (await svc.get('/markets/m15/menu.csv')).text();
  nowMs = (before.closes_at + 1) * 1000;
  await svc.services.supervisor.runDue();
  const after = await menuOf('m15');
  t.equal(after.tick, before.tick + 1, 'the session closed');
  const r = await page('/markets/m15');
  t.match(r.text, `Session <strong>${after.tick}</strong> is open`);
  const keys = rows(r.text).map((x) => x.key);
  t.ok(
    keys.length > 0 && keys.every((k) => k.startsWith(`m15-${after.tick}-`)),
    'rows of the new menu, none of the kept old page',
  );
  t.ok(firstKeys.every((k) => k.startsWith(`m15-${before.tick}-`)));
  t.match(r.text, countdown(after.closes_at, nowMs / 1000));
  const csv = await (await svc.get('/markets/m15/menu.csv')).text();
  t.not(csv, csvBefore);
  t.equal(parse(csv).length - 1, after.deals.length);
});

t.test("a visitor's kept page is never a holder's, and the reverse", async (t) => {
  const holder = await registerHolder(svc);
  for (const path of ['/markets/m15', '/markets/m15?sort=cost', '/explore/m15', '/explore']) {
    const visitor = await page(path);
    t.match(visitor.text, 'href="/login"', `${path}: a visitor is offered to log in`);
    const theirs = await getPage(svc, path, { cookie: holder.cookie });
    t.equal(theirs.status, 200);
    t.match(theirs.text, holder.email, `${path}: the holder sees their own name`);
    t.notMatch(theirs.text, 'href="/login"');
    t.notMatch((await page(path)).text, holder.email, `${path}: the next visitor does not`);
  }
});

t.test(
  'the fragment cache: bounded in entries and characters, least recently used first, single flight',
  async (t) => {
    const c = new FragmentCache(3, 10);
    let computed = 0;
    const make = (s: string) => () => (computed++, s);
    c.get('a', make('aa'));
    c.get('b', make('bb'));
    c.get('c', make('cc'));
    t.equal(c.get('a', make('xx')), 'aa', 'a hit is not computed again');
    t.equal(computed, 3);
    c.get('d', make('dd'));
    t.equal(c.size, 3, 'at most 3 entries');
    t.equal(c.get('b', make('b2')), 'b2', 'the least recently used (b) went first');
    c.get('e', make('eeeeeeee'));
    t.ok(c.held <= 10, `at most 10 characters held (${c.held})`);
    c.get('huge', make('x'.repeat(11)));
    t.equal(c.get('huge', make('again')), 'again', 'a fragment above the bound is never kept');

    const p = new FragmentCache(10, 1000);
    let calls = 0;
    let release!: (s: string) => void;
    const slow = () => (calls++, new Promise<string>((r) => (release = r)));
    const [x, y] = [p.get('k', slow), p.get('k', slow)];
    release('done');
    t.same(await Promise.all([x, y]), ['done', 'done']);
    t.equal(calls, 1, 'concurrent requests share one computation');
    t.equal(p.held, 4);
    await t.rejects(p.get('bad', () => Promise.reject(new Error('no'))));
    t.equal(await p.get('bad', async () => 'ok'), 'ok', 'a failure is not kept');
    p.get('loose', () => 'v1', false);
    t.equal(
      p.get('loose', () => 'v2', false),
      'v2',
      'keep=false computes every time',
    );
  },
);
