// The record's settled sessions served from memory (src/market-data/record-fragments.ts): every answer is
// byte for byte the one the whole-range read tasks give (the service with SVC_RECORD_CACHE_MB=0),
// over random ranges and query flags, cold and warm, before and across a close that settles a
// session; the close warms what it settled; eviction under the byte cap; ETag and 304.
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { menu, MARKETS, type MarketId } from '../../src/engine/index.js';
import { RecordFragments } from '../../src/market-data/record-fragments.js';
import { seriesKey } from '../../src/market-data/record-cache.js';
import type { FragmentSpec } from '../../actors/record/messages.js';
import { holderTrade } from '../helpers/holder-trades.js';
import { RECORDED_DAY_MS, startRecordedService } from '../helpers/service.js';

// The clock moves only when the test says: closes happen at runDue().
let nowMs = RECORDED_DAY_MS;
const svc = await startRecordedService(t, { SVC_ORACLE: '1' }, { realMs: () => nowMs });
const s = svc.services;
const cached = s.record;
const uncached = new RecordFragments(s.runtime, 0, s.log, () => []);
const MARKET_LIST: MarketId[] = ['m15', 'm45', 'h2', 'h10'];
const pos = (m: MarketId) => {
  const open = s.supervisor.openTick(m)!;
  return { open, lastSettled: open - 1 - MARKETS[m].settlement_horizon_ticks };
};

// Holders' fills in settled sessions, written before anything is read (a settled session's trades
// are final: the close of its session wrote them): the actor filter has both kinds to page through.
// h2's oldest (5 back) lies before its one-day record (12 sessions): a trade of a session off the
// record is in no answer, nor in any `total` (the uncached count once included it).
for (const [m, account] of [
  ['m15', 40],
  ['h2', 60],
] as const) {
  const { lastSettled } = pos(m);
  for (const back of [0, 2, 5]) {
    const tick = lastSettled - back;
    const deals = menu(svc.config.seed, m, tick);
    // Two rows of the menu, a desk-bid one and another where the menu has them (some menus are all
    // desk bids: findIndex's -1 would name a row that does not exist).
    const houseRow = Math.max(
      0,
      deals.findIndex((d) => d.house_accepted),
    );
    const rejected = deals.findIndex((d) => !d.house_accepted);
    const other = rejected >= 0 ? rejected : (houseRow + 1) % deals.length;
    await holderTrade(
      svc.orm.em.fork(),
      svc.config.seed,
      m,
      tick,
      houseRow,
      1,
      account + 2 * back,
      s.clock.realNow(),
    );
    await holderTrade(
      svc.orm.em.fork(),
      svc.config.seed,
      m,
      tick,
      other,
      2,
      account + 2 * back + 1,
      s.clock.realNow(),
    );
  }
}

type Answer = { status: number; body: Buffer; headers: Record<string, string | null> };
const HEADERS = ['content-type', 'cache-control', 'x-rows', 'content-disposition'];

async function fetchAnswer(
  path: string,
  init?: RequestInit,
): Promise<Answer & { etag: string | null }> {
  const res = await svc.get(path, init);
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    body,
    headers: Object.fromEntries(HEADERS.map((h) => [h, res.headers.get(h)])),
    etag: res.headers.get('etag'),
  };
}

/** The answer served through `record` (the service's own cache again afterwards). */
async function answerWith(
  record: RecordFragments,
  path: string,
): Promise<Answer & { etag: string | null }> {
  s.record = record;
  try {
    return await fetchAnswer(path);
  } finally {
    s.record = cached;
  }
}

/** The answer without the cache, then with it twice (the first may build, the second is from memory). */
async function compare(t: Test, path: string): Promise<void> {
  const before = await answerWith(uncached, path);
  const cold = await fetchAnswer(path);
  const warm = await fetchAnswer(path);
  for (const [name, a] of [
    ['cold', cold],
    ['warm', warm],
  ] as const) {
    if (a.status !== before.status || !a.body.equals(before.body)) {
      let at = 0;
      while (at < a.body.length && a.body[at] === before.body[at]) at++;
      const around = (b: Buffer) => b.subarray(Math.max(0, at - 120), at + 80).toString();
      t.fail(
        `${name} ${path}: ${a.status} ${a.body.length} B, uncached ${before.status} ${before.body.length} B`,
        { at, got: around(a.body), uncached: around(before.body) },
      );
      return;
    }
    t.same(a.headers, before.headers, `${name} ${path}: same headers`);
  }
  t.equal(warm.etag, cold.etag, `${path}: the same answer, the same ETag`);
}

type Query = {
  market: MarketId;
  kind: 'history' | 'trades' | 'tape' | 'stats' | 'dataset';
  back: number;
  span: number;
  flags: number[];
};

function pathOf(q: Query): string {
  const { open } = pos(q.market);
  const from = Math.max(0, open - q.back);
  const range = `from_tick=${from}&to_tick=${from + q.span - 1}`;
  const [a, b, c] = q.flags;
  const base = `/api/v1/markets/${q.market}`;
  switch (q.kind) {
    case 'history':
      return `${base}/history?${range}${a % 2 ? '&reveal=full' : ''}${b % 2 ? '&include_bundle=true' : ''}`;
    case 'trades': {
      const actor = ['', '&actor=house', '&actor=user'][a % 3];
      return `${base}/trades?${range}${actor}${b % 2 ? `&limit=${1 + (c % 40)}&offset=${c % 60}` : c % 3 === 0 ? `&offset=${c % 30}` : ''}`;
    }
    case 'tape':
      return `${base}/tape?${range}${a % 2 ? `&cluster=${c % 32}` : ''}`;
    case 'stats':
      return `${base}/stats?${range}`;
    case 'dataset':
      return `${base}/dataset.csv?${range}${['', '&split=unlabeled', '&expand_qty=true'][a % 3]}`;
  }
}

const queries = (maxBack: number) =>
  fc.record({
    market: fc.constantFrom<MarketId>(...MARKET_LIST),
    kind: fc.constantFrom<Query['kind']>('history', 'trades', 'tape', 'stats', 'dataset'),
    back: fc.integer({ min: -2, max: maxBack }),
    span: fc.integer({ min: 1, max: 20 }),
    flags: fc.array(fc.nat(1000), { minLength: 3, maxLength: 3 }),
  });

t.test(
  'random ranges and flags: cached answers are the uncached ones, byte for byte',
  async (t) => {
    // First, h2's holder fills inside and outside its record (see above).
    const { lastSettled } = pos('h2');
    for (const actor of ['', '&actor=user'])
      await compare(
        t,
        `/api/v1/markets/h2/trades?from_tick=${lastSettled - 8}&to_tick=${lastSettled}${actor}`,
      );
    await fc.assert(
      fc.asyncProperty(queries(110), async (q) => compare(t, pathOf(q))),
      { numRuns: 80 },
    );
    const st = cached.stats();
    t.ok(
      st.hits > 0 && st.entries > 0,
      `answers were served from memory (${st.entries} sessions kept, ${st.hits} hits)`,
    );
  },
);

t.test(
  'across a close: the settled session is warmed by the close and answers stay equal',
  async (t) => {
    const m: MarketId = 'm15';
    const before = pos(m);
    // Read (and keep) the settled sessions just before the boundary, in every default series.
    const near = `from_tick=${before.lastSettled - 18}&to_tick=${before.lastSettled}`;
    for (const kind of ['history', 'trades', 'tape', 'stats', 'dataset.csv'])
      await compare(t, `/api/v1/markets/${m}/${kind}?${near}`);
    const tape7 = { kind: 'tape', market: m, cluster: 7 } as const;
    await compare(t, `/api/v1/markets/${m}/tape?${near}&cluster=7`);
    const warmedBefore = cached.warmed;

    nowMs = s.clock.closesAt(before.open, MARKETS[m].interval_seconds) * 1000 + 50;
    await s.supervisor.runDue();
    const after = pos(m);
    t.equal(after.open, before.open + 1, 'one m15 session closed');
    t.equal(
      s.supervisor.recordOpenTick(m),
      after.open,
      'the record serves the new position once warmed',
    );
    const defaults: FragmentSpec[] = [
      { kind: 'history', market: m, includeBundle: false, oracle: false },
      { kind: 'trades', market: m },
      { kind: 'tape', market: m, cluster: -1 },
      { kind: 'stats', market: m, oracle: true },
      { kind: 'dataset', market: m, split: 'labeled', expandQty: false },
    ];
    for (const spec of [...defaults, tape7]) {
      t.ok(
        cached.cache!.get(seriesKey(spec), after.lastSettled),
        `${seriesKey(spec)}: the newly settled session ${after.lastSettled} was built by the close`,
      );
    }
    t.ok(
      cached.warmed - warmedBefore >= defaults.length + 1,
      'the close warmed the default series and the ones kept',
    );

    // The first requests after the close: every session from memory, none read from a worker.
    const built = cached.built;
    const last20 = `from_tick=${after.lastSettled - 19}&to_tick=${after.lastSettled}`;
    for (const kind of ['history', 'trades', 'tape', 'stats', 'dataset.csv']) {
      const a = await fetchAnswer(`/api/v1/markets/${m}/${kind}?${last20}`);
      t.equal(a.status, 200);
    }
    await fetchAnswer(`/api/v1/markets/${m}/tape?${last20}&cluster=7`);
    t.equal(cached.built, built, 'no session was built on the request path');

    // Equality around the new boundary: settled, newly settled, unsettled and the open session.
    const around = `from_tick=${after.lastSettled - 12}&to_tick=${after.lastSettled + 4}`;
    for (const path of [
      `history?${around}`,
      `history?${around}&reveal=full&include_bundle=true`,
      `trades?${around}`,
      `trades?${around}&actor=user&limit=3&offset=1`,
      `trades?${around}&actor=house&limit=7&offset=5`,
      `tape?${around}`,
      `tape?${around}&cluster=7`,
      `stats?${around}`,
      `dataset.csv?${around}`,
      `dataset.csv?${around}&split=unlabeled`,
      `dataset.csv?${around}&expand_qty=true`,
    ])
      await compare(t, `/api/v1/markets/${m}/${path}`);
    // Random queries again, every market, now that the positions have moved.
    await fc.assert(
      fc.asyncProperty(queries(40), async (q) => compare(t, pathOf(q))),
      { numRuns: 40 },
    );
  },
);

t.test('eviction under the byte cap: the least recently used go, answers stay equal', async (t) => {
  const cap = 300_000;
  const small = new RecordFragments(s.runtime, cap, s.log, () => []);
  const { lastSettled } = pos('m15');
  const ranges = [0, 20, 40, 60].map(
    (k) => `from_tick=${lastSettled - k - 19}&to_tick=${lastSettled - k}`,
  );
  for (const r of ranges)
    await answerWith(small, `/api/v1/markets/m15/history?${r}&include_bundle=true`);
  const st = small.stats();
  t.ok(st.bytes <= cap, `${st.bytes} B kept, at most the cap ${cap}`);
  t.ok(st.evicted > 0, `${st.evicted} sessions evicted`);
  const key = seriesKey({ kind: 'history', market: 'm15', includeBundle: true, oracle: false });
  t.ok(small.cache!.get(key, lastSettled - 60), 'the most recently read session is kept');
  t.notOk(small.cache!.get(key, lastSettled - 19), 'the least recently read one is gone');
  // Served with the small cache (evicted sessions rebuilt), compared with the uncached answer.
  const path = `/api/v1/markets/m15/history?from_tick=${lastSettled - 79}&to_tick=${lastSettled - 60}&include_bundle=true`;
  const a = await answerWith(small, path);
  const b = await answerWith(uncached, path);
  t.equal(a.status, 200);
  t.ok(a.body.equals(b.body), 'an evicted range rebuilt is the same bytes');
});

t.test('a cold range is read in one part per worker, each session once', async (t) => {
  const fresh = new RecordFragments(s.runtime, 64 * 1024 * 1024, s.log, () => []);
  const { lastSettled } = pos('m15');
  const path = `/api/v1/markets/m15/history?from_tick=${lastSettled - 19}&to_tick=${lastSettled}`;
  const a = await answerWith(fresh, path);
  const b = await answerWith(uncached, path);
  t.equal(s.runtime.shardCount, 2);
  t.equal(fresh.reads, 2, 'twenty sessions not kept: two read tasks, one per worker');
  t.equal(fresh.built, 20, 'each session built once');
  t.equal(a.status, 200);
  t.ok(a.body.equals(b.body), 'the parts joined are the uncached answer');
});

t.test('ETag and 304 on answers served from memory', async (t) => {
  const { lastSettled, open } = pos('m15');
  const settled = `/api/v1/markets/m15/trades?from_tick=${lastSettled - 30}&to_tick=${lastSettled}&actor=house&limit=5&offset=3`;
  const a = await fetchAnswer(settled);
  t.equal(a.status, 200);
  t.match(a.etag, /^W\/"[A-Za-z0-9_-]{22}"$/);
  t.equal(
    a.headers['cache-control'],
    'public, max-age=86400, immutable',
    'settled sessions of a loaded history: immutable',
  );
  const again = await fetchAnswer(settled, { headers: { 'if-none-match': a.etag! } });
  t.equal(again.status, 304);
  t.equal(again.etag, a.etag);
  t.equal(again.body.length, 0);
  const other = await fetchAnswer(settled.replace('offset=3', 'offset=4'));
  t.not(other.etag, a.etag, 'another page, another ETag');

  const live = `/api/v1/markets/m15/tape?from_tick=${lastSettled - 5}&to_tick=${open}`;
  const l1 = await fetchAnswer(live);
  t.equal(l1.headers['cache-control'], 'no-cache');
  t.equal((await fetchAnswer(live, { headers: { 'if-none-match': l1.etag! } })).status, 304);
  nowMs = s.clock.closesAt(open, MARKETS.m15.interval_seconds) * 1000 + 50;
  await s.supervisor.runDue();
  const l2 = await fetchAnswer(live, { headers: { 'if-none-match': l1.etag! } });
  t.equal(l2.status, 200, 'after a close an answer over unsettled sessions has a new ETag');
  t.not(l2.etag, l1.etag);
});
