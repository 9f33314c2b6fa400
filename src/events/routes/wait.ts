// GET /api/v1/events/wait (CONTRACT.md "MCP": wait_events): a held request, not a poll. It answers
// as soon as the account has events after `after` (as GET /events serves them), or with none once
// `timeout_s` has passed, so an MCP host (or any HTTP client) follows its account with one call at a
// time. The wait rides the process's event hub like a stream (it holds one of the key's stream places
// and the hub's) and reads the log again when woken, so what it answers is the log's, in order.
import Type, { type Static } from 'typebox';
import { read } from '../../../actors/runtime/client.js';
import { json, route, type AgentContext, type Reply, type Route } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { EventsAnswer, EventsQuery } from '../../schemas/index.js';
import { WAIT_MAX_S, eventTypes, gone } from '../query.js';
import type { AccountStream } from '../hub.js';
import { KEY_STREAMS_DETAIL, placeOr429 } from '../../http/limits.js';
import { HttpError } from '../../http/route.js';
import { KEY_REVOKED } from '../../../actors/agent/messages.js';

const WAIT_DEFAULT_S = 20;

const WaitQuery = Type.Object(
  {
    after: EventsQuery.properties.after,
    types: EventsQuery.properties.types,
    timeout_s: Type.Integer({
      minimum: 1,
      maximum: WAIT_MAX_S,
      default: WAIT_DEFAULT_S,
      description: `seconds to wait for an event before answering none (1..${WAIT_MAX_S})`,
    }),
  },
  { additionalProperties: false },
);
type WaitQuery = Static<typeof WaitQuery>;

export function waitEventsRoute(s: Services): Route {
  return route<unknown, WaitQuery>({
    method: 'GET',
    path: '/api/v1/events/wait',
    operationId: 'wait_events',
    auth: 'key',
    summary: `Wait for my account's next events after an id: answers as soon as there are some (at most 100, as GET /api/v1/events), or none after timeout_s (at most ${WAIT_MAX_S} s)`,
    query: WaitQuery,
    response: { 200: EventsAnswer },
    responses: {
      410: {
        description:
          '`after` is older than the 7 days kept: the detail says from which id events exist',
      },
      429: {
        description:
          'this API key holds as many streams as it may (streams, WebSockets and waits together): close one, or retry after Retry-After',
      },
      503: { description: 'this process holds as many streams as it may: retry' },
    },
    handler: (c) => waitEvents(s, c),
  });
}

async function waitEvents(
  s: Services,
  { query, principal, hold }: AgentContext<unknown, WaitQuery>,
): Promise<Reply> {
  const page = () =>
    read(s.runtime, 'events.after', {
      accountId: principal.accountId,
      after: query.after,
      limit: 100,
      types: eventTypes(query.types),
    });
  const first = await page();
  if ('gone' in first) throw gone(first.from);
  if (first.events.length) return json(first);
  if (!s.events.hasRoom())
    throw new HttpError(
      503,
      'this process holds as many streams as it may: retry in a few seconds',
      {
        'retry-after': '5',
      },
    );
  hold!(placeOr429(s.streams.byKey, principal.keyId, KEY_STREAMS_DETAIL));
  const why = await woken(
    s,
    principal.accountId,
    query.after,
    eventTypes(query.types),
    query.timeout_s,
  );
  if (why === 'revoked') throw new HttpError(401, KEY_REVOKED, { 'www-authenticate': 'Bearer' });
  const next = await page();
  if ('gone' in next) throw gone(next.from);
  return json(next);
}

/**
 * Resolves when the hub hands the account an event after `after`, the hub ends the wait (`revoked`:
 * its key), or `seconds` pass.
 */
function woken(
  s: Services,
  accountId: number,
  after: number,
  types: AccountStream['types'],
  seconds: number,
): Promise<'revoked' | undefined> {
  return new Promise((resolve) => {
    let unsubscribe: () => void = () => {};
    let ended = false;
    const done = (why?: 'revoked') => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      unsubscribe();
      resolve(why);
    };
    // A duration, not an instant: how long this request is held (as the hub's keep-alives are timed).
    const timer = setTimeout(done, seconds * 1000);
    unsubscribe = s.events.subscribe({
      accountId,
      after,
      types,
      // Taking none leaves the hub holding nothing for this wait; the page is read again.
      send: (events) => (events.length && queueMicrotask(done), 0),
      ping: () => true,
      close: (why) => done(why.reason === 'revoked' ? 'revoked' : undefined),
    });
  });
}
