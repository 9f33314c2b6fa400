import t from 'tap';
import fc from 'fast-check';
import { syntheticBook, type BookInput } from '../../src/analytics/book.js';
import { prop } from '../helpers/prop.js';

const base: BookInput = {
  mid: 10,
  spread: 0.5,
  spreadMethod: 'roll',
  step: 0.25,
  levels: 3,
  depthUnits: [4, 6],
  buyVolume: 30,
  sellVolume: 10,
  priceImpact: 0.01,
  listed: 12,
  listedLow: 8.004,
  listedHigh: 12.005,
  tick: 77,
};

t.test('syntheticBook: hand-computed', async (t) => {
  const b = syntheticBook(base);
  // best bid/ask = 10 ∓ 0.25; levels step 0.25 away
  t.equal(b.best_bid, 9.75);
  t.equal(b.best_ask, 10.25);
  t.equal(b.spread, 0.5);
  t.same(
    b.bids.map((l) => l.price),
    [9.75, 9.5, 9.25],
  );
  t.same(
    b.asks.map((l) => l.price),
    [10.25, 10.5, 10.75],
  );
  // base = (4 + 6)/2 = 5; bid share = 30/40 = 0.75 -> size0 = 2·0.75·5 = 7.5; ask size0 = 2·0.25·5 = 2.5
  // decay 0.8: bids 7.5, 6, 4.8 (cum 7.5, 13.5, 18.3); asks 2.5, 2, 1.6 (cum 2.5, 4.5, 6.1)
  t.same(
    b.bids.map((l) => [l.size, l.cum]),
    [
      [7.5, 7.5],
      [6, 13.5],
      [4.8, 18.3],
    ],
  );
  t.same(
    b.asks.map((l) => [l.size, l.cum]),
    [
      [2.5, 2.5],
      [2, 4.5],
      [1.6, 6.1],
    ],
  );
  t.equal(b.depth, 24.4);
  // imbalance = (18.3 - 6.1) / 24.4 = 0.5 (positive: buy volume dominates)
  t.ok(Math.abs(b.imbalance - 0.5) < 1e-9);
  t.match(b, {
    mid: 10,
    spread_method: 'roll',
    tick: 77,
    buy_volume: 30,
    sell_volume: 10,
    price_impact: 0.01,
    listed: 12,
    listed_low: 8,
    listed_high: 12.01,
  });
});

t.test('syntheticBook: imbalance sign and empty book', async (t) => {
  t.ok(syntheticBook({ ...base, buyVolume: 5, sellVolume: 20 }).imbalance < 0);
  t.equal(syntheticBook({ ...base, buyVolume: 0, sellVolume: 0 }).imbalance, 0, 'even split');
  const empty = syntheticBook({ ...base, depthUnits: [] });
  t.equal(empty.imbalance, 0);
  t.equal(empty.depth, 0);
});

t.test('syntheticBook: tiny spread still straddles mid by a cent', async (t) => {
  const b = syntheticBook({ ...base, spread: 0.001 });
  t.equal(b.best_bid, 9.99);
  t.equal(b.best_ask, 10.01);
  t.equal(b.spread, 0.02);
});

t.test('syntheticBook: bid levels at or below zero are dropped', async (t) => {
  const b = syntheticBook({ ...base, mid: 0.6, spread: 0.2, step: 0.25, levels: 5 });
  t.same(
    b.bids.map((l) => l.price),
    [0.5, 0.25],
  );
  t.equal(b.asks.length, 5);
});

t.test(
  'syntheticBook properties: cum non-decreasing, bid < mid < ask, prices ordered',
  async (t) => {
    prop(
      t,
      fc.property(
        fc.double({ min: 0.05, max: 1000, noNaN: true }),
        fc.double({ min: 0, max: 20, noNaN: true }),
        fc.double({ min: 0.06, max: 10, noNaN: true }),
        fc.integer({ min: 0, max: 12 }),
        fc.array(fc.double({ min: 0, max: 500, noNaN: true }), { maxLength: 10 }),
        fc.double({ min: 0, max: 1e4, noNaN: true }),
        fc.double({ min: 0, max: 1e4, noNaN: true }),
        (mid, spread, step, levels, depthUnits, buyVolume, sellVolume) => {
          const b = syntheticBook({
            ...base,
            mid,
            spread,
            step,
            levels,
            depthUnits,
            buyVolume,
            sellVolume,
          });
          const mono = (ls: { cum: number; size: number }[]) =>
            ls.every((l, i) => l.size >= 0 && (i === 0 || l.cum >= ls[i - 1].cum));
          const ordered =
            b.bids.every((l, i) => i === 0 || l.price < b.bids[i - 1].price) &&
            b.asks.every((l, i) => i === 0 || l.price > b.asks[i - 1].price);
          return (
            mono(b.bids) &&
            mono(b.asks) &&
            ordered &&
            b.best_bid < b.mid &&
            b.mid < b.best_ask &&
            b.imbalance >= -1 &&
            b.imbalance <= 1
          );
        },
      ),
    );
  },
);
