// The events as the discovery texts teach them (CONTRACT.md "Events"): subscribe,
// don't poll. One source for the guide's "Events" section (/llms.txt, /docs/agents), the agent
// protocol's steps, the manifest's `events` block and the /docs/events page; the table of types is
// generated from the schemas every transport carries (src/schemas/events.ts).
import { WAIT_MAX_S } from '../events/query.js';
import type { TSchema } from 'typebox';
import { EVENT_DATA, EVENT_TYPES, LedgerEntry, Order, type EventType } from '../schemas/index.js';
import { SETTLEMENT_HORIZON_SESSIONS } from '../rules.js';
import { KEEPALIVE_MS } from '../events/hub.js';
import { API_PREFIX, type RoutePaths } from './route-paths.js';
import type { Section } from './section.js';
import { MARKET_STREAMS_PER_ADDRESS, STREAMS_PER_KEY } from '../http/limits.js';

/** CONTRACT.md "Events": kept 7 days (actors/events/reads.ts sweeps by the same figure; a unit test holds them equal). */
export const EVENT_RETENTION_DAYS = 7;
/** CONTRACT.md "Events": a webhook delivery is retried with backoff for this long. */
export const WEBHOOK_RETRY_HOURS = 24;
export const ASYNCAPI_PATH = '/api/asyncapi.json';
export const EVENTS_DOC_PATH = '/docs/events';

/** When each type is appended (CONTRACT.md "Events"). */
export const EVENT_WHEN = {
  'order.created': 'an order is placed: POST /orders, or a cart line ordered at checkout',
  'order.paid':
    'the holder funds the order; an order funded at once (pay_from_balance, a competition account) emits order.created then order.paid',
  'order.filled': 'the session closes and the paid order becomes a position (position_id)',
  'order.expired': 'the session closes and the order was never funded',
  'order.refunded':
    'the close could not fill a paid order (its quarantine) and refunded it (refund_reason)',
  'order.cancelled':
    'an order awaiting payment is withdrawn: by its agent (DELETE /orders/{id}) or declined by the holder on its purchase page (data.by)',
  'position.advanced':
    "each session close while the position sells through: data.session has that session's sold, revenue and holding_cost",
  'position.settled': `the close of its last session (after ${SETTLEMENT_HORIZON_SESSIONS}): realized_pnl is set`,
  'cart.connected': "a holder opened the cart's checkout link and the cart has its holder",
  'cart.line_added': 'a line is proposed in one of your carts',
  'cart.line_ordered': 'checkout turned the line into an order (order_id)',
  'cart.line_removed': 'a line is withdrawn or removed before it is ordered',
  'funding.changed': 'the holder switched autonomous funding on or off for an agent',
  'grant.changed': 'a cart grant of the holder was granted or revoked',
  'limits.changed': "the holder changed an agent's spending limits",
  'ledger.posted':
    "money moved outside a session close: payments, fees, top-ups, payouts, exchange, prizes, refunds (the close's sales, holding fees and surcharges travel in position.advanced / position.settled)",
} as const satisfies Record<EventType, string>;

type Props = { properties?: Record<string, TSchema & Props>; description?: string };

/** `cart_id, holder {connected, since}`: the fields of a small object. */
function fieldList(s: Props): string {
  const small = (v: Props) =>
    v.properties && Object.keys(v.properties).length > 0 && Object.keys(v.properties).length <= 4;
  return Object.entries(s.properties ?? {})
    .map(([k, v]) => (small(v) ? `${k} {${fieldList(v)}}` : k))
    .join(', ');
}

/** What an event's `data` is, from its schema: the GET that serves the object, or the small object's fields. */
export function dataWords(at: RoutePaths, type: EventType): string {
  const s = EVENT_DATA[type] as TSchema & Props;
  if (s === Order) return `the order as GET ${at.rel('/orders/{order_id}')} serves it`;
  if (s === LedgerEntry) return `the ledger entry as GET ${at.rel('/account')} lists it`;
  const n = Object.keys(s.properties ?? {}).length;
  return n <= 4 ? `${s.description}: {${fieldList(s)}}` : `${s.description}`;
}

/** The table of /docs/events: every type, in the order the schemas declare them. */
export function eventTypeRows(at: RoutePaths) {
  return EVENT_TYPES.map((type) => ({ type, when: EVENT_WHEN[type], data: dataWords(at, type) }));
}

/** The WebSocket's address (ws:// or wss:// on the service's host), its path checked against the table. */
export const wsAddress = (at: RoutePaths) =>
  `${at.baseUrl.replace(/^http/, 'ws')}${at.path(`${API_PREFIX}/ws`)}`;

/**
 * The webhook routes (CONTRACT.md "Events"), named through the route table once it serves them; a
 * service without them says so rather than naming paths it does not serve. Only the collection's
 * routes are named (a webhook's own, by its id, are in the API reference).
 */
export function webhookRoutes(at: RoutePaths): { register: string; list: string } | null {
  if (!at.has(`${API_PREFIX}/webhooks`, 'POST')) return null;
  return { register: at.req('POST', '/webhooks'), list: at.req('GET', '/webhooks') };
}

/** The command that follows the account's stream in a shell (curl streams only with this Accept; without it the route answers the events so far as JSON). */
export const STREAM_ACCEPT = "-H 'accept: text/event-stream'";
export const followCommand = (at: RoutePaths) =>
  `curl -N ${STREAM_ACCEPT} -H "authorization: Bearer $KEY" ${at.api('/events/stream')}`;

/** The one sentence every text opens its events with. */
export const SUBSCRIBE_NOT_POLL =
  "Subscribe, don't poll: after placing an order, hold one event stream open and wait for your events instead of polling orders or positions on a timer.";

/** The guide's "Events" section (/llms.txt and /docs/agents). */
export function eventsSection(at: RoutePaths): Section {
  const hooks = webhookRoutes(at);
  return {
    id: 'events',
    title: "Events: subscribe, don't poll",
    items: [
      `${SUBSCRIBE_NOT_POLL} ${at.req('GET', '/events/stream')} (your key) is Server-Sent Events: each event's "id:" is its id, "event:" its type, "data:" the event {id, type, created_at, data}; a ": keep-alive" comment at least every ${KEEPALIVE_MS / 1000} s. It streams to a client that sends Accept: text/event-stream (EventSource does); without it, it answers the events so far as JSON and ends. In a shell: ${followCommand(at)}`,
      `An order you placed then tells its story on that stream: order.paid when your holder pays, order.filled at the session close, position.advanced at each of the next ${SETTLEMENT_HORIZON_SESSIONS} closes (with that session's sales), position.settled at the end (realized_pnl). ?types=order.filled,position.settled keeps only those.`,
      `Event ids are your account's own sequence, gap-free (1, 2, 3, ...). After a dropped connection, reconnect with the header Last-Event-ID: <the last id you have> (or ?after=<id>): every later event arrives exactly once (an EventSource client does this by itself).`,
      `Missed some while away? ${at.req('GET', '/events')}?after=<id>&limit=&types= replays them, oldest first: {events, next_after}. Events are kept ${EVENT_RETENTION_DAYS} days; an older after answers 410 with the id events exist from: re-read ${at.req('GET', '/orders')} and ${at.req('GET', '/positions')}, then resume from there.`,
      `Can hold a request but not a stream (an MCP host, a function)? ${at.req('GET', '/events/wait')}?after=<id>&timeout_s=20 answers as soon as you have events after that id ({events, next_after}, as ${at.req('GET', '/events')}), or none after timeout_s (at most ${WAIT_MAX_S}): call it again from next_after, one call at a time.`,
      `Every market's session closes, public: ${at.req('GET', '/markets/{market_id}/stream')} (Server-Sent Events session.closed {market, tick, next_tick, tick_closes_at}; id: the closed tick).`,
      `The same events over a WebSocket: ${wsAddress(at)} (the key in the upgrade's Authorization header, or a first message {"op": "auth", "key": "..."}; then {"op": "subscribe", "channels": ["account", "market:m15"], "after": N, "types"?: [...]}; frames {"channel", "event"}; a connection too slow to read is closed with 4429 and the after=N to resume from).`,
      `One key holds at most ${STREAMS_PER_KEY} streams at once (${at.req('GET', '/events/stream')} and WebSockets together; one stream carries all your account's events, and one WebSocket every channel): one more answers 429 with Retry-After (a WebSocket whose key comes in its first message is closed with 4429), and closing a stream frees its place at once. One address holds at most ${MARKET_STREAMS_PER_ADDRESS} market streams.`,
      hooks
        ? `Or receive them as webhooks: ${hooks.register} {url, types?} answers the signing secret (whsec_..., shown once); each delivery is a POST of the event signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), retried for ${WEBHOOK_RETRY_HOURS} hours; deduplicate by webhook-id. ${hooks.list} lists yours; each one's deliveries are under its id.`
        : `Or receive them as webhooks: POSTs of each event to a URL of yours, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), retried for ${WEBHOOK_RETRY_HOURS} hours; deduplicate by webhook-id (this service does not serve the webhook routes yet).`,
      `The types: ${EVENT_TYPES.join(', ')}. Each explained: ${at.url(EVENTS_DOC_PATH)}; as an AsyncAPI 3 document: ${at.url(ASYNCAPI_PATH)}.`,
    ],
  };
}

/** The manifest's `events` block. */
export function manifestEvents(at: RoutePaths) {
  const hooks = webhookRoutes(at);
  return {
    advice: SUBSCRIBE_NOT_POLL,
    stream: at.api('/events/stream'),
    replay: at.api('/events'),
    market_stream: at.api('/markets/{market_id}/stream'),
    websocket: wsAddress(at),
    ...(hooks ? { webhooks: at.api('/webhooks', 'POST', 'GET') } : {}),
    resume:
      'Last-Event-ID header (or ?after=) with the last event id you have: every later event exactly once',
    retention_days: EVENT_RETENTION_DAYS,
    types: [...EVENT_TYPES],
    asyncapi: at.url(ASYNCAPI_PATH),
    docs: at.url(EVENTS_DOC_PATH),
  };
}

/** The webhook receiver's check, in a few lines of JavaScript with the `standardwebhooks` library (shown on /docs/events). */
export const VERIFY_SNIPPET = `import { Webhook } from 'standardwebhooks';

const hook = new Webhook(process.env.WEBHOOK_SECRET); // the whsec_... secret registration answered
const seen = new Set(); // ids already handled: a delivery may come twice

// rawBody: the request body exactly as received (a string); headers: the request's headers
function receive(rawBody, headers) {
  const event = hook.verify(rawBody, headers); // throws unless signed with your secret in the last 5 minutes
  if (seen.has(headers['webhook-id'])) return; // a repeat: answer 2xx again, do nothing
  seen.add(headers['webhook-id']);
  console.log(event.id, event.type, event.data);
}`;
