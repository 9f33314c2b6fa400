// How similar deals ended (src/analytics/similar-deals.ts): how many lost money, the
// median and worst result per unit, and how many fell below the low scenario the projection would
// have given them at their own session; hand cases and properties.
import t from 'tap';
import fc from 'fast-check';
import {
  belowLowScenario,
  lowPathAt,
  settledBy,
  settledResults,
  type SettledDeal,
} from '../../src/analytics/similar-deals.js';
import { cashPnl, project, scenariosFrom } from '../../src/analytics/projection.js';
import { prop } from '../helpers/prop.js';

const deal = (d: Partial<SettledDeal>): SettledDeal => ({
  tick: 20,
  horizon: 2,
  qty: 1,
  unitsSold: 1,
  unitCostCents: 500,
  listPriceCents: 1000,
  feeCents: 100,
  holdingCents: 50,
  pnlCents: 0,
  ...d,
});

t.test(
  'settledResults: lost, median and worst per unit, by hand; none without a settled deal',
  async (t) => {
    t.same(settledResults([]), {
      settled: 0,
      lost: 0,
      median_pnl_per_unit: null,
      worst_pnl_per_unit: null,
    });
    // per unit: -100, 150, -100 cents -> sorted -100, -100, 150
    t.same(
      settledResults([
        { qty: 1, pnlCents: -100 },
        { qty: 2, pnlCents: 300 },
        { qty: 4, pnlCents: -400 },
      ]),
      { settled: 3, lost: 2, median_pnl_per_unit: -1, worst_pnl_per_unit: -1 },
    );
    // even count: the mean of the two middle ones (-1 and 2 cents: 0.5 cent), rounded half away from zero
    t.same(
      settledResults([
        { qty: 1, pnlCents: -1 },
        { qty: 1, pnlCents: 2 },
      ]),
      { settled: 2, lost: 1, median_pnl_per_unit: 0.01, worst_pnl_per_unit: -0.01 },
    );
    t.same(
      settledResults([{ qty: 3, pnlCents: -100 }]).worst_pnl_per_unit,
      -0.33,
      'a third of a dollar, to the cent',
    );
    t.equal(settledResults([{ qty: 1, pnlCents: 0 }]).lost, 0, 'breaking even is not a loss');
  },
);

const results = fc.array(
  fc.record({
    qty: fc.integer({ min: 1, max: 50 }),
    pnlCents: fc.integer({ min: -1_000_000, max: 1_000_000 }),
  }),
  { maxLength: 40 },
);

t.test('settledResults: properties', async (t) => {
  prop(
    t,
    fc.property(results, (ds) => {
      const r = settledResults(ds);
      if (r.settled !== ds.length || r.lost !== ds.filter((d) => d.pnlCents < 0).length)
        return false;
      if (!ds.length) return r.median_pnl_per_unit === null && r.worst_pnl_per_unit === null;
      const per = ds.map((d) => d.pnlCents / d.qty / 100);
      const [lo, hi] = [Math.min(...per), Math.max(...per)];
      const cent = 0.005 + 1e-9;
      // the worst is the lowest result, to the cent; the median lies between the lowest and the highest
      return (
        Math.abs(r.worst_pnl_per_unit! - lo) <= cent &&
        r.worst_pnl_per_unit! <= r.median_pnl_per_unit! &&
        r.median_pnl_per_unit! <= hi + cent
      );
    }),
  );
  prop(
    t,
    fc.property(
      results,
      (ds) =>
        JSON.stringify(settledResults(ds)) === JSON.stringify(settledResults([...ds].reverse())),
    ),
  );
});

t.test(
  'settledBy: the deals filled in the lookback and settled by the open (filled at t, settled at the close of t + horizon)',
  async (t) => {
    const ds = [deal({ tick: 10 }), deal({ tick: 12 }), deal({ tick: 13 }), deal({ tick: 5 })];
    // open 15, lookback 8: filled 7..14, settled by the close of 14: tick + 2 <= 14
    t.same(
      settledBy(ds, 15, 8).map((d) => d.tick),
      [10, 12],
    );
  },
);

t.test('belowLowScenario: by hand', async (t) => {
  // mean fit of velocity 1 over the sessions before each deal, lead 0: the path is [1, 1]; fewer
  // than 5 settled deals: the default low_mult 0.5 -> low path [0.5, 0.5]. One unit at cost 5, fee
  // 1, holding 0.5, price 10: session 1 holds 1 (0.50), sells 0.5 (5.00); session 2 holds 0.5
  // (0.25), sells 0.5 (5.00): 10 - 6 - 0.75 = 3.25 USD.
  const history = [8, 9, 10, 11, 12].map((tick) => ({ tick, velocity: 1, sold: 2, active: 2 }));
  const input = { history, from: 11, lookback: 4, fit: 'mean' as const, lead: 0 };
  t.same(lowPathAt({ ...input, settled: [] }, 12, 2), [0.5, 0.5]);
  t.equal(cashPnl(1, [0.5, 0.5], 5, 10, 1, 0.5), 3.25);
  const settled = [
    deal({ tick: 11, pnlCents: 324 }),
    deal({ tick: 12, pnlCents: 325 }),
    deal({ tick: 12, pnlCents: -600 }),
    deal({ tick: 10, pnlCents: -600 }),
  ];
  t.same(
    belowLowScenario({ ...input, settled }),
    { settled: 3, below_low: 2, below_low_rate: 0.6667 },
    'the deal before `from` is not checked; 3.25 itself is not below',
  );
  t.same(belowLowScenario({ ...input, settled: [] }), {
    settled: 0,
    below_low: 0,
    below_low_rate: null,
  });
});

const calibrationInput = fc.record({
  history: fc
    .uniqueArray(
      fc.record({
        tick: fc.integer({ min: 0, max: 40 }),
        sold: fc.integer({ min: 0, max: 20 }),
        active: fc.integer({ min: 1, max: 5 }),
      }),
      { selector: (r) => r.tick, maxLength: 40 },
    )
    .map((rs) => rs.map((r) => ({ ...r, velocity: r.sold / r.active }))),
  settled: fc.array(
    fc
      .record({
        tick: fc.integer({ min: 0, max: 40 }),
        horizon: fc.integer({ min: 1, max: 8 }),
        qty: fc.integer({ min: 1, max: 12 }),
        sold: fc.integer({ min: 0, max: 12 }),
        unitCostCents: fc.integer({ min: 1, max: 5000 }),
        listPriceCents: fc.integer({ min: 1, max: 9000 }),
        feeCents: fc.integer({ min: 0, max: 300 }),
        holdingCents: fc.integer({ min: 0, max: 100 }),
        pnlCents: fc.integer({ min: -100_000, max: 100_000 }),
      })
      .map(({ sold, ...d }) => ({ ...d, unitsSold: Math.min(sold, d.qty) })),
    { maxLength: 30 },
  ),
  from: fc.integer({ min: 10, max: 30 }),
  lookback: fc.integer({ min: 8, max: 20 }),
  fit: fc.constantFrom('trend' as const, 'mean' as const),
  lead: fc.integer({ min: 0, max: 2 }),
});

t.test('belowLowScenario: properties', async (t) => {
  // Bounds: every deal filled from `from` on is checked, once.
  prop(
    t,
    fc.property(calibrationInput, (c) => {
      const r = belowLowScenario(c);
      return (
        r.settled === c.settled.filter((d) => d.tick >= c.from).length &&
        r.below_low >= 0 &&
        r.below_low <= r.settled
      );
    }),
  );
  // The low scenario lies between selling nothing and selling everything in the first session.
  prop(
    t,
    fc.property(calibrationInput, (c) => {
      const floor = (d: SettledDeal) =>
        -d.qty * (d.unitCostCents + d.feeCents) - d.qty * d.holdingCents * d.horizon;
      const ceiling = (d: SettledDeal) =>
        d.qty * (d.listPriceCents - d.unitCostCents - d.feeCents) - d.qty * d.holdingCents;
      const under = belowLowScenario({
        ...c,
        settled: c.settled.map((d) => ({ ...d, pnlCents: floor(d) - 1 })),
      });
      const over = belowLowScenario({
        ...c,
        settled: c.settled.map((d) => ({ ...d, pnlCents: ceiling(d) })),
      });
      return under.below_low === under.settled && over.below_low === 0;
    }),
  );
  // Worse results are never fewer below: the low paths come from sales, not from results.
  prop(
    t,
    fc.property(calibrationInput, fc.integer({ min: 0, max: 50_000 }), (c, cut) => {
      const worse = belowLowScenario({
        ...c,
        settled: c.settled.map((d) => ({ ...d, pnlCents: d.pnlCents - cut })),
      });
      return worse.below_low >= belowLowScenario(c).below_low;
    }),
  );
  // The low scenario checked is the one project() gives a deal of that session (one definition).
  prop(
    t,
    fc.property(calibrationInput, (c) =>
      c.settled
        .filter((d) => d.tick >= c.from)
        .every((d) => {
          const history = c.history.filter((r) => r.tick >= d.tick - c.lookback && r.tick < d.tick);
          const { scenarios } = scenariosFrom(
            settledBy(c.settled, d.tick, c.lookback).map((s) => s.unitsSold / s.horizon),
          );
          const p = project({
            history,
            fit: c.fit,
            horizon: d.horizon,
            lastTick: d.tick - 1,
            lead: c.lead,
            unitCost: d.unitCostCents / 100,
            listPrice: d.listPriceCents / 100,
            feePerUnit: d.feeCents / 100,
            holdingPerUnit: d.holdingCents / 100,
            maxQty: d.qty,
            scenarios,
          });
          const low = Math.round(p.curve.low[d.qty - 1] * 100);
          // Only `d` can be below: the others' results raised out of reach (their sales still count).
          const alone = belowLowScenario({
            ...c,
            settled: c.settled.map((x) =>
              x === d ? x : { ...x, pnlCents: Number.MAX_SAFE_INTEGER },
            ),
          });
          return alone.below_low === (d.pnlCents < low ? 1 : 0);
        }),
    ),
  );
});

t.test(
  'scenariosFrom: defaults under 5 settled deals or a zero median; clamped multipliers otherwise',
  async (t) => {
    t.same(scenariosFrom([1, 1, 1, 1]).scenarios, {
      low_mult: 0.5,
      high_mult: 1.5,
      basis: 'default',
    });
    t.same(scenariosFrom([0, 0, 0, 0, 0, 1]).scenarios.basis, 'default');
    t.same(scenariosFrom([1, 2, 3, 4, 5]).scenarios, {
      low_mult: 0.4667,
      high_mult: 1.5333,
      basis: 'per_deal_velocity',
    });
  },
);
