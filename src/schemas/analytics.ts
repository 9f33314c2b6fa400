// SPEC.md "Catalog, markets analytics, other reads": tape, stats, book, families, signals,
// projection, ticker and pulse.
import Type, { type TSchema } from 'typebox';
import { SETTLED_TAPE_FIELDS, TAPE_FIELDS } from '../analytics/tape.js';
import { RANKING_QUOTES, VELOCITY_QUOTES } from '../analytics/families.js';
import {
  bool,
  fields,
  int,
  intOrNull,
  keyed,
  list,
  num,
  numOrNull,
  obj,
  oneOf,
  str,
  strOrNull,
} from './common.js';
import { ActorKind, RankingQuote, VelocityQuote } from './market.js';

/** What each tape column means (SPEC.md "Tape row"). */
const TAPE_WORDS: Record<
  (typeof TAPE_FIELDS)[number] | (typeof SETTLED_TAPE_FIELDS)[number],
  string
> = {
  price_open: "resale price (list_price) of the session's first listing in listed_at order",
  price_high: 'highest list_price of the session',
  price_low: 'lowest list_price of the session',
  price_close: "list_price of the session's last listing: the resale price",
  exec_n: 'executions (trades) of the session',
  units: 'units executed',
  desk_units: 'units executed by the house',
  holder_units: "units executed by holders' accounts",
  notional: 'turnover of the executions (units x landed cost)',
  open: 'landed cost of the first execution in session-time order',
  high: 'highest landed cost executed',
  low: 'lowest landed cost executed',
  close: 'landed cost of the last execution',
  vwap: 'volume-weighted landed cost of the executions',
  sold: 'units earlier positions sold in the session',
  revenue: 'revenue of those sales',
  active: 'positions selling in the session',
  inventory: 'units held by positions after the session',
  inventory_value: 'value of those units at landed cost',
  quoted: 'mean quoted velocity of the menu; null on ranking markets',
  velocity: 'units sold per active position',
  demand_index: 'sold relative to the quoted velocity; null on ranking markets',
  sell_through: 'share of the held units sold in the session',
  menu_n: 'deals listed',
  cost_floor: 'lowest landed cost listed',
  cost_mean: 'mean landed cost listed',
  supply_units: 'units offered by the listings (max_qty summed)',
  supply_value: 'value of the offered units at landed cost',
  advancers: 'families whose mean list_price rose from the session before',
  decliners: 'families whose mean list_price fell',
  desk_pnl: "realised P&L of the house's trades of the session (settled sessions only)",
  holder_pnl: "realised P&L of holders' trades of the session (settled sessions only)",
  profitable_rate: "share of the session's settled trades in profit (settled sessions only)",
  downside_rate: 'share of them hit by a downside regime (settled sessions only)',
  exec_rate: 'share of the menu rows executed (settled sessions only)',
};

export const TapeRow = obj(
  {
    tick: int('the session'),
    ...fields(TAPE_FIELDS, (f) => numOrNull(TAPE_WORDS[f as keyof typeof TAPE_WORDS])),
    ...fields(SETTLED_TAPE_FIELDS, (f) =>
      Type.Optional(numOrNull(TAPE_WORDS[f as keyof typeof TAPE_WORDS])),
    ),
  },
  'the tape of one closed session',
);

export const TapeAnswer = obj(
  {
    market: str('market id'),
    cluster: intOrNull('the family asked for; null: the whole market'),
    from_tick: int('first session asked for'),
    to_tick: int('last session asked for'),
    rows: list(
      TapeRow,
      'one row per closed recorded session in the range (sessions not recorded, or without the family on their menu, are absent)',
    ),
  },
  'tape rows per closed session',
);

const StatsFamily = obj(
  {
    sku_family: Type.Union([Type.String(), Type.Null()], { description: 'item family name' }),
    n: int('executed trades'),
    observed_n: int('executed menu rows'),
    units: int('units executed'),
    pnl: num('realised P&L of the trades'),
    profitable_rate: numOrNull('share of the trades in profit'),
    regime_rate: numOrNull('share of the trades with a downside regime'),
    censored_rate: numOrNull('share of the executed rows whose largest trade sold out'),
  },
  "one family's figures of the session",
);

const Oracle = obj(
  {
    rows: int('menu rows of the session'),
    rejected_n: int('rows nobody executed'),
    best_pnl: num(
      'sum over every menu row of its best realised profit at any volume (a row whose best is a loss counts 0)',
    ),
    best_pnl_observed: num('the same over the executed rows'),
    best_pnl_rejected: num('the same over the rejected rows'),
    best_qty_mean: numOrNull('mean best volume per row (0 for rows that lose at every volume)'),
    profitable_rate_q1: numOrNull('share of all rows in profit at qty 1'),
    observed_profitable_rate_q1: numOrNull('share of executed rows in profit at qty 1'),
    rejected_profitable_rate_q1: numOrNull(
      'share of rejected rows that would have been profitable at qty 1',
    ),
    regime_rate: numOrNull('share of all rows meeting a downside regime'),
    demand_mean: numOrNull('mean demand per row over the settlement horizon, units'),
  },
  'counterfactual figures of every menu row; only with the oracle switch (SVC_ORACLE=1)',
);

export const StatsRow = obj(
  {
    tick: int('the session'),
    menu_n: int('menu rows'),
    observed_n: int('menu rows executed by anyone'),
    observed_rate: numOrNull('observed_n / menu_n'),
    house_n: int('rows the house executed'),
    house_rate: numOrNull('house_n / menu_n'),
    house_pnl: num('realised P&L of the house'),
    house_pnl_mean: numOrNull('house_pnl per house trade'),
    house_roi: numOrNull('house_pnl / cost basis of the house trades'),
    user_n: int("trades of holders' accounts"),
    user_pnl: num("realised P&L of holders' trades"),
    observed_profitable_rate: numOrNull('share of executed trades in profit'),
    regime_rate: numOrNull('share of executed trades with a downside regime'),
    censored_rate: numOrNull('share of executed rows whose largest trade sold out'),
    mean_margin: numOrNull('mean margin of the executed rows'),
    mean_cost: numOrNull('mean unit_cost of the executed rows'),
    mean_sv: numOrNull('mean quoted velocity of the executed rows; null on ranking markets'),
    families: keyed(StatsFamily, 'figures per family, keyed by cluster'),
    oracle: Type.Optional(Oracle),
  },
  'stats of one settled session',
);

export const StatsAnswer = obj(
  {
    market: str('market id'),
    from_tick: int('first session asked for'),
    to_tick: int('last session asked for'),
    rows: list(StatsRow, 'one row per settled recorded session in the range'),
  },
  'per-session stats of settled sessions',
);

const Level = obj(
  {
    price: num('price of the level'),
    size: num('units at the level'),
    cum: num('units up to this level from the best'),
  },
  'a level of the book',
);

export const BookAnswer = obj(
  {
    market: str('market id'),
    cluster: intOrNull('the family asked for; null: the whole market'),
    window: int('closed sessions of tape the book is drawn from'),
    sessions: int('tape rows the book was drawn from'),
    mid: num('last price_close'),
    spread: num('estimated spread'),
    spread_method: oneOf(
      ['roll', 'corwin_schultz', 'floor'] as const,
      'how the spread was estimated',
    ),
    tick: int('the open session the book stands at'),
    best_bid: num('highest bid'),
    best_ask: num('lowest ask'),
    bids: list(Level, 'bid levels, best first'),
    asks: list(Level, 'ask levels, best first'),
    depth: num('units on both sides'),
    imbalance: num('(bid depth - ask depth) / depth'),
    buy_volume: num('units executed over the window'),
    sell_volume: num('units sold by positions over the window'),
    price_impact: numOrNull(
      "Kyle's lambda: close-to-close price change per unit of signed flow (executed - sold)",
    ),
    listed: int('listings on the current menu'),
    listed_low: numOrNull('lowest list_price on the current menu'),
    listed_high: numOrNull('highest list_price on the current menu'),
  },
  'a synthetic order book around the resale price (the market has no limit order book)',
);

const quoteOf = (name: string): TSchema =>
  (VelocityQuote as Record<string, TSchema>)[name] ??
  (RankingQuote as Record<string, TSchema>)[name];

export const FamilyRow = obj(
  {
    cluster: int('item family id'),
    sku_family: str('item family name'),
    deals: int('deals of the family on the current menu'),
    house_bids: int('of those, deals the house bids on'),
    mean_unit_cost: num('mean landed cost of those deals'),
    mean_list_price: num('mean resale price of those deals'),
    mean_margin: num('mean margin of those deals'),
    ...fields(VELOCITY_QUOTES, quoteOf),
    ...fields(RANKING_QUOTES, quoteOf),
    executed: int('trades filled in the window'),
    settled: int('of those, trades settled'),
    mean_pnl: numOrNull('mean realized_pnl of the settled trades'),
    profitable_rate: numOrNull('share of the settled trades in profit'),
    downside_rate: numOrNull('share of the settled trades hit by a downside regime'),
    sold_out_rate: numOrNull('share of the settled trades that sold out'),
    units_sold_per_session: numOrNull(
      "units the family's positions sold per recorded session of the window",
    ),
  },
  'an item family of the current menu with its recorded outcomes',
);

export const FamiliesAnswer = obj(
  {
    market: str('market id'),
    tick: int('the open session whose menu is described'),
    window: int('closed sessions of outcomes asked for'),
    sessions: int('recorded sessions in the window'),
    families: list(FamilyRow, 'families of the current menu'),
  },
  'item families on the current menu',
);

export const SignalsAnswer = obj(
  {
    market: str('market id'),
    cluster: int('item family id'),
    sku_family: str('item family name'),
    from_tick: int('first session of the rows'),
    to_tick: int('last session of the rows'),
    rows: list(
      obj(
        {
          tick: int('the session'),
          sales_rank: num("sales rank at the session's open"),
          rank_drops_prev: num('rank drops of the session before'),
          nsellers: num('competing sellers at the open'),
        },
        'ranking signals of one session',
      ),
      'one row per session',
    ),
  },
  'ranking signals of a family per session',
);

/** SPEC.md "Projection" (naive by design). */
export const ProjectionAnswer = obj(
  {
    market: str('market id'),
    tick: int('the open session'),
    cluster: int('item family id'),
    sku_family: str('item family name'),
    history: list(
      obj(
        {
          tick: int('the session'),
          velocity: num('units sold per active position'),
          sold: num('units sold'),
          active: num('positions selling'),
        },
        'observed sales of the family in one closed session',
      ),
      'observed sales of the family per closed session of the lookback',
    ),
    fit: obj(
      {
        kind: oneOf(['trend', 'mean'] as const, 'least-squares line or the mean'),
        intercept: num('velocity at x = 0 (the last close)'),
        slope: num('velocity change per session (x = sessions before the last close)'),
        r2: num('coefficient of determination'),
        points: int('sessions fitted'),
      },
      'the fit through the history',
    ),
    projection: list(Type.Number(), 'the fitted velocity over the settlement sessions'),
    scenarios: obj(
      {
        low_mult: num('multiplier of the low scenario'),
        high_mult: num('multiplier of the high scenario'),
        basis: oneOf(
          ['default', 'per_deal_velocity'] as const,
          'per_deal_velocity: p10/p50 and p90/p50 of settled deals; default: too few of them',
        ),
      },
      'the low and high scenarios around the projection',
    ),
    qty: list(Type.Integer(), 'volumes 1..max_qty'),
    curve: obj(
      {
        low: list(Type.Number(), 'P&L by volume, low scenario'),
        mid: list(Type.Number(), 'P&L by volume, projected path'),
        high: list(Type.Number(), 'P&L by volume, high scenario'),
      },
      'cash P&L by volume under the projected path',
    ),
    best_qty: intOrNull('the volume with the highest mid P&L (the smallest on ties)'),
    realised: list(
      obj(
        {
          tick: int('the session it filled at'),
          actor: ActorKind,
          qty: int('units bought'),
          unit_cost: num('its landed cost per unit'),
          list_price: num('its resale price per unit'),
          units_sold: int('units it sold'),
          pnl: num('its realised P&L'),
          pnl_repriced: num("its sales replayed at this projection's unit cost and list price"),
          sold_out: Type.Union([Type.Boolean(), Type.Null()], {
            description: 'whether it sold out',
          }),
          downside_event: Type.Union([Type.Boolean(), Type.Null()], {
            description: 'whether a downside regime hit',
          }),
        },
        'a settled similar deal',
      ),
      'settled trades of the family in the lookback, newest first',
    ),
    samples: obj(
      {
        deals: int('trades of the family in the lookback'),
        settled: int('of those, settled'),
        profitable: int('settled in profit'),
        downside_events: int('settled with a downside regime'),
        sold_out: int('settled sold out'),
        lost: int('settled at a loss (realised P&L below 0)'),
        median_pnl_per_unit: numOrNull(
          "median of the settled trades' realised P&L per unit bought (pnl / qty)",
        ),
        worst_pnl_per_unit: numOrNull('the lowest of the same'),
        per_deal_velocity_p10: numOrNull(
          '10th percentile of units sold per session per settled deal',
        ),
        per_deal_velocity_p50: numOrNull('median of the same'),
        per_deal_velocity_p90: numOrNull('90th percentile of the same'),
      },
      "counts of the family's trades behind the projection",
    ),
    params: obj(
      {
        lookback: int('closed sessions of history fitted'),
        fit: oneOf(['trend', 'mean'] as const, 'the fit asked for'),
        horizon: int('settlement sessions'),
        lead: int('sessions between the open session and the first sale'),
        from_tick: int('first session of the lookback'),
        to_tick: int('last session of the lookback'),
        fee: num('fulfilment fee per unit'),
        holding: num('holding fee per unit and session'),
        unit_cost: num('landed cost per unit used'),
        list_price: num('resale price per unit used'),
        list_price_basis: oneOf(
          ['deal', 'menu_mean', 'record_mean'] as const,
          "deal: the deal's own; menu_mean: the family's mean on the current menu; record_mean: its latest listed session on record",
        ),
        cluster: int('item family id'),
        max_qty: int('largest volume'),
      },
      'the inputs of the projection',
    ),
    quoted_velocity: numOrNull("the family's quoted velocity; null on ranking markets"),
    offer_key: strOrNull('the deal projected; null for a hypothetical deal'),
    calibration: obj(
      {
        settled: int('settled trades of the family in the lookback (as samples.settled)'),
        below_low: int(
          'of those, trades whose realised P&L fell below the low scenario this projection (same lookback and fit) would have given them at their own session, quantity, cost, price and fees',
        ),
        below_low_rate: numOrNull('below_low / settled; null without a settled trade'),
      },
      "how often, on the record, results fell below the projection's low scenario",
    ),
    surcharge: obj(
      {
        in_scenarios: Type.Literal(false, {
          description:
            "false: the curve's scenarios leave the settlement surcharge out; a downside event adds it when the position settles",
        }),
        events: int('settled trades of the family in the lookback that a downside event hit'),
        rate: numOrNull('events / settled trades; null without a settled trade'),
        median_per_unit: numOrNull(
          'the median surcharge per unit bought when it happened (USD); null when none was hit',
        ),
      },
      "the settlement surcharge on the record: a loss the curve's scenarios do not include",
    ),
  },
  'a naive projection of a deal',
);

const Clock = obj(
  {
    current_tick: int('the open session'),
    tick_closes_at: num('when it closes (real unix seconds)'),
    seconds_to_close: num('real seconds until it closes'),
  },
  "the market's session clock",
);

export const TickerAnswer = obj(
  {
    price_basis: str('what `last` is'),
    markets: list(
      obj(
        {
          market: str('market id'),
          label: str('display name'),
          tick: intOrNull('the last closed session on record'),
          last: numOrNull('resale price at the last close'),
          price_basis: str('what `last` is'),
          prev_close: numOrNull('resale price at the close before'),
          change: numOrNull('last - prev_close'),
          change_pct: numOrNull('change in percent of prev_close'),
          cost: numOrNull('volume-weighted landed cost executed in the last closed session'),
          units: numOrNull('units executed in it'),
          executions: numOrNull('executions in it'),
          notional: numOrNull('turnover in it'),
          demand_index: numOrNull('demand index of it; null on ranking markets'),
          clock: Clock,
        },
        "one market's ticker",
      ),
      'the four markets',
    ),
  },
  'the ticker per market',
);

const figures = {
  executions: int('executions'),
  units: int('units executed'),
  turnover: num('turnover at landed cost'),
  units_sold: int('units sold by settled positions'),
  pnl: num('realised P&L of settled trades'),
};
const Figures = obj(figures, 'figures of a span');
const Day = obj(
  { day: str('UTC day of service time (YYYY-MM-DD)'), ...figures },
  'figures of one day',
);
const Window = obj(
  {
    days: int('days in the window'),
    from_day: strOrNull('first day of the window; null without days'),
    to_day: str('last day of the window'),
    ...figures,
    per_day: obj(
      {
        executions: num('executions per day'),
        units: num('units per day'),
        turnover: num('turnover per day'),
      },
      'daily averages',
    ),
    best_day: Type.Union([Day, Type.Null()], {
      description: 'the day with the highest turnover; null without days',
    }),
  },
  'the last 30 days',
);
const Totals = {
  ...figures,
  sessions_recorded: int('sessions on record'),
  days_on_record: int('days with recorded sessions'),
  open_interest: int('units held by open positions'),
};

export const PulseAnswer = obj(
  {
    as_of: num('when the latest close of any market happened (real unix seconds)'),
    totals: obj(Totals, 'everything on record'),
    window: Window,
    last_24h: Figures,
    days: list(
      obj(
        {
          day: str('UTC day of service time (YYYY-MM-DD)'),
          ...figures,
          by_market: keyed(Figures, 'the same per market id'),
        },
        'figures of one day',
      ),
      'per UTC day of service time, ascending',
    ),
    markets: list(
      obj(
        {
          market: str('market id'),
          ...Totals,
          window: Window,
          last_24h: Figures,
          tape: list(TapeRow, 'the last 48 closed sessions of tape'),
        },
        "one market's figures",
      ),
      'per market',
    ),
    recent: list(
      obj(
        {
          market: str('market id'),
          tick: int('the session it filled at'),
          settled_at: num('when it settled (real unix seconds)'),
          cluster: int('item family id'),
          sku_family: str('item family name'),
          actor: ActorKind,
          qty: int('units bought'),
          units_sold: int('units sold'),
          realized_pnl: num('realised P&L'),
          sold_out: bool('whether it sold out'),
          regime: bool('whether a downside regime hit'),
        },
        'a settled trade',
      ),
      'latest settled trades with their result',
    ),
  },
  'the pulse across the four markets',
);
