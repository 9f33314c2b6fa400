// CONTRACT.md "Events": what an agent learns without polling. Each event's `data` is the object as
// its GET serves it (order, position, cart line, ledger entry), or the small objects the CONTRACT
// pins where no GET serves one. One declaration per type: the REST replay, the stream, the
// WebSocket and webhooks all carry these.
import Type, { type Static, type TSchema } from 'typebox';
import { bool, int, list, num, obj, str } from './common.js';
import { Order } from './order.js';
import { Position } from './position.js';
import { LedgerEntry } from './account.js';
import { CartGrantView, CartLine } from './cart.js';

/** A position event carries the session the close just booked. */
const PositionSession = obj(
  {
    tick: int('the session the close booked'),
    sold: int('units sold in that session'),
    revenue: num('what they sold for (credited)'),
    holding_cost: num('holding fees of that session (debited)'),
  },
  'the session this event books',
);
const PositionEventData = Type.Object(
  { ...Position.properties, session: PositionSession },
  {
    description: 'the position as GET /positions/{id} serves it, with the session just booked',
    additionalProperties: false,
  },
);
const CartLineEventData = Type.Object(
  { ...CartLine.properties, cart_id: int('the cart') },
  {
    description: "the cart line as the cart's GET serves it, with its cart",
    additionalProperties: false,
  },
);

const OrderCancelledData = Type.Object(
  {
    ...Order.properties,
    by: Type.Union([Type.Literal('agent'), Type.Literal('holder')], {
      description:
        'agent: its agent withdrew it (DELETE /orders/{id}); holder: declined on its purchase page',
    }),
  },
  {
    description: 'the order as GET /orders/{id} serves it, cancelled, with who withdrew it',
    additionalProperties: false,
  },
);

/** Each type and its `data`. */
export const EVENT_DATA = {
  'order.created': Order,
  'order.paid': Order,
  'order.filled': Order,
  'order.expired': Order,
  'order.refunded': Order,
  'order.cancelled': OrderCancelledData,
  'position.advanced': PositionEventData,
  'position.settled': PositionEventData,
  'cart.connected': obj(
    {
      cart_id: int('the cart'),
      holder: obj(
        { connected: bool('a holder has the cart now'), since: num('since when (unix seconds)') },
        'the holder',
      ),
    },
    "a holder opened the cart's link",
  ),
  'cart.line_added': CartLineEventData,
  'cart.line_ordered': CartLineEventData,
  'cart.line_removed': CartLineEventData,
  'funding.changed': obj(
    { agent_id: int('the agent'), autonomous_funding: bool('the switch now') },
    'the holder flipped the autonomous-funding switch',
  ),
  'grant.changed': obj(
    {
      action: Type.Union([Type.Literal('granted'), Type.Literal('revoked')], {
        description: 'granted or revoked',
      }),
      grant: Type.Object(
        { ...CartGrantView.properties, grant_id: int('the grant') },
        { additionalProperties: false, description: 'the grant' },
      ),
    },
    "a cart grant of the holder's changed",
  ),
  'limits.changed': obj(
    {
      agent_id: int('the agent'),
      limits: Type.Object({}, { additionalProperties: true, description: 'the limits now' }),
    },
    "the holder changed the agent's spending limits",
  ),
  'ledger.posted': LedgerEntry,
} as const satisfies Record<string, TSchema>;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];

/** One event: `id` is the account's own sequence (1, 2, 3, ...). */
export const Event = Type.Union(
  EVENT_TYPES.map((type) =>
    obj(
      {
        id: int("the account's event id: gap-free and increasing"),
        type: Type.Literal(type, { description: 'the event type' }),
        created_at: num('when it was appended (unix seconds)'),
        data: EVENT_DATA[type],
      },
      `a ${type} event`,
    ),
  ),
  { description: 'an event of your account' },
);
export type ServedEvent = {
  id: number;
  type: EventType;
  created_at: number;
  data: Static<(typeof EVENT_DATA)[EventType]>;
};

export const EventsAnswer = obj(
  {
    events: list(Event, 'the events after `after`, oldest first'),
    next_after: int(
      'the id of the last event served (or `after` when none): pass it as `after` next',
    ),
  },
  "your account's events",
);

/** GET /events query. */
export const EventsQuery = Type.Object(
  {
    after: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 0,
      description: 'the last event id you have (0: from the oldest kept)',
    }),
    limit: Type.Integer({
      minimum: 1,
      maximum: 1000,
      default: 100,
      description: 'at most this many events',
    }),
    types: Type.Optional(
      Type.String({
        maxLength: 1000,
        description: 'comma-separated event types; absent: every type',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The public market stream's one event. */
export const SessionClosed = obj(
  {
    market: str('the market'),
    tick: int('the session that closed'),
    next_tick: int('the session now open'),
    tick_closes_at: num('when that one closes (real unix seconds)'),
  },
  'a market session closed',
);

/** The public market stream's one event as a list: the stream's start for a client that did not ask for the stream. */
export const MarketClosesAnswer = obj(
  {
    events: list(
      obj(
        {
          id: int('the closed tick'),
          type: Type.Literal('session.closed', { description: 'the event type' }),
          data: SessionClosed,
        },
        'a close',
      ),
      'the closes after the resume point, oldest first',
    ),
  },
  "a market's session closes",
);
