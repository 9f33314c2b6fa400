// SPEC.md "Account", rounds, owned goods and the account's own trades.
import { PAYMENT_SOURCES, ROUND_STATUSES } from '../../orm/entities/trading.js';
import Type from 'typebox';
import { Trade } from './record.js';
import { bool, int, intOrNull, list, num, obj, oneOf, str, unixOrNull } from './common.js';

export const LedgerEntry = obj(
  {
    id: int('entry id'),
    account_id: int('the trading account'),
    kind: str(
      'card_charge (+), crypto_payment (+), order_debit (-), monthly_fee (-), sale_credit (+), holding_fee (-), surcharge (-), payout (-), ...',
    ),
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
  "the holder's participation fee of the current month",
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
    console_url: str("the holder's console"),
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
          offer_key: str("the deal's key"),
          qty: int('units'),
          status: str("the order's status"),
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
    source: Type.Union([oneOf(PAYMENT_SOURCES, 'how it was funded'), Type.Null()], {
      description: 'how it was funded; null while unfunded',
    }),
    status: oneOf(
      ROUND_STATUSES,
      "the round's status: refunded when the close could not fill its paid orders",
    ),
    transferred_units: int('unsold units that became owned goods'),
    created_at: num('when it was opened (unix seconds)'),
    funded_at: unixOrNull('when it was funded'),
    completed_at: unixOrNull('when its last position settled'),
  },
  'a trade round: orders funded together',
);

export const RoundsAnswer = obj({ rounds: list(Round, 'newest first') }, 'my trade rounds');

const nums = (description: string) => list(Type.Union([Type.Number(), Type.Null()]), description);

/** One change of owner of an item (the first is how it was minted or bought; then each sale). */
export const ProvenanceEntry = Type.Union(
  [
    obj(
      {
        kind: Type.Literal('settlement'),
        market: str('market id'),
        tick: int('the session the position filled at'),
        offer_key: str("the deal's key"),
        order_id: int('the order'),
        position_id: int('the position'),
        round_id: int('the trade round'),
        settled_tick: int('the session the position settled at'),
      },
      'minted from the unsold units of a settled trade',
    ),
    obj(
      {
        kind: Type.Literal('purchase'),
        market: str('market id'),
        tick: int('the session the deal was on the menu'),
        offer_key: str("the deal's key"),
        cart_id: int('the own cart it was bought from'),
        cart_item_id: int('the cart line'),
      },
      'bought outright from an own cart',
    ),
    obj(
      {
        kind: Type.Literal('exchange'),
        at: num('when it was sold (unix seconds, service clock)'),
        from_holder: int('the seller (holder id)'),
        to_holder: int('the buyer (holder id)'),
        price: num('the price paid (USD, or Gold Coins)'),
        currency: oneOf(['USD', 'GC'] as const, 'the book it sold in'),
        listing_id: int('the listing'),
      },
      'sold on the exchange',
    ),
  ],
  { description: 'a change of owner' },
);

export const InventoryItem = obj(
  {
    id: int('item id'),
    account_id: int('the trading account'),
    position_id: intOrNull('the position the units come from; null on goods bought outright'),
    market: str('market id'),
    cluster: int('item family id'),
    title: str("the bundle's title"),
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
        price_close: nums("the family's resale price in each of them"),
        vwap: nums('its executed landed cost in each'),
        sold: list(Type.Number(), 'units of it sold in each'),
        velocity: nums('units sold per active position in each'),
      },
      "the family's market history before the goods were minted",
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
    source: oneOf(
      ['settlement', 'competition', 'purchase', 'exchange'] as const,
      "how the goods came to their owner: settlement (unsold units of a settled position), competition (unsold units of a competition account's settled position), purchase (bought outright from an own cart) or exchange (bought from another holder)",
    ),
    simulated: bool(
      'true on competition goods: bought with simulated USD, they can never be listed on the exchange',
    ),
    provenance: list(
      ProvenanceEntry,
      'every change of owner, oldest first: the minting or purchase, then each sale on the exchange',
    ),
    created_at: num('when the goods were minted (unix seconds)'),
  },
  'owned goods: unsold units of a settled position, or goods bought outright',
);

/** An open listing of the exchange (CONTRACT.md "Exchange"). */
export const Listing = obj(
  {
    id: int('listing id'),
    currency: oneOf(['USD', 'GC'] as const, 'the book: USD or Gold Coins, never mixed'),
    price: num('the asking price (USD with 2 decimals, or Gold Coins with 2 decimals)'),
    listed_at: num('when it was listed (unix seconds)'),
    seller: str("the seller's display name"),
    item: InventoryItem,
  },
  'an owned item offered on the exchange',
);

export const InventoryAnswer = obj(
  {
    items: list(InventoryItem, 'owned goods, newest first'),
    listings: list(Listing, "the holder's open listings on the exchange, newest first"),
  },
  'owned goods and open listings',
);

export const MyTradesAnswer = obj(
  { trades: list(Trade, 'newest first') },
  'my executed trades as the market record serves them',
);
