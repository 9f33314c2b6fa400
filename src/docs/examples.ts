// The docs pages' request examples: shell with curl (and jq to pick fields), written against this
// service's own routes. Each command is preceded by a comment saying what it does, led by the
// status it answers when that is not the usual 2xx; test/api/docs-pages.test.ts runs every one.
import { HISTORY_SPAN } from '../market-data/record-query.js';
import { COVERAGE_PATH } from './record-ranges.js';
import type { RoutePaths } from './route-paths.js';
import { SETTLEMENT_HORIZON_SESSIONS } from '../rules.js';
import { STREAM_ACCEPT } from './events.js';

/** One command and what it does; `status` is the answer it gets when not a 2xx. */
export type Step = { say: string; sh: string; status?: number };
export type Example = { id: string; title: string; intro?: string; steps: Step[] };

/** The placeholder an example shows for a key the reader registered before (the tests put one in). */
export const KEY_PLACEHOLDER = '<your 80-character key>';

const AUTH = '-H "authorization: Bearer $KEY"';
const JSON_TYPE = "-H 'content-type: application/json'";

/**
 * A JSON body as a curl argument: single-quoted when literal, double-quoted (inner quotes escaped)
 * when it carries a shell variable such as $DEAL.
 */
export function shellJson(value: unknown): string {
  const s = JSON.stringify(value);
  return s.includes('$') ? `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"` : `'${s}'`;
}

/** `$B/path`: an API path (filled, or with shell variables) checked against the route table. */
const at$ = (at: RoutePaths, path: string, method = 'GET') => `$B${at.rel(path, method)}`;

/** `$B/path` of a GET: `at$` with the method left out. */
const getter = (at: RoutePaths) => (path: string) => at$(at, path);

/** `-XPOST $B/path -H ... -d body`: a JSON request's curl arguments. */
const poster =
  (at: RoutePaths) =>
  (path: string, body?: unknown, method = 'POST', auth = true) =>
    `curl -s -X${method} "${at$(at, path, method)}"${auth ? ` ${AUTH}` : ''}${body === undefined ? '' : ` ${JSON_TYPE} \\\n  -d ${shellJson(body)}`}`;

const base = (at: RoutePaths): Step => ({ say: 'the API base', sh: `B=${at.apiBase}` });

/** The shell text of an example, as the page shows it (and the test reads it back). */
export function shellText(e: Example): string {
  return e.steps.map((s) => `# ${s.status ? `${s.status}: ` : ''}${s.say}\n${s.sh}`).join('\n');
}

/** /docs/agents: register → read the menu → order → purchase link → carts. */
export function agentExamples(at: RoutePaths): Example[] {
  return [registerWalk(at), menuWalk(at), orderWalk(at), eventsWalk(at), cartsWalk(at)];
}

/** A key invented for the reader, registered, then who it is. */
function registerWalk(at: RoutePaths): Example {
  const post = poster(at);
  const $ = getter(at);
  return {
    id: 'walk-register',
    title: '1. Register',
    intro:
      'Invent a key (or generate 80 random characters of A-Z, a-z, 0-9 yourself) and register under it. Keep the key: it is stored hashed and never shown again.',
    steps: [
      base(at),
      {
        say: 'a key invented for you; nothing is stored until you register it',
        sh: `KEY=$(curl -s -XPOST "${at$(at, '/agents/token', 'POST')}" | jq -r .token)`,
      },
      {
        say: 'register under it (201; 409 if the key is already registered)',
        sh: post(
          '/agents/register',
          {
            token: '$KEY',
            name: 'My scout',
            recall_phrase: 'blue heron',
            agent: { model: 'demo', kind: 'llm-agent' },
            purpose: 'try the loop',
          },
          'POST',
          false,
        ),
      },
      {
        say: 'who you are now, and whether a holder is connected',
        sh: `curl -s "${$('/agents/me')}" ${AUTH}`,
      },
    ],
  };
}

/** The markets, the first deals of a menu, one deal kept and its projection. */
function menuWalk(at: RoutePaths): Example {
  const $ = getter(at);
  return {
    id: 'walk-menu',
    title: '2. Read the markets and the menu',
    intro:
      'Each market publishes a menu of deals every session; a deal key is valid only until its session closes.',
    steps: [
      {
        say: 'the four markets, their open session and when it closes',
        sh: `curl -s "${$('/markets')}" | jq '.markets[] | {id, current_tick, seconds_to_close}'`,
      },
      {
        say: 'the first deals of the h2 menu',
        sh: `curl -s "${$('/markets/h2/deals')}?limit=3" | jq '.deals[] | {key, title: .bundle.title, unit_cost, list_price, max_qty}'`,
      },
      {
        say: 'keep one deal key',
        sh: `DEAL=$(curl -s "${$('/markets/h2/deals')}?limit=1" | jq -r '.deals[0].key')`,
      },
      {
        say: 'what the record says about deals like it (low, mid and high outcome)',
        sh: `curl -s "${$('/markets/h2/deals/$DEAL/projection')}"`,
      },
    ],
  };
}

/** An order on the kept deal, the page its purchase link opens, the orders. */
function orderWalk(at: RoutePaths): Example {
  const post = poster(at);
  const $ = getter(at);
  return {
    id: 'walk-order',
    title: '3. Order and hand over the purchase link',
    intro:
      'An order waits for your account holder: they open its purchase_url, see who you are and what you ask, and pay before the session closes.',
    steps: [
      {
        say: 'order one unit of the deal (201); keep its purchase link',
        sh: `URL=$(${post('/orders', { market: 'h2', offer_key: '$DEAL', qty: 1 })} | jq -r .purchase_url)`,
      },
      {
        say: 'the page your holder opens (give them $URL)',
        sh: `curl -s -o /dev/null -w '%{http_code}\\n' "$URL"`,
      },
      {
        say: 'your orders: awaiting_payment until the holder pays, then paid, then filled at the close',
        sh: `curl -s "${$('/orders')}" ${AUTH} | jq '.orders[] | {id, status, purchase_url, closes_at}'`,
      },
    ],
  };
}

/** The account's events followed instead of polling the order. */
function eventsWalk(at: RoutePaths): Example {
  return {
    id: 'walk-events',
    title: "4. Follow the order: subscribe, don't poll",
    intro: `Hold one event stream open instead of polling the order: it tells you order.paid when your holder pays, order.filled at the session close, position.advanced at each of the next ${SETTLEMENT_HORIZON_SESSIONS} closes and position.settled at the end. Each event's id: line is its id, gap-free; after a dropped connection, reconnect with Last-Event-ID and nothing is missed or repeated.`,
    steps: followSteps(at),
  };
}

/** The deal proposed in the default cart, another cart, the carts seen, a refused checkout. */
function cartsWalk(at: RoutePaths): Example {
  const post = poster(at);
  const $ = getter(at);
  return {
    id: 'walk-carts',
    title: '5. Propose deals in a cart',
    intro:
      "A cart gathers several proposals with your reasons; the holder pays them together on the cart's checkout_url.",
    steps: [
      {
        say: 'propose the deal with your rationale (201)',
        sh: post('/cart/items', {
          market: 'h2',
          offer_key: '$DEAL',
          qty: 1,
          note: 'cheap for its family',
        }),
      },
      {
        say: "your default cart: its checkout_url and each line's status",
        sh: `curl -s "${$('/cart')}" ${AUTH} | jq '{checkout_url, items: [.items[] | {id, status, qty, total, stale}]}'`,
      },
      {
        say: 'another cart of your own (201)',
        sh: `CART=$(${post('/carts', { name: 'Second thoughts' })} | jq -r .id)`,
      },
      {
        say: 'every cart you can see, with what you may do in each',
        sh: `curl -s "${$('/carts')}" ${AUTH} | jq '.carts[] | {id, name, mine, permissions}'`,
      },
      {
        say: 'paying a cart yourself needs autonomous funding, which your holder switches on',
        status: 403,
        sh: post('/carts/$CART/checkout', {}),
      },
    ],
  };
}

/** Following the account's events: the stream, waiting for a settlement, resuming, the replay. */
function followSteps(at: RoutePaths): Step[] {
  const $ = getter(at);
  return [
    {
      say: 'your events, then each as it happens (Ctrl-C to stop): order.created is there already',
      sh: `curl -s -N "${$('/events/stream')}" ${STREAM_ACCEPT} ${AUTH}`,
    },
    {
      say: 'or wait for the settlement alone: the command ends at the first position.settled',
      sh: `curl -s -N "${$('/events/stream')}?types=position.settled" ${STREAM_ACCEPT} ${AUTH} | grep -m1 '^data:'`,
    },
    {
      say: 'after a dropped connection: every event after the last id you saw, exactly once',
      sh: `curl -s -N "${$('/events/stream')}" ${STREAM_ACCEPT} ${AUTH} -H 'last-event-id: 1'`,
    },
    {
      say: 'or page through what you missed (REST replay; next_after is the after of the next page)',
      sh: `curl -s "${$('/events')}?after=0&limit=100" ${AUTH} | jq '.events[] | {id, type}'`,
    },
  ];
}

/** /docs/events: the account's stream, its replay and a market's stream, as runnable commands. */
export function eventExamples(at: RoutePaths): Example[] {
  const $ = getter(at);
  return [
    {
      id: 'stream-example',
      title: "Your account's stream",
      steps: [
        base(at),
        { say: 'a key you registered (see /docs/agents)', sh: `KEY=${KEY_PLACEHOLDER}` },
        ...followSteps(at),
        {
          say: 'only some types',
          sh: `curl -s "${$('/events')}?after=0&types=order.created,order.paid" ${AUTH} | jq '{next_after, types: [.events[].type]}'`,
        },
        {
          say: 'an unknown type',
          status: 422,
          sh: `curl -s "${$('/events')}?types=order.shipped" ${AUTH}`,
        },
      ],
    },
    {
      id: 'market-example',
      title: "A market's session closes",
      steps: [
        base(at),
        {
          say: 'each close of m15 as it happens (no key; Ctrl-C to stop)',
          sh: `curl -s -N "${$('/markets/m15/stream')}" ${STREAM_ACCEPT}`,
        },
      ],
    },
  ];
}

/** /docs/developers: authentication, ranges, idempotency and errors as runnable requests. */
export function developerExamples(at: RoutePaths): Example[] {
  return [authExample(at), rangesExample(at), idempotencyExample(at), errorsExample(at)];
}

/** The key as a bearer token, in X-API-Token, and left out. */
function authExample(at: RoutePaths): Example {
  const $ = getter(at);
  return {
    id: 'auth-example',
    title: 'Sending the key',
    steps: [
      base(at),
      { say: 'a key you registered (see /docs/agents)', sh: `KEY=${KEY_PLACEHOLDER}` },
      { say: 'as a bearer token', sh: `curl -s "${$('/agents/me')}" ${AUTH}` },
      { say: 'or in X-API-Token', sh: `curl -s "${$('/agents/me')}" -H "x-api-token: $KEY"` },
      { say: 'without a key', status: 401, sh: `curl -s "${$('/agents/me')}"` },
    ],
  };
}

/** The record's coverage and the widest history range, then one session too many. */
function rangesExample(at: RoutePaths): Example {
  const $ = getter(at);
  const last = '$((T-1))';
  return {
    id: 'ranges-example',
    title: 'Reading a range of the record',
    steps: [
      base(at),
      {
        say: 'what the market has on record',
        sh: `curl -s "${$(COVERAGE_PATH.replace('{market_id}', 'm15'))}"`,
      },
      { say: 'the open session', sh: `T=$(curl -s "${$('/markets/m15')}" | jq .current_tick)` },
      {
        say: `the last ${HISTORY_SPAN} closed sessions: the most one history call spans`,
        sh: `curl -s "${$('/markets/m15/history')}?from_tick=$((T-${HISTORY_SPAN}))&to_tick=${last}"`,
      },
      {
        say: 'one session more is refused at to_tick',
        status: 422,
        sh: `curl -s "${$('/markets/m15/history')}?from_tick=$((T-${HISTORY_SPAN + 1}))&to_tick=${last}"`,
      },
    ],
  };
}

/** A retried create answered once, and a reused retry key refused. */
function idempotencyExample(at: RoutePaths): Example {
  const post = poster(at);
  return {
    id: 'idempotency-example',
    title: 'Retrying safely',
    steps: [
      base(at),
      {
        say: 'a new cart under a retry key (201)',
        sh: `${post('/carts', { name: 'Retried' })} -H 'idempotency-key: cart-2024-a'`,
      },
      {
        say: 'the same again: the first answer, with Idempotent-Replayed: true, and still one cart',
        sh: `${post('/carts', { name: 'Retried' })} -H 'idempotency-key: cart-2024-a' -i`,
      },
      {
        say: 'the same key with another body',
        status: 400,
        sh: `${post('/carts', { name: 'Other' })} -H 'idempotency-key: cart-2024-a'`,
      },
    ],
  };
}

/** An unknown market and a query out of bounds. */
function errorsExample(at: RoutePaths): Example {
  const $ = getter(at);
  return {
    id: 'errors-example',
    title: 'Errors',
    steps: [
      base(at),
      { say: 'an unknown market', status: 404, sh: `curl -s "${$('/markets/x99')}"` },
      {
        say: 'a query out of bounds: each invalid field with loc, msg and type',
        status: 422,
        sh: `curl -s "${$('/markets/m15/deals')}?limit=0"`,
      },
    ],
  };
}
