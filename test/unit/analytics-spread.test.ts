import t from 'tap';
import fc from 'fast-check';
import { rollSpread, corwinSchultz, chooseSpread } from '../../src/analytics/spread.js';
import { prop } from '../helpers/prop.js';

const near = (a: number | null, b: number, eps = 1e-9) => a !== null && Math.abs(a - b) < eps;

t.test('rollSpread: hand-computed bounce', async (t) => {
  // prices 10, 10.5, 10, 10.5, 10 -> changes Δ = [0.5, -0.5, 0.5, -0.5], n = 4, mean m = 0
  // lag-1 products Δ_t·Δ_{t-1} (t = 2..4): -0.25, -0.25, -0.25 -> sum -0.75
  // γ̂(1) = -0.75 / n = -0.75 / 4 = -0.1875
  // spread = 2·sqrt(0.1875) = sqrt(0.75) = 0.8660254037844386
  t.ok(near(rollSpread([10, 10.5, 10, 10.5, 10]), Math.sqrt(0.75)));
});

t.test('rollSpread: three prices, non-zero mean change', async (t) => {
  // prices 10, 11, 11.5 -> Δ = [1, 0.5], m = 0.75, deviations [0.25, -0.25]
  // γ̂(1) = (-0.25·0.25) / 2 = -0.03125 -> spread = 2·sqrt(0.03125) = 0.3535533905932738
  t.ok(near(rollSpread([10, 11, 11.5]), 2 * Math.sqrt(0.03125)));
});

t.test('rollSpread: undefined cases', async (t) => {
  t.equal(rollSpread([]), null);
  t.equal(rollSpread([10, 11]), null, 'fewer than 3 prices');
  t.equal(rollSpread([10, 11, 12, 13]), null, 'constant trend: autocovariance 0');
  t.equal(rollSpread([1, 2, 4, 8, 16]), null, 'accelerating: positive autocovariance');
});

t.test('rollSpread: constant series is null; result is positive when defined', async (t) => {
  prop(
    t,
    fc.property(
      fc.double({ min: 0.01, max: 1e4, noNaN: true }),
      fc.integer({ min: 0, max: 30 }),
      (p, n) => rollSpread(Array(n).fill(p)) === null,
    ),
  );
  prop(
    t,
    fc.property(fc.array(fc.double({ min: 1, max: 100, noNaN: true }), { maxLength: 30 }), (ps) => {
      const s = rollSpread(ps);
      return s === null || (s > 0 && Number.isFinite(s));
    }),
  );
});

t.test('corwinSchultz: hand-computed two-period example', async (t) => {
  // H = [10.5, 10.5], L = [9.5, 9.5]; a = ln(10.5/9.5)
  // β = a² + a² = 2a², √β = √2·a, √(2β) = 2a; γ = ln(10.5/9.5)² = a² (two-period range is the same)
  // k = 3 - 2√2 = (√2 - 1)², so (2 - √2)/k = √2/(√2 - 1) = 2 + √2 and √(γ/k) = a/(√2 - 1) = a(√2 + 1)
  // α = a(2 + √2) - a(√2 + 1) = a  ->  e^α = 10.5/9.5 = 21/19
  // S = 2(21/19 - 1)/(1 + 21/19) = 2·(2/19)/(40/19) = 4/40 = 0.1
  t.ok(near(corwinSchultz([10.5, 10.5], [9.5, 9.5]), 0.1));
});

t.test('corwinSchultz: negative pair estimate set to 0 and averaged', async (t) => {
  // pair 1: identical ranges -> 0.1 (as above). pair 2: [10.5,9.5] then [20.5,19.5]: the two-period
  // range ln(20.5/9.5)² dwarfs β, α < 0 -> S < 0 -> 0. Mean over 2 pairs = 0.05.
  t.ok(near(corwinSchultz([10.5, 10.5, 20.5], [9.5, 9.5, 19.5]), 0.05));
  t.equal(corwinSchultz([10], [9]), null, 'one period');
  t.equal(corwinSchultz([], []), null);
  t.equal(corwinSchultz([10, 10], [0, 9]), null, 'no usable pair');
  t.throws(() => corwinSchultz([1, 2], [1]));
});

t.test('corwinSchultz: never negative', async (t) => {
  const bar = fc.tuple(
    fc.double({ min: 1, max: 100, noNaN: true }),
    fc.double({ min: 0, max: 0.5, noNaN: true }),
  );
  prop(
    t,
    fc.property(fc.array(bar, { minLength: 2, maxLength: 20 }), (bars) => {
      const s = corwinSchultz(
        bars.map(([l, r]) => l * (1 + r)),
        bars.map(([l]) => l),
      );
      return s !== null && s >= 0 && s < 2;
    }),
  );
});

t.test('chooseSpread: order roll -> corwin_schultz -> floor', async (t) => {
  const hl = { highs: [10.5, 10.5], lows: [9.5, 9.5] };
  // Roll 0.866 > floor 0.01·10 = 0.1
  const r = chooseSpread({ prices: [10, 10.5, 10, 10.5, 10], ...hl, mid: 10, floorFrac: 0.01 });
  t.equal(r.method, 'roll');
  t.ok(near(r.spread, Math.sqrt(0.75)));
  // Roll undefined (constant closes) -> CS 0.1 · mid 10 = 1.0 > floor 0.1
  const c = chooseSpread({ prices: [10, 10, 10], ...hl, mid: 10, floorFrac: 0.01 });
  t.equal(c.method, 'corwin_schultz');
  t.ok(near(c.spread, 1));
  // Roll 0.866 and CS 1.0 both below floor 0.2·10 = 2 -> floor
  const f = chooseSpread({ prices: [10, 10.5, 10, 10.5, 10], ...hl, mid: 10, floorFrac: 0.2 });
  t.same(f, { spread: 2, method: 'floor' });
  // Roll below floor but CS above -> CS
  const c2 = chooseSpread({ prices: [10, 10.5, 10, 10.5, 10], ...hl, mid: 10, floorFrac: 0.09 });
  t.equal(c2.method, 'corwin_schultz');
});
