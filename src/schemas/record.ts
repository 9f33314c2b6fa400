// The public record (SPEC.md "History row", "Trade object", coverage): what closed sessions left.
import Type, { type Static } from 'typebox';
import {
  ActorKind,
  Bundle,
  DealHead,
  DealPrices,
  DealTail,
  RankingQuote,
  VelocityQuote,
} from './market.js';
import { bool, int, intOrNull, list, num, numOrNull, obj, oneOf, str } from './common.js';

const rankingOnly = 'markets with quotes_velocity: false';
const settledOnly = 'once settled';

/** SPEC.md "Trade object": a fill, revealed session by session; outcomes once settled. */
export const Trade = obj(
  {
    id: int('trade id'),
    market: str('market id'),
    tick: int('the session the trade filled at'),
    offer_key: str("the deal's key"),
    cluster: int('item family id'),
    actor: ActorKind,
    account_id: Type.Optional(
      Type.Integer({ description: 'the trading account (user trades only)' }),
    ),
    position_id: intOrNull("the account's position of this fill; null for the house"),
    qty: int('units bought'),
    unit_cost: num('landed cost per unit'),
    list_price: num('resale price per unit'),
    sales_velocity: Type.Optional(
      numOrNull("the deal's quoted velocity (markets with quotes_velocity: true)"),
    ),
    sales_rank: Type.Optional(numOrNull(`the deal's sales rank (${rankingOnly})`)),
    sales_rank_avg: Type.Optional(numOrNull(`the deal's average sales rank (${rankingOnly})`)),
    rank_drops: Type.Optional(numOrNull(`the deal's rank drops (${rankingOnly})`)),
    rank_drops_long: Type.Optional(
      numOrNull(`the deal's rank drops over a longer span (${rankingOnly})`),
    ),
    nsellers: Type.Optional(numOrNull(`competing sellers of the deal (${rankingOnly})`)),
    cost_basis: num('qty x (unit_cost + fulfilment fee)'),
    revealed_ticks: int('sessions of the horizon revealed so far'),
    horizon: int('sessions the position sells over'),
    settled: bool('every session of the horizon is revealed'),
    sales_by_tick: list(Type.Integer(), 'units sold in each revealed session'),
    units_sold_so_far: int('units sold in the revealed sessions'),
    qty_left: int('units not sold yet'),
    revenue_so_far: num('sales revenue so far'),
    holding_cost_so_far: num('holding fees so far'),
    price_by_tick: Type.Optional(
      list(Type.Number(), `resale price in each revealed session (${rankingOnly})`),
    ),
    nsellers_by_tick: Type.Optional(
      list(Type.Integer(), `competing sellers in each revealed session (${rankingOnly})`),
    ),
    units_sold: Type.Optional(
      Type.Integer({ description: `units sold over the horizon (${settledOnly})` }),
    ),
    sold_out: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], {
        description: `whether the stock sold out (${settledOnly})`,
      }),
    ),
    regime: Type.Optional(
      Type.Union([Type.Boolean(), Type.Null()], {
        description: `whether a downside regime hit (${settledOnly})`,
      }),
    ),
    surcharge: Type.Optional(numOrNull(`settlement surcharge (${settledOnly})`)),
    writeoff: Type.Optional(numOrNull(`value of the units left at settlement (${settledOnly})`)),
    realized_pnl: Type.Optional(
      numOrNull(`revenue - cost_basis - holding - surcharge (${settledOnly})`),
    ),
  },
  'an executed trade as the market record serves it',
);

/** SPEC.md "History row": a deal of a closed session plus what the record knows of it. */
export const HistoryRow = obj(
  {
    ...DealHead,
    title: Type.Optional(
      Type.String({ description: "the bundle's title (without include_bundle)" }),
    ),
    bundle: Type.Optional(Bundle),
    ...DealPrices,
    ...VelocityQuote,
    ...RankingQuote,
    ...DealTail,
    recorded: bool('false: the history of this session is not loaded yet'),
    settled: bool('the session has settled: every trade of it revealed its horizon'),
    status: oneOf(
      ['observed', 'rejected', 'unrecorded'] as const,
      'observed: executed by someone; rejected: nobody executed it; unrecorded: history not loaded yet',
    ),
    trades: list(Trade, 'the trades that executed this row'),
    profit_curve: Type.Optional(
      list(
        Type.Union([Type.Number(), Type.Null()]),
        'index qty-1: realised profit at every volume the record can vouch for; null above the executed volume when the deal sold out (observed rows of settled sessions, or rejected rows with reveal=full)',
      ),
    ),
    known_up_to_qty: Type.Optional(
      Type.Integer({ description: 'largest volume the profit curve vouches for' }),
    ),
    house_profit: Type.Optional(
      Type.Number({ description: "the house's realised profit when it executed the row" }),
    ),
    house_units_sold: Type.Optional(
      Type.Integer({ description: 'units the house sold when it executed the row' }),
    ),
    oracle: Type.Optional(
      Type.Boolean({ description: 'true: a counterfactual outcome revealed by reveal=full' }),
    ),
  },
  'a history row',
);

export const HistoryAnswer = obj(
  {
    market: str('market id'),
    from_tick: int('first session asked for'),
    to_tick: int('last session asked for'),
    open_tick: int('the open session (not history)'),
    last_closed: int('the last closed session'),
    last_settled: int('the last settled session'),
    reveal: oneOf(['house', 'full'] as const, 'what outcomes are revealed'),
    include_bundle: bool('whether rows carry the whole bundle'),
    sessions: int('closed sessions in the range'),
    recorded_sessions: int('of those, sessions whose history is loaded'),
    rows: list(
      HistoryRow,
      'one row per menu row of the closed sessions of the range, in (tick, listed_at) order',
    ),
  },
  'history rows of closed sessions',
);

export const TradesAnswer = obj(
  {
    market: str('market id'),
    from_tick: int('first session asked for'),
    to_tick: int('last session asked for'),
    last_closed: int('the last closed session'),
    last_settled: int('the last settled session'),
    actor: Type.Union([ActorKind, Type.Null()], {
      description: 'the actor filter asked for; null: both',
    }),
    total: int('matching trades before paging'),
    limit: int('page size asked for'),
    offset: int('trades skipped'),
    trades: list(Trade, 'in (tick, id) order'),
  },
  'executed trades of closed sessions',
);

export const EngineIdentity = obj(
  {
    name: str('engine name (core_v1)'),
    version: str('engine version'),
    params_hash: str('hash of the engine parameters'),
    seed: int('the seed every session derives from'),
  },
  'the frozen engine identity of the record',
);

export const Coverage = obj(
  {
    market: str('market id'),
    open_tick: int('the open session'),
    last_closed_tick: int('the last closed session'),
    last_settled_tick: int('the last settled session'),
    live_start_tick: intOrNull(
      'the first session closed live (earlier ones were backfilled); null before the first start',
    ),
    first_recorded_tick: intOrNull('the oldest recorded session'),
    last_recorded_tick: intOrNull('the newest recorded session'),
    recorded_sessions: int('sessions on record'),
    history_load: Type.Union(
      [
        obj(
          {
            from_tick: int('first session of the backfill'),
            to_tick: int('last session of the backfill'),
            sessions_total: int('sessions to backfill'),
            sessions_loaded: int('sessions backfilled so far'),
            fraction: num('sessions_loaded / sessions_total, 0..1'),
            complete: bool('the backfill is done'),
            started_at: num('when the backfill started (unix seconds)'),
            finished_at: numOrNull('when it finished (unix seconds); null while it runs'),
          },
          'progress of the history backfill',
        ),
        Type.Null(),
      ],
      { description: 'progress of the history backfill; null before the first start' },
    ),
    trade_count: int('trades on record'),
    trades: obj(
      { house: int('trades of the house'), user: int("trades of holders' accounts") },
      'trades on record by actor',
    ),
    engine: Type.Union([EngineIdentity, Type.Null()], {
      description: 'the frozen engine identity; null before the first start',
    }),
  },
  "the record's coverage of a market",
);

export type Trade = Static<typeof Trade>;
export type HistoryRow = Static<typeof HistoryRow>;
