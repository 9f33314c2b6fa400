// /ops's thresholds and history: the status line's pure function (breachesOf) names each
// figure past its threshold within its window, per market where the figure is; the alert rules of
// ops/prometheus/alerts.yml watch the same numbers as the table; a chart point takes the closes'
// exact figures; the feed keeps at most HISTORY_POINTS points and RECENT_5XX 5xx, with the
// service clock's instants; a route without traffic in the window is folded away.
import t from 'tap';
import fs from 'node:fs';
import { parse } from 'yaml';
import { Compile } from 'typebox/compile';
import { breachesOf, THRESHOLDS, thresholdsWith } from '../../src/ops/thresholds.js';
import { HISTORY_POINTS, OpsFeed, RECENT_5XX } from '../../src/ops/feed.js';
import { pointOf, type Figures } from '../../src/ops/figures.js';
import { opsView } from '../../src/ops/view.js';
import { FiguresJson, HistoryJson, type Point } from '../../src/schemas/ops.js';
import type { CloseSeen, MetricJson } from '../../src/metrics.js';

const point = (over: Partial<Point> = {}): Point => ({
  at: 0,
  rate: 1,
  rate_4xx: 0,
  rate_5xx: 0,
  p99_ms: 5,
  mailbox_share: 0,
  pool_wait_ms: 0.1,
  fanout_p99_ms: null,
  loop_p99_ms: 10,
  markets: { m15: { close_ms: null, late_ms: null }, h2: { close_ms: null, late_ms: null } },
  ...over,
});

t.test('breachesOf: nothing past its threshold, then each figure named', async (t) => {
  t.same(breachesOf([], THRESHOLDS, 5), [], 'no points: all within');
  t.same(breachesOf([point(), point()], THRESHOLDS, 5), [], 'quiet points: all within');

  const five = breachesOf([point(), point({ rate_5xx: 0.4, p99_ms: 250 }), point()], THRESHOLDS, 5);
  t.same(
    five.map((b) => b.id),
    ['rate_5xx', 'p99_ms'],
    "the 5xx and the latency, in the table's order",
  );
  t.equal(
    five[0].text,
    '5xx answers per second: 0.40 per second in the last 5 min (threshold 0.00 per second)',
  );
  t.equal(five[1].text, 'request latency p99: 250 ms in the last 1 min (threshold 100 ms)');
  t.equal(five[0].market, null);

  const late = breachesOf(
    [
      point({
        markets: { m15: { close_ms: 300, late_ms: 2400 }, h2: { close_ms: 1500, late_ms: 100 } },
      }),
    ],
    THRESHOLDS,
    5,
  );
  t.same(
    late.map((b) => [b.id, b.market, b.value]),
    [
      ['close_ms', 'h2', 1500],
      ['late_ms', 'm15', 2400],
    ],
    'per market: only the market past it',
  );
  t.equal(late[1].text, 'm15 close lateness: 2.40 s in the last 15 min (threshold 2.00 s)');

  const full = breachesOf([point({ mailbox_share: 0.85 })], THRESHOLDS, 5);
  t.equal(
    full[0].text,
    'deepest mailbox, of its bound: 85.0 % in the last 1 min (threshold 80.0 %)',
  );
  t.same(
    breachesOf([point({ mailbox_share: 0.8 })], THRESHOLDS, 5),
    [],
    'at the threshold is within it',
  );
});

t.test('breachesOf: a figure counts within its window only', async (t) => {
  // 4xx over 60 s: 12 points of 5 s. A burst 13 points ago is out of the window; 12 ago is in.
  const quiet = Array.from({ length: 12 }, () => point());
  t.same(
    breachesOf([point({ rate_4xx: 9 }), ...quiet], THRESHOLDS, 5),
    [],
    'older than its window: within',
  );
  t.same(
    breachesOf([point({ rate_4xx: 9 }), ...quiet.slice(1)], THRESHOLDS, 5).map((b) => b.id),
    ['rate_4xx'],
    'inside it: named',
  );
  // The same points at 1 s each: 60 points make the window.
  t.same(
    breachesOf([point({ rate_4xx: 9 }), ...quiet], THRESHOLDS, 1).map((b) => b.id),
    ['rate_4xx'],
  );
  t.same(
    breachesOf(
      [point({ rate_5xx: 0.2 }), ...Array.from({ length: 59 }, () => point())],
      THRESHOLDS,
      5,
    ).map((b) => b.id),
    ['rate_5xx'],
    '5xx: 5 minutes (60 points)',
  );
});

t.test('thresholdsWith replaces the thresholds named, nothing else', async (t) => {
  const low = thresholdsWith({ p99_ms: 1 });
  t.equal(low.find((x) => x.id === 'p99_ms')!.above, 1);
  t.same(
    low.filter((x) => x.id !== 'p99_ms'),
    THRESHOLDS.filter((x) => x.id !== 'p99_ms'),
  );
  t.same(
    breachesOf([point()], low, 5).map((b) => b.id),
    ['p99_ms'],
    'a 5 ms p99 is past a 1 ms threshold',
  );
  t.equal(THRESHOLDS.find((x) => x.id === 'p99_ms')!.above, 100, 'the table itself is unchanged');
});

t.test('the alert rules watch the same numbers as the table', async (t) => {
  const rules = (
    parse(fs.readFileSync('ops/prometheus/alerts.yml', 'utf8')).groups as {
      rules: { alert: string; expr: string }[];
    }[]
  ).flatMap((g) => g.rules);
  const expr = (name: string) => rules.find((r) => r.alert === name)!.expr;
  const above = (id: string) => THRESHOLDS.find((x) => x.id === id)!.above;
  t.equal(
    Number(/>\s*([\d.]+)\s*$/.exec(expr('ServerErrors'))![1]),
    above('rate_5xx'),
    'ServerErrors: any 5xx',
  );
  t.equal(
    Number(/>\s*([\d.]+)\s*$/.exec(expr('CloseLate'))![1]) * 1000,
    above('late_ms'),
    'CloseLate: seconds late',
  );
  t.match(expr('CloseLate'), /\[15m\]/, 'CloseLate over 15 minutes');
  t.equal(THRESHOLDS.find((x) => x.id === 'late_ms')!.over_s, 15 * 60, 'the same window');
  t.equal(
    Number(
      /\(\s*([\d.]+)\s*\*\s*max by \(instance\) \(actor_mailbox_limit\)/.exec(
        expr('MailboxNearlyFull'),
      )![1],
    ),
    above('mailbox_share'),
    'MailboxNearlyFull: share of the bound',
  );
});

t.test('a chart point takes the closes of its span exactly: the longest, the latest', async (t) => {
  const f = {
    at: 100,
    requests: { rate: 2, rate_4xx: 0.5, rate_5xx: 0.1, p99_ms: 12 },
    shards: [{ mailbox_share: 0.1 }, { mailbox_share: 0.3 }, { mailbox_share: null }],
    db_pool: { wait_ms: 0.4 },
    events: { fanout_p99_ms: 3 },
    process: { event_loop_p99_ms: 11 },
    markets: [{ market: 'm15' }, { market: 'h10' }],
  } as unknown as Figures;
  const closes: CloseSeen[] = [
    { seq: 1, market: 'm15', seconds: 0.25, late_seconds: 1.5 },
    { seq: 2, market: 'm15', seconds: 0.5, late_seconds: 0.75 },
  ];
  t.same(pointOf(f, closes), {
    at: 100,
    rate: 2,
    rate_4xx: 0.5,
    rate_5xx: 0.1,
    p99_ms: 12,
    mailbox_share: 0.3,
    pool_wait_ms: 0.4,
    fanout_p99_ms: 3,
    loop_p99_ms: 11,
    markets: { m15: { close_ms: 500, late_ms: 1500 }, h10: { close_ms: null, late_ms: null } },
  });
});

t.test(
  'the feed keeps HISTORY_POINTS points and RECENT_5XX 5xx, instants from the clock it is given',
  async (t) => {
    let requests = 0;
    const metrics = {
      snapshot: async (): Promise<MetricJson[]> => [
        {
          name: 'http_requests_total',
          help: '',
          type: 'counter',
          values: [{ value: requests, labels: { method: 'GET', route: '/x', status: 200 } }],
        },
      ],
      closesAfter: (): CloseSeen[] => [],
    };
    let mono = 1000;
    const realMs = () => 1_800_000_000_000 + mono * 1000; // the service clock, not the machine's
    const feed = new OpsFeed(metrics, realMs, { pointSeconds: 5 }, () => mono);
    const check = Compile(HistoryJson);
    const figuresCheck = Compile(FiguresJson);
    await feed.current(); // opens the first span
    for (let i = 0; i < HISTORY_POINTS + 20; i++) {
      mono += 5;
      requests += 50;
      await feed.current();
    }
    const h = feed.history();
    t.equal(h.points.length, HISTORY_POINTS, 'the oldest points dropped');
    t.equal(h.points[h.points.length - 1].rate, 10, '50 requests over 5 s');
    t.equal(
      h.points[h.points.length - 1].at,
      realMs() / 1000,
      "the newest point's instant: the given clock's",
    );
    t.ok(check.Check(h), 'the history matches its schema');

    const at = realMs() / 1000;
    for (let i = 0; i < RECENT_5XX + 5; i++)
      feed.served('GET', '/api/v1/markets/{market_id}', i % 2 ? 503 : 500);
    feed.served('GET', '/api/v1/markets', 404);
    mono += 2;
    const f = await feed.current();
    t.equal(f.recent_5xx.length, RECENT_5XX, 'at most RECENT_5XX kept');
    t.same(
      f.recent_5xx[0],
      { at, method: 'GET', route: '/api/v1/markets/{market_id}', status: 500 },
      'newest first, with its route pattern',
    );
    t.ok(figuresCheck.Check(f), 'the figures match their schema');
    t.same(
      opsView(f, feed.history()).routes.map((r) => r.route),
      ['/x'],
      'a route with requests in the window: listed',
    );

    // No request for longer than the window: the route is folded away with the others of no traffic.
    mono += 11;
    const quiet = opsView(await feed.current(), feed.history());
    t.same(
      [quiet.routes.length, quiet.quiet_count, quiet.quiet_routes.map((r) => r.route)],
      [0, 1, ['/x']],
      'a route without traffic: folded',
    );
    feed.stop();
  },
);
