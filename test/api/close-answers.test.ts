// The answers that change only at a close (families, book, signals) are served from memory
// (record-query.ts closeAnswer): byte for byte, ETag and headers the answer computed per request
// (the service with SVC_RECORD_CACHE_MB=0's RecordFragments), for several query parameter sets;
// the close warms the default families and book answers of the new session and replaces the old.
import t from 'tap';
import { MARKETS, type MarketId } from '../../src/engine/index.js';
import { RecordFragments } from '../../src/market-data/record-fragments.js';
import { RECORDED_DAY_MS, startRecordedService } from '../helpers/service.js';

// The clock moves only when the test says: closes happen at runDue().
let nowMs = RECORDED_DAY_MS;
const svc = await startRecordedService(t, {}, { realMs: () => nowMs });
const s = svc.services;
const cached = s.record;
const uncached = new RecordFragments(s.runtime, 0, s.log, () => []);

type Answer = {
  status: number;
  body: Buffer;
  etag: string | null;
  cacheControl: string | null;
  contentType: string | null;
};

async function fetchAnswer(path: string, init?: RequestInit): Promise<Answer> {
  const res = await svc.get(path, init);
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    body,
    etag: res.headers.get('etag'),
    cacheControl: res.headers.get('cache-control'),
    contentType: res.headers.get('content-type'),
  };
}

/** The answer computed per request (nothing kept), the service's own cache again afterwards. */
async function computed(path: string): Promise<Answer> {
  s.record = uncached;
  try {
    return await fetchAnswer(path);
  } finally {
    s.record = cached;
  }
}

const hits = () => cached.stats().answers.hits;

const PATHS = [
  '/api/v1/markets/m15/families',
  '/api/v1/markets/m15/families?window=12',
  '/api/v1/markets/h2/families?window=400',
  '/api/v1/markets/m15/book',
  '/api/v1/markets/m15/book?cluster=0&step=0.5&levels=3&window=20',
  '/api/v1/markets/h2/book?levels=50&window=500',
  '/api/v1/markets/h2/families/1/signals',
  '/api/v1/markets/h10/families/0/signals?from_tick=0&to_tick=30',
];

t.test('a kept answer is the computed one, for several query parameter sets', async (t) => {
  for (const path of PATHS) {
    const want = await computed(path);
    t.equal(want.status, 200, `${path}: answered`);
    const first = await fetchAnswer(path);
    const h = hits();
    const again = await fetchAnswer(path);
    t.equal(hits(), h + 1, `${path}: the second request is served from memory`);
    for (const [name, a] of [
      ['first', first],
      ['again', again],
    ] as const) {
      t.ok(a.body.equals(want.body), `${name} ${path}: the computed bytes`);
      t.same(
        [a.etag, a.cacheControl, a.contentType],
        [want.etag, want.cacheControl, want.contentType],
        `${name} ${path}: the computed headers`,
      );
    }
    const r = await fetchAnswer(path, { headers: { 'if-none-match': want.etag! } });
    t.equal(r.status, 304, `${path}: 304 on its ETag`);
  }
  // An unknown cluster, or a book without tape, is still a 404 (nothing kept).
  t.equal((await fetchAnswer('/api/v1/markets/m15/book?cluster=9999')).status, 404);
});

t.test('a close replaces them: the new session is warmed before the position moves', async (t) => {
  const m: MarketId = 'm15';
  const paths = [`/api/v1/markets/${m}/families`, `/api/v1/markets/${m}/book`];
  const before = await Promise.all(paths.map((p) => fetchAnswer(p)));
  const open = s.supervisor.openTick(m)!;
  nowMs = s.clock.closesAt(open, MARKETS[m].interval_seconds) * 1000 + 50;
  await s.supervisor.runDue();
  t.equal(s.supervisor.recordOpenTick(m), open + 1, 'the close moved the record');
  for (const [i, path] of paths.entries()) {
    const h = hits();
    const after = await fetchAnswer(path);
    t.equal(
      hits(),
      h + 1,
      `${path}: the first request after the close is served from memory (the close built it)`,
    );
    const want = await computed(path);
    t.ok(after.body.equals(want.body), `${path}: the computed bytes of the new session`);
    t.equal(after.etag, want.etag);
    t.not(after.etag, before[i].etag, `${path}: not the answer of the session before`);
  }
  t.equal(
    JSON.parse((await fetchAnswer(paths[0])).body.toString()).tick,
    open + 1,
    'families of the new open session',
  );
});
