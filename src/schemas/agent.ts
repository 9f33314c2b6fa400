// SPEC.md "Agent registration body" and the agents' answers: token, registration, recall, me.
import { CART_KINDS } from '../../orm/entities/carts.js';
import Type, { type Static } from 'typebox';
import { KEY_PATTERN } from '../auth/api-keys.js';
import {
  bool,
  int,
  list,
  nullable,
  num,
  numOrNull,
  obj,
  oneOf,
  str,
  strOrNull,
  unixOrNull,
  requestBody,
} from './common.js';

const s = (maxLength: number, description: string) => Type.String({ maxLength, description });
const optionalOrNull = <T extends ReturnType<typeof Type.Object> | ReturnType<typeof Type.String>>(
  schema: T,
  description: string,
) => Type.Optional(Type.Union([schema, Type.Null()], { description }));

export const AgentIdentity = Type.Object(
  {
    model: Type.Optional(s(120, 'model name')),
    version: Type.Optional(s(60, 'model or program version')),
    vendor: Type.Optional(s(120, 'who makes the model or program')),
    kind: Type.Optional(s(32, 'llm-agent, script, service or assisted')),
    instance: Type.Optional(s(160, 'which running instance')),
  },
  { description: 'what the agent is' },
);

export const Operator = Type.Object(
  {
    type: Type.Optional(
      Type.Union(
        [
          Type.Literal('user'),
          Type.Literal('organisation'),
          Type.Literal('organization'),
          Type.Literal('system'),
          Type.Null(),
        ],
        { description: 'who runs the agent' },
      ),
    ),
    name: Type.Optional(s(160, "the operator's name")),
    contact: Type.Optional(s(255, 'e-mail or URL')),
    reference: Type.Optional(s(160, "the operator's own reference")),
  },
  { description: 'who runs the agent' },
);

/** POST /api/v1/agents/register. */
export const AgentRegister = requestBody({
  token: Type.String({
    minLength: 80,
    maxLength: 80,
    pattern: KEY_PATTERN,
    description:
      'your API key: 80 characters of [A-Za-z0-9] from a cryptographic source; the first 20 are its public key id',
  }),
  name: Type.String({ minLength: 1, maxLength: 120, description: 'shown to the account holder' }),
  recall_phrase: Type.String({
    minLength: 3,
    maxLength: 120,
    description: 'a phrase that helps you (or a successor) recognise the key later',
  }),
  agent: optionalOrNull(AgentIdentity, 'what the agent is'),
  operator: optionalOrNull(Operator, 'who runs the agent'),
  purpose: optionalOrNull(s(500, 'what the agent is for'), 'what the agent is for'),
  contact: optionalOrNull(s(255, 'legacy: use operator.contact'), 'legacy: use operator.contact'),
});
export type AgentRegister = Static<typeof AgentRegister>;

/** POST /api/v1/agents/recall. */
export const Recall = requestBody({
  key_id: Type.String({
    minLength: 20,
    maxLength: 80,
    description: 'the key id (a whole key is accepted and truncated to its id)',
  }),
  recall_phrase: Type.Optional(s(120, 'the phrase to compare with the registered one')),
});
export type Recall = Static<typeof Recall>;

export const TokenAnswer = obj(
  {
    token: str(
      'a fresh random key: 80 characters of [A-Za-z0-9]; nothing is stored until you register it',
    ),
    key_id: str('its first 20 characters, the public key id'),
    recall_phrase_suggestion: str('a phrase you may register with it'),
  },
  'an invented key',
);

export const CartRef = obj(
  {
    id: int('cart id'),
    checkout_url: str('the link the holder opens to review and pay'),
    kind: oneOf(CART_KINDS, 'trade: orders for the market; own: goods to keep'),
  },
  "the agent's cart",
);

export const RegisteredAnswer = obj(
  {
    agent_id: int('agent id'),
    name: str('the registered name'),
    key_id: str("the key's first 20 characters"),
    account_id: int("the agent's trading account"),
    trade_enabled: bool('whether the agent may place orders'),
    cart_note: str('what the cart is for'),
    cart: CartRef,
    keep: obj(
      {
        note: str('why to keep this note'),
        key: str('which key (the key itself is never shown again)'),
        key_id: str('the key id'),
        recall_phrase: str('the registered recall phrase'),
        purpose: strOrNull('the registered purpose'),
        service: str("this service's base address"),
        checkout_url: str("the cart's checkout link"),
      },
      'a ready-made note to store with the key',
    ),
  },
  'the registered agent',
);

export const RecallAnswer = obj(
  {
    known: bool('whether the key id is registered here'),
    name: strOrNull('the registered name'),
    recall_phrase: strOrNull('the phrase chosen at registration'),
    connected_to_holder: bool('whether a holder is connected'),
    carts_visible: int('carts the agent can see'),
    phrase_matches: Type.Optional(
      Type.Boolean({ description: 'whether the phrase sent matches (only when one was sent)' }),
    ),
  },
  'what the service knows of a key id',
);

const CartView = obj(
  {
    id: int('cart id'),
    name: str('cart name'),
    kind: str('trade or own'),
    checkout_url: str('the link the holder opens'),
  },
  'a cart',
);

export const AgentMeAnswer = obj(
  {
    key_id: str('the key id'),
    agent_id: int('agent id'),
    profile: obj(
      {
        name: str('the registered name'),
        agent: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
          description: 'the declared identity (AgentIdentity) or null',
        }),
        operator: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
          description: 'the declared operator (Operator) or null',
        }),
        purpose: strOrNull('the declared purpose'),
        contact: strOrNull('legacy contact'),
        recall_phrase: str('the registered recall phrase'),
      },
      'what the agent declared at registration',
    ),
    trade_enabled: bool('whether the agent may place orders'),
    cart_note: str('what the cart is for'),
    account_id: int('the trading account'),
    balance: num('its balance'),
    paired: bool('whether a holder is connected'),
    holder: obj(
      {
        connected: bool('whether a holder is connected'),
        since: unixOrNull('when the holder connected'),
      },
      'the holder connection',
    ),
    autonomous_funding: bool('whether pay_from_balance may fund orders'),
    limits: obj(
      {
        max_order: numOrNull(
          'USD one order (one line of an execute checkout) may total; null: no limit',
        ),
        max_day: numOrNull('USD a UTC day (service clock) may total; null: no limit'),
        max_week: numOrNull(
          'USD an ISO week (from Monday 00:00 UTC, service clock) may total; null: no limit',
        ),
        markets: nullable(
          list(str('a market id'), 'the markets'),
          'the markets the agent may fund orders in; null: every market',
        ),
        expires_at: numOrNull(
          'when these limits end (unix seconds): from then on nothing is funded without the holder until they set limits again; null: never',
        ),
        spent_today: num(
          'USD funded without the holder present today (UTC): pay_from_balance and execute checkouts; the monthly fee counts in neither',
        ),
        spent_week: num(
          'USD funded without the holder present this ISO week, counted as spent_today',
        ),
      },
      "the holder's spending limits on what the agent funds without them (pay_from_balance, execute checkouts)",
    ),
    carts: obj(
      {
        mine: list(CartView, "the agent's own carts"),
        visible: int('carts the agent can see'),
        others: list(CartView, "carts of the holder and the holder's other agents"),
      },
      'carts the agent can see',
    ),
    notice: str('what to do next'),
  },
  'my agent',
);
