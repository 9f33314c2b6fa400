// What a process that follows the closes reports when a market's open session moved from `prev` to
// `open` (src/supervisor/supervisor.ts closedBetween): the closes the holder performed, as its
// catch-up performs them (one a session, or past the bound the first straight into the last ones).
import t from 'tap';
import fc from 'fast-check';
import { closedBetween } from '../../src/supervisor/supervisor.js';

/** The holder's catch-up rule (Supervisor.catchUp), as the sequence of [closed, next open]. */
function holderCloses(open: number, current: number, limit: number): [number, number][] {
  const out: [number, number][] = [];
  while (open < current) {
    const next = current - open > limit ? current - limit + 1 : open + 1;
    out.push([open, next]);
    open = next;
  }
  return out;
}

t.test('a follower reports the closes the holder performed, one each, in order', async (t) => {
  t.same(closedBetween(10, 11, 5000), [[10, 11]], 'one close');
  t.same(
    closedBetween(10, 13, 5000),
    [
      [10, 11],
      [11, 12],
      [12, 13],
    ],
    'a catch-up of three',
  );
  t.same(
    closedBetween(10, 20, 3),
    [
      [10, 18],
      [18, 19],
      [19, 20],
    ],
    'past the bound: the skipped sessions are not reported',
  );
  t.same(closedBetween(10, 10, 3), [], 'nothing moved');
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 1e6 }),
      fc.integer({ min: 0, max: 300 }),
      fc.integer({ min: 1, max: 100 }),
      (prev, gap, limit) => {
        const got = closedBetween(prev, prev + gap, limit);
        t.same(got, holderCloses(prev, prev + gap, limit));
        return got.length === Math.min(gap, limit);
      },
    ),
    { numRuns: 300 },
  );
});
