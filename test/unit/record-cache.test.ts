// The record's caches (ByteLru): least recently used out first, never above the byte cap, a value
// larger than the cap not kept, values found by (key, tick); trades fragments' offsets; a cold
// range split into one part per worker.
import t from 'tap';
import fc from 'fast-check';
import { ByteLru, fragmentSize, fromReply, seriesKey } from '../../src/market-data/record-cache.js';
import { splitRange } from '../../src/market-data/record-fragments.js';

const key = seriesKey({ kind: 'stats', market: 'm15', oracle: false });
const frag = (tick: number, bytes: number) =>
  fromReply({ tick, recorded: true, text: 'x'.repeat(bytes), digest: `d${tick}`, items: 1 });

t.test('LRU under the byte cap', async (t) => {
  const c = new ByteLru(4 * (1000 + 200), fragmentSize);
  for (const tick of [1, 2, 3, 4]) c.set(key, tick, frag(tick, 1000));
  t.equal(c.stats().entries, 4);
  t.ok(c.get(key, 1), 'touch 1: now the most recently used');
  c.set(key, 5, frag(5, 1000));
  t.notOk(c.get(key, 2), 'the least recently used (2) went first');
  t.ok(c.get(key, 1) && c.get(key, 3) && c.get(key, 4) && c.get(key, 5));
  const st = c.stats();
  t.ok(st.bytes <= st.capBytes, 'never above the cap');
  t.equal(st.evicted, 1);
  c.set(key, 6, frag(6, 10_000));
  t.notOk(c.get(key, 6), 'larger than the whole cap: not kept');
  t.equal(c.stats().entries, 4, 'and nothing evicted for it');
  c.set(key, 5, frag(5, 1000));
  t.equal(c.stats().entries, 4, 'a session kept again replaces itself');
  c.set('other', 1, frag(1, 1000));
  t.ok(c.get('other', 1) && !c.get(key, 1), 'keys are separate series; the oldest went');
});

t.test('trades fragments carry their offsets and the house count', async (t) => {
  const f = fromReply({
    tick: 9,
    recorded: true,
    text: '{"a":1},{"é":2}',
    digest: 'x',
    items: 2,
    actors: 'hu',
    starts: [0, 8, 17],
  });
  t.equal(f.houses, 1);
  t.same([...f.starts!], [0, 8, 17]);
  t.equal(f.bytes.length, 16, 'UTF-8 bytes (é is two)');
  t.equal(f.bytes.subarray(f.starts![1], f.starts![2] - 1).toString(), '{"é":2}');
});

t.test(
  'a range split for the workers: every session once, in order, parts of at least the minimum',
  async (t) => {
    t.same(splitRange(10, 29, 2), [
      [10, 19],
      [20, 29],
    ]);
    t.same(
      splitRange(10, 16, 2),
      [[10, 16]],
      'seven sessions: one part (two would be smaller than 4)',
    );
    t.same(splitRange(0, 8, 2), [
      [0, 4],
      [5, 8],
    ]);
    t.same(splitRange(5, 4, 2), []);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 10 }),
        (from, n, parts, minPart) => {
          const out = splitRange(from, from + n - 1, parts, minPart);
          const sizes = out.map(([a, b]) => b - a + 1);
          const covered = out.flatMap(([a, b]) =>
            Array.from({ length: b - a + 1 }, (_, i) => a + i),
          );
          return (
            covered.length === n &&
            covered.every((x, i) => x === from + i) &&
            out.length >= 1 &&
            out.length <= parts &&
            (out.length === 1 || sizes.every((s) => s >= minPart)) &&
            Math.max(...sizes) - Math.min(...sizes) <= 1 &&
            out.length === Math.max(1, Math.min(parts, Math.floor(n / minPart)))
          );
        },
      ),
    );
  },
);
