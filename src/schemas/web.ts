// The holder's form posts answered as JSON (CONTRACT.md "Web form posts": a client that asks for
// JSON gets the outcome as an object instead of a 303).
import Type from 'typebox';
import {
  bool,
  int,
  intOrNull,
  list,
  nullable,
  num,
  numOrNull,
  obj,
  oneOf,
  str,
  strOrNull,
} from './common.js';

const ok = Type.Literal(true, { description: 'the post succeeded' });

export const PaidForm = obj(
  {
    ok,
    order_ids: list(Type.Integer(), 'the orders paid'),
    round_id: int('their trade round'),
    already_paid: bool('true: the order was paid before; nothing was charged now'),
    charged: num('what was charged now'),
    fee: num('of it, the participation fee of the month'),
    receipt: strOrNull(
      'the signed approval receipt (compact JWS; GET /.well-known/jwks.json); null when it was paid before',
    ),
  },
  'the order is paid',
);

export const DeclinedForm = obj(
  {
    ok,
    order_id: int('the order declined'),
    status: Type.Literal('cancelled', {
      description: 'the order is cancelled: it takes no payment',
    }),
  },
  'the order is declined; nothing was charged',
);

export const LimitsForm = obj(
  {
    ok,
    agent_id: int('the agent'),
    limits: obj(
      {
        max_order: numOrNull('USD per order; null: no limit'),
        max_day: numOrNull('USD per UTC day; null: no limit'),
        max_week: numOrNull('USD per ISO week (from Monday 00:00 UTC); null: no limit'),
        markets: nullable(
          list(str('a market id'), 'the markets'),
          'the markets; null: every market',
        ),
        expires_at: numOrNull('when the limits end (unix seconds); null: never'),
      },
      'the limits as set',
    ),
  },
  "the agent's spending limits are set",
);

export const FundingForm = obj(
  { ok, agent_id: int('the agent'), autonomous_funding: bool('the switch as it is now') },
  'the autonomous-funding switch is set',
);

export const KeyRevokedForm = obj(
  {
    ok,
    agent_id: int('the agent'),
    revoked: bool('revoked now (false: it was revoked already)'),
    revoked_at: num('when the key was revoked (unix seconds)'),
    withdrawn_order_ids: list(
      Type.Integer(),
      'its orders awaiting payment, withdrawn (order.cancelled)',
    ),
  },
  "the agent's key is revoked: every request with it is a 401",
);

export const SignedInForm = obj(
  {
    ok,
    holder_id: int('the holder'),
    email: str("the holder's e-mail address"),
    display_name: strOrNull("the holder's display name"),
    next: str('the page to go to'),
  },
  'signed in (the session cookie is set)',
);

export const LoggedOutForm = obj({ ok }, 'logged out (the session cookie is cleared)');

// The holder's money on the console (CONTRACT.md "The holder's money").

export const TopupForm = obj(
  {
    ok,
    account_id: int('the account topped up'),
    amount: num('USD added (ledger card_charge +)'),
    balance: num("the account's balance now"),
  },
  'the account is topped up',
);

export const PayoutForm = obj(
  {
    ok,
    payout_id: int('the payout'),
    amount: num('USD that left the balance now (ledger payout -)'),
    commission: num('the commission kept'),
    net: num('what is paid out: amount minus commission'),
    pay_at: num('when it is paid (unix seconds)'),
    status: Type.Literal('scheduled', { description: 'scheduled until pay_at, then paid' }),
  },
  'the payout is scheduled',
);

export const CoinsForm = obj(
  {
    ok,
    coins: num('Gold Coins bought'),
    gc_balance: num('the Gold Coin balance now'),
    charged: num('USD charged to the card: the pack, and the participation fee when due'),
    fee: num('of it, the participation fee of the month'),
  },
  'the coin pack is bought',
);

export const CardRemovedForm = obj(
  { ok, card_id: int('the stored card'), removed: bool('it was stored and is removed now') },
  'the stored card is removed',
);

export const AgentMadeForm = obj(
  {
    ok,
    agent_id: int('the agent'),
    account_id: int('its trading account'),
    key: strOrNull(
      'the API key (80 characters): shown this once, never again; null when a retried request is answered again',
    ),
    key_id: str("the key's public id (its first 20 characters)"),
    recall_phrase: str('the phrase POST /api/v1/agents/recall answers with'),
  },
  'the agent key is made',
);

/** What happens in a holder's accounts, as /console/timeline names it. */
export const TIMELINE_KINDS = [
  'order_placed',
  'order_paid',
  'order_filled',
  'order_refunded',
  'position_settled',
  'top_up',
  'card_charge',
  'crypto_payment',
  'order_debit',
  'monthly_fee',
  'sale_credit',
  'holding_fee',
  'surcharge',
  'refund',
  'payout_scheduled',
  'payout_paid',
  'gc_grant',
  'gc_purchase',
  'gc_spend',
  'gc_sale',
  'grant_made',
  'grant_revoked',
] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/**
 * A position in the timeline: the event's time in microseconds, its source (a number per kind of
 * row) and its row id, `<micros>-<source>-<id>`. Events are ordered by exactly this triple, so a page
 * that starts after a cursor neither repeats nor skips an event, whatever happens at one instant.
 */
export const TIMELINE_CURSOR_PATTERN = '^[0-9]{1,19}-[0-9]{1,2}-[0-9]{1,19}$';
/** Events one timeline page holds at most. */
export const TIMELINE_PAGE_MAX = 200;

export const TimelineEvent = obj(
  {
    kind: oneOf(
      TIMELINE_KINDS,
      "what happened: an order's step, a ledger entry (top_up is a card top-up, payout_scheduled the payout leaving the balance), a payout paid, a Gold Coin entry, a cart grant",
    ),
    at: num('when (unix seconds)'),
    account_id: intOrNull("the trading account, when the event is one account's"),
    amount: numOrNull('USD the balance moved by (ledger entries), signed'),
    coins: numOrNull('Gold Coins the GC balance moved by (Gold Coin entries), signed'),
    ref: strOrNull('what it belongs to (order:17, position:4, payout:2, ...)'),
    text: str('the event in a sentence'),
    cursor: str('pass as before= to list the events older than this one'),
  },
  "one event of the holder's accounts",
);

export const TimelineAnswer = obj(
  {
    events: list(TimelineEvent, 'newest first'),
    next_before: strOrNull('the before= of the next (older) page; null on the last page'),
  },
  "the holder's timeline",
);
