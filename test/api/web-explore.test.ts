// The explore pages and the home page's pulse over HTTP on a service
// with one day of history and a clock the test drives: /explore (a chart per market), /explore/{id}
// by mode and span against the tape, one closed session's rows against the history (statuses,
// executions, outcomes), a holder's trade seen observed at its close and settled 8 closes later,
// queries with their defaults and bounds (422), and 404s for open, future and unrecorded sessions.
import t from 'tap';
import { MARKETS, MARKET_IDS } from '../../src/engine/index.js';
import { RECORDED_DAY_MS, startRecordedService } from '../helpers/service.js';
import { getPage } from '../helpers/web.js';
import { registerAgent } from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';

let nowMs = RECORDED_DAY_MS;
const svc = await startRecordedService(t, {}, { realMs: () => nowMs });
const openOf = (m: string) => svc.services.supervisor.openTick(m)!;
const page = (path: string) => getPage(svc, path);
const api = async (path: string) => (await svc.getJson(path)).body;
const usd = (x: number) => x.toFixed(2);

/** The sessions table of /explore/{id}: tick, its link and its cells. */
function sessionRows(html: string) {
  const body = html.slice(html.indexOf('<tbody>'), html.indexOf('</tbody>'));
  return [
    ...body.matchAll(/<tr><th scope="row"><a href="([^"]+)">(\d+)<\/a><\/th>(.*?)<\/tr>/gs),
  ].map(([, href, tick, tr]) => ({
    href,
    tick: Number(tick),
    cells: [...tr.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((c) => c[1]),
  }));
}

/** The rows of a session's page: status, key, the executions cell and the result. */
function tickRows(html: string) {
  return [...html.matchAll(/<tr class="status-(\w+)">(.*?)<\/tr>/gs)].map(([, status, tr]) => {
    const cells = [...tr.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((c) => c[1]);
    return {
      status,
      key: /<code class="key">([^<]+)<\/code>/.exec(tr)![1],
      family: cells[1],
      executions: cells.at(-2)!,
      result: cells.at(-1)!,
    };
  });
}

t.test('GET /explore: every market with a chart and its figures from the pulse', async (t) => {
  const r = await page('/explore');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/html/);
  const pulse = await api('/api/v1/pulse');
  for (const m of MARKET_IDS) {
    const section = r.text.slice(
      r.text.indexOf(`<section aria-labelledby="m-${m}">`),
      r.text.indexOf('</section>', r.text.indexOf(`aria-labelledby="m-${m}"`)),
    );
    t.match(
      section,
      `<a href="/explore/${m}">${MARKETS[m].label}</a>`,
      `${m}: a link to its record`,
    );
    t.match(section, /<svg class="chart" role="img" aria-labelledby="[^"]+"/, `${m}: a chart`);
    t.match(
      section,
      /<figcaption>Prices in USD per unit\. [^<]+: landed cost: mean landed cost of the menu from/,
    );
    const p = pulse.markets.find((x: any) => x.market === m);
    t.match(
      section,
      `${p.sessions_recorded} sessions recorded, ${p.executions} executions of ${p.units} units, turnover ${usd(p.turnover)} USD`,
    );
    t.match(section, `Last close: session ${openOf(m) - 1}`);
  }
});

t.test('GET /explore/{id}: the last sessions by mode, against the tape', async (t) => {
  const open = openOf('m15');
  const tape = (await api(`/api/v1/markets/m15/tape?from_tick=${open - 120}&to_tick=${open - 1}`))
    .rows;
  const r = await page('/explore/m15');
  t.equal(r.status, 200);
  t.match(r.text, 'The last 120 closed sessions', 'ticks default 120');
  t.match(r.text, '<a href="/explore/m15" aria-current="page">cost</a>', 'mode default cost');
  t.match(r.text, /<title id="[^"]+">Quarter-Hour Arena: landed cost per session<\/title>/);
  t.match(
    r.text,
    /<div class="table-wrap" tabindex="0" role="region" aria-label="Sessions of m15">/,
  );
  const rows = sessionRows(r.text);
  t.same(
    rows.map((x) => x.tick),
    tape.map((x: any) => x.tick).reverse(),
    'one row per recorded session, latest first',
  );
  t.ok(rows.length > 80, `${rows.length} sessions of one day`);
  for (const [i, row] of rows.entries()) {
    const x = tape[tape.length - 1 - i];
    t.equal(row.href, `/explore/m15/tick/${x.tick}`);
    t.same(
      row.cells.slice(0, 6),
      [
        usd(x.price_close),
        usd(x.cost_mean),
        x.vwap === null ? '' : usd(x.vwap),
        String(x.menu_n),
        String(x.exec_n),
        String(x.units),
      ],
      `${x.tick}: the tape's figures`,
    );
    t.equal(
      row.cells[6],
      'desk_pnl' in x ? usd(Math.round((x.desk_pnl + x.holder_pnl) * 100) / 100) : 'not settled',
      `${x.tick}: result once settled`,
    );
  }
  const titles = {
    price: 'resale price per session',
    volume: 'units executed per session',
    pnl: 'result per settled session',
    cost: 'landed cost per session',
  };
  for (const [mode, title] of Object.entries(titles)) {
    const p = await page(`/explore/m15?mode=${mode}&ticks=48`);
    t.equal(p.status, 200, mode);
    t.match(p.text, `Quarter-Hour Arena: ${title}</title>`, `mode=${mode}`);
    t.equal(
      sessionRows(p.text).length,
      tape.filter((x: any) => x.tick >= open - 48).length,
      'ticks=48',
    );
    t.match(
      p.text,
      `<a href="/explore/m15?ticks&#x3D;48&amp;mode&#x3D;${mode}" aria-current="page">last 48</a>`,
    );
  }
  t.match(
    (await page('/explore/h2?ticks=500')).text,
    'The last 500 closed sessions',
    'ticks up to the tape cap',
  );
  for (const [qs, field] of [
    ['ticks=7', 'ticks'],
    ['ticks=501', 'ticks'],
    ['ticks=x', 'ticks'],
    ['mode=depth', 'mode'],
  ]) {
    const j = await getPage(svc, `/explore/m15?${qs}`, { json: true });
    t.equal(j.status, 422, qs);
    t.same(j.body.detail[0].loc, ['query', field]);
    const h = await page(`/explore/m15?${qs}`);
    t.same(
      [h.status, h.headers.get('content-type')],
      [422, 'text/html; charset=utf-8'],
      `${qs}: a page for a browser`,
    );
  }
  for (const path of ['/explore/m16', '/explore/m16/tick/1'])
    t.equal((await page(path)).status, 404, path);
});

t.test(
  "GET /explore/{id}/tick/{tick}: a settled session's rows, statuses and outcomes as the history says",
  async (t) => {
    const open = openOf('m15');
    const tick = open - 12;
    const history = (await api(`/api/v1/markets/m15/history?from_tick=${tick}&to_tick=${tick}`))
      .rows as any[];
    const r = await page(`/explore/m15/tick/${tick}`);
    t.equal(r.status, 200);
    t.match(r.text, 'The session has settled: its outcomes are final.');
    const rows = tickRows(r.text);
    t.equal(rows.length, history.length, 'every row of the menu');
    const byKey = new Map(history.map((h) => [h.key, h]));
    const observed = history.filter((h) => h.status === 'observed');
    t.ok(observed.length > 0 && observed.length < history.length, 'observed and rejected rows');
    t.match(
      r.text,
      `${history.length} deals on the menu: ${observed.length} observed (executed), ${history.length - observed.length} rejected, 0 not recorded yet`,
    );
    for (const row of rows) {
      const h = byKey.get(row.key);
      t.equal(row.status, h.status, `${row.key}: status`);
      t.equal(
        (row.executions.match(/desk × /g) ?? []).length,
        h.trades.filter((x: any) => x.actor === 'house').length,
        'its executions',
      );
      const pnl = h.trades.length
        ? Math.round(h.trades.reduce((a: number, x: any) => a + x.realized_pnl * 100, 0)) / 100
        : null;
      t.equal(row.result, pnl === null ? '' : usd(pnl), `${row.key}: the realised result`);
      for (const x of h.trades)
        t.match(
          row.executions,
          `desk × ${x.qty}: ${usd(x.realized_pnl)} USD, sold ${x.units_sold} of ${x.qty}`,
        );
    }
    // Default sort: the desk's executions first (largest first), the rejected rows after.
    const desk = (k: string) => byKey.get(k).trades.reduce((a: number, x: any) => a + x.qty, 0);
    t.ok(
      rows.every((x, i) => i === 0 || desk(x.key) <= desk(rows[i - 1].key)),
      'sort=house: largest desk execution first',
    );
    t.ok(rows.slice(0, observed.length).every((x) => x.status === 'observed'));

    const only = tickRows((await page(`/explore/m15/tick/${tick}?status_filter=rejected`)).text);
    t.ok(
      only.length === history.length - observed.length &&
        only.every((x) => x.status === 'rejected'),
      'status_filter',
    );
    t.equal(
      tickRows((await page(`/explore/m15/tick/${tick}?status_filter=unrecorded`)).text).length,
      0,
      'nothing unrecorded once loaded',
    );
    t.equal(
      tickRows((await page(`/explore/m15/tick/${tick}?status_filter=`)).text).length,
      history.length,
      'an empty filter is every status',
    );
    const cluster = history[0].cluster;
    const fam = tickRows((await page(`/explore/m15/tick/${tick}?family=${cluster}`)).text);
    t.same(
      fam.map((x) => x.key).sort(),
      history
        .filter((h) => h.cluster === cluster)
        .map((h) => h.key)
        .sort(),
      'family',
    );
    const byPnl = tickRows(
      (await page(`/explore/m15/tick/${tick}?sort=pnl&status_filter=observed`)).text,
    ).map((x) => Number(x.result));
    t.ok(
      byPnl.length === observed.length && byPnl.every((v, i) => i === 0 || v <= byPnl[i - 1]),
      'sort=pnl: best result first',
    );
    t.same(
      tickRows((await page(`/explore/m15/tick/${tick}?sort=listed`)).text).map((x) => x.key),
      history.map((h) => h.key),
      'sort=listed',
    );
    const cost = tickRows((await page(`/explore/m15/tick/${tick}?sort=cost`)).text).map(
      (x) => byKey.get(x.key).unit_cost,
    );
    t.ok(
      cost.every((v, i) => i === 0 || v >= cost[i - 1]),
      'sort=cost',
    );

    for (const [qs, field] of [
      ['sort=best', 'sort'],
      ['status_filter=lost', 'status_filter'],
      ['family=32', 'family'],
      ['family=-2', 'family'],
    ]) {
      const j = await getPage(svc, `/explore/m15/tick/${tick}?${qs}`, { json: true });
      t.equal(j.status, 422, qs);
      t.same(j.body.detail[0].loc, ['query', field]);
    }
    for (const bad of ['-1', 'x', '1.5']) {
      const j = await getPage(svc, `/explore/m15/tick/${bad}`, { json: true });
      t.equal(j.status, 422, `tick ${bad}`);
      t.same(j.body.detail[0].loc, ['path', 'tick']);
      t.equal((await page(`/explore/m15/tick/${bad}`)).status, 422);
    }
    const coverage = await api('/api/v1/markets/m15/coverage');
    for (const [n, why] of [
      [open, 'still open'],
      [open + 1, 'has not happened yet'],
      [open + 500, 'has not happened yet'],
      [coverage.first_recorded_tick - 1, 'is not on record'],
      [0, 'is not on record'],
    ] as const) {
      const p = await page(`/explore/m15/tick/${n}`);
      t.equal(p.status, 404, `session ${n}: 404`);
      t.match(p.headers.get('content-type'), /^text\/html/);
      t.match(p.text, why);
    }
  },
);

t.test(
  "a holder's trade: observed at its close, settled with its result 8 closes later; the pages follow the clock",
  async (t) => {
    const agent = await registerAgent(svc);
    const holder = await registerHolder(svc);
    const menu = await api('/api/v1/markets/m15/deals');
    const deal = menu.deals.find((d: any) => !d.house_accepted) ?? menu.deals[0];
    const order = (
      await agent.post('/api/v1/orders', { market: 'm15', offer_key: deal.key, qty: 1 })
    ).body;
    t.equal((await holder.pay(order.purchase_url)).status, 200, 'paid');
    const tick = menu.tick;
    t.equal((await page(`/explore/m15/tick/${tick}`)).status, 404, 'its session is still open');
    const before = sessionRows((await page('/explore/m15')).text);
    t.equal(before[0].tick, tick - 1);

    nowMs = (menu.closes_at + 1) * 1000;
    await svc.services.supervisor.runDue();
    t.equal(openOf('m15'), tick + 1, 'the session closed');
    t.equal(
      sessionRows((await page('/explore/m15')).text)[0].tick,
      tick,
      'the sessions table shows the new close (the cached page is not served)',
    );
    const closed = await page(`/explore/m15/tick/${tick}`);
    t.equal(closed.status, 200);
    t.match(
      closed.text,
      `Outcomes are revealed session by session: 0 of ${MARKETS.m15.settlement_horizon_ticks} so far.`,
    );
    let row = tickRows(closed.text).find((x) => x.key === deal.key)!;
    t.equal(row.status, 'observed', "the holder's execution makes the row observed");
    t.match(row.executions, 'holder × 1: sold 0 of 1 in 0 of 8 sessions');
    t.equal(row.result, '', 'no result before it settles');
    t.ok(
      tickRows(closed.text).some((x) => x.status === 'rejected'),
      'rows nobody executed are rejected',
    );
    const history = (await api(`/api/v1/markets/m15/history?from_tick=${tick}&to_tick=${tick}`))
      .rows as any[];
    t.same(
      tickRows(closed.text)
        .map((x) => [x.key, x.status])
        .sort(),
      history.map((h) => [h.key, h.status]).sort(),
      'statuses as the history',
    );

    for (let i = 1; i <= 8; i++) {
      nowMs += MARKETS.m15.interval_seconds * 1000;
      await svc.services.supervisor.runDue();
      if (i === 3)
        t.match(
          (await page(`/explore/m15/tick/${tick}`)).text,
          'in 3 of 8 sessions',
          'revealed as sessions pass',
        );
    }
    t.equal(openOf('m15'), tick + 9);
    const settled = await page(`/explore/m15/tick/${tick}`);
    t.match(settled.text, 'The session has settled: its outcomes are final.');
    row = tickRows(settled.text).find((x) => x.key === deal.key)!;
    const trade = (await api(`/api/v1/markets/m15/history?from_tick=${tick}&to_tick=${tick}`)).rows
      .find((h: any) => h.key === deal.key)
      .trades.find((x: any) => x.actor === 'user');
    t.equal(trade.settled, true);
    t.match(
      row.executions,
      `holder × 1: ${usd(trade.realized_pnl)} USD, sold ${trade.units_sold} of 1`,
    );
    t.match(
      sessionRows((await page('/explore/m15')).text).find((x) => x.tick === tick)!.cells[6],
      /^-?\d+\.\d\d$/,
      'the sessions table shows its result',
    );
  },
);

t.test('the home page: the pulse and the ticker as figures and charts', async (t) => {
  const r = await page('/');
  t.equal(r.status, 200);
  const pulse = await api('/api/v1/pulse');
  const ticker = (await api('/api/v1/ticker')).markets;
  const grouped = (v: number) =>
    v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  t.match(
    r.text,
    `Turnover, last 24 h</span><br><span class="big">${grouped(pulse.last_24h.turnover)} USD</span><br>${pulse.last_24h.units} units in ${pulse.last_24h.executions} executions`,
  );
  t.match(
    r.text,
    `${grouped(pulse.last_24h.pnl)} USD</span><br>${pulse.last_24h.units_sold} units sold`,
  );
  t.match(r.text, `<span class="big">${pulse.totals.executions}</span> executions`);
  t.match(
    r.text,
    /<title id="[^"]+">Turnover per day \(executed landed cost, all markets\)<\/title>/,
    'a chart of the days',
  );
  t.match(
    r.text,
    /<title id="[^"]+">Mean landed cost of each market&#39;s menu, indexed<\/title>/,
    'a chart of the markets',
  );
  t.match(
    r.text,
    /<div class="table-wrap" tabindex="0" role="region" aria-label="Ticker: the last close of each market">/,
  );
  for (const m of ticker) {
    t.match(
      r.text,
      new RegExp(
        `<a href="/explore/${m.market}"><code>${m.market}</code>[^<]*</a></th><td class="num">${m.tick}</td><td class="num">${usd(m.last)}</td>`,
      ),
      `${m.market}: the ticker's last close`,
    );
  }
});
