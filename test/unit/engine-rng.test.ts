// Keyed streams: reproducible, separated by key, and with the moments their names promise.
import t from 'tap';
import { keyedStream } from '../../src/engine/index.js';

function moments(draw: () => number, n = 40_000) {
  let s = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const x = draw();
    s += x;
    s2 += x * x;
  }
  const mean = s / n;
  return { mean, variance: s2 / n - mean * mean };
}

t.test('same keys, same draws; other keys, other draws', async (t) => {
  const a = keyedStream(1, 'm15', 123, 'deal', 4);
  const b = keyedStream(1, 'm15', 123, 'deal', 4);
  const xs = Array.from({ length: 64 }, () => a.u32());
  t.same(
    Array.from({ length: 64 }, () => b.u32()),
    xs,
  );
  const firsts = new Set<number>();
  const variants = [
    keyedStream(2, 'm15', 123, 'deal', 4),
    keyedStream(1, 'm45', 123, 'deal', 4),
    keyedStream(1, 'm15', 124, 'deal', 4),
    keyedStream(1, 'm15', 123, 'deal', 5),
    keyedStream(1, 'm15', 123, 'outcome', 4),
    keyedStream(1, 'm15', '123', 'deal', 4), // a string key is not the number
    keyedStream(1, 'm15', 12, 3, 'deal', 4),
    keyedStream(1, 'm15', 123 + 2 ** 32, 'deal', 4), // high word of the tick counts
  ];
  for (const s of [keyedStream(1, 'm15', 123, 'deal', 4), ...variants]) firsts.add(s.u32());
  t.equal(firsts.size, variants.length + 1);
  t.throws(() => keyedStream(1, 0.5));
});

t.test('distributions', async (t) => {
  const s = keyedStream(42, 'moments');
  const u = moments(() => s.uniform());
  t.ok(
    Math.abs(u.mean - 0.5) < 0.01 && Math.abs(u.variance - 1 / 12) < 0.003,
    `uniform ${JSON.stringify(u)}`,
  );
  const z = moments(() => s.normal());
  t.ok(Math.abs(z.mean) < 0.02 && Math.abs(z.variance - 1) < 0.03, `normal ${JSON.stringify(z)}`);
  for (const shape of [0.5, 2.5]) {
    const g = moments(() => s.gamma(shape));
    t.ok(
      Math.abs(g.mean / shape - 1) < 0.03 && Math.abs(g.variance / shape - 1) < 0.08,
      `gamma(${shape}) ${JSON.stringify(g)}`,
    );
  }
  for (const lambda of [0.7, 6, 30, 400]) {
    const p = moments(() => s.poisson(lambda));
    t.ok(
      Math.abs(p.mean / lambda - 1) < 0.03 && Math.abs(p.variance / lambda - 1) < 0.06,
      `poisson(${lambda}) ${JSON.stringify(p)}`,
    );
  }
  const [m, r] = [4, 2];
  const nb = moments(() => s.negBinomial(m, r));
  t.ok(
    Math.abs(nb.mean / m - 1) < 0.03 && Math.abs(nb.variance / (m + (m * m) / r) - 1) < 0.08,
    `negbin ${JSON.stringify(nb)}`,
  );
  t.equal(s.negBinomial(0, 2), 0);
  let hits = 0;
  for (let i = 0; i < 20_000; i++) hits += s.bernoulli(0.3) ? 1 : 0;
  t.ok(Math.abs(hits / 20_000 - 0.3) < 0.015, 'bernoulli');
  for (let i = 0; i < 1000; i++) {
    const k = s.int(3, 7);
    if (!(Number.isInteger(k) && k >= 3 && k <= 7)) t.fail(`int out of range ${k}`);
  }
});
