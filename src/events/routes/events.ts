// An agent's events (CONTRACT.md "Events"): the REST replay of its account's log, the same log as
// Server-Sent Events (resumable with Last-Event-ID), and the public stream of a market's closes.
// Streams read the log through the process's event hub (src/events/hub.ts), never from memory.
import Type, { type Static } from 'typebox';
import { read } from '../../../actors/runtime/client.js';
import { KEY_REVOKED } from '../../../actors/agent/messages.js';
import type { MarketId } from '../../engine/index.js';
import {
  HttpError,
  Media,
  json,
  route,
  type AgentContext,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import { EventsAnswer, EventsQuery, MarketClosesAnswer } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { eventTypes, gone, goneDetail } from '../query.js';
import {
  BEHIND,
  EVENT_STREAM,
  SSE_FIRST,
  sseComment,
  sseMessage,
  sseReply,
  sseText,
} from '../sse.js';
import { MarketParams, marketOr404 } from '../../api/market-params.js';
import { sessionsClosedAfter } from '../market-stream.js';
import { perEvent, sendWhile, type AccountStream, type SessionEvent } from '../hub.js';
import {
  KEY_STREAMS_DETAIL,
  MARKET_STREAMS_DETAIL,
  addressKey,
  placeOr429,
} from '../../http/limits.js';

const StreamQuery = Type.Object(
  {
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'the last event id you have (Last-Event-ID, when sent, wins)',
      }),
    ),
    types: EventsQuery.properties.types,
  },
  { additionalProperties: false },
);
type StreamQuery = Static<typeof StreamQuery>;
const MarketStreamQuery = Type.Object(
  {
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'the last closed tick you have (Last-Event-ID, when sent, wins)',
      }),
    ),
  },
  { additionalProperties: false },
);
type MarketStreamQuery = Static<typeof MarketStreamQuery>;
type EventsQuery = Static<typeof EventsQuery>;
type MarketParam = Static<typeof MarketParams>;

/** Where a stream resumes: Last-Event-ID (what a reconnecting EventSource sends), else `after`, else `dflt`. */
function resumeFrom(req: RequestInfo, after: number | undefined, dflt: number): number {
  const header = req.headers['last-event-id'];
  if (header === undefined || header === '') return after ?? dflt;
  if (!/^\d{1,15}$/.test(header.trim())) {
    throw new HttpError(422, [
      {
        loc: ['header', 'last-event-id'],
        msg: 'Last-Event-ID is the id of the last event you have (a whole number)',
        type: 'value_error',
      },
    ]);
  }
  return Number(header.trim());
}

/**
 * Whether the client asked for the stream: `Accept: text/event-stream`, as EventSource sends it (and
 * `curl -N -H 'accept: text/event-stream'`). Others get what the stream would start with, as JSON,
 * and the request ends (an HTTP client, a crawler, a fuzzer never hangs on a stream it did not ask for).
 */
const wantsStream = (req: RequestInfo) =>
  /\btext\/event-stream\b/i.test(req.headers['accept'] ?? '');

/** An event's SSE message, made once for every stream handed it. */
const sseOf = perEvent((e) => sseText(e.id, e.type, e.json));

const KEEP_ALIVE = sseComment('keep-alive');
/**
 * A keep-alive, when the socket has room for it: one refused (a client that stopped reading, with
 * enough unread) is not missed, and such a stream ends by the hub's stall rule or uWS's own time-out.
 */
const keepAlive = (write: (chunk: string) => boolean) => (write(KEEP_ALIVE), true);

/** What a stream says as it ends (a stopping service says nothing: its clients reconnect elsewhere). */
const lastWords = (why: { reason: string }) =>
  why.reason === 'behind' ? BEHIND : why.reason === 'revoked' ? REVOKED : undefined;
const REVOKED = sseComment(KEY_REVOKED);

const streamFull = (max: string) =>
  new HttpError(503, `this process holds ${max} streams: retry in a few seconds`, {
    'retry-after': '5',
  });

export function eventRoutes(s: Services): Route[] {
  return [listEventsRoute(s), streamEventsRoute(s), streamMarketRoute(s)];
}

/** GET /api/v1/events: a page of the account's log. */
function listEventsRoute(s: Services): Route {
  return route<unknown, EventsQuery>({
    method: 'GET',
    path: '/api/v1/events',
    operationId: 'list_events',
    auth: 'key',
    summary:
      "My account's events after an id, oldest first (subscribe to /api/v1/events/stream instead of polling)",
    query: EventsQuery,
    response: { 200: EventsAnswer },
    responses: {
      410: {
        description:
          '`after` is older than the 7 days kept: the detail says from which id events exist',
      },
    },
    handler: (c) => listEvents(s, c),
  });
}

/** GET /api/v1/events/stream: the account's log as Server-Sent Events. */
function streamEventsRoute(s: Services): Route {
  return route<unknown, StreamQuery>({
    method: 'GET',
    path: '/api/v1/events/stream',
    operationId: 'stream_events',
    auth: 'key',
    summary:
      "My account's events as Server-Sent Events: every event after Last-Event-ID (or after), exactly once, then each as it happens",
    query: StreamQuery,
    response: {
      200: new Media(
        'with Accept: text/event-stream, the stream: `id:` the event id, `event:` its type, `data:` the event JSON; `: keep-alive` comments. Otherwise the events after the resume point as GET /api/v1/events answers them',
        { [EVENT_STREAM]: undefined, 'application/json': EventsAnswer },
      ),
    },
    responses: {
      410: {
        description:
          'the id to resume from is older than the 7 days kept: the detail says from which id events exist',
      },
      429: {
        description:
          'this API key holds as many streams as it may (this one and WebSockets together): close one, or retry after Retry-After',
      },
      503: { description: 'this process holds as many streams as it may: retry' },
    },
    handler: (c) => streamEvents(s, c),
  });
}

/** GET /api/v1/markets/{market_id}/stream: a market's closes as Server-Sent Events, public. */
function streamMarketRoute(s: Services): Route {
  return route<MarketParam, MarketStreamQuery>({
    method: 'GET',
    path: '/api/v1/markets/{market_id}/stream',
    operationId: 'stream_market',
    auth: 'none',
    summary:
      "A market's session closes as Server-Sent Events (`session.closed`; `id:` the closed tick)",
    params: MarketParams,
    query: MarketStreamQuery,
    response: {
      200: new Media(
        'with Accept: text/event-stream, `session.closed` events (data: market, tick, next_tick, tick_closes_at; `id:` the closed tick) and `: keep-alive` comments. Otherwise the closes after the resume point as JSON',
        { [EVENT_STREAM]: undefined, 'application/json': MarketClosesAnswer },
      ),
    },
    responses: {
      404: { description: 'no such market' },
      429: {
        description:
          'your address holds as many market streams as it may: close one, or retry after Retry-After',
      },
      503: { description: 'this process holds as many streams as it may: retry' },
    },
    handler: (c) => streamMarket(s, c),
  });
}

async function listEvents(
  s: Services,
  { query, principal }: AgentContext<unknown, EventsQuery>,
): Promise<Reply> {
  const r = await read(s.runtime, 'events.after', {
    accountId: principal.accountId,
    after: query.after,
    limit: query.limit,
    types: eventTypes(query.types),
  });
  if ('gone' in r) throw gone(r.from);
  return json(r);
}

async function streamEvents(
  s: Services,
  { req, query, principal, hold }: AgentContext<unknown, StreamQuery>,
): Promise<Reply> {
  const accountId = principal.accountId;
  const after = resumeFrom(req, query.after, 0);
  const types = eventTypes(query.types);
  if (!s.events.hasRoom()) throw streamFull('as many');
  // The key's place, held until the stream ends (or the answer is sent, when it is not one).
  if (wantsStream(req)) hold!(placeOr429(s.streams.byKey, principal.keyId, KEY_STREAMS_DETAIL));
  // CONTRACT.md: a resume point older than the log keeps is a 410 at the stream's start too.
  const first = await read(s.runtime, 'events.after', {
    accountId,
    after,
    limit: wantsStream(req) ? 1 : 100,
    types,
  });
  if ('gone' in first) throw gone(first.from);
  if (!wantsStream(req)) return json(first);
  return accountStreamReply(s, accountId, after, types);
}

/** The account's stream from `after`: its events through the hub, as SSE messages. */
function accountStreamReply(
  s: Services,
  accountId: number,
  after: number,
  types: AccountStream['types'],
): Reply {
  return sseReply((write, end, onRoom) => {
    write(SSE_FIRST);
    const stream: AccountStream = {
      accountId,
      after,
      types,
      send: (events) => sendWhile(events, (e) => write(sseOf(e))),
      ping: () => keepAlive(write),
      close: (why) =>
        end(why.reason === 'gone' ? sseComment(goneDetail(why.from)) : lastWords(why)),
    };
    onRoom(() => s.events.resume(stream));
    return s.events.subscribe(stream);
  });
}

async function streamMarket(
  s: Services,
  { req, params, query, hold }: PublicContext<MarketParam, MarketStreamQuery>,
): Promise<Reply> {
  const market = marketOr404(params.market_id);
  const after = resumeFrom(req, query.after, Number.MAX_SAFE_INTEGER);
  if (!s.events.hasRoom()) throw streamFull('as many');
  if (wantsStream(req))
    hold!(
      placeOr429(s.streams.marketByAddress, addressKey(req.remoteAddress()), MARKET_STREAMS_DETAIL),
    );
  const missed =
    after === Number.MAX_SAFE_INTEGER
      ? []
      : await sessionsClosedAfter(s.runtime, s.clock, market, after);
  if (!wantsStream(req))
    return json({
      events: missed.map((e) => ({ id: e.tick, type: 'session.closed' as const, data: e })),
    });
  return marketStreamReply(s, market, after, missed);
}

/** The market's closes after `after` (`missed` first), as SSE messages, each tick once. */
function marketStreamReply(
  s: Services,
  market: MarketId,
  after: number,
  missed: SessionEvent[],
): Reply {
  return sseReply((write, end) => {
    write(SSE_FIRST);
    let last = after === Number.MAX_SAFE_INTEGER ? -1 : after;
    const send = (e: SessionEvent) =>
      e.tick <= last || ((last = e.tick), write(sseMessage(e.tick, 'session.closed', e)));
    for (const e of missed) send(e);
    return s.events.watchMarket({
      market,
      send,
      ping: () => keepAlive(write),
      close: (why) => end(lastWords(why)),
    });
  });
}
