// SPEC.md "Position": a filled order selling through its horizon.
import Type, { type Static } from 'typebox';
import { int, intOrNull, list, num, numOrNull, obj, oneOf, str, unixOrNull } from './common.js';

export const Position = obj(
  {
    id: int('position id'),
    order_id: int('the order it filled from'),
    market: str('market id'),
    opened_tick: int('the session it filled at'),
    settles_at_tick: int('the session it settles at'),
    deal_title: str("the bundle's title"),
    offer_key: str("the deal's key"),
    qty: int('units bought'),
    qty_left: int('units not sold yet'),
    ticks_done: int('sessions of the horizon done'),
    horizon: int('sessions it sells over'),
    unit_cost: num('landed cost per unit'),
    list_price: num('resale price per unit'),
    cost_basis: num('qty x unit_cost + qty x fulfilment fee, debited at payment'),
    revenue: num('sales revenue so far'),
    units_sold: int('units sold so far'),
    holding_cost: num('holding fees so far'),
    writeoff: numOrNull('value of the units left at settlement (no cash move); null before'),
    surcharge: numOrNull('settlement surcharge (debited); null until settled'),
    pnl_so_far: num('revenue - cost_basis - holding_cost - surcharge so far'),
    realized_pnl: numOrNull('revenue - cost_basis - holding - surcharge; null until settled'),
    status: oneOf(['open', 'settled'] as const, 'open while selling; settled after its horizon'),
    sales_by_tick: list(Type.Integer(), 'units sold in each session done'),
    created_at: num('when it opened (unix seconds)'),
    settled_at: unixOrNull('when it settled'),
    outcome: Type.Optional(
      obj(
        {
          sold_out: Type.Union([Type.Boolean(), Type.Null()], {
            description: 'whether the stock sold out',
          }),
          downside_event: Type.Union([Type.Boolean(), Type.Null()], {
            description: 'whether a downside regime hit',
          }),
          surcharge: numOrNull('settlement surcharge'),
          writeoff: numOrNull('value of the units left'),
        },
        'how it ended (settled only)',
      ),
    ),
    inventory: Type.Optional(
      obj(
        {
          transferred_units: intOrNull('unsold units that became owned goods'),
          item_id: intOrNull('the inventory item holding them'),
          transferred_at: unixOrNull('when they were transferred'),
        },
        'the unsold units as owned goods (once settled)',
      ),
    ),
  },
  'a position',
);
export type Position = Static<typeof Position>;

export const PositionsAnswer = obj({ positions: list(Position, 'newest first') }, 'my positions');
