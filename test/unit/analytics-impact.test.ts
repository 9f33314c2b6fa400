import t from 'tap';
import fc from 'fast-check';
import { kyleLambda } from '../../src/analytics/impact.js';
import { prop } from '../helpers/prop.js';

t.test('kyleLambda: hand-computed OLS slope with intercept', async (t) => {
  // q = [1, 2, 3, 4] (q̄ = 2.5), Δp = [0.1, 0.3, 0.4, 0.6] (mean 0.35)
  // q - q̄ = [-1.5, -0.5, 0.5, 1.5]; Δp - mean = [-0.25, -0.05, 0.05, 0.25]
  // Σ cross = 0.375 + 0.025 + 0.025 + 0.375 = 0.8; Σ (q - q̄)² = 2.25 + 0.25 + 0.25 + 2.25 = 5
  // λ = 0.8 / 5 = 0.16   (through the origin it would be Σqp/Σq² = 4.3/30 ≈ 0.143: intercept matters)
  const l = kyleLambda([0.1, 0.3, 0.4, 0.6], [1, 2, 3, 4]);
  t.ok(l !== null && Math.abs(l - 0.16) < 1e-9, `got ${l}`);
});

t.test('kyleLambda: undefined cases', async (t) => {
  t.equal(kyleLambda([0.1, 0.2], [1, 2]), null, 'fewer than 3 points');
  t.equal(kyleLambda([0.1, 0.2, 0.3], [5, 5, 5]), null, 'zero variance of q');
  t.throws(() => kyleLambda([1, 2, 3], [1, 2]));
});

t.test('kyleLambda: recovers exact linear impact', async (t) => {
  prop(
    t,
    fc.property(
      fc.integer({ min: -50, max: 50 }),
      fc.integer({ min: -50, max: 50 }),
      fc.uniqueArray(fc.integer({ min: -100, max: 100 }), { minLength: 3, maxLength: 20 }),
      (a, lam100, qs) => {
        const lam = lam100 / 100;
        const l = kyleLambda(
          qs.map((q) => a + lam * q),
          qs,
        );
        return l !== null && Math.abs(l - lam) < 1e-9;
      },
    ),
  );
});
