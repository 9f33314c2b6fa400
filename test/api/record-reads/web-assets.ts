// The assets pages over HTTP on one day of history (SPEC.md "Web routes": GET /assets, GET
// /assets/{market_id}/{cluster}): the families of a market in each order, with the numbers of GET
// /markets/{id}/families; a family's history with the rows of /tape?cluster= and, on ranking markets,
// of /families/{cluster}/signals; charts with their text alternatives; defaults, 404 and 422 pages.
import t from 'tap';
import { FAMILIES, MARKETS } from '../../../src/engine/index.js';
import { sharedRecordedService } from '../../helpers/service.js';
import { getPage } from '../../helpers/web.js';

// The shared service's clock stands at RECORDED_DAY_MS: no session closes while the tests read.
const svc = await sharedRecordedService();
const open = (m: string) => svc.services.supervisor.openTick(m)!;
const usd = (x: number | null) => (x === null ? '' : x.toFixed(2));
/** A path as the pages write it in an attribute (mustache escapes & and =). */
const attr = (path: string) => path.replace(/&/g, '&amp;').replace(/=/g, '&#x3D;');
const pct = (x: number | null) => (x === null ? 'none yet' : `${(x * 100).toFixed(2)} %`);

/** The `id="<prefix>N"` rows of a page, in page order. */
const rowIds = (html: string, prefix: string) =>
  [...html.matchAll(new RegExp(`<tr id="${prefix}(\\d+)"`, 'g'))].map((m) => Number(m[1]));
/** The HTML of one table row by its id. */
function row(html: string, id: string): string {
  const at = html.indexOf(`<tr id="${id}"`);
  if (at < 0) throw new Error(`no row ${id}`);
  return html.slice(at, html.indexOf('</tr>', at));
}
/** A row's cells' text, in order. */
const cells = (tr: string) =>
  [...tr.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((m) => m[1].replace(/<[^>]+>/g, '').trim());

/** Every chart is an SVG with an accessible name and description, inside a figure with a caption. */
function checkCharts(t: Tap.Test, html: string, n: number) {
  const svgs = [
    ...html.matchAll(
      /<svg class="chart" role="img" aria-labelledby="(chart-\d+)-t \1-d"[^>]*><title id="\1-t">([^<]+)<\/title><desc id="\1-d">([^<]+)<\/desc>/g,
    ),
  ];
  t.equal(svgs.length, n, `${n} charts, each with a title and a description`);
  t.equal((html.match(/<figure class="chart"><svg/g) ?? []).length, n, 'each in a figure');
  t.equal((html.match(/<figcaption>[^<]+<\/figcaption>/g) ?? []).length, n, 'each with a caption');
}

const houseOrder = (fs: any[]) =>
  [...fs]
    .sort((a, b) => b.house_bids - a.house_bids || b.deals - a.deals || a.cluster - b.cluster)
    .map((f) => f.cluster);

t.test(
  "GET /assets: the families of m15 by default, in desk-bid order, with the families answer's numbers",
  async (t) => {
    const page = await getPage(svc, '/assets');
    t.equal(page.status, 200);
    t.match(page.headers.get('content-type'), /text\/html/);
    const json = (await svc.getJson('/api/v1/markets/m15/families')).body;
    t.equal(json.tick, open('m15'));
    t.match(page.text, `Assets of ${MARKETS.m15.label}`, 'market m15 by default');
    t.match(page.text, `session ${json.tick}`);
    t.same(
      rowIds(page.text, 'family-'),
      houseOrder(json.families),
      'every family, by desk bids (then deals, then cluster)',
    );
    let settled = 0;
    for (const f of json.families) {
      const c = cells(row(page.text, `family-${f.cluster}`));
      t.same(
        c,
        [
          `${f.sku_family} (${f.cluster})`,
          String(f.deals),
          String(f.house_bids),
          usd(f.mean_unit_cost),
          usd(f.mean_list_price),
          usd(f.mean_margin),
          `${f.sales_velocity} units / session`,
          String(f.executed),
          String(f.settled),
          pct(f.profitable_rate),
          pct(f.downside_rate),
          f.mean_pnl === null ? 'none yet' : usd(f.mean_pnl),
          f.units_sold_per_session === null ? '' : String(f.units_sold_per_session),
        ],
        `family ${f.cluster}: the families answer's numbers`,
      );
      t.match(
        row(page.text, `family-${f.cluster}`),
        `href="/assets/m15/${f.cluster}"`,
        'links its page',
      );
      if (f.settled) settled++;
    }
    t.ok(settled > 0, 'some family has settled trades');
    checkCharts(t, page.text, 1);
    t.match(
      page.text,
      /<div class="table-wrap" tabindex="0" role="region" aria-label="Families of/,
    );
    t.match(
      page.text,
      `<a href="${attr('/assets?market=m15&sort=house')}" aria-current="page">`,
      'the order in force is marked',
    );
  },
);

t.test('GET /assets: market and sort queries', async (t) => {
  const json = (await svc.getJson('/api/v1/markets/h2/families')).body;
  const expected: Record<string, (a: any, b: any) => number> = {
    house: (a, b) => b.house_bids - a.house_bids || b.deals - a.deals,
    deals: (a, b) => b.deals - a.deals,
    margin: (a, b) => b.mean_margin - a.mean_margin,
    result: (a, b) =>
      (a.mean_pnl === null ? 1 : 0) - (b.mean_pnl === null ? 1 : 0) ||
      (b.mean_pnl ?? 0) - (a.mean_pnl ?? 0),
    profitable: (a, b) =>
      (a.profitable_rate === null ? 1 : 0) - (b.profitable_rate === null ? 1 : 0) ||
      (b.profitable_rate ?? 0) - (a.profitable_rate ?? 0),
    family: (a, b) => a.sku_family.localeCompare(b.sku_family),
  };
  for (const [sort, cmp] of Object.entries(expected)) {
    const page = await getPage(svc, `/assets?market=h2&sort=${sort}`);
    t.equal(page.status, 200, sort);
    const order = [...json.families]
      .sort((a, b) => cmp(a, b) || a.cluster - b.cluster)
      .map((f) => f.cluster);
    t.same(rowIds(page.text, 'family-'), order, `sort=${sort}`);
  }
  const h2 = await getPage(svc, '/assets?market=h2');
  t.match(h2.text, `Assets of ${MARKETS.h2.label}`);
  const f = json.families[0];
  t.match(
    cells(row(h2.text, `family-${f.cluster}`))[6],
    `rank ${f.sales_rank}, ${f.nsellers} sellers`,
    'a ranking market shows rank and sellers',
  );

  const unknown = await getPage(svc, '/assets?market=zz');
  t.equal(unknown.status, 404, 'an unknown market is not found');
  t.match(unknown.text, /<h1>Page not found<\/h1>/, 'as an HTML page for a browser');
  t.match(unknown.text, 'unknown market');
  t.equal((await getPage(svc, '/assets?market=zz', { json: true })).status, 404);
  for (const bad of ['sort=bogus', 'sort=', 'market=h2&sort=HOUSE']) {
    const r = await getPage(svc, `/assets?${bad}`);
    t.equal(r.status, 422, bad);
    t.match(r.text, 'That request could not be read');
    const j = await getPage(svc, `/assets?${bad}`, { json: true });
    t.same(j.body.detail[0].loc, ['query', 'sort'], `${bad}: at its field`);
  }
});

t.test(
  "GET /assets/{market}/{cluster}: a velocity family's history, default 120 sessions",
  async (t) => {
    const o = open('m15');
    const families = (await svc.getJson('/api/v1/markets/m15/families')).body.families;
    const f = families.find((x: any) => x.settled > 0) ?? families[0];
    const page = await getPage(svc, `/assets/m15/${f.cluster}`);
    t.equal(page.status, 200);
    t.match(
      page.text,
      `<h1>${f.sku_family} <span class="muted">on ${MARKETS.m15.label}</span></h1>`,
    );
    const from = Math.max(0, o - 120);
    t.match(
      page.text,
      `sessions ${from} to ${o - 1} (120 closed sessions at most)`,
      'ticks=120 by default',
    );
    const tape = (
      await svc.getJson(
        `/api/v1/markets/m15/tape?cluster=${f.cluster}&from_tick=${from}&to_tick=${o - 1}`,
      )
    ).body.rows;
    t.ok(tape.length > 0, 'the family has tape');
    t.same(
      rowIds(page.text, 'session-'),
      tape.map((r: any) => r.tick).reverse(),
      'one table row per tape row, newest first',
    );
    const lastSettled = o - 1 - MARKETS.m15.settlement_horizon_ticks;
    let settledRows = 0;
    for (const r of tape) {
      const c = cells(row(page.text, `session-${r.tick}`));
      t.same(
        c.slice(0, 10),
        [
          String(r.tick),
          usd(r.price_low),
          usd(r.price_close),
          usd(r.price_high),
          usd(r.vwap),
          String(r.exec_n ?? ''),
          String(r.units ?? ''),
          String(r.sold ?? ''),
          String(r.active ?? ''),
          r.sell_through === null ? '' : r.sell_through.toFixed(4),
        ],
        `session ${r.tick}`,
      );
      if (r.tick <= lastSettled) {
        settledRows++;
        t.same(
          c.slice(10),
          [usd(r.desk_pnl), usd(r.holder_pnl), pct(r.profitable_rate), pct(r.downside_rate)],
          `session ${r.tick}: settled figures`,
        );
      } else t.same(c.slice(10), ['not settled yet'], `session ${r.tick} is not settled`);
    }
    t.ok(settledRows > 0, 'some sessions are settled');
    // The family's card on the current menu: the families answer's numbers.
    t.match(page.text, `${f.settled} of ${f.executed}`);
    t.match(page.text, `${pct(f.profitable_rate)} / ${pct(f.downside_rate)}`);
    t.match(page.text, `${usd(f.mean_list_price)} USD`);
    checkCharts(t, page.text, 3);
    for (const title of [
      'resale price and landed cost per session',
      'units bought and sold per session',
      'realised P&amp;L of the trades of each settled session',
    ]) {
      t.match(page.text, `<title id="chart-`, 'titled');
      t.match(page.text, `${f.sku_family}: ${title}`, title);
    }
    t.match(page.text, 'so it has no ranking signals', 'a velocity market has no signals');
    t.notMatch(page.text, 'Sales rank');
    t.match(
      page.text,
      attr(`/api/v1/markets/m15/tape?cluster=${f.cluster}&from_tick=${from}&to_tick=${o - 1}`),
      'links the data',
    );
  },
);

t.test(
  'GET /assets/{market}/{cluster}: a ranking family with its signals; the ticks query',
  async (t) => {
    const o = open('h2');
    const f = (await svc.getJson('/api/v1/markets/h2/families')).body.families[0];
    const page = await getPage(svc, `/assets/h2/${f.cluster}?ticks=10`);
    t.equal(page.status, 200);
    const from = o - 10;
    t.match(page.text, `sessions ${from} to ${o - 1} (10 closed sessions at most)`);
    const signals = (
      await svc.getJson(
        `/api/v1/markets/h2/families/${f.cluster}/signals?from_tick=${from}&to_tick=${o}`,
      )
    ).body.rows;
    t.equal(signals.length, 11, 'the closed sessions and the open one');
    const table = page.text.slice(page.text.indexOf('aria-label="Signals of'));
    const shown = [
      ...table
        .slice(0, table.indexOf('</table>'))
        .matchAll(
          /<tr><th scope="row">(\d+)<\/th><td class="num">([^<]*)<\/td><td class="num">([^<]*)<\/td><td class="num">([^<]*)<\/td><\/tr>/g,
        ),
    ].map((m) => m.slice(1).map(Number));
    t.same(
      shown,
      signals.map((r: any) => [r.tick, r.sales_rank, r.rank_drops_prev, r.nsellers]).reverse(),
      'the signals answer, newest first',
    );
    checkCharts(t, page.text, 4);
    t.match(page.text, `${f.sku_family}: sales rank at each session&#39;s open`);
    const tape = (
      await svc.getJson(
        `/api/v1/markets/h2/tape?cluster=${f.cluster}&from_tick=${from}&to_tick=${o - 1}`,
      )
    ).body.rows;
    t.same(rowIds(page.text, 'session-'), tape.map((r: any) => r.tick).reverse());
    t.match(
      page.text,
      `<a href="${attr(`/assets/h2/${f.cluster}?ticks=30`)}">30 sessions</a>`,
      'other spans are offered',
    );
  },
);

t.test('a family that is not on the current menu still has its page', async (t) => {
  // A market whose open menu lacks some family (a menu may list every family: look across markets).
  let off: { market: string; cluster: number } | undefined;
  for (const market of Object.keys(MARKETS)) {
    const listed = new Set(
      (await svc.getJson(`/api/v1/markets/${market}/families`)).body.families.map(
        (f: any) => f.cluster,
      ),
    );
    const cluster = FAMILIES.findIndex((_, i) => !listed.has(i));
    if (cluster >= 0) {
      off = { market, cluster };
      break;
    }
  }
  t.ok(off, "some family is off some market's menu");
  const page = await getPage(svc, `/assets/${off!.market}/${off!.cluster}`);
  t.equal(page.status, 200);
  t.match(page.text, `The family is not on the menu of session ${open(off!.market)}.`);
});

t.test('family pages: 404 and 422', async (t) => {
  const cases: [string, number, string | undefined][] = [
    [`/assets/m15/${FAMILIES.length}`, 404, undefined],
    ['/assets/zz/0', 404, undefined],
    ['/assets/m15/x', 422, 'cluster'],
    ['/assets/m15/-1', 422, 'cluster'],
    ['/assets/m15/0?ticks=0', 422, 'ticks'],
    ['/assets/m15/0?ticks=501', 422, 'ticks'],
    ['/assets/m15/0?ticks=x', 422, 'ticks'],
  ];
  for (const [path, status, field] of cases) {
    const page = await getPage(svc, path);
    t.equal(page.status, status, path);
    t.match(
      page.text,
      status === 404 ? 'Page not found' : 'That request could not be read',
      `${path}: an HTML error page`,
    );
    const j = await getPage(svc, path, { json: true });
    t.equal(j.status, status);
    if (field) t.equal(j.body.detail[0].loc[1], field, `${path}: at ${field}`);
  }
  t.equal((await getPage(svc, '/assets/m15/0?ticks=500')).status, 200, 'ticks up to 500');
  t.equal((await getPage(svc, '/assets/m15/0?ticks=1')).status, 200);
});
