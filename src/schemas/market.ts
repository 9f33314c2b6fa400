// SPEC.md "Market" and "Deal object": the market status and the current menu.
import { TRADE_ACTORS } from '../../orm/entities/record.js';
import { MARKET_IDS } from '../engine/markets.js';
import Type, { type Static } from 'typebox';
import { TIME_SCALE, bool, int, list, num, obj, oneOf, str } from './common.js';

/** How a market id is described: the engine's markets (m15, m45, h2 or h10). */
export const MARKET_ID = `${MARKET_IDS.slice(0, -1).join(', ')} or ${MARKET_IDS[MARKET_IDS.length - 1]}`;

export const Fees = obj(
  {
    currency: str('currency of the amounts (USD)'),
    fulfilment_per_unit: num('fulfilment fee per unit, paid with the order'),
    holding_per_unit_session: num('holding fee per unsold unit and session'),
  },
  "the market's fees",
);

export const Quote = obj(
  {
    cost_low: num('lowest landed cost (unit_cost) on the current menu'),
    cost_mean: num('mean landed cost on the current menu'),
    cost_high: num('highest landed cost on the current menu'),
    list_price: num('mean resale price (list_price) of the listings'),
    price_low: num('lowest list_price on the current menu'),
    price_high: num('highest list_price on the current menu'),
    deals: int('deals on the current menu'),
    desk_bids: int('deals the house bids on'),
    families: int('item families on the current menu'),
  },
  'observable summary of the listed menu',
);

export const MarketStatus = obj(
  {
    id: str(`market id: ${MARKET_ID}`),
    label: str('display name'),
    interval_seconds: int('session length in service seconds'),
    current_tick: int("the open session's number"),
    tick_closes_at: num('when the open session closes (real unix seconds)'),
    seconds_to_close: num('real seconds until the open session closes'),
    settlement_horizon_ticks: int('sessions a position sells over before it settles'),
    fees: Fees,
    quote: Quote,
    menu_size: int('deals on the current menu'),
    max_qty: int('largest volume of one order'),
    pricing: obj(
      { model: str('name of the price process (its parameters are not served)') },
      'the price process',
    ),
    quotes_velocity: bool(
      'true: deals quote sales_velocity; false: they carry sales ranks instead',
    ),
  },
  'a market with its open session',
);

export const MarketList = obj(
  { markets: list(MarketStatus, 'the four markets'), time_scale: num(TIME_SCALE) },
  'all markets',
);

const velocityOnly = 'markets with quotes_velocity: true';
const rankingOnly = 'markets with quotes_velocity: false';

export const BundleItem = obj(
  {
    name: str('item name'),
    qty: int('units of the item per bundle unit'),
    grade: str('condition grade'),
  },
  'an item of the bundle',
);

export const Bundle = obj(
  {
    title: str("the bundle's title"),
    unit: str('what one unit is (pack, pair, ...)'),
    origin: str('where the goods ship from'),
    items: list(BundleItem, 'the items of one unit'),
  },
  'what one unit of the deal holds',
);

/** Quote fields by market kind (SPEC.md: velocity markets quote velocity, ranking markets ranks). */
export const VelocityQuote = {
  sales_velocity: Type.Optional(
    Type.Number({
      description: `quoted velocity: expected units sold per session, a property of the family (${velocityOnly})`,
    }),
  ),
  inverse_sv: Type.Optional(Type.Number({ description: `1 / sales_velocity (${velocityOnly})` })),
};
export const RankingQuote = {
  sales_rank: Type.Optional(
    Type.Number({ description: `sales rank at the session's open (${rankingOnly})` }),
  ),
  sales_rank_avg: Type.Optional(
    Type.Number({ description: `average sales rank (${rankingOnly})` }),
  ),
  rank_drops: Type.Optional(
    Type.Number({ description: `rank drops of the last sessions (${rankingOnly})` }),
  ),
  rank_drops_long: Type.Optional(
    Type.Number({ description: `rank drops over a longer span (${rankingOnly})` }),
  ),
  nsellers: Type.Optional(Type.Number({ description: `competing sellers (${rankingOnly})` })),
};

/** The fields of a deal before its quote, then after it (SPEC.md order). */
export const DealHead = {
  key: str('order with this key; valid only during the session that published it'),
  tick: int('the session that lists the deal'),
  sku_family: str('item family name'),
  cluster: int('item family id'),
};
export const DealPrices = {
  unit_cost: num("landed cost per unit (this listing's own; it moves)"),
  list_price: num("resale price per unit (this listing's own; it moves)"),
  margin: num('list_price - unit_cost'),
  listed_at: num(
    "0..1: when in the session the deal was listed; the session's price path runs in this order",
  ),
};
export const DealTail = {
  max_qty: int('largest volume of an order on this deal'),
  house_accepted: bool("whether the house's own policy bids on the deal"),
  house_qty: int("the house's bid volume"),
};

export const Deal = obj(
  { ...DealHead, bundle: Bundle, ...DealPrices, ...VelocityQuote, ...RankingQuote, ...DealTail },
  'a deal of a menu',
);
export type Deal = Static<typeof Deal>;

export const DealsPage = obj(
  {
    market: str('market id'),
    tick: int('the open session'),
    closes_at: num('when the session closes (real unix seconds)'),
    total: int('matching deals before paging'),
    limit: int('page size asked for'),
    offset: int('deals skipped'),
    deals: list(Deal, 'the page, in listed_at order'),
  },
  'the current menu, paged',
);

export const MarketIdParam = Type.String({ description: MARKET_ID });
export const ActorKind = oneOf(TRADE_ACTORS, "house: the house; user: a holder's account");
