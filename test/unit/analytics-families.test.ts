import t from 'tap';
import {
  familyQuotes,
  familyRow,
  RANKING_QUOTES,
  VELOCITY_QUOTES,
  type MenuFamily,
} from '../../src/analytics/families.js';

const deal = {
  sales_velocity: 0.42,
  inverse_sv: 2.381,
  sales_rank: 120,
  sales_rank_avg: 130,
  rank_drops: 4,
  rank_drops_long: 80,
  nsellers: 12,
};

t.test('familyQuotes: one kind of quote per market, the other absent', async (t) => {
  t.same(familyQuotes(deal, true), { sales_velocity: 0.42, inverse_sv: 2.381 });
  t.same(Object.keys(familyQuotes(deal, false)), [...RANKING_QUOTES]);
  t.same(Object.keys(familyQuotes(deal, true)), [...VELOCITY_QUOTES]);
});

const menu: MenuFamily = {
  cluster: 4,
  sku_family: 'power-banks',
  deals: 3,
  house_bids: 1,
  meanCostCents: 1234.666,
  meanPriceCents: 1500.5,
  meanMarginCents: 265.834,
  quotes: { sales_velocity: 0.42, inverse_sv: 2.381 },
};

t.test('familyRow: menu means to the cent, outcome rates over settled trades', async (t) => {
  const r = familyRow(
    menu,
    { executed: 7, settled: 6, pnlSumCents: -1001, profitable: 4, downside: 1, soldOut: 3 },
    27,
    12,
  );
  t.same(r, {
    cluster: 4,
    sku_family: 'power-banks',
    deals: 3,
    house_bids: 1,
    mean_unit_cost: 12.35,
    mean_list_price: 15.01,
    mean_margin: 2.66,
    sales_velocity: 0.42,
    inverse_sv: 2.381,
    executed: 7,
    settled: 6,
    mean_pnl: -1.67, // -1001 / 6 = -166.83 cents
    profitable_rate: 0.6667,
    downside_rate: 0.1667,
    sold_out_rate: 0.5,
    units_sold_per_session: 2.25,
  });
});

t.test('familyRow: a family without trades or sessions has null rates', async (t) => {
  const r = familyRow(menu, undefined, 0, 0);
  t.match(r, {
    executed: 0,
    settled: 0,
    mean_pnl: null,
    profitable_rate: null,
    downside_rate: null,
    sold_out_rate: null,
    units_sold_per_session: null,
  });
});
