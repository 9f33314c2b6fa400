import t from 'tap';
import fc from 'fast-check';
import { mean, median, quantile, pearson, vwap } from '../../src/analytics/stats.js';
import { prop } from '../helpers/prop.js';

const near = (a: number | null, b: number, eps = 1e-9) => a !== null && Math.abs(a - b) < eps;

t.test('mean and median', async (t) => {
  t.equal(mean([]), null);
  t.ok(near(mean([1, 2, 6]), 3)); // 9 / 3
  t.equal(median([]), null);
  t.equal(median([5, 1, 3]), 3);
  t.equal(median([4, 1, 3, 2]), 2.5); // (2 + 3) / 2
});

t.test('quantile: linear interpolation (numpy default)', async (t) => {
  // [1,2,3,4], q = 0.25: h = 3·0.25 = 0.75 -> 1 + 0.75·(2 - 1) = 1.75
  t.ok(near(quantile([1, 2, 3, 4], 0.25), 1.75));
  // [10..50], q = 0.9: h = 4·0.9 = 3.6 -> 40 + 0.6·10 = 46
  t.ok(near(quantile([10, 20, 30, 40, 50], 0.9), 46));
  t.equal(quantile([10, 20, 30, 40, 50], 0), 10);
  t.equal(quantile([10, 20, 30, 40, 50], 1), 50);
  t.equal(quantile([7], 0.3), 7);
  t.equal(quantile([], 0.5), null);
});

t.test('quantile: within range and monotone in q', async (t) => {
  prop(
    t,
    fc.property(
      fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 40 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (xs, q1, q2) => {
        const s = [...xs].sort((a, b) => a - b);
        const [lo, hi] = q1 <= q2 ? [q1, q2] : [q2, q1];
        const a = quantile(s, lo)!,
          b = quantile(s, hi)!;
        return a >= s[0] && b <= s[s.length - 1] && a <= b + 1e-9 * (1 + Math.abs(b));
      },
    ),
  );
});

t.test('pearson: hand-computed', async (t) => {
  // xs [1,2,3], ys [2,4,7]: dx [-1,0,1], dy [-7/3,-1/3,8/3]
  // Sxy = 7/3 + 8/3 = 5, Sxx = 2, Syy = (49 + 1 + 64)/9 = 114/9
  // r = 5 / sqrt(2·114/9) = 15 / sqrt(228)
  t.ok(near(pearson([1, 2, 3], [2, 4, 7]), 15 / Math.sqrt(228)));
  t.ok(near(pearson([1, 2, 3], [6, 4, 2]), -1));
  t.equal(pearson([1], [2]), null);
  t.equal(pearson([1, 2, 3], [4, 4, 4]), null, 'constant series');
});

t.test('pearson: in [-1, 1]', async (t) => {
  prop(
    t,
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: -100, max: 100 }), fc.integer({ min: -100, max: 100 })), {
        maxLength: 30,
      }),
      (ps) => {
        const r = pearson(
          ps.map((p) => p[0]),
          ps.map((p) => p[1]),
        );
        return r === null || (r >= -1 && r <= 1);
      },
    ),
  );
});

t.test('vwap', async (t) => {
  // (10·1 + 12·3) / (1 + 3) = 46 / 4 = 11.5
  t.ok(near(vwap([10, 12], [1, 3]), 11.5));
  t.equal(vwap([10, 12], [0, 0]), null);
  t.equal(vwap([], []), null);
});
