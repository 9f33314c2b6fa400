// GET /api/v1/agents/protocol: the agent's working protocol as data, so an agent can follow it
// step by step without parsing prose. Requests are relative to the API base.
import { FUNDING_PROFITABLE_TRADES, SETTLEMENT_HORIZON_SESSIONS } from '../rules.js';
import { HISTORY_SPAN } from '../market-data/record-query.js';
import { COVERAGE_PATH } from './record-ranges.js';
import type { RoutePaths } from './route-paths.js';
import {
  EVENTS_DOC_PATH,
  EVENT_RETENTION_DAYS,
  SUBSCRIBE_NOT_POLL,
  followCommand,
} from './events.js';

/** Every request and path is named through `at`: only routes of the table. */
export function agentProtocol(at: RoutePaths) {
  return {
    recommendation:
      'Register once with a key you generate yourself, study the public record before proposing anything, ' +
      'propose deals to your account holder, and let the holder approve by paying. Never spend without the holder.',
    rules: protocolRules(at),
    analysis: recordAnalysis(at),
    consent: CONSENT,
    steps: [...joinSteps(at), ...studySteps(at), ...proposeSteps(at), ...followSteps(at)],
  };
}

/** The rules an agent keeps, whatever step it is at. */
function protocolRules(at: RoutePaths) {
  return [
    'Generate your own 80-character [A-Za-z0-9] key from a cryptographic random source; the first 20 characters are your public key id.',
    'Send the key only in the Authorization: Bearer header (or X-API-Token) of this service; it is stored hashed and never shown again.',
    `One key is one agent is one trading account. Keep the key and your recall phrase; POST ${at.rel('/agents/recall', 'POST')} confirms who you are later.`,
    'Deal keys are valid only during the session that published them; orders must be funded before closes_at or they expire.',
    'Nothing is charged by an agent alone: the holder approves by paying, until they switch on autonomous funding for you.',
    `Autonomous funding (pay_from_balance, executing carts) is allowed only after ${FUNDING_PROFITABLE_TRADES} settled trades of yours in profit, and the holder can turn it off at any time.`,
    'Respect 429/503 answers: wait for Retry-After before retrying.',
    `${SUBSCRIBE_NOT_POLL} GET ${at.rel('/events/stream')} with your key; resume with Last-Event-ID.`,
  ];
}

/** What to learn from the record before proposing anything, and where. */
function recordAnalysis(at: RoutePaths) {
  return {
    summary: `Demand is not served; sales are. Learn from the record: history rows, trades, tape, stats and the labeled dataset show what executed deals realised over their ${SETTLEMENT_HORIZON_SESSIONS}-session horizon.`,
    endpoints: [
      '/markets/{market_id}/history',
      '/markets/{market_id}/dataset.csv',
      '/markets/{market_id}/tape',
      '/markets/{market_id}/stats',
      '/markets/{market_id}/families',
      '/markets/{market_id}/deals/{offer_key}/projection',
      '/markets/{market_id}/projection',
    ].map((p) => at.api(p)),
    caution:
      'A deal that sold out censors demand: its profit curve is unknown above the executed volume. Downside events collapse demand and add a settlement surcharge.',
  };
}

const CONSENT = {
  human_needed_to_register_and_read: false,
  human_needed_to_spend: true,
  how: 'Hand the purchase_url (orders) or checkout_url (carts) to your account holder; they see your declared identity and proposal and approve by paying.',
};

/** Steps 1-3: the manifest, a key, the registration. */
function joinSteps(at: RoutePaths) {
  return [
    {
      step: 1,
      do: 'Read the manifest',
      request: at.req('GET', '/manifest'),
      note: 'markets, flow, payments and limits in one document',
    },
    {
      step: 2,
      do: 'Invent a key (nothing is stored)',
      request: at.req('POST', '/agents/token'),
      note: 'or generate one yourself',
    },
    {
      step: 3,
      do: 'Register under your key',
      request: at.req('POST', '/agents/register'),
      body: {
        token: '<80 chars>',
        name: 'my-agent',
        recall_phrase: 'a phrase you will remember',
        agent: { model: '...', kind: 'llm-agent' },
        purpose: '...',
      },
      note: '409 when the key is already registered; store the `keep` note',
    },
  ];
}

/** Steps 4-5: the markets, the menu and the record. */
function studySteps(at: RoutePaths) {
  return [
    {
      step: 4,
      do: 'Read the markets and the current menu',
      request: at.req('GET', '/markets'),
      note: `then GET ${at.rel('/markets/{market_id}/deals')}`,
    },
    {
      step: 5,
      do: 'Study the record',
      request: `${at.req('GET', '/markets/{market_id}/history')}?from_tick=&to_tick=`,
      note: `at most ${HISTORY_SPAN} sessions per call; the sessions on record: GET ${at.rel(COVERAGE_PATH)}; the families on the menu with their recorded outcomes: GET ${at.rel('/markets/{market_id}/families')}; what the record projects for a deal: GET ${at.rel('/markets/{market_id}/deals/{offer_key}/projection')}, or for a hypothetical one: GET ${at.rel('/markets/{market_id}/projection')}?cluster=&unit_cost=`,
    },
  ];
}

/** Steps 6-8: a cart proposed, handed to the holder, followed. */
function proposeSteps(at: RoutePaths) {
  return [
    {
      step: 6,
      do: 'Propose deals in your cart',
      request: at.req('POST', '/cart/items'),
      body: {
        market: 'm15',
        offer_key: '<key from the menu>',
        qty: 1,
        note: 'why this deal (shown to your holder)',
      },
      note: `a line's qty above max_qty is clamped to it; the answer carries checkout_url (or order one deal directly: POST ${at.rel('/orders', 'POST')} with qty 1..max_qty, more answers 422; answered with purchase_url)`,
    },
    {
      step: 7,
      do: 'Hand checkout_url to your account holder',
      request: 'checkout_url',
      note: 'they see your identity and each line, and pay before the session closes; stale lines are skipped, never charged',
    },
    {
      step: 8,
      do: 'Follow your cart',
      request: at.req('GET', '/cart'),
      note: 'lines go pending_pairing → in_cart → ordered (with order_id)',
    },
  ];
}

/** Steps 9-11: the events, their replay, the results. */
function followSteps(at: RoutePaths) {
  return [
    {
      step: 9,
      do: 'Subscribe to your events instead of polling',
      request: at.req('GET', '/events/stream'),
      note: `Server-Sent Events with your key and Accept: text/event-stream (${followCommand(at)}): order.paid when the holder pays, order.filled at the session close, position.advanced at each of the next ${SETTLEMENT_HORIZON_SESSIONS} closes, position.settled at the end; ids are gap-free, reconnect with Last-Event-ID and every later event comes exactly once; ?types=position.settled keeps only those`,
    },
    {
      step: 10,
      do: 'Replay what you missed',
      request: `${at.req('GET', '/events')}?after=`,
      note: `oldest first, {events, next_after}; kept ${EVENT_RETENTION_DAYS} days (410 past that: re-read GET ${at.rel('/orders')} and GET ${at.rel('/positions')}); or receive the same events over the WebSocket or as signed webhooks (${at.path(EVENTS_DOC_PATH)})`,
    },
    {
      step: 11,
      do: 'Review results',
      request: at.req('GET', '/trades'),
      note: 'the same realized_pnl as the market record',
    },
  ];
}
