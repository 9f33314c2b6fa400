// The agent's guide in sections: one source for /llms.txt (plain text) and the docs pages (HTML),
// so the two never disagree. Every number is quoted from its one definition.
import { API_TAG_NAMES } from '../api/tags.js';
import { MARKETS, MARKET_IDS } from '../engine/index.js';
import { FUNDING_PROFITABLE_TRADES, SETTLEMENT_HORIZON_SESSIONS } from '../rules.js';
import { TEST_CARDS } from '../payments/cards.js';
import { MONTHLY_FEE } from '../payments/terms.js';
import { COVERAGE_PATH, RECORD_RANGES, SPAN_REFUSAL, capWords } from './record-ranges.js';
import type { RoutePaths } from './route-paths.js';
import { ASYNCAPI_PATH, EVENTS_DOC_PATH, eventsSection } from './events.js';
import { approvalSection } from './approval.js';

import type { Section } from './section.js';
import { DEFAULT_RATE_LIMIT, RATE_LIMIT_POLICY, type RateLimitPolicy } from '../http/rate-limit.js';
export type { Section };

export const SUMMARY = [
  'A session-based market-access service for automated agents and their human account holders.',
  'Agents register with their own API key, read markets that run in numbered sessions and propose',
  `deals; humans approve by paying; positions sell through over ${SETTLEMENT_HORIZON_SESSIONS} sessions and settle; everything`,
  'is recorded and served back as data. Demo environment: test cards only, no real money.',
];

/** A session's real length at this time scale, said plainly. */
const realSeconds = (interval: number, timeScale: number) => {
  const s = interval / timeScale;
  return s >= 10 ? `${Math.round(s)} s` : `${Number(s.toPrecision(2))} s`;
};

export function marketsSection(timeScale = 1): Section {
  return {
    id: 'markets',
    title: 'Markets',
    items: MARKET_IDS.map(
      (id) =>
        `${id}: ${MARKETS[id].label}, a session every ${MARKETS[id].interval_seconds} s of market time` +
        (timeScale === 1
          ? ''
          : ` (${realSeconds(MARKETS[id].interval_seconds, timeScale)} of real time here: see "Money and time")`),
    ),
  };
}

const usdOf = (cents: number) => (cents / 100).toFixed(2);

/**
 * What an agent must foresee: what its holder is charged beyond an order's total_amount (the
 * month's fee), and what `time_scale` does, which otherwise only the OpenAPI explains.
 */
export function moneyAndTimeSection(at: RoutePaths, timeScale = 1): Section {
  const fees = MARKET_IDS.map(
    (id) => `${id} ${usdOf(MARKETS[id].fees.fulfilment_per_unit_cents)}`,
  ).join(', ');
  const holding = MARKET_IDS.map(
    (id) => `${id} ${usdOf(MARKETS[id].fees.holding_per_unit_session_cents)}`,
  ).join(', ');
  return {
    id: 'money-and-time',
    title: 'Money and time',
    items: [
      `The fulfilment fee is per unit and per market (USD: ${fees}); it is in every order: fee_amount = qty × the fee, and total_amount = gross_amount + fee_amount.`,
      `The monthly participation fee: ${MONTHLY_FEE.amount.toFixed(2)} ${MONTHLY_FEE.currency}, once per calendar month per holder, charged with the holder's first real-money payment of the month that delivers (not on further payments that month, top-ups, payouts or Gold Coins). It is not inside total_amount: an order awaiting payment and a cart with lines carry holder_pays {goods, participation_fee, total}, what a card payment made now would charge (the payment page shows the same one total); a pay_from_balance order answers it as monthly_fee_charged; ${at.req('GET', '/account')} says in monthly_fee whether this month's is paid. A receipt's "fee" is this monthly fee, not the order's fee_amount.`,
      `While a position sells it pays a holding fee per unsold unit at each close (USD a unit a session: ${holding}), taken from what it sells; losses are possible and are not refunded.`,
      `A downside event (demand collapsing for the rest of a position's horizon, which some deals suffer) also brings a settlement surcharge, debited when the position settles (a share of qty × unit_cost plus a flat amount, by the deal's family). pnl_so_far leaves it out until then, so a position can show a profit for sessions and settle at a loss; a settled position shows it as surcharge, and outcome.downside_event says whether it happened.`,
      `Time: each market runs a session every interval_seconds of market time; this service runs ${timeScale === 1 ? 'at time_scale 1 (market time is real time)' : `at time_scale ${timeScale}: a session lasts interval_seconds / ${timeScale} real seconds`} (time_scale in ${at.api('/manifest')}). closes_at is always real unix seconds and seconds_to_close (${at.req('GET', '/markets/{market_id}')}) the real time left: fund before it, whatever the scale.`,
    ],
  };
}

// Every address below is named through `at` (src/docs/route-paths.ts): only routes of the table.
export function flowSection(at: RoutePaths): Section {
  return {
    id: 'flow',
    title: 'Flow',
    ordered: true,
    items: [
      `Generate an 80-character [A-Za-z0-9] key yourself (or ${at.req('POST', '/agents/token')} to get one invented; nothing is stored).`,
      `${at.req('POST', '/agents/register')} with {token, name, recall_phrase}; keep the key, it is never shown again. The answer names your cart and its checkout_url.`,
      `Read ${at.req('GET', '/markets')} and ${at.req('GET', '/markets/{market_id}/deals')} (deal keys are valid for one session).`,
      `Study the public record (no key needed): history, trades, tape, stats, dataset.csv (each call covers a range of sessions, see "Record ranges"); the item families on the current menu with their recorded outcomes: ${at.req('GET', '/markets/{market_id}/families')}; what the record projects for a deal of the menu: ${at.req('GET', '/markets/{market_id}/deals/{offer_key}/projection')}, or for a hypothetical deal of a family at a unit cost: ${at.req('GET', '/markets/{market_id}/projection')}?cluster=&unit_cost=.`,
      `Before you propose or order a deal, quote it: ${at.req('POST', '/orders/quote')} with the body of ${at.req('POST', '/orders')} answers what the holder would pay (holder_pays), whether your holder's limits allow it (limits.allowed and each check's remaining), what it could lose (risk: how similar settled deals did, the surcharge rate, max_loss) and would_answer, the status ordering would answer now. Nothing is placed, reserved or charged: quote every deal you consider.`,
      `Propose deals in your cart: ${at.req('POST', '/cart/items')} with {market, offer_key, qty, note} and your key in "Authorization: Bearer <key>" (a line's qty above the deal's max_qty is clamped to it; the note is your rationale, shown to the holder). Or order one deal directly: ${at.req('POST', '/orders')} with {market, offer_key, qty} (qty 1..max_qty: more is refused with 422, never clamped).`,
      `Hand the cart's checkout_url (or the order's purchase_url) to your account holder, a human. They open it, see who you are (name, model, vendor, operator, purpose) and each line with its note, price, fee and total, register or log in on the page, and approve by paying with a test card (${at.req('GET', '/payments/methods')}) before the session closes, or decline it there. Changed your mind? ${at.req('DELETE', '/orders/{order_id}')} withdraws an order still awaiting payment: it becomes cancelled, its link takes no payment and nothing is charged (order.cancelled tells you either way, with by: agent or holder).`,
      `Follow your cart: ${at.req('GET', '/cart')} (line status pending_pairing until a holder connects, then in_cart, then ordered with order_id). A line whose session closed is stale: checkout skips it and never charges it; propose a deal of the current menu instead.`,
      `The paid orders fill at the session close; the positions sell through over ${SETTLEMENT_HORIZON_SESSIONS} sessions and settle (${at.req('GET', '/positions')}, ${at.req('GET', '/trades')}). Learn each step as it happens from your event stream, ${at.req('GET', '/events/stream')}, instead of polling (see "Events").`,
    ],
  };
}

export function recordRangesSection(at: RoutePaths): Section {
  return {
    id: 'record-ranges',
    title: 'Record ranges',
    items: [
      `These record routes read a range of sessions given as from_tick and to_tick (session numbers, both inclusive); ${SPAN_REFUSAL}:`,
      ...RECORD_RANGES.map(
        (r) =>
          `${at.req('GET', r.path)}: ${r.required ? 'from_tick and to_tick required' : `from_tick and to_tick ${r.note}`}; ${capWords(r)}.`,
      ),
      `Which sessions a market has on record: ${at.req('GET', COVERAGE_PATH)} (the first and last recorded session); the open session is current_tick of ${at.req('GET', '/markets/{market_id}')}. Page through a long range call by call.`,
    ],
  };
}

export function cartsSection(at: RoutePaths): Section {
  return {
    id: 'carts',
    title: 'Carts',
    items: [
      "Kinds: trade (paying places and funds an order per line on the proposing agent's account) and own (paying buys the goods outright into the holder's inventory: no order, position or trade). The service assigns trade; the holder may switch an unpaid cart.",
      `Registration makes your default cart: ${at.req('GET', '/cart')} shows it with its lines and the other carts you see; ${at.req('POST', '/cart/items')} adds a line to it, ${at.req('DELETE', '/cart/items/{item_id}')} withdraws one of yours until it is ordered, ${at.req('POST', '/cart/link')} answers its checkout_url again.`,
      `Once a holder is connected, every agent of that holder sees every cart of the holder (${at.req('GET', '/carts')}; since=unix seconds for changes only). Writing to a cart that is not yours needs the holder's write grant; "permissions" in every cart answer says what you may do and why not.`,
      `${at.req('POST', '/carts')} makes another cart; PUT and DELETE ${at.api('/carts/{cart_id}/items/{item_id}', 'PUT', 'DELETE')} change or remove a line until it is ordered.`,
      `${at.req('POST', '/carts/{cart_id}/checkout')} pays a cart yourself: 403 until your holder switches autonomous funding on for you, then it needs an execute grant (pay_with balance or the holder's stored card) or is your own cart paid from your own balance. Repeating it charges nothing twice; send an Idempotency-Key to retry safely.`,
    ],
  };
}

export function goodsSection(at: RoutePaths): Section {
  return {
    id: 'goods',
    title: 'Owned goods and the exchange',
    items: [
      `Whole units a position did not sell by settlement, and goods an own cart bought outright, become the holder's owned goods: ${at.req('GET', '/inventory')} (story, rarity, the family's history, provenance: one entry per owner).`,
      `Holders list and buy goods by hand on the web (${at.url('/exchange')}), in USD or in Gold Coins (two books); agents read the open listings: ${at.req('GET', '/exchange/listings')}?currency=USD|GC&family=&limit=.`,
    ],
  };
}

export function competitionsSection(at: RoutePaths): Section {
  return {
    id: 'competitions',
    title: 'Competitions',
    items: [
      `Free-entry paper trading on simulated balances, one running competition per market at all times: ${at.req('GET', '/competitions')} (and /{id} for the whole leaderboard, ranked by return on the starting balance from settled positions).`,
      `To enter, your holder joins on ${at.url('/competitions/{id}')} and makes a key attached to that competition account on the console (POST ${at.path('/console/agents', 'POST')} with its account_id). Orders with that key are funded at once from the simulated balance; outside the window or on another market they answer 403. Real money is never touched; the top three get the sponsor's prize pool. Rules: ${at.url('/docs/competitions')}`,
    ],
  };
}

export function testCardsSection(at: RoutePaths): Section {
  return {
    id: 'test-cards',
    title: 'Test cards',
    items: [
      `Demo payments take test cards only; ${at.req('GET', '/payments/methods')} lists them (methods[].test_cards).`,
      `${TEST_CARDS.approved} is approved (any future expiry as MM/YY, any 3-digit CVC); ${TEST_CARDS.declined} is always declined (402).`,
      'Any other number that passes the Luhn check is approved; one that fails it, or a past expiry, answers 400. No real charge is ever made.',
    ],
  };
}

/** The rate limit in words (llms.txt, /docs/agents; the manifest's rate_limits carries the figures). */
export const rateLimitWords = (p: RateLimitPolicy) =>
  `Rate limit "${RATE_LIMIT_POLICY}": each key may make ${p.quota} API requests per ${p.windowSeconds} seconds (counted per front end). Every answer to a request with your key carries RateLimit-Policy ("${RATE_LIMIT_POLICY}";q=${p.quota};w=${p.windowSeconds}) and RateLimit ("${RATE_LIMIT_POLICY}";r=<requests left>;t=<seconds until the window ends>); past the quota, 429 with Retry-After.`;

export function rulesSection(rateLimit: RateLimitPolicy = DEFAULT_RATE_LIMIT): Section {
  return {
    id: 'rules',
    title: 'Rules',
    items: [
      `Nothing is charged by an agent alone; autonomous funding is a holder's switch, allowed after ${FUNDING_PROFITABLE_TRADES} settled trades in profit.`,
      'Deal keys are valid only during the session that published them: an order on an old key answers 404; read the current menu again.',
      'Errors are JSON {"detail": ...}; 422 lists each invalid field with loc, msg and type.',
      'Retry POST, PUT and DELETE safely with an Idempotency-Key header (1..255 printable ASCII characters): a repeat with the same key and body gets the first answer again (Idempotent-Replayed: true) for 24 hours; the same key with another body answers 400.',
      'Respect 429 and 503 answers: wait for Retry-After before retrying.',
      rateLimitWords(rateLimit),
    ],
  };
}

export function docsSection(at: RoutePaths): Section {
  return {
    id: 'docs',
    title: 'Docs',
    items: [
      `Manifest: ${at.api('/manifest')}`,
      `Agent protocol (steps as data): ${at.api('/agents/protocol')}`,
      `OpenAPI 3.1: ${at.url('/api/openapi.json')}`,
      `AsyncAPI 3 (the event stream, the market stream, the WebSocket, webhooks): ${at.url(ASYNCAPI_PATH)}`,
      `Interactive API docs: ${at.url('/api/docs')}`,
      `MCP (Model Context Protocol, Streamable HTTP, stateless): POST ${at.url('/mcp', 'POST')}; the tools are the API's operations named by operationId, your key in Authorization: Bearer; POST ${at.url('/mcp', 'POST')}?tags=${API_TAG_NAMES.slice(3, 5).join(',')} lists only the tools of those tags (${API_TAG_NAMES.join(', ')}). quote_order says what an order would be before create_order; wait_events holds until your next events (one call at a time, no polling).`,
      `Human docs: ${at.url('/docs')} (for agents: ${at.url('/docs/agents')}; every route: ${at.url('/docs/developers')}; events: ${at.url(EVENTS_DOC_PATH)})`,
    ],
  };
}

/** The whole guide in the order /llms.txt gives it. */
export function guideSections(
  at: RoutePaths,
  timeScale = 1,
  rateLimit: RateLimitPolicy = DEFAULT_RATE_LIMIT,
): Section[] {
  return [
    marketsSection(timeScale),
    flowSection(at),
    moneyAndTimeSection(at, timeScale),
    eventsSection(at),
    approvalSection(at),
    recordRangesSection(at),
    cartsSection(at),
    goodsSection(at),
    competitionsSection(at),
    testCardsSection(at),
    rulesSection(rateLimit),
    docsSection(at),
  ];
}

/** A section as Markdown-flavoured plain text (llms.txt). */
export function sectionText(s: Section): string {
  return `## ${s.title}\n${s.items.map((item, i) => `${s.ordered ? `${i + 1}.` : '-'} ${item}`).join('\n')}\n`;
}
