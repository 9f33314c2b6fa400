// SPEC.md "Order": the order an agent places on a deal of the current menu, funded by its holder.
import Type, { type Static } from 'typebox';
import { MARKET_ID } from './market.js';
import {
  int,
  intOrNull,
  list,
  num,
  obj,
  oneOf,
  str,
  strOrNull,
  unixOrNull,
  requestBody,
} from './common.js';

// The status and source values are the database's (orm/entities, kept equal to the migrations by a test).
import { ORDER_STATUSES, PAYMENT_SOURCES } from '../../orm/entities/trading.js';
import { MONTHLY_FEE } from '../payments/fee.js';
export { ORDER_STATUSES };

/** POST /api/v1/orders. */
export const OrderCreate = requestBody({
  market: Type.String({ description: MARKET_ID }),
  offer_key: Type.String({ description: "a deal key of the market's current menu" }),
  qty: Type.Integer({ minimum: 1, description: "units, at most the deal's max_qty" }),
  pay_from_balance: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'fund at once from the account balance (needs autonomous funding)',
    }),
  ),
});
/** What the handler receives: the validator has filled the default in. */
export type OrderCreate = Required<Static<typeof OrderCreate>>;

export const OrderItem = obj(
  {
    name: str('item name'),
    qty: int('units of the item per bundle unit'),
    grade: str('condition grade'),
  },
  'an item of the ordered bundle',
);

/** What the holder will pay (CONTRACT.md): a card payment made now, the goods and the month's participation fee. */
export const HolderPays = obj(
  {
    goods: num("the order's total_amount, or the sum of the cart's current lines"),
    participation_fee: num(
      `the month's participation fee: ${MONTHLY_FEE.amount.toFixed(2)} unless the connected holder has paid this calendar month's, then 0.00`,
    ),
    total: num('goods + participation_fee: the one total a card payment now would charge'),
  },
  'what the holder will pay',
);

const orderFields = {
  id: int('order id'),
  market: str('market id'),
  tick: int("the session the order is placed in; it fills at that session's close"),
  offer_key: str("the deal's key"),
  deal_title: str("the bundle's title"),
  items: list(OrderItem, 'the items of one unit'),
  qty: int('units ordered'),
  unit_cost: num('landed cost per unit'),
  list_price: num('resale price per unit'),
  sales_velocity: Type.Optional(
    Type.Union([Type.Number(), Type.Null()], {
      description:
        "the deal's quoted velocity (markets with quotes_velocity: true; absent on ranking markets)",
    }),
  ),
  gross_amount: num('qty x unit_cost'),
  fee_amount: num('qty x fulfilment fee per unit'),
  total_amount: num('gross_amount + fee_amount: what funding the order costs'),
  status: oneOf(
    ORDER_STATUSES,
    'awaiting_payment, paid (funded), filled (a position), expired (unfunded at the close), refunded (could not fill) or cancelled (withdrawn unfunded by its agent or declined by the holder)',
  ),
  payment_source: Type.Union([oneOf(PAYMENT_SOURCES, 'how it was funded'), Type.Null()], {
    description: 'how it was funded; null while unfunded',
  }),
  purchase_url: Type.Union([Type.String(), Type.Null()], {
    description:
      "the page where the holder reviews and funds the order; null once it expired unfunded (the link no longer works: order again); a cancelled order's page says it was withdrawn and takes no payment",
  }),
  closes_at: num("when the order's session closes (real unix seconds): fund it before"),
  created_at: num('when it was placed (unix seconds)'),
  paid_at: unixOrNull('when it was funded'),
  filled_at: unixOrNull('when it filled'),
  position_id: intOrNull('the position it filled into; null until filled'),
  round_id: int('the trade round it is funded with'),
  account_id: int('the trading account'),
  agent_id: intOrNull("the agent that placed it; null on an order of the holder's Manual desk"),
  refund_reason: strOrNull('why a paid order was refunded instead of filled; null otherwise'),
  holder_pays: Type.Union([HolderPays, Type.Null()], {
    description:
      "while it awaits payment: what a card payment made now would charge the holder (the order and the month's participation fee unless paid); null otherwise (a payment's own figures are its receipt and the ledger)",
  }),
  receipt: strOrNull(
    "the signed approval receipt (a compact JWS, EdDSA; verify it against GET /.well-known/jwks.json) when the holder's hand or standing grant funded it; null otherwise (pay_from_balance, unpaid)",
  ),
};

export const Order = obj(orderFields, 'an order');
export type Order = Static<typeof Order>;

/** An order as GET /orders serves it: with what to do next, by its status. */
export const ServedOrderAnswer = obj(
  {
    ...orderFields,
    instructions: str(
      'what to do next with this order (an expired one: order again from the current menu, at the URL given)',
    ),
  },
  'an order, with what to do next',
);

export const OrderPlacedAnswer = obj(
  {
    ...orderFields,
    instructions: str('what to do next with this order'),
    monthly_fee_charged: num(
      'participation fee charged with this order (pay_from_balance in a month not paid yet), else 0',
    ),
  },
  'the order placed',
);

export const OrdersAnswer = obj({ orders: list(ServedOrderAnswer, 'newest first') }, 'my orders');
