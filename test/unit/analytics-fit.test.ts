import t from 'tap';
import fc from 'fast-check';
import { leastSquares, meanFit } from '../../src/analytics/fit.js';
import { prop } from '../helpers/prop.js';

const near = (a: number, b: number, eps = 1e-9) => Math.abs(a - b) < eps;

t.test('leastSquares: hand-computed 4 points', async (t) => {
  // (0,1) (1,3) (2,4) (3,6): x̄ = 1.5, ȳ = 3.5
  // dx = [-1.5,-0.5,0.5,1.5], dy = [-2.5,-0.5,0.5,2.5]
  // Sxy = 3.75+0.25+0.25+3.75 = 8, Sxx = 5 -> slope 1.6, intercept 3.5 - 1.6·1.5 = 1.1
  // fitted 1.1, 2.7, 4.3, 5.9 -> residuals -0.1, 0.3, -0.3, 0.1 -> SSres = 0.2
  // SStot = 6.25+0.25+0.25+6.25 = 13 -> r2 = 1 - 0.2/13 = 12.8/13
  const f = leastSquares([
    { x: 0, y: 1 },
    { x: 1, y: 3 },
    { x: 2, y: 4 },
    { x: 3, y: 6 },
  ]);
  t.equal(f.kind, 'trend');
  t.equal(f.points, 4);
  t.ok(near(f.slope, 1.6), `slope ${f.slope}`);
  t.ok(near(f.intercept, 1.1), `intercept ${f.intercept}`);
  t.ok(near(f.r2, 12.8 / 13), `r2 ${f.r2}`);
});

t.test('leastSquares: degenerate inputs give no NaN', async (t) => {
  t.same(leastSquares([]), { kind: 'trend', intercept: 0, slope: 0, r2: 0, points: 0 });
  t.same(leastSquares([{ x: 3, y: 7 }]), {
    kind: 'trend',
    intercept: 7,
    slope: 0,
    r2: 0,
    points: 1,
  });
  // all x equal: slope 0, intercept = mean y = (1+2+6)/3 = 3
  t.same(
    leastSquares([
      { x: 2, y: 1 },
      { x: 2, y: 2 },
      { x: 2, y: 6 },
    ]),
    { kind: 'trend', intercept: 3, slope: 0, r2: 0, points: 3 },
  );
  // SStot = 0 (flat y): r2 defined as 0
  const flat = leastSquares([
    { x: 0, y: 5 },
    { x: 1, y: 5 },
    { x: 2, y: 5 },
  ]);
  t.same(flat, { kind: 'trend', intercept: 5, slope: 0, r2: 0, points: 3 });
});

t.test('meanFit: hand-computed', async (t) => {
  // y = 1, 3, 4, 6 -> mean 14/4 = 3.5
  t.same(
    meanFit([
      { x: 0, y: 1 },
      { x: 1, y: 3 },
      { x: 2, y: 4 },
      { x: 3, y: 6 },
    ]),
    { kind: 'mean', intercept: 3.5, slope: 0, r2: 0, points: 4 },
  );
  t.same(meanFit([]), { kind: 'mean', intercept: 0, slope: 0, r2: 0, points: 0 });
});

t.test('leastSquares recovers exact lines (r2 = 1)', async (t) => {
  prop(
    t,
    fc.property(
      fc.integer({ min: -1000, max: 1000 }),
      fc.integer({ min: -1000, max: 1000 }),
      fc.uniqueArray(fc.integer({ min: -200, max: 200 }), { minLength: 2, maxLength: 30 }),
      (a100, b100, xs) => {
        const a = a100 / 100,
          b = b100 / 100;
        const f = leastSquares(xs.map((x) => ({ x, y: a + b * x })));
        const tol = 1e-7 * (1 + Math.abs(a) + Math.abs(b));
        return (
          near(f.intercept, a, tol) &&
          near(f.slope, b, tol) &&
          (b === 0 ? f.r2 === 0 : near(f.r2, 1, 1e-9))
        );
      },
    ),
  );
});

t.test('leastSquares: a constant y explains nothing, whatever its rounding', async (t) => {
  const xs = [89, 97, 0, -22, 152, -46, -14];
  t.equal(leastSquares(xs.map((x) => ({ x, y: 5.23 }))).r2, 0);
});

t.test('leastSquares: r2 in [0,1] and finite', async (t) => {
  const pt = fc.record({
    x: fc.integer({ min: -50, max: 50 }),
    y: fc.double({ min: -1e3, max: 1e3, noNaN: true }),
  });
  prop(
    t,
    fc.property(fc.array(pt, { maxLength: 30 }), (ps) => {
      const f = leastSquares(ps);
      return [f.intercept, f.slope, f.r2].every(Number.isFinite) && f.r2 >= 0 && f.r2 <= 1;
    }),
  );
});
