// Discovery documents (SPEC.md "Catalog", manifest, payment methods, agent protocol) and the
// operators' answers.
import Type from 'typebox';
import { TIME_SCALE, bool, int, keyed, list, num, obj, str } from './common.js';

const strings = (description: string) => list(Type.String(), description);

const MonthlyFeeTerms = obj(
  { amount: num('participation fee per calendar month'), currency: str('USD') },
  'the monthly participation fee',
);
const GoldCoins = obj(
  {
    free_at_registration: int('coins given at registration'),
    coin_price: num('price of one coin'),
    currency: str('USD'),
    packs: list(Type.Integer(), 'coin pack sizes on sale'),
    convertible_to_money: bool('whether coins convert back to money'),
  },
  'gold coins (a later layer)',
);
const Payouts = obj(
  {
    delay_days: num('days before a payout is sent'),
    commission: num('commission as a fraction'),
    commission_pct: num('commission in percent'),
    minimum: num('smallest payout'),
    currency: str('USD'),
  },
  'payout terms',
);

export const Manifest = obj(
  {
    name: str('service name'),
    domain: str('host the service answers on'),
    base_url: str('base address of every link'),
    official_site: str('the site for people'),
    api_base: str('base address of the JSON API'),
    openapi: str("this API's OpenAPI document"),
    asyncapi: str(
      'the AsyncAPI 3 document of the event stream, the market stream, the WebSocket and webhooks',
    ),
    agents: obj(
      {
        protocol: str('the agent protocol as data'),
        register: str('where agents register'),
        token: str('where to invent a key'),
        recall: str('where to recall a key'),
        llms_txt: str('plain-text guide for language-model agents'),
        human_needed_to_register_and_read: bool(
          'whether a person must act before an agent registers and reads',
        ),
        human_needed_to_spend: bool('whether a person must approve spending'),
        autonomous_funding: str('when an agent may fund orders itself'),
      },
      'where agents start',
    ),
    docs: obj(
      {
        api: str('interactive API docs'),
        human: str('docs for people'),
        developers: str('docs for developers'),
        agents: str('docs for agents'),
        protocol: str('the agent protocol'),
        events: str('the events: types, resume, retention, transports'),
        competitions: str('competitions (a later layer)'),
      },
      'documentation',
    ),
    auth: obj(
      {
        key_format: str('what an API key looks like'),
        headers: strings('headers that carry the key'),
        public: strings('what needs no key'),
        key_required: strings('what needs a key'),
        holders: str('how holders sign in'),
      },
      'authentication',
    ),
    markets: list(
      obj(
        {
          id: str('market id'),
          label: str('display name'),
          interval_seconds: int('session length in service seconds'),
        },
        'a market',
      ),
      'the four markets',
    ),
    time_scale: num(TIME_SCALE),
    rate_limits: list(
      obj(
        {
          name: str('the policy name the RateLimit headers carry'),
          quota: int('requests allowed per window'),
          window_seconds: int('the window, in seconds'),
          counts: str('what the limit counts and what its headers say'),
        },
        'a rate limit',
      ),
      'the rate limits and their windows (CONTRACT.md "Rate-limit headers")',
    ),
    money_and_time: obj(
      {
        fulfilment_fee: str("the per-unit fee inside every order's total_amount"),
        monthly_fee: str("the holder's participation fee: when it is charged, and where it shows"),
        holding_fee: str('what a position pays while it sells'),
        time_scale: str('how market time maps to real time here; closes_at is real'),
      },
      'what the holder pays and how time runs, a paragraph each (the guide\'s "Money and time")',
    ),
    engine: obj(
      { name: str('engine name (core_v1)'), description: str('what the engine simulates') },
      'the market engine',
    ),
    layers: obj(
      {
        trading: str('the trading layer'),
        ownership: str('the ownership layer'),
        exchange: str('the exchange layer'),
        competitions: str('the competitions layer'),
      },
      'the layers of the service and their state',
    ),
    history: obj(
      { record: str('what the record keeps'), endpoints: strings('record endpoints') },
      'the public record',
    ),
    events: obj(
      {
        advice: str("subscribe, don't poll"),
        stream: str("your account's events as Server-Sent Events (key)"),
        replay: str("your account's events after an id (key)"),
        market_stream: str("a market's session closes as Server-Sent Events (public)"),
        websocket: str('the WebSocket carrying the same events'),
        webhooks: Type.Optional(str('where webhooks are registered (key)')),
        resume: str('how a client resumes without missing or repeating an event'),
        retention_days: int('how long events are kept'),
        types: strings('the event types'),
        asyncapi: str('the AsyncAPI 3 document'),
        docs: str('the events explained'),
      },
      'events: what an agent learns without polling',
    ),
    carts: obj(
      {
        kinds: obj({ trade: str('a trade cart'), own: str('an own cart') }, 'cart kinds'),
        flow: str('how carts are used'),
        permissions: str('who may read, write and check out a cart'),
      },
      'carts',
    ),
    flow: strings("the agent's flow, step by step"),
    payments: obj(
      {
        methods: strings('payment methods'),
        card: obj(
          {
            ready: bool('cards are accepted'),
            test_cards_only: bool('only test cards are accepted (demo)'),
          },
          'card payments',
        ),
        crypto: obj({ ready: bool('crypto payments are accepted') }, 'crypto payments'),
        monthly_fee: MonthlyFeeTerms,
        gold_coins: GoldCoins,
        payouts: Payouts,
      },
      'payments',
    ),
    competitions: obj(
      { list: str('competitions list'), docs: str('competitions docs') },
      'competitions (a later layer)',
    ),
    legal: obj(
      {
        terms: str('terms of service'),
        privacy: str('privacy notice'),
        terms_version: str('date of the terms (YYYY-MM-DD)'),
      },
      'legal',
    ),
    notice: str('what this environment is'),
    schema: obj(
      {
        applied: int('database migrations applied'),
        last: str('the newest migration'),
        last_at: num('when it ran (unix seconds)'),
      },
      'the database schema version',
    ),
  },
  'what the service is',
);

export const Catalog = obj(
  {
    families: list(
      obj(
        {
          cluster: int('item family id'),
          sku_family: str('item family name'),
          title: str('display name'),
          unit: str('what one unit is'),
          origin: str('where the goods ship from'),
          items: list(
            obj({ name: str('item name'), grades: strings('grades the item comes in') }, 'an item'),
            'items of the family',
          ),
          addons: strings('add-ons the family takes'),
        },
        'an item family',
      ),
      'item families',
    ),
    addons: list(
      obj({ name: str('add-on id'), label: str('display name') }, 'an add-on'),
      'add-ons',
    ),
    grades: strings('condition grades'),
  },
  'item families with their items, add-ons and grades',
);

export const PaymentMethods = obj(
  {
    environment: str('demo: simulated markets and test cards only'),
    real_charges: bool('whether anything real is charged'),
    methods: list(
      obj(
        {
          id: str('method id'),
          ready: bool('whether it can be used'),
          description: str('what it is'),
          test_cards: Type.Optional(
            list(
              obj(
                { number: str('card number'), result: str('what paying with it does') },
                'a test card',
              ),
              'test cards (card only)',
            ),
          ),
        },
        'a payment method',
      ),
      'payment methods',
    ),
    monthly_fee: obj(
      {
        amount: num('participation fee per calendar month'),
        currency: str('USD'),
        charged: str('when it is charged'),
        not_charged_on: strings('what does not charge it'),
      },
      'the monthly participation fee',
    ),
    gold_coins: GoldCoins,
    payouts: Payouts,
    terms_url: str('terms of service'),
    privacy_url: str('privacy notice'),
  },
  'payment methods and readiness, monthly fee, payout terms',
);

export const AgentProtocol = obj(
  {
    recommendation: str('the recommended way of working'),
    rules: strings('rules of the protocol'),
    analysis: obj(
      {
        summary: str('how to study the record'),
        endpoints: strings('record endpoints to study'),
        caution: str('what to beware of'),
      },
      'studying the record',
    ),
    consent: obj(
      {
        human_needed_to_register_and_read: bool('whether a person must act first'),
        human_needed_to_spend: bool('whether a person must approve spending'),
        how: str('how consent is given'),
      },
      'consent',
    ),
    steps: list(
      obj(
        {
          step: int('step number'),
          do: str('what to do'),
          request: str('the request'),
          body: Type.Optional(keyed(Type.Unknown(), 'an example request body')),
          note: str('what to know'),
        },
        'a step',
      ),
      'the steps, in order',
    ),
  },
  "the agent's working protocol as data",
);

export const Health = obj({ status: str('ok') }, 'the process is alive');
export const Ready = obj(
  {
    status: str('ready'),
    schema: str('the newest database migration'),
    node: str('this process (SVC_NODE_NAME, else HOST:PORT)'),
    closes: bool(
      "whether this process runs the market closes (holds the closes' lease; one process of those on a database does)",
    ),
  },
  'ready to serve',
);
export const Starting = obj(
  { status: str('starting or stopping'), detail: str('what it is waiting for') },
  'not ready: starting (retry after Retry-After), or stopping (a balancer takes it out)',
);
