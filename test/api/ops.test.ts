// The operators' pages (CONTRACT.md "Operators"): /ops and /ops/bench render with real
// figures after some traffic; who may open them (loopback open; off loopback: 404 without a token
// configured, 401 without the token, 200 with the Bearer or the /ops/login cookie); the live feed's
// figures move after traffic.
import fs from 'node:fs';
import t from 'tap';
import { HtmlValidate } from 'html-validate';
import { MAX_FOLLOWERS } from '../../src/ops/feed.js';
import { eventually } from '../helpers/wait.js';
import { getPage, postForm, sharedWebService, startWebService } from '../helpers/web.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { startChild } from '../helpers/child-service.js';
import { freshDatabase } from '../helpers/db.js';
import { fileTimeout } from '../helpers/file-timeout.js';
import { startClockedService } from '../helpers/clocked.js';
import { metricValue } from '../helpers/metrics.js';
import { answerA5xx } from '../helpers/ops.js';
import { Compile } from 'typebox/compile';
import { FiguresJson, HistoryJson, PointJson } from '../../src/schemas/ops.js';
import { HISTORY_POINTS } from '../../src/ops/feed.js';

fileTimeout(300); // 6 services started and stopped (the default one shared by three subtests)

const TOKEN = 'ops-token-for-tests-0123456789';
// The rules the site crawl holds every page to (test/api/site-crawl.test.ts).
const validator = new HtmlValidate({
  extends: ['html-validate:standard', 'html-validate:document'],
  rules: { 'require-sri': ['error', { target: 'crossorigin' }] },
});
async function htmlProblems(html: string, url: string): Promise<string[]> {
  const report = await validator.validateString(html, url);
  return report.results.flatMap((r) =>
    r.messages.map((m) => `${m.ruleId} line ${m.line}: ${m.message}`),
  );
}

/** Reads Server-Sent Events from `res` and resolves with the first event `accept` takes (its name and parsed data). */
async function eventUntil(
  res: Response,
  accept: (name: string, data: any) => boolean,
): Promise<{ name: string; data: any }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the feed ended');
      buf += decoder.decode(value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const event = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const name = /^event: (.*)$/m.exec(event)?.[1];
        const data = /^data: (.*)$/m.exec(event)?.[1];
        if (name && data && accept(name, JSON.parse(data))) return { name, data: JSON.parse(data) };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The first `figures` event `accept` takes. */
const figuresUntil = async (res: Response, accept: (f: any) => boolean) =>
  (await eventUntil(res, (name, f) => name === 'figures' && accept(f))).data;

const checks = {
  figures: Compile(FiguresJson),
  history: Compile(HistoryJson),
  point: Compile(PointJson),
};
/** What a schema finds wrong with `value` (empty: it matches). */
const schemaProblems = (check: (typeof checks)[keyof typeof checks], value: unknown) =>
  [...check.Errors(value)].map((e) => `${e.instancePath} ${e.message}`);

/** Some traffic: reads, a 404, a 422. */
async function traffic(svc: TestService, n = 20): Promise<void> {
  for (let i = 0; i < n; i++) {
    await (await svc.get('/api/v1/markets')).arrayBuffer();
    await (await svc.get('/api/v1/markets/m15/deals')).arrayBuffer();
  }
  await (await svc.get('/api/v1/markets/nope')).arrayBuffer();
  await (await svc.get('/api/v1/markets/m15/deals?limit=-5')).arrayBuffer();
}

t.test('on loopback: /ops and /ops/bench open without a token and show real figures', async (t) => {
  const svc = await sharedWebService();
  await traffic(svc);

  const page = await getPage(svc, '/ops');
  t.equal(page.status, 200, '/ops answers 200 on loopback without a token');
  t.match(page.headers.get('content-type'), /text\/html/);
  t.match(page.text, `pid ${process.pid}`, 'the page says which process it is');
  t.match(
    page.text,
    '<code>GET /api/v1/markets</code>',
    'the routes table lists a route that had requests',
  );
  t.match(page.text, '<code>GET /api/v1/markets/{market_id}/deals</code>');
  t.match(page.text, /<th scope="row">m15<\/th>/, 'the markets table lists m15');
  t.match(page.text, /<th scope="row">0<\/th>/, 'the shards table lists shard 0');
  t.match(page.text, 'src="/static/ops.js"', 'the live script is loaded');
  t.notMatch(page.text, /<script>/, 'no inline script');

  // The figures as JSON (no Accept: text/event-stream): what the page shows, read from the registry.
  const f = (await svc.getJson('/ops/feed')).body;
  t.same(
    schemaProblems(checks.figures, f),
    [],
    'the figures match their schema (src/schemas/ops.ts)',
  );
  t.equal(f.process.pid, process.pid);
  t.ok(f.requests.total >= 42, `the 42 requests counted: ${f.requests.total}`);
  t.ok(f.requests.errors_4xx >= 2, `the 404 and the 422 counted as 4xx: ${f.requests.errors_4xx}`);
  t.equal(f.requests.errors_5xx, 0, 'no 5xx');
  const deals = f.routes.find((r: any) => r.route === '/api/v1/markets/{market_id}/deals');
  t.ok(deals, 'the deals route has figures');
  t.ok(
    deals.p50_ms > 0 && deals.p99_ms >= deals.p50_ms,
    `p50 ${deals.p50_ms} ms <= p99 ${deals.p99_ms} ms`,
  );
  t.equal(f.shards.length, 2, 'two shards (SVC_SHARDS=2)');
  t.equal(f.mailbox_limit, svc.config.mailboxLimit, 'the mailbox bound is the configured one');
  t.same(f.markets.map((m: any) => m.market).sort(), ['h10', 'h2', 'm15', 'm45']);
  t.equal(f.ready, true, 'ready');
  t.ok(f.process.rss_bytes > 0, 'RSS read');
  t.equal(f.db_pool.max > 0, true, 'the database pool has a size');
  t.ok(
    f.db_pool.waiting !== null && f.db_pool.waits_rate >= 0,
    "the shard workers' pools are followed",
  );
  const scraped = await (await svc.get('/metrics')).text();
  t.ok(
    metricValue(scraped, 'db_pool_acquires_total{shard="0"}') > 0,
    "shard 0's pool counted its connections (tarn's acquire events)",
  );
  t.same(f.recent_5xx, [], 'no 5xx');

  // The incident board: a status line, a chart per figure, the thresholds listed, zero-traffic routes folded.
  const board = (await getPage(svc, '/ops')).text;
  t.match(board, /<div id="ops-status" class="(success|error)" role="status">/, 'a status line');
  for (const id of [
    'requests',
    'errors',
    'latency',
    'close',
    'lateness',
    'mailbox',
    'pool',
    'fanout',
  ])
    t.match(board, `id="ops-chart-${id}" data-chart=`, `the ${id} chart`);
  t.match(
    board,
    '<th scope="row">5xx answers per second</th><td class="num">0.00 per second</td>',
    'the thresholds are listed',
  );
  t.match(board, 'No 5xx since the process started.');
  t.ok(
    board.indexOf('id="ops-markets"') < board.indexOf('id="ops-routes"') &&
      board.indexOf('id="ops-backlog"') < board.indexOf('id="ops-routes"'),
    'closes and backlog come before the routes',
  );
  t.match(board, '<details id="ops-quiet"', 'routes with no traffic folded under a <details>');

  const bench = await getPage(svc, '/ops/bench');
  t.equal(bench.status, 200, '/ops/bench answers 200');
  t.match(bench.text, 'HTTP read routes', 'the HTTP scenario is shown');
  t.match(bench.text, /<svg class="chart"/, 'with charts');
  t.match(bench.text, 'Latest run:', 'and the latest run table');
  t.match(bench.text, 'fixed-bytes', 'against the same-run baseline');
  t.match(bench.text, /deals \(the menu\) &gt;(?:=|&#x3D;) 90 %/, 'the targets are stated');
  const files = fs
    .readdirSync('bench/results')
    .filter((x) => x.endsWith('-http.json'))
    .sort();
  t.match(bench.text, files[files.length - 1], 'the newest HTTP result file is the latest run');
  t.match(
    bench.text,
    /<g class="level"><line [^>]*\/><text [^>]*>target ≥ 90\.0 % \(deals\)<\/text><\/g>/,
    "the HTTP chart draws deals' 90 % target",
  );
  t.match(
    bench.text,
    /<circle class="ring" [^>]*><title>event delivery p99 missed its target on [^<]*: \d+ ms against 250 ms<\/title><\/circle>/,
    'a missed target is ringed and named',
  );
  t.match(
    bench.text,
    '<td class="missed"><strong>no: missed</strong></td>',
    'and marked in its latest run',
  );

  // The login form on loopback says no token is needed.
  const login = await getPage(svc, '/ops/login');
  t.equal(login.status, 200);
  t.match(login.text, 'need no token here');

  for (const [url, html] of [
    ['/ops', (await getPage(svc, '/ops')).text],
    ['/ops/bench', bench.text],
    ['/ops/login', login.text],
  ]) {
    t.same(await htmlProblems(html, url), [], `${url}: valid HTML`);
  }
});

t.test('not on loopback and no SVC_OPS_TOKEN: the pages do not exist', async (t) => {
  const svc = await startTestService(t, { BASE_URL: 'https://market.example.org' });
  for (const p of ['/ops', '/ops/bench', '/ops/feed', '/ops/login']) {
    t.equal((await getPage(svc, p, { json: true })).status, 404, `${p}: 404`);
    t.equal(
      (await getPage(svc, p, { json: true, headers: { authorization: `Bearer ${TOKEN}` } })).status,
      404,
      `${p} with a Bearer: 404`,
    );
  }
  t.equal(
    (await postForm(svc, '/ops/login', { token: TOKEN }, { json: true })).status,
    404,
    'POST /ops/login: 404',
  );
  t.equal(
    (await postForm(svc, '/ops/login', { token: 'x'.repeat(600) }, { json: true })).status,
    404,
    'an invalid login form: 404 too',
  );
  t.equal((await svc.get('/metrics')).status, 404, '/metrics follows the /ops rule: 404');
  t.equal(
    (await svc.get('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    404,
    '/metrics with a Bearer: 404',
  );
  t.equal((await svc.get('/healthz')).status, 200, '/healthz stays open');
  t.equal((await svc.get('/readyz')).status, 200, '/readyz stays open');
});

t.test('HOST not loopback, BASE_URL loopback: still not open', async (t) => {
  const svc = await startTestService(t, { HOST: '0.0.0.0' });
  t.equal((await getPage(svc, '/ops', { json: true })).status, 404);
});

t.test(
  'not on loopback with SVC_OPS_TOKEN: 401 without it, 200 with the Bearer or the login cookie',
  async (t) => {
    const svc = await startTestService(t, {
      BASE_URL: 'https://market.example.org',
      SVC_OPS_TOKEN: TOKEN,
    });
    for (const p of ['/ops', '/ops/bench', '/ops/feed']) {
      const none = await getPage(svc, p, { json: true });
      t.equal(none.status, 401, `${p} without the token: 401`);
      t.match(none.headers.get('www-authenticate'), /^Bearer/);
      t.equal(
        (await getPage(svc, p, { json: true, headers: { authorization: `Bearer ${TOKEN}x` } }))
          .status,
        401,
        `${p} with a wrong Bearer: 401`,
      );
      t.equal(
        (await getPage(svc, p, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
        200,
        `${p} with the Bearer: 200`,
      );
    }
    // Prometheus scrapes /metrics with the same token.
    const scrape = (headers: Record<string, string> = {}) => svc.get('/metrics', { headers });
    t.equal((await scrape()).status, 401, '/metrics without the token: 401');
    t.equal(
      (await scrape({ authorization: `Bearer ${TOKEN}x` })).status,
      401,
      '/metrics with a wrong Bearer: 401',
    );
    const scraped = await scrape({ authorization: `Bearer ${TOKEN}` });
    t.equal(scraped.status, 200, '/metrics with the Bearer: 200');
    t.match(await scraped.text(), /^# (HELP|TYPE) /m, 'the Prometheus text');
    t.equal((await svc.get('/healthz')).status, 200, '/healthz stays open');
    // A browser without the token gets the error page, status kept.
    const page = await getPage(svc, '/ops');
    t.equal(page.status, 401);
    t.match(page.text, '/ops/login');

    // The login form: a wrong token, then the right one.
    const form = await getPage(svc, '/ops/login');
    t.equal(form.status, 200);
    t.match(form.text, 'name="token"');
    const wrong = await postForm(svc, '/ops/login', { token: 'not-the-token', next: '/ops/bench' });
    t.equal(wrong.status, 401, 'a wrong token: 401');
    t.match(wrong.text, 'That is not the token.');
    t.equal(wrong.setCookie, null, 'no cookie');
    t.equal(
      (await postForm(svc, '/ops/login', { token: 'not-the-token' }, { json: true })).status,
      401,
      'a JSON client: 401',
    );
    const right = await postForm(svc, '/ops/login', { token: TOKEN, next: '/ops/bench' });
    t.equal(right.status, 303, 'the right token: sent on');
    t.equal(right.location, '/ops/bench');
    t.match(right.setCookie, /^ops_session=[^;]+;.*HttpOnly/i);
    t.match(right.setCookie, /Path=\/ops/);
    t.match(right.setCookie, /Secure/, 'Secure: BASE_URL is https');
    t.notMatch(right.setCookie, TOKEN, 'the cookie is not the token');
    const cookie = /^(ops_session=[^;]*)/.exec(right.setCookie!)![1];
    const withCookie = await getPage(svc, '/ops', { cookie });
    t.equal(withCookie.status, 200, 'the cookie opens /ops');
    t.match(withCookie.text, 'Operators: live figures');
    t.equal((await getPage(svc, '/ops/bench', { cookie })).status, 200, 'and /ops/bench');
    t.equal(
      (await getPage(svc, '/ops', { cookie: 'ops_session=forged' })).status,
      401,
      'a forged cookie: 401',
    );
    const away = await postForm(svc, '/ops/login', { token: TOKEN, next: 'https://evil.example/' });
    t.equal(away.location, '/ops', "next stays on the operators' pages");
    t.equal(
      (await getPage(svc, '/', {})).text.includes('/ops'),
      false,
      'the home page does not link to /ops',
    );

    // Wrong tokens are limited per address: after the tenth in a minute, 429 (even for the right one).
    for (let i = 0; i < 8; i++)
      t.equal(
        (await postForm(svc, '/ops/login', { token: `guess-${i}` }, { json: true })).status,
        401,
      );
    const limited = await postForm(svc, '/ops/login', { token: 'guess-again' }, { json: true });
    t.equal(limited.status, 429, 'the eleventh wrong token: 429');
    t.ok(Number(limited.headers.get('retry-after')) > 0, 'with Retry-After');
    t.equal(
      (await postForm(svc, '/ops/login', { token: TOKEN })).status,
      429,
      'the right token waits too',
    );
    t.equal(
      (await getPage(svc, '/ops', { headers: { authorization: `Bearer ${TOKEN}` } })).status,
      200,
      'the Bearer is not throttled',
    );
  },
);

t.test('the live feed sends figures that move after traffic', async (t) => {
  const svc = await sharedWebService();
  const first = await svc.get('/ops/feed', { headers: { accept: 'text/event-stream' } });
  t.equal(first.status, 200);
  t.match(first.headers.get('content-type'), /^text\/event-stream/);
  const before = await figuresUntil(first, () => true);
  t.equal(before.process.pid, process.pid, 'the feed says which process it is');
  const counted = before.requests.total;
  const dealsBefore =
    before.routes.find((r: any) => r.route === '/api/v1/markets/{market_id}/deals')?.requests ?? 0;

  await traffic(svc, 30);
  const res = await svc.get('/ops/feed', { headers: { accept: 'text/event-stream' } });
  const after = await figuresUntil(
    res,
    (f) => f.requests.total >= counted + 62 && f.requests.rate > 0,
  );
  t.ok(
    after.requests.total >= counted + 62,
    `requests since start moved: ${counted} → ${after.requests.total}`,
  );
  t.ok(
    after.requests.rate > 0,
    `a request rate: ${after.requests.rate}/s over ${after.window_s} s`,
  );
  const deals = after.routes.find((r: any) => r.route === '/api/v1/markets/{market_id}/deals');
  t.ok(deals && deals.requests > dealsBefore, 'the deals route had requests in the window');
  t.ok(after.requests.errors_4xx >= 2, 'the 4xx answers are counted');
  t.ok(after.at >= before.at, 'a later sample');
  // The feed's follower count goes back down when the clients go (bounded followers).
  await eventually(() => svc.services.opsFeed.followerCount() === 0, 'the followers to be dropped');
  t.pass('followers dropped when the clients went away');
});

t.test(
  "the feed sends the charts' history on connecting, then a point per span, each of its shape",
  async (t) => {
    const svc = await startWebService(t, {}, { ops: { pointSeconds: 1 } });
    await eventually(() => svc.services.opsFeed.history().points.length >= 2, 'two points');
    const res = await svc.get('/ops/feed', { headers: { accept: 'text/event-stream' } });
    const first = await eventUntil(res, () => true);
    t.equal(first.name, 'history', 'the first event is the history');
    t.same(schemaProblems(checks.history, first.data), [], 'of its schema');
    t.equal(first.data.point_s, 1);
    t.equal(first.data.max_points, HISTORY_POINTS);
    t.ok(first.data.points.length >= 2, `${first.data.points.length} points`);
    t.same(
      first.data.thresholds.map((x: any) => x.id),
      [
        'rate_5xx',
        'rate_4xx',
        'p99_ms',
        'close_ms',
        'late_ms',
        'mailbox_share',
        'pool_wait_ms',
        'fanout_p99_ms',
      ],
    );

    await traffic(svc, 30);
    const next = await svc.get('/ops/feed', { headers: { accept: 'text/event-stream' } });
    // The point holding the traffic's 4xx (its last requests; on a busy machine the traffic spans
    // several points, already in the history or sent after it), then the figures sent with or after it.
    let busy: any;
    const { data: figures } = await eventUntil(next, (name, d) => {
      for (const p of name === 'history' ? d.points : name === 'point' ? [d] : [])
        if (p.rate_4xx > 0) busy ??= p;
      return name === 'figures' && busy !== undefined;
    });
    t.same(schemaProblems(checks.point, busy), [], 'a point of its schema');
    t.ok(
      busy.rate > 0 && busy.rate_4xx > 0,
      `the traffic in a point: ${busy.rate}/s, ${busy.rate_4xx} 4xx/s`,
    );
    t.same(Object.keys(busy.markets).sort(), ['h10', 'h2', 'm15', 'm45'], 'closes per market');
    t.same(schemaProblems(checks.figures, figures), [], 'figures of their schema');
  },
);

t.test(
  'the feed has at most MAX_FOLLOWERS followers: the next one gets 503 with Retry-After',
  async (t) => {
    const svc = await sharedWebService();
    const open: Response[] = [];
    for (let i = 0; i < MAX_FOLLOWERS; i++) {
      const res = await svc.get('/ops/feed', { headers: { accept: 'text/event-stream' } });
      t.equal(res.status, 200, `follower ${i + 1}`);
      open.push(res);
    }
    await eventually(
      () => svc.services.opsFeed.followerCount() === MAX_FOLLOWERS,
      'every follower to be counted',
    );
    const refused = await svc.get('/ops/feed', { headers: { accept: 'text/event-stream' } });
    t.equal(refused.status, 503, 'one more: 503');
    t.equal(refused.headers.get('retry-after'), '5');
    await refused.arrayBuffer();
    t.equal((await svc.getJson('/ops/feed')).status, 200, 'the figures as JSON still answer');
    for (const res of open) await res.body!.cancel();
    await eventually(
      () => svc.services.opsFeed.followerCount() === 0,
      'the followers to be dropped',
    );
    const again = await svc.get('/ops/feed', { headers: { accept: 'text/event-stream' } });
    t.equal(again.status, 200, 'room again once they left');
    await again.body!.cancel();
  },
);

t.test(
  'two processes on one database: each page shows its own process, and says which',
  async (t) => {
    const url = await freshDatabase(t);
    const env = { DATABASE_URL: url, SVC_SHARDS: '1', SVC_BACKFILL_DAYS: '0' };
    const a = await startChild(t, 'process a', env);
    const b = await startChild(t, 'process b', env);
    for (let i = 0; i < 5; i++) await a.send('GET', '/api/v1/markets');
    const fa = (await a.send('GET', '/ops/feed')).body;
    const fb = (await b.send('GET', '/ops/feed')).body;
    t.equal(fa.process.pid, a.proc.pid, 'a says its pid');
    t.equal(fb.process.pid, b.proc.pid, 'b says its pid');
    t.not(fa.process.pid, fb.process.pid);
    const routesOf = (f: any) =>
      f.routes.find((r: any) => r.route === '/api/v1/markets')?.requests ?? 0;
    t.ok(routesOf(fa) >= 5, 'a counts the requests it served');
    t.equal(routesOf(fb), 0, 'b counts only its own');
    const page = await b.send('GET', '/ops', undefined, { accept: 'text/html' });
    t.equal(page.status, 200);
    t.match(page.body, `pid ${b.proc.pid} on `, 'the page names the process');
  },
);

t.test(
  "a close's lateness and a 5xx: exact in the points, named by the status line, listed with time and route",
  async (t) => {
    const c = await startClockedService(
      t,
      { SVC_RECORD_CACHE_MB: '0' },
      { ops: { pointSeconds: 1 } },
    );
    const feed = c.svc.services.opsFeed;
    // The session of m15 ends; its close runs 1.5 s later (by the service clock).
    c.advanceTo(c.closesAtMs('m15') + 1500);
    await c.runDue();
    const text = await (await c.svc.get('/metrics')).text();
    t.equal(
      metricValue(text, 'session_close_lateness_seconds_count{market="m15"}'),
      1,
      'one close of m15',
    );
    t.equal(
      metricValue(text, 'session_close_lateness_seconds_sum{market="m15"}'),
      1.5,
      '1.5 s after its session ended',
    );
    const page = await getPage(c.svc, '/ops');
    t.match(page.text, '<th scope="col" class="num">Late p99</th>', '/ops shows it per market');
    const closed = await eventually(
      () => feed.history().points.find((p) => p.markets.m15?.late_ms !== null),
      'the point of the close',
    );
    t.equal(
      closed.markets.m15.late_ms,
      1500,
      'the point has its exact lateness (not a bucket bound)',
    );
    t.ok(closed.markets.m15.close_ms! > 0, `and its duration: ${closed.markets.m15.close_ms} ms`);
    t.equal(closed.markets.h10.late_ms, null, 'a market without a close in the span: none');
    t.notOk(
      feed.status().some((b) => b.id === 'rate_5xx'),
      'no 5xx yet',
    );

    t.equal(await answerA5xx(c.svc), 500, 'the tape without its table: 500');
    await eventually(
      () => feed.status().some((b) => b.id === 'rate_5xx'),
      'the status to name the 5xx',
    );
    const f = (await c.svc.getJson('/ops/feed')).body;
    t.same(schemaProblems(checks.figures, f), []);
    t.same(
      f.recent_5xx,
      [
        {
          at: c.now() / 1000,
          method: 'GET',
          route: '/api/v1/markets/{market_id}/tape',
          status: 500,
        },
      ],
      'the 5xx: its instant by the service clock, its route pattern',
    );
    t.match(
      f.status.find((b: any) => b.id === 'rate_5xx').text,
      /^5xx answers per second: [\d.]+ per second in the last 5 min \(threshold 0\.00 per second\)$/,
    );
    const board = (await getPage(c.svc, '/ops')).text;
    t.match(
      board,
      '<div id="ops-status" class="error" role="status">',
      'the status line turns to an error',
    );
    t.match(
      board,
      /<li>5xx answers per second: [\d.]+ per second in the last 5 min/,
      'naming the figure',
    );
    t.match(
      board,
      `<tr><td>${new Date(c.now()).toISOString().slice(0, 19).replace('T', ' ')} UTC</td><th scope="row"><code>GET /api/v1/markets/{market_id}/tape</code></th><td class="num">500</td></tr>`,
      'the recent 5xx: time and route',
    );
    t.notMatch(board, 'from_tick=1', 'never the raw URL');
  },
);
