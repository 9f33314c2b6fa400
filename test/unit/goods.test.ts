// Owned goods minted at settlement: rarity tiers from the record, and a deterministic item.
import t from 'tap';
import { mintItem, rarityOf } from '../../actors/market/goods.js';
import { dealToJson, menu } from '../../src/engine/index.js';

t.test('rarityOf: seldom-listed, dear families are rare; everyday cheap ones common', async (t) => {
  t.same(rarityOf(8, 8, 500), { rarity: 'common', rarity_score: 0.025 });
  t.equal(rarityOf(8, 0, 20_000).rarity, 'legendary');
  t.equal(rarityOf(8, 4, 5_000).rarity, 'rare');
  t.equal(rarityOf(0, 0, 0).rarity_score, 0.5, 'no history counts as never listed');
  for (let listed = 0; listed <= 8; listed++) {
    const s = rarityOf(8, listed, 3_000).rarity_score;
    t.ok(s >= 0 && s <= 1);
    if (listed > 0)
      t.ok(s <= rarityOf(8, listed - 1, 3_000).rarity_score, 'more listings, less rare');
  }
});

t.test('mintItem: the unsold units with their story, economy and provenance', async (t) => {
  const deal = menu(1, 'm15', 1000)[0];
  const holding = {
    market: 'm15' as const,
    tick: 1000,
    settledTick: 1008,
    cluster: deal.cluster,
    deal: dealToJson(deal),
    qty: 2,
    unitCostCents: deal.unit_cost_cents,
    listPriceCents: deal.list_price_cents,
    regime: false,
    positionId: 7,
    orderId: 9,
    roundId: 11,
    competition: false,
  };
  const tape = [
    { tick: 1006, row: { menu_n: 3, price_close: 12.5, vwap: 10, sold: 1, velocity: 0.5 } },
    { tick: 1007, row: { menu_n: 0, price_close: null, vwap: null, sold: 0, velocity: null } },
  ];
  const item = mintItem(holding, tape, 8);
  t.same(item, mintItem(holding, tape, 8), 'deterministic');
  t.equal(item.qty, 2);
  t.equal(item.title, deal.bundle.title);
  t.match(item.story, /^2 × /);
  t.match(item.story, /session 1008/);
  t.equal(item.economy.cost_value, (2 * deal.unit_cost_cents) / 100);
  t.same(item.provenance, [
    {
      kind: 'settlement',
      market: 'm15',
      tick: 1000,
      offer_key: deal.key,
      order_id: 9,
      position_id: 7,
      round_id: 11,
      settled_tick: 1008,
    },
  ]);
  t.same(item.history.ticks, [1006, 1007]);
  t.equal(item.rarity_score, rarityOf(8, 1, deal.list_price_cents).rarity_score);
  t.match(mintItem({ ...holding, regime: true }, tape, 8).story, /downside event/);
  t.same([item.source, item.simulated], ['settlement', false]);
  const sim = mintItem({ ...holding, competition: true }, tape, 8);
  t.same(
    [sim.source, sim.simulated],
    ['competition', true],
    "a competition account's goods are simulated",
  );
  t.match(sim.story, /simulated USD/);
  t.same(sim.provenance, item.provenance, 'minted like any others');
});
