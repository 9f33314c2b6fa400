// profit_curve censoring on hand-made paths: a sold-out session hides demand above the stock.
import t from 'tap';
import { profitCurve, simulatePosition } from '../../src/engine/index.js';

// c = 10.00, p = 15.00, fee 0.30, holding 0.02 per unit and session; no regime.
const terms = {
  unitCostCents: 1000,
  listPriceCents: 1500,
  feeCents: 30,
  holdingCents: 2,
  regime: false,
  extraCostFrac: 0,
  flatExtraCostCents: 0,
};

t.test('never sold out: every volume up to max_qty is known', async (t) => {
  const demand = [1, 1, 1, 0, 0, 0, 0, 0];
  const exec = simulatePosition({ ...terms, qty: 5, demand });
  // left before each session 5,4,3,2,2,2,2,2 -> holding 22 * 2
  t.equal(exec.revenue_cents, 4500);
  t.equal(exec.holding_cost_cents, 44);
  t.equal(exec.realized_pnl_cents, 4500 - 5150 - 44);
  t.notOk(exec.censored);
  const c = profitCurve({ ...terms, demand }, 5, 10);
  t.equal(c.known_up_to_qty, 10);
  t.equal(c.profit_curve_cents.length, 10);
  t.ok(c.profit_curve_cents.every((x) => x !== null));
  // q = 1: sells in session 1, holding 1*2 -> 1500 - 1030 - 2
  t.equal(c.profit_curve_cents[0], 468);
  // q = 3: sells out in session 3 exactly (3 = total demand): 4500 - 3090 - (3+2+1)*2
  t.equal(c.profit_curve_cents[2], 4500 - 3090 - 12);
  // q = 10: still 3 sold; holding (10+9+8+7*5)*2 = 124
  t.equal(c.profit_curve_cents[9], 4500 - 10300 - 124);
  t.equal(c.profit_curve_cents[4], exec.realized_pnl_cents);
});

t.test('sold out: volumes above the executed one are unknown', async (t) => {
  const demand = [2, 5, 0, 0, 0, 0, 0, 0];
  const exec = simulatePosition({ ...terms, qty: 3, demand });
  t.same(exec.sales_by_tick, [2, 1, 0, 0, 0, 0, 0, 0]);
  t.ok(exec.sold_out);
  t.ok(exec.censored, 'session 2 sold the last unit: its demand is only known to be >= 1');
  const c = profitCurve({ ...terms, demand }, 3, 8);
  t.equal(c.known_up_to_qty, 3);
  t.same(c.profit_curve_cents.slice(3), [null, null, null, null, null]);
  // q = 1: sold in session 1; q = 2: both in session 1
  t.equal(c.profit_curve_cents[0], 1500 - 1030 - 2);
  t.equal(c.profit_curve_cents[1], 3000 - 2060 - 4);
  t.equal(c.profit_curve_cents[2], exec.realized_pnl_cents);
  t.equal(exec.realized_pnl_cents, 4500 - 3090 - (3 + 1) * 2);
});

t.test('demand exactly equal to the stock counts as censored', async (t) => {
  const demand = [0, 4, 9, 0, 0, 0, 0, 0];
  const c = profitCurve({ ...terms, demand }, 4, 12);
  t.equal(c.known_up_to_qty, 4, 'sold 4 of 4 in session 2: demand there may have been higher');
  t.equal(c.profit_curve_cents[4], null);
});

t.test('executed at max_qty: the whole curve is known either way', async (t) => {
  const demand = [9, 9, 9, 9, 9, 9, 9, 9];
  const c = profitCurve({ ...terms, demand }, 6, 6);
  t.equal(c.known_up_to_qty, 6);
  t.ok(c.profit_curve_cents.every((x) => x !== null));
});

t.test('regime: surcharge at every volume, demand collapsed', async (t) => {
  const demand = [1, 0, 0, 0, 0, 0, 0, 0];
  const r = { ...terms, regime: true, extraCostFrac: 0.1, flatExtraCostCents: 250 };
  const c = profitCurve({ ...r, demand }, 2, 4);
  t.equal(c.known_up_to_qty, 4);
  // q = 2: 1 sold; holding (2 + 1*7)*2 = 18; surcharge 2000*0.1 + 250 = 450
  t.equal(c.profit_curve_cents[1], 1500 - 2060 - 18 - 450);
  const four = simulatePosition({ ...r, qty: 4, demand });
  t.equal(four.surcharge_cents, 400 + 250);
  t.equal(four.writeoff_cents, 3000);
});
