// Response schemas of the analytics routes: documentation for /api/openapi.json only (the server
// does not validate answers).
import Type from 'typebox';
import { SETTLED_TAPE_FIELDS, TAPE_FIELDS } from '../../analytics/tape.js';
import { RANKING_QUOTES, VELOCITY_QUOTES } from '../../analytics/families.js';

const num = Type.Number();
const int = Type.Integer();
const orNull = (description?: string) => Type.Union([Type.Number(), Type.Null()], description ? { description } : {});
const fields = (names: readonly string[], make: () => any) => Object.fromEntries(names.map((n) => [n, make()]));

export const TapeAnswer = Type.Object({
  market: Type.String(),
  cluster: Type.Union([Type.Integer(), Type.Null()], { description: 'null: the whole market' }),
  from_tick: int,
  to_tick: int,
  rows: Type.Array(
    Type.Object({
      tick: int,
      ...fields(TAPE_FIELDS, () => orNull()),
      ...fields(SETTLED_TAPE_FIELDS, () => Type.Optional(orNull('settled sessions only'))),
    }),
    { description: 'one row per closed recorded session in the range (sessions not recorded, or without the family on their menu, are absent)' },
  ),
});

const Family = Type.Object({
  sku_family: Type.Union([Type.String(), Type.Null()]),
  n: Type.Integer({ description: 'executed trades' }),
  observed_n: Type.Integer({ description: 'executed menu rows' }),
  units: int,
  pnl: num,
  profitable_rate: orNull(),
  regime_rate: orNull(),
  censored_rate: orNull(),
});

const Oracle = Type.Object(
  {
    rows: int,
    rejected_n: int,
    best_pnl: Type.Number({ description: 'sum over every menu row of its best realised profit at any volume (a row whose best is a loss counts 0)' }),
    best_pnl_observed: num,
    best_pnl_rejected: num,
    best_qty_mean: orNull('mean best volume per row (0 for rows that lose at every volume)'),
    profitable_rate_q1: orNull('share of all rows in profit at qty 1'),
    observed_profitable_rate_q1: orNull(),
    rejected_profitable_rate_q1: orNull('share of rejected rows that would have been profitable at qty 1'),
    regime_rate: orNull('share of all rows meeting a downside regime'),
    demand_mean: orNull('mean demand per row over the settlement horizon, units'),
  },
  { description: 'only with the oracle switch (SVC_ORACLE=1)' },
);

export const StatsAnswer = Type.Object({
  market: Type.String(),
  from_tick: int,
  to_tick: int,
  rows: Type.Array(
    Type.Object({
      tick: int,
      menu_n: int,
      observed_n: Type.Integer({ description: 'menu rows executed by anyone' }),
      observed_rate: orNull(),
      house_n: int,
      house_rate: orNull(),
      house_pnl: num,
      house_pnl_mean: orNull(),
      house_roi: orNull('house_pnl / cost basis of the desk trades'),
      user_n: int,
      user_pnl: num,
      observed_profitable_rate: orNull('share of executed trades in profit'),
      regime_rate: orNull('share of executed trades with a downside regime'),
      censored_rate: orNull('share of executed rows whose largest trade sold out'),
      mean_margin: orNull('mean margin of the executed rows'),
      mean_cost: orNull('mean unit_cost of the executed rows'),
      mean_sv: orNull('mean quoted velocity of the executed rows; null on ranking markets'),
      families: Type.Record(Type.String(), Family, { description: 'keyed by cluster' }),
      oracle: Type.Optional(Oracle),
    }),
    { description: 'one row per settled recorded session in the range' },
  ),
});

const Level = Type.Object({ price: num, size: num, cum: num });

export const BookAnswer = Type.Object({
  market: Type.String(),
  cluster: Type.Union([Type.Integer(), Type.Null()]),
  window: int,
  sessions: Type.Integer({ description: 'tape rows the book was drawn from' }),
  mid: Type.Number({ description: 'last price_close' }),
  spread: num,
  spread_method: Type.Union([Type.Literal('roll'), Type.Literal('corwin_schultz'), Type.Literal('floor')]),
  tick: Type.Integer({ description: 'the open session the book stands at' }),
  best_bid: num,
  best_ask: num,
  bids: Type.Array(Level),
  asks: Type.Array(Level),
  depth: num,
  imbalance: Type.Number({ description: '(bid depth - ask depth) / depth' }),
  buy_volume: Type.Number({ description: 'units executed over the window' }),
  sell_volume: Type.Number({ description: 'units sold by positions over the window' }),
  price_impact: orNull("Kyle's lambda: close-to-close price change per unit of signed flow (executed - sold)"),
  listed: Type.Integer({ description: 'listings on the current menu' }),
  listed_low: orNull('lowest list_price on the current menu'),
  listed_high: orNull('highest list_price on the current menu'),
});

export const FamiliesAnswer = Type.Object({
  market: Type.String(),
  tick: Type.Integer({ description: 'the open session whose menu is described' }),
  window: int,
  sessions: Type.Integer({ description: 'recorded sessions in the window' }),
  families: Type.Array(
    Type.Object({
      cluster: int,
      sku_family: Type.String(),
      deals: int,
      house_bids: int,
      mean_unit_cost: num,
      mean_list_price: num,
      mean_margin: num,
      ...fields(VELOCITY_QUOTES, () => Type.Optional(Type.Number({ description: 'markets with quotes_velocity: true' }))),
      ...fields(RANKING_QUOTES, () => Type.Optional(Type.Number({ description: 'markets with quotes_velocity: false' }))),
      executed: Type.Integer({ description: 'trades filled in the window' }),
      settled: int,
      mean_pnl: orNull('mean realized_pnl of the settled trades'),
      profitable_rate: orNull(),
      downside_rate: orNull(),
      sold_out_rate: orNull(),
      units_sold_per_session: orNull(),
    }),
  ),
});

export const SignalsAnswer = Type.Object({
  market: Type.String(),
  cluster: int,
  sku_family: Type.String(),
  from_tick: int,
  to_tick: int,
  rows: Type.Array(Type.Object({ tick: int, sales_rank: num, rank_drops_prev: num, nsellers: num })),
});
