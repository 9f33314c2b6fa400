// SPEC.md "Cash accounting" as properties over random positions and demand paths.
import fc from 'fast-check';
import t from 'tap';
import {
  type SettledPosition,
  type SimulateInput,
  fractionOfCents,
  openPosition,
  pnlSoFarCents,
  profitCurve,
  settlePosition,
  simulatePosition,
  stepPosition,
} from '../../src/engine/index.js';

const input = fc.record({
  qty: fc.integer({ min: 1, max: 120 }),
  unitCostCents: fc.integer({ min: 1, max: 5_000_000 }),
  listPriceCents: fc.integer({ min: 1, max: 8_000_000 }),
  feeCents: fc.integer({ min: 0, max: 500 }),
  holdingCents: fc.integer({ min: 0, max: 200 }),
  regime: fc.boolean(),
  extraCostFrac: fc.integer({ min: 0, max: 5000 }).map((x) => x / 10000),
  flatExtraCostCents: fc.integer({ min: 0, max: 100_000 }),
  demand: fc.array(fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 200 })), {
    minLength: 8,
    maxLength: 8,
  }),
}) satisfies fc.Arbitrary<SimulateInput>;

/** Round half-up of q*c*frac + flat, computed independently in BigInt. */
function expectedSurcharge(i: SimulateInput): number {
  if (!i.regime) return 0;
  const num = BigInt(i.qty) * BigInt(i.unitCostCents) * BigInt(Math.round(i.extraCostFrac * 10000));
  return Number((num + 5000n) / 10000n) + i.flatExtraCostCents;
}

t.test('cash identities of the SPEC table', async (t) => {
  fc.assert(
    fc.property(input, (i) => {
      const r: SettledPosition = simulatePosition(i);
      const q = i.qty;
      let left = q;
      let holding = 0;
      for (let k = 0; k < i.demand.length; k++) {
        if (r.sales_by_tick[k] !== Math.min(i.demand[k], left)) return false;
        holding += left * i.holdingCents;
        left -= r.sales_by_tick[k];
      }
      return (
        r.units_sold + r.qty_left === q &&
        r.units_sold === r.sales_by_tick.reduce((a, b) => a + b, 0) &&
        r.revenue_cents === r.units_sold * i.listPriceCents &&
        r.cost_basis_cents === q * i.unitCostCents + q * i.feeCents &&
        r.holding_cost_cents === holding &&
        r.writeoff_cents === r.qty_left * i.unitCostCents &&
        r.surcharge_cents === expectedSurcharge(i) &&
        (i.regime || r.surcharge_cents === 0) &&
        r.realized_pnl_cents ===
          r.revenue_cents - r.cost_basis_cents - r.holding_cost_cents - r.surcharge_cents &&
        r.sold_out === (r.qty_left === 0) &&
        r.ticks_done === 8 &&
        Number.isSafeInteger(r.realized_pnl_cents)
      );
    }),
    { numRuns: 2000 },
  );
  t.pass('2000 random positions');
});

t.test('stepping session by session equals simulating at once', async (t) => {
  fc.assert(
    fc.property(input, (i) => {
      let st = openPosition(i);
      for (const d of i.demand) {
        const next = stepPosition(st, d);
        const sold = next.units_sold - st.units_sold;
        // pnl so far moves by this session's sales less this session's carry.
        if (
          pnlSoFarCents(next) - pnlSoFarCents(st) !==
          sold * i.listPriceCents - st.qty_left * i.holdingCents
        )
          return false;
        st = next;
      }
      const stepped = settlePosition(st, i);
      return (
        JSON.stringify(stepped) === JSON.stringify(simulatePosition(i)) &&
        stepped.realized_pnl_cents === pnlSoFarCents(st) - stepped.surcharge_cents
      );
    }),
    { numRuns: 1000 },
  );
  t.pass('1000 random positions');
});

t.test('stepping leaves the previous state untouched', async (t) => {
  const a = openPosition({
    qty: 4,
    unitCostCents: 100,
    listPriceCents: 150,
    feeCents: 3,
    holdingCents: 1,
  });
  const b = stepPosition(a, 3);
  t.same(a.sales_by_tick, []);
  t.equal(a.qty_left, 4);
  t.same(b.sales_by_tick, [3]);
  t.throws(() => stepPosition(b, -1));
  t.throws(() => stepPosition(b, 1.5));
});

t.test('profit curve agrees with simulating each volume', async (t) => {
  fc.assert(
    fc.property(input, fc.integer({ min: 1, max: 60 }), (i, maxQty) => {
      const exec = Math.min(i.qty, maxQty);
      const { qty: _q, ...terms } = i;
      const c = profitCurve(terms, exec, maxQty);
      if (c.profit_curve_cents.length !== maxQty) return false;
      const executed = simulatePosition({ ...i, qty: exec });
      if (c.known_up_to_qty !== (executed.censored ? exec : maxQty)) return false;
      if (c.profit_curve_cents[exec - 1] !== executed.realized_pnl_cents) return false;
      return c.profit_curve_cents.every((p, k) =>
        k + 1 <= c.known_up_to_qty
          ? p === simulatePosition({ ...i, qty: k + 1 }).realized_pnl_cents
          : p === null,
      );
    }),
    { numRuns: 500 },
  );
  t.pass('500 random curves');
});

t.test('fractionOfCents rounds half up exactly', async (t) => {
  t.equal(fractionOfCents(1, 0.5), 1); // 0.5 -> 1
  t.equal(fractionOfCents(3, 0.5), 2); // 1.5 -> 2
  t.equal(fractionOfCents(1000, 0.1234), 123); // 123.4 -> 123
  t.equal(fractionOfCents(1005, 0.1), 101); // 100.5 -> 101 (float 1005*0.1 = 100.49999...)
  t.equal(fractionOfCents(0, 0.3), 0);
});
