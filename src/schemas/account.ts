// SPEC.md "Account", rounds, owned goods and the account's own trades.
import { PAYMENT_SOURCES, ROUND_STATUSES } from '../../orm/entities/trading.js';
import Type from 'typebox';
import { Trade } from './record.js';
import { bool, int, intOrNull, keyed, list, num, obj, oneOf, str, unixOrNull } from './common.js';

export const LedgerEntry = obj(
  {
    id: int('entry id'),
    account_id: int('the trading account'),
    kind: str('card_charge (+), crypto_payment (+), order_debit (-), monthly_fee (-), sale_credit (+), holding_fee (-), surcharge (-), payout (-), ...'),
    amount: num('signed amount: positive credits the balance, negative debits it'),
    currency: str('USD'),
    balance_after: num('the balance after this entry'),
    ref: str('what the entry is for (an order, a position, a month)'),
    created_at: num('when it was booked (unix seconds)'),
  },
  'a ledger entry',
);

export const LedgerAnswer = obj({ ledger: list(LedgerEntry, 'newest first') }, 'my ledger entries');

export const MonthlyFee = obj(
  {
    amount: num('the participation fee per calendar month'),
    currency: str('USD'),
    month: str('the current calendar month (UTC, YYYY-MM)'),
    due: bool('true: not charged yet this month; the next funding charges it'),
    charged_at: unixOrNull('when it was charged this month'),
  },
  'the holder\'s participation fee of the current month',
);

export const AccountAnswer = obj(
  {
    account_id: int('the trading account'),
    currency: str('USD'),
    balance: num('the account balance'),
    open_positions: int('positions still selling'),
    settled_positions: int('positions settled'),
    pending_orders: int('orders awaiting payment or paid and not filled yet'),
    realized_pnl_total: num('realised P&L of the settled trades'),
    console_url: str('the holder\'s console'),
    monthly_fee: MonthlyFee,
    ledger: list(LedgerEntry, 'recent entries, newest first'),
  },
  'my trading account',
);

export const Round = obj(
  {
    id: int('round id'),
    orders: list(
      obj(
        {
          id: int('order id'),
          market: str('market id'),
          tick: int('its session'),
          offer_key: str('the deal\'s key'),
          qty: int('units'),
          status: str('the order\'s status'),
          total_amount: num('what it costs'),
          position_id: intOrNull('its position once filled'),
        },
        'an order of the round',
      ),
      'the orders funded together, oldest first',
    ),
    amount: num('total of the orders'),
    fee_amount: num('participation fee charged with the round'),
    charged: num('what the funding charged'),
    source: Type.Union([oneOf(PAYMENT_SOURCES, 'how it was funded'), Type.Null()], { description: 'how it was funded; null while unfunded' }),
    status: oneOf(ROUND_STATUSES, 'the round\'s status: refunded when the close could not fill its paid orders'),
    transferred_units: int('unsold units that became owned goods'),
    created_at: num('when it was opened (unix seconds)'),
    funded_at: unixOrNull('when it was funded'),
    completed_at: unixOrNull('when its last position settled'),
  },
  'a trade round: orders funded together',
);

export const RoundsAnswer = obj({ rounds: list(Round, 'newest first') }, 'my trade rounds');

const nums = (description: string) => list(Type.Union([Type.Number(), Type.Null()]), description);

export const InventoryItem = obj(
  {
    id: int('item id'),
    account_id: int('the trading account'),
    position_id: intOrNull('the position the units come from; null on goods bought outright'),
    market: str('market id'),
    cluster: int('item family id'),
    title: str('the bundle\'s title'),
    qty: int('units owned'),
    story: str('where the goods come from, for a person'),
    rarity: oneOf(['common', 'uncommon', 'rare', 'epic', 'legendary'] as const, 'rarity tier'),
    rarity_score: num('0..1: half how seldom the family was listed, half how dear it is'),
    history: obj(
      {
        market: str('market id'),
        sku_family: str('item family name'),
        cluster: int('item family id'),
        ticks: list(Type.Integer(), 'the sessions before minting'),
        price_close: nums('the family\'s resale price in each of them'),
        vwap: nums('its executed landed cost in each'),
        sold: list(Type.Number(), 'units of it sold in each'),
        velocity: nums('units sold per active position in each'),
      },
      'the family\'s market history before the goods were minted',
    ),
    economy: obj(
      {
        currency: str('USD'),
        units: int('units'),
        unit_cost: num('landed cost per unit paid'),
        list_price: num('resale price per unit'),
        cost_value: num('units x unit_cost'),
        list_value: num('units x list_price'),
      },
      'what the goods cost and are listed at',
    ),
    source: oneOf(['trade_round', 'purchase'] as const, 'how the goods came to the account: trade_round (unsold units of a settled position) or purchase (bought outright from an own cart)'),
    provenance: Type.Union([
      obj(
        {
          market: str('market id'),
          tick: int('the session the position filled at'),
          offer_key: str('the deal\'s key'),
          order_id: int('the order'),
          position_id: int('the position'),
          round_id: int('the trade round'),
          settled_tick: int('the session the position settled at'),
        },
        'the trade the goods come from',
      ),
      obj(
        {
          market: str('market id'),
          tick: int('the session the deal was on the menu'),
          offer_key: str('the deal\'s key'),
          cart_id: int('the own cart it was bought from'),
          cart_item_id: int('the cart line'),
        },
        'the purchase the goods come from',
      ),
    ], { description: 'where the goods come from' }),
    created_at: num('when the goods were minted (unix seconds)'),
  },
  'owned goods: unsold units of a settled position, or goods bought outright',
);

export const InventoryAnswer = obj(
  {
    items: list(InventoryItem, 'owned goods, newest first'),
    listings: list(keyed(Type.Unknown(), 'a listing'), 'open listings of the exchange (none yet: the exchange is a later layer)'),
  },
  'owned goods and open listings',
);

export const MyTradesAnswer = obj({ trades: list(Trade, 'newest first') }, 'my executed trades as the market record serves them');
