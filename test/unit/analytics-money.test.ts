import t from 'tap';
import fc from 'fast-check';
import { round2, toCents } from '../../src/analytics/money.js';
import { prop } from '../helpers/prop.js';

t.test('round2: half away from zero on the decimal value', async (t) => {
  t.equal(round2(1.005), 1.01); // double is 1.00499999999999989..., decimal is 1.005
  t.equal(round2(-1.005), -1.01);
  t.equal(round2(2.675), 2.68);
  t.equal(round2(1.255), 1.26);
  t.equal(round2(0.285), 0.29);
  t.equal(round2(123456.785), 123456.79);
  t.equal(round2(1.0049), 1);
  t.equal(round2(-0.004), 0);
  t.ok(Object.is(round2(-0.001), 0), 'no negative zero');
  t.equal(round2(1e-7), 0);
  t.equal(round2(10), 10);
  t.equal(round2(0.1 + 0.2), 0.3);
  t.equal(toCents(19.995), 2000);
  t.equal(toCents(-2.675), -268);
});

t.test('round2: idempotent, within half a cent, odd', async (t) => {
  prop(
    t,
    fc.property(fc.double({ min: -1e9, max: 1e9, noNaN: true }), (x) => {
      const r = round2(x);
      return (
        round2(r) === r &&
        Math.abs(r - x) <= 0.005 + 1e-9 * (1 + Math.abs(x)) &&
        round2(-x) === (r === 0 ? 0 : -r)
      );
    }),
  );
  // every exact half-cent decimal rounds up in magnitude
  prop(
    t,
    fc.property(
      fc.integer({ min: 0, max: 10_000_000 }),
      (c) => round2(Number(`${c}.5`) / 100) === (c + 1) / 100,
    ),
  );
});
