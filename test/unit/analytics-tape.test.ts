import t from 'tap';
import {
  bookFromTape,
  orderedTapeRow,
  rate,
  settledTapeFields,
  TAPE_FIELDS,
  type BookTapeRow,
} from '../../src/analytics/tape.js';

t.test('rate: 4 decimals, null without a denominator', async (t) => {
  t.equal(rate(1, 3), 0.3333);
  t.equal(rate(2, 3), 0.6667);
  t.equal(rate(0, 5), 0);
  t.equal(rate(3, 0), null);
});

t.test('orderedTapeRow: SPEC order, missing fields null, non-numbers null', async (t) => {
  const stored = { decliners: 2, price_open: 1.5, vwap: null, extra: 9, units: '3' };
  const row = orderedTapeRow(stored);
  t.same(Object.keys(row), [...TAPE_FIELDS]);
  t.equal(row.price_open, 1.5);
  t.equal(row.decliners, 2);
  t.equal(row.vwap, null);
  t.equal(row.units, null, 'a string is not served as a number');
  t.notOk('extra' in row);
  t.equal(TAPE_FIELDS.length, 30, 'every tape field of SPEC.md');
});

t.test('settledTapeFields: cents to 2 decimals and rates', async (t) => {
  const f = settledTapeFields({
    housePnlCents: -12345,
    holderPnlCents: 7,
    settled: 8,
    profitable: 5,
    downside: 1,
    menuRows: 40,
    executedRows: 9,
  });
  t.same(f, {
    desk_pnl: -123.45,
    holder_pnl: 0.07,
    profitable_rate: 0.625,
    downside_rate: 0.125,
    exec_rate: 0.225,
  });
  const none = settledTapeFields({
    housePnlCents: 0,
    holderPnlCents: 0,
    settled: 0,
    profitable: 0,
    downside: 0,
    menuRows: 3,
    executedRows: 0,
  });
  t.same(none, {
    desk_pnl: 0,
    holder_pnl: 0,
    profitable_rate: null,
    downside_rate: null,
    exec_rate: 0,
  });
});

const row = (
  tick: number,
  close: number | null,
  units: number,
  sold: number,
  hi = close,
  lo = close,
): BookTapeRow => ({
  tick,
  price_close: close,
  price_high: hi,
  price_low: lo,
  units,
  sold,
});
const opts = {
  step: 1,
  levels: 3,
  floorFrac: 0.01,
  tick: 50,
  listed: { n: 4, low: 9.5, high: 12.25 },
};

t.test('bookFromTape: Roll spread on bouncing closes, volumes, Kyle lambda by hand', async (t) => {
  // Closes bounce 10, 11, 10, 11: changes +1, -1, +1 (mean 1/3): centred (2/3, -4/3, 2/3);
  // lag-1 autocovariance = (2/3·-4/3 + -4/3·2/3) / 3 = -16/27 -> Roll = 2·sqrt(16/27) = 1.5396
  const rows = [row(1, 10, 2, 1), row(2, 11, 4, 1), row(3, 10, 1, 3), row(4, 11, 5, 0)];
  const b = bookFromTape(rows, opts)!;
  t.equal(b.mid, 11);
  t.equal(b.spread_method, 'roll');
  t.ok(Math.abs(b.spread - 1.54) <= 0.011, `spread ${b.spread}`);
  t.ok(b.best_bid < b.mid && b.mid < b.best_ask);
  t.equal(b.buy_volume, 12, 'units executed over the window');
  t.equal(b.sell_volume, 5, 'units sold over the window');
  // flow of sessions 2..4: 3, -2, 5; price changes +1, -1, +1 -> lambda = Sxy / Sxx
  // mean flow 2: dx = 1, -4, 3 (Sxx 26); mean dp 1/3: dy = 2/3, -4/3, 2/3 -> Sxy = 2/3 + 16/3 + 2 = 8
  t.equal(b.price_impact, Number((8 / 26).toPrecision(6)));
  t.equal(b.tick, 50);
  t.same([b.listed, b.listed_low, b.listed_high], [4, 9.5, 12.25]);
  t.same(
    b.asks.map((l) => l.price),
    [b.best_ask, b.best_ask + 1, b.best_ask + 2].map((p) => Math.round(p * 100) / 100),
  );
});

t.test('bookFromTape: Corwin-Schultz when closes trend, floor when nothing else', async (t) => {
  // Steady closes (no bounce: Roll undefined) inside wide session ranges.
  const trending = [
    row(1, 10, 1, 1, 11, 9),
    row(2, 10.5, 1, 1, 11.5, 9.5),
    row(3, 11, 1, 1, 12, 10),
  ];
  const cs = bookFromTape(trending, opts)!;
  t.equal(cs.spread_method, 'corwin_schultz');
  t.ok(cs.spread > 0.11, 'above the floor');
  const flat = [row(1, 10, 1, 1), row(2, 10, 1, 1), row(3, 10, 1, 1)];
  const b = bookFromTape(flat, opts)!;
  t.equal(b.spread_method, 'floor');
  t.equal(b.spread, 0.1, 'floor = 1 % of mid 10');
  t.equal(b.price_impact, null, 'no variance in flow');
});

t.test(
  'bookFromTape: a spread wider than the mid is capped at the mid (bids stay positive)',
  async (t) => {
    // Closes bounce 10, 60, 10, 60: Roll far above the mid.
    const b = bookFromTape(
      [row(1, 10, 1, 1), row(2, 60, 1, 1), row(3, 10, 1, 1), row(4, 60, 1, 1), row(5, 10, 1, 1)],
      opts,
    )!;
    t.equal(b.spread_method, 'roll');
    t.equal(b.mid, 10);
    t.equal(b.spread, 10);
    t.same([b.best_bid, b.best_ask], [5, 15]);
    t.ok(b.bids.length === 3 && b.bids.every((l) => l.price > 0));
  },
);

t.test('bookFromTape: no priced row -> null; no listings -> null bounds', async (t) => {
  t.equal(bookFromTape([], opts), null);
  t.equal(bookFromTape([row(1, null, 3, 1)], opts), null);
  const b = bookFromTape([row(1, 5, 0, 0)], { ...opts, listed: { n: 0, low: null, high: null } })!;
  t.same([b.listed, b.listed_low, b.listed_high], [0, null, null]);
  t.equal(b.depth, 0);
  t.equal(b.imbalance, 0);
});
