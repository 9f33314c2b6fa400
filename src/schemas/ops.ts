// The operators' feed (GET /ops/feed, CONTRACT.md "Operators"): the figures of this process now,
// the chart points of the last 15 minutes, the figures past their thresholds and the recent 5xx.
// One definition: the TypeScript types of src/ops/ are these schemas' Static types.
import Type, { type Static } from 'typebox';
import {
  int,
  keyed,
  list,
  nullable,
  num,
  numOrNull,
  obj,
  oneOf,
  str,
  strOrNull,
} from './common.js';

const perS = (what: string) => num(`${what} per second over the window`);
const msOrNull = (what: string) => numOrNull(`${what}, milliseconds; null without observations`);

export const RouteFiguresJson = obj(
  {
    method: str('HTTP method'),
    route: str('the route pattern (ids and secrets never appear)'),
    requests: int('requests in the window'),
    rate: perS('requests'),
    p50_ms: msOrNull('latency p50 in the window'),
    p99_ms: msOrNull('latency p99 in the window'),
    errors_4xx: int('4xx answers in the window'),
    errors_5xx: int('5xx answers in the window'),
  },
  'one route (method and pattern)',
);

export const ShardFiguresJson = obj(
  {
    shard: str('shard number'),
    mailbox: int('messages sent to the shard and not yet answered'),
    mailbox_share: numOrNull('mailbox depth as a share of the bound (0..1); null without a bound'),
    utilization: num('share of time the worker was busy (0..1)'),
    restarts: int('workers replaced after dying'),
    turns: int('turns in the window'),
    turn_p50_ms: msOrNull('turn time p50 in the window'),
    turn_p99_ms: msOrNull('turn time p99 in the window'),
  },
  'one actor shard (a worker thread)',
);

export const MarketFiguresJson = obj(
  {
    market: str('market id'),
    closes: int('closes this process saw since it started'),
    performed: int('closes this process performed'),
    failures: int('closes that failed (each retried)'),
    close_p50_ms: msOrNull('close duration p50 since start'),
    close_p99_ms: msOrNull('close duration p99 since start'),
    late_p99_ms: msOrNull("from the session's end to its close finishing, p99 since start"),
    last_close_at: numOrNull('unix seconds of the last close this process saw'),
    last_tick: numOrNull('the session of that close'),
    interval_s: numOrNull("the market's session length in real seconds"),
  },
  "one market's closes",
);

export const ServerErrorJson = obj(
  {
    at: num("when it was answered (unix seconds, the service's clock)"),
    method: str('HTTP method'),
    route: str('the route pattern (never the raw URL: no ids or secrets)'),
    status: int('the 5xx status'),
  },
  'one 5xx answer',
);

export const BreachJson = obj(
  {
    id: str('the threshold (src/ops/thresholds.ts)'),
    market: strOrNull('the market, for a per-market figure'),
    value: num("the worst value within the threshold's window"),
    above: num('the threshold: past it when the value is above it'),
    text: str('the breach in words, as the status line says it'),
  },
  'a figure past its threshold',
);

export const FiguresJson = obj(
  {
    process: obj(
      {
        pid: int('process id'),
        host: str('host name'),
        uptime_s: num('seconds since the process started'),
        rss_bytes: numOrNull('resident memory'),
        heap_used_bytes: numOrNull('V8 heap used'),
        event_loop_p50_ms: msOrNull('event-loop delay p50'),
        event_loop_p99_ms: msOrNull('event-loop delay p99'),
      },
      'the process these figures are of',
    ),
    at: num("unix seconds of the newer sample (the service's clock)"),
    window_s: num(
      'seconds between the two samples the rates and quantiles are taken over (0: since start)',
    ),
    ready: nullable(Type.Boolean(), 'whether /readyz answers 200; null before it is known'),
    requests: obj(
      {
        total: int('requests since start'),
        rate: perS('requests'),
        errors_4xx: int('4xx answers since start'),
        errors_5xx: int('5xx answers since start'),
        refused_429: int('429 answers since start'),
        refused_503: int('503 answers since start'),
        rate_4xx: perS('4xx answers'),
        rate_5xx: perS('5xx answers'),
        p50_ms: msOrNull('latency p50 in the window, all routes'),
        p99_ms: msOrNull('latency p99 in the window, all routes'),
      },
      'requests of every route',
    ),
    routes: list(
      RouteFiguresJson,
      'the busiest routes (at most ROUTES_SHOWN): those with requests in the window first',
    ),
    routes_seen: int('routes that had requests since start'),
    mailbox_limit: numOrNull('pending messages per shard before requests answer 503'),
    shards: list(ShardFiguresJson, 'each shard'),
    markets: list(MarketFiguresJson, 'each market'),
    record_cache: obj(
      {
        kept_bytes: numOrNull('bytes kept'),
        cap_bytes: numOrNull('the cap'),
        sessions: numOrNull('sessions kept'),
        hits: int('found in memory since start'),
        misses: int('not found since start'),
        hit_rate: numOrNull('hits / (hits + misses)'),
      },
      "the record's cache of settled sessions",
    ),
    db_pool: obj(
      {
        used: numOrNull("main thread's pool: connections running a query"),
        free: numOrNull("main thread's pool: connections not running one"),
        pending: numOrNull("main thread's pool: callers waiting (not observable: null)"),
        max: numOrNull("main thread's pool size"),
        waits_rate: perS("the shard workers' asks for a connection that found none idle:"),
        wait_ms: msOrNull("the shard workers' mean wait for a connection in the window"),
        waiting: numOrNull("the shard workers' asks for a connection not served yet"),
      },
      'the database pools',
    ),
    events: obj(
      {
        streams: numOrNull('event streams held'),
        sent: int('events handed to streams since start'),
        sent_rate: perS('events handed to streams'),
        fanout_p50_ms: msOrNull('fan-out time p50 in the window'),
        fanout_p99_ms: msOrNull('fan-out time p99 in the window'),
        closed_behind: int('streams closed as too slow since start'),
        closed_gone: int('streams closed as gone (410) since start'),
        webhooks_delivered: int('webhook attempts delivered since start'),
        webhooks_retried: int('webhook attempts to retry since start'),
        webhooks_failed: int('webhook deliveries given up since start'),
        webhooks_backlog: numOrNull(
          "webhook deliveries due and not yet sent (all processes, at this process's last pass)",
        ),
        webhooks_backlog_oldest_s: numOrNull('how long the earliest of them has waited, seconds'),
      },
      'event streams and webhooks',
    ),
    status: list(BreachJson, 'the figures past their thresholds now (empty: all within)'),
    recent_5xx: list(ServerErrorJson, 'the latest 5xx answers, newest first (at most RECENT_5XX)'),
  },
  "this process's figures now (src/ops/figures.ts)",
);

export const PointJson = obj(
  {
    at: num("unix seconds at the end of the point's span (the service's clock)"),
    rate: num('requests per second'),
    rate_4xx: num('4xx answers per second'),
    rate_5xx: num('5xx answers per second'),
    p99_ms: msOrNull('latency p99, all routes'),
    mailbox_share: numOrNull('the deepest mailbox as a share of its bound (0..1)'),
    pool_wait_ms: msOrNull("the shard workers' mean wait for a database connection"),
    fanout_p99_ms: msOrNull('event fan-out p99'),
    loop_p99_ms: msOrNull('event-loop delay p99'),
    markets: keyed(
      obj(
        {
          close_ms: msOrNull('the longest close this process performed in the span'),
          late_ms: msOrNull(
            "the greatest lateness of those closes: from the session's end to the close finishing",
          ),
        },
        "a market's closes in the span",
      ),
      'by market id',
    ),
  },
  'one point of the charts: the figures over its span',
);

export const ThresholdJson = obj(
  {
    id: str('the figure (a key of the chart points)'),
    figure: str('the figure in words'),
    unit: oneOf(['per_s', 'ms', 'share'] as const, 'how the figure is counted'),
    above: num('past the threshold when above this'),
    over_s: int('seconds of points whose worst value is compared'),
    why: str('why this threshold'),
  },
  "a figure's threshold",
);

export const HistoryJson = obj(
  {
    point_s: num('seconds each point spans'),
    max_points: int('points kept; the oldest is dropped for each new one'),
    points: list(PointJson, 'the points kept, oldest first'),
    thresholds: list(ThresholdJson, 'the thresholds the status line compares with'),
  },
  'the chart points kept (SSE event `history`, once per connection)',
);

export type FiguresShape = Static<typeof FiguresJson>;
export type RouteFigures = Static<typeof RouteFiguresJson>;
export type ShardFigures = Static<typeof ShardFiguresJson>;
export type MarketFigures = Static<typeof MarketFiguresJson>;
export type ServerError = Static<typeof ServerErrorJson>;
export type Breach = Static<typeof BreachJson>;
export type Point = Static<typeof PointJson>;
export type Threshold = Static<typeof ThresholdJson>;
export type History = Static<typeof HistoryJson>;
