import t from 'tap';
import fc from 'fast-check';
import { project, cashPnl, type ProjectionInput } from '../../src/analytics/projection.js';
import { simulatePosition } from '../../src/engine/index.js';
import { prop } from '../helpers/prop.js';

const input: ProjectionInput = {
  history: [
    { tick: 10, velocity: 1, sold: 3, active: 3 },
    { tick: 11, velocity: 1, sold: 4, active: 4 },
  ],
  fit: 'mean',
  horizon: 2,
  unitCost: 5,
  listPrice: 10,
  feePerUnit: 1,
  holdingPerUnit: 0.5,
  maxQty: 2,
  scenarios: { low_mult: 0.5, high_mult: 2 },
};

t.test('project: hand-computed 2-qty curve', async (t) => {
  const p = project(input);
  // mean fit of velocities 1, 1 -> intercept 1, projection [1, 1]
  t.same(p.fit, { kind: 'mean', intercept: 1, slope: 0, r2: 0, points: 2 });
  t.same(p.projection, [1, 1]);
  t.same(p.qty, [1, 2]);
  // Engine convention (src/engine/accounting.ts stepPosition): each session charges holding on
  // the units held when it starts, before its sales. cost basis q·(5 + 1) = 6q. mid path d = [1, 1]:
  //  q=1: s1 hold 1·0.5, sell 1 (rev 10), left 0; s2 holds nothing -> 10 - 6 - 0.5 = 3.5
  //  q=2: s1 hold 2·0.5 = 1, sell 1 (rev 10), left 1; s2 hold 0.5, sell 1 (rev 20) -> 20 - 12 - 1.5 = 6.5
  t.same(p.curve.mid, [3.5, 6.5]);
  // low path d = [0.5, 0.5]:
  //  q=1: s1 hold 0.5, sell 0.5 (rev 5), left 0.5; s2 hold 0.25, sell 0.5 (rev 10) -> 10 - 6 - 0.75 = 3.25
  //  q=2: s1 hold 1, sell 0.5 (rev 5), left 1.5; s2 hold 0.75, sell 0.5 (rev 10) -> 10 - 12 - 1.75 = -3.75
  t.same(p.curve.low, [3.25, -3.75]);
  // high path d = [2, 2]: q=1: s1 hold 0.5, sell 1 -> 10 - 6 - 0.5 = 3.5; q=2: s1 hold 1, sells both
  //  (rev 20) -> 20 - 12 - 1 = 7
  t.same(p.curve.high, [3.5, 7]);
  t.equal(p.best_qty, 2);
  t.same(p.scenarios, { low_mult: 0.5, high_mult: 2 });
});

t.test(
  'project: trend fit on x = sessions before the last close, extended to x = -1..-horizon',
  async (t) => {
    // ticks 8, 9, 10 with velocity 1, 2, 3 -> x = 2, 1, 0 -> y = 3 - x (slope -1, intercept 3)
    // future x = -1, -2, -3 -> 4, 5, 6
    const h = [8, 9, 10].map((tick, i) => ({ tick, velocity: i + 1, sold: 0, active: 1 }));
    const p = project({ ...input, history: h, fit: 'trend', horizon: 3 });
    t.ok(Math.abs(p.fit.slope + 1) < 1e-9 && Math.abs(p.fit.intercept - 3) < 1e-9);
    t.ok(
      p.projection.every((v, k) => Math.abs(v - (4 + k)) < 1e-9),
      `projection ${p.projection}`,
    );
    // a falling trend is clamped at zero sales
    const down = project({
      ...input,
      history: h.map((r) => ({ ...r, velocity: 4 - r.velocity })),
      fit: 'trend',
      horizon: 3,
    });
    // y = 1 + x -> x=-1: 0, x=-2: -1 -> 0, x=-3 -> 0
    t.same(
      down.projection.map((v) => (Math.abs(v) < 1e-9 ? 0 : v)),
      [0, 0, 0],
    );
    // lead 1: sales start one session after the next close -> x = -2, -3, -4 -> 5, 6, 7
    const led = project({ ...input, history: h, fit: 'trend', horizon: 3, lead: 1 });
    t.ok(
      led.projection.every((v, k) => Math.abs(v - (5 + k)) < 1e-9),
      `lead projection ${led.projection}`,
    );
  },
);

t.test('project: ties go to the smallest qty; no qty -> null', async (t) => {
  // force a tie: list price = cost + fee (6), no holding, demand [1,1,1] sells all 3 units
  // -> pnl = 6q - 6q = 0 for every qty -> best is the smallest, 1
  const p = project({ ...input, listPrice: 6, holdingPerUnit: 0, maxQty: 3, horizon: 3 });
  t.same(p.curve.mid, [0, 0, 0]);
  t.equal(p.best_qty, 1);
  t.equal(project({ ...input, maxQty: 0 }).best_qty, null);
});

t.test('cashPnl: zero demand costs basis plus holding every session', async (t) => {
  prop(
    t,
    fc.property(
      fc.integer({ min: 1, max: 50 }),
      fc.integer({ min: 0, max: 8 }),
      fc.integer({ min: 1, max: 10_000 }),
      fc.integer({ min: 0, max: 500 }),
      fc.integer({ min: 0, max: 100 }),
      (q, n, c100, f100, h100) => {
        const [c, f, h] = [c100 / 100, f100 / 100, h100 / 100];
        const pnl = cashPnl(q, Array(n).fill(0), c, 99, f, h);
        return Math.abs(pnl - -(q * c + q * f + q * h * n)) < 0.0051;
      },
    ),
  );
});

t.test('project: best_qty is an argmax of the mid curve', async (t) => {
  prop(
    t,
    fc.property(
      fc.array(fc.double({ min: 0, max: 5, noNaN: true }), { minLength: 1, maxLength: 10 }),
      fc.integer({ min: 1, max: 12 }),
      (vs, maxQty) => {
        const history = vs.map((velocity, i) => ({ tick: i, velocity, sold: 0, active: 1 }));
        const p = project({ ...input, history, fit: 'trend', horizon: 8, maxQty });
        const best = Math.max(...p.curve.mid);
        return (
          p.best_qty !== null &&
          p.curve.mid[p.best_qty - 1] === best &&
          p.curve.mid.indexOf(best) === p.best_qty - 1
        );
      },
    ),
  );
});

t.test(
  'cashPnl equals the engine (simulatePosition without surcharge) on integer demand paths',
  async (t) => {
    prop(
      t,
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 0, maxLength: 8 }),
        fc.integer({ min: 1, max: 500_000 }),
        fc.integer({ min: 1, max: 800_000 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 0, max: 200 }),
        (qty, demand, c, p, f, h) => {
          const engine = simulatePosition({
            qty,
            unitCostCents: c,
            listPriceCents: p,
            feeCents: f,
            holdingCents: h,
            demand,
            regime: false,
            extraCostFrac: 0,
            flatExtraCostCents: 0,
          });
          return (
            cashPnl(qty, demand, c / 100, p / 100, f / 100, h / 100) ===
            engine.realized_pnl_cents / 100
          );
        },
      ),
    );
  },
);

t.test(
  'cashPnl charges holding on the units held before the session sells (one hand-checked path)',
  async (t) => {
    // q=3, demand [2, 5]: s1 holds 3 (3·0.01), sells 2; s2 holds 1 (0.01), sells 1.
    // revenue 3·10 = 30; basis 3·(5 + 0.3) = 15.9; holding 0.04 -> 14.06
    t.equal(cashPnl(3, [2, 5], 5, 10, 0.3, 0.01), 14.06);
    const engine = simulatePosition({
      qty: 3,
      unitCostCents: 500,
      listPriceCents: 1000,
      feeCents: 30,
      holdingCents: 1,
      demand: [2, 5],
      regime: false,
      extraCostFrac: 0,
      flatExtraCostCents: 0,
    });
    t.equal(engine.realized_pnl_cents, 1406);
  },
);
