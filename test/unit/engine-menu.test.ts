// Menus carry every Deal field of SPEC.md with the right type for the market's kind.
import t from 'tap';
import {
  ENGINE_IDENTITY,
  MARKET_IDS,
  MARKETS,
  type Deal,
  type MarketId,
  catalog,
  dealAt,
  dealToJson,
  isVelocityDeal,
  menu,
  menuSize,
  parseDealKey,
} from '../../src/engine/index.js';

const END = 1_760_000_000;
const SEED = 11;
const VELOCITY = ['sales_velocity', 'inverse_sv'];
const RANKING = ['sales_rank', 'sales_rank_avg', 'rank_drops', 'rank_drops_long', 'nsellers'];

function ticksOf(m: MarketId): number[] {
  const last = Math.floor(END / MARKETS[m].interval_seconds);
  return [last - 40, last - 1, last];
}

const isInt = (x: unknown) => Number.isSafeInteger(x);

t.test('every deal field present with the right type', async (t) => {
  for (const m of MARKET_IDS) {
    const spec = MARKETS[m];
    for (const tick of ticksOf(m)) {
      const deals = menu(SEED, m, tick);
      t.ok(
        deals.length >= spec.menu_size.min && deals.length <= spec.menu_size.max,
        `${m} menu size ${deals.length}`,
      );
      let prev = 0;
      for (const d of deals) {
        const bad = (why: string) => t.fail(`${m} ${d.key}: ${why}`);
        if (typeof d.key !== 'string' || d.tick !== tick) bad('key/tick');
        if (typeof d.sku_family !== 'string' || !isInt(d.cluster)) bad('family');
        const b = d.bundle;
        if (
          typeof b.title !== 'string' ||
          typeof b.unit !== 'string' ||
          typeof b.origin !== 'string'
        )
          bad('bundle');
        if (
          !b.items.length ||
          !b.items.every(
            (i) =>
              typeof i.name === 'string' &&
              isInt(i.qty) &&
              i.qty >= 1 &&
              typeof i.grade === 'string',
          )
        )
          bad('items');
        if (
          !isInt(d.unit_cost_cents) ||
          d.unit_cost_cents < 1 ||
          !isInt(d.list_price_cents) ||
          d.list_price_cents < 1
        )
          bad('prices');
        if (d.margin_cents !== d.list_price_cents - d.unit_cost_cents) bad('margin');
        if (!(d.listed_at >= 0 && d.listed_at <= 1 && d.listed_at >= prev)) bad('listed_at order');
        prev = d.listed_at;
        if (!isInt(d.max_qty) || d.max_qty < 1 || d.max_qty > spec.max_qty) bad('max_qty');
        if (typeof d.house_accepted !== 'boolean' || !isInt(d.house_qty)) bad('house');
        if (d.house_accepted !== d.house_qty > 0 || d.house_qty > d.max_qty) bad('house_qty');
        const present = (k: string) => k in d;
        if (spec.quotes_velocity) {
          if (!isVelocityDeal(d) || RANKING.some(present))
            bad('velocity market carries ranking fields');
          else if (!(d.sales_velocity > 0) || Math.abs(d.inverse_sv - 1 / d.sales_velocity) > 1e-4)
            bad('velocity');
        } else {
          if (isVelocityDeal(d) || VELOCITY.some(present))
            bad('ranking market carries velocity fields');
          else if (!RANKING.every((k) => isInt((d as unknown as Record<string, number>)[k])))
            bad('ranking fields');
          else if (
            d.sales_rank < 1 ||
            d.nsellers < 1 ||
            d.rank_drops < 0 ||
            d.rank_drops_long < d.rank_drops
          )
            bad('ranking values');
        }
      }
    }
  }
  t.pass('checked');
});

t.test('served JSON: SPEC names, 2-decimal money, no cents fields', async (t) => {
  for (const m of MARKET_IDS) {
    const d = dealAt(SEED, m, ticksOf(m)[2], 0);
    const j = dealToJson(d) as unknown as Record<string, unknown>;
    const expected = [
      'key',
      'tick',
      'sku_family',
      'cluster',
      'bundle',
      'unit_cost',
      'list_price',
      'margin',
      'listed_at',
      ...(MARKETS[m].quotes_velocity ? VELOCITY : RANKING),
      'max_qty',
      'house_accepted',
      'house_qty',
    ];
    t.same(Object.keys(j), expected, `${m} keys`);
    t.equal(j.unit_cost, d.unit_cost_cents / 100);
    t.equal(
      j.margin,
      Math.round((j.list_price as number) * 100 - (j.unit_cost as number) * 100) / 100,
    );
  }
});

t.test('keys are unique across markets and ticks and parse back', async (t) => {
  const seen = new Set<string>();
  let n = 0;
  for (const m of MARKET_IDS) {
    for (const tick of ticksOf(m)) {
      for (const d of menu(SEED, m, tick)) {
        seen.add(d.key);
        n++;
      }
    }
  }
  t.equal(seen.size, n, `${n} keys, all distinct`);
  const d = dealAt(SEED, 'h10', ticksOf('h10')[1], 5);
  t.same(parseDealKey(SEED, d.key), { market: 'h10', tick: ticksOf('h10')[1], index: 5 });
  t.equal(parseDealKey(SEED + 1, d.key), null, 'another seed never published it');
  t.equal(
    parseDealKey(
      SEED,
      d.key.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
    ),
    null,
    'tampered tag',
  );
  const n0 = menuSize(SEED, 'm15', 100);
  t.equal(parseDealKey(SEED, `m15-100-${n0}-000000`), null, 'index past the menu');
  t.throws(() => dealAt(SEED, 'm15', 100, n0));
});

t.test('desk bids on some rows, not all', async (t) => {
  for (const m of MARKET_IDS) {
    const deals: Deal[] = ticksOf(m).flatMap((tick) => menu(SEED, m, tick));
    const rate = deals.filter((d) => d.house_accepted).length / deals.length;
    t.ok(rate > 0.02 && rate < 0.6, `${m} desk bids on ${(rate * 100).toFixed(0)} % of rows`);
  }
});

t.test('catalog: families with items and grades, no internal parameters', async (t) => {
  const c = catalog();
  t.ok(c.families.length >= 20 && c.families.length <= 40);
  t.ok(c.grades.length > 0 && c.addons.length > 0);
  for (const f of c.families) {
    t.same(Object.keys(f).sort(), [
      'addons',
      'cluster',
      'items',
      'origin',
      'sku_family',
      'title',
      'unit',
    ]);
    t.ok(f.items.every((i) => i.grades.every((g) => c.grades.includes(g))));
  }
  c.families[0].title = 'mutated';
  t.not(catalog().families[0].title, 'mutated', 'each call returns a fresh copy');
  t.match(ENGINE_IDENTITY, { name: 'core_v1', version: String, params_hash: /^[0-9a-f]{64}$/ });
});
