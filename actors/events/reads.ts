// Read tasks of the event log: an account's events after an id (REST replay), many accounts' at once
// (the front ends' streams catching up after a NOTIFY), the accounts' heads (the streams' safety
// net), and a market's closed sessions (the public market stream's replay). Indexed by
// (account, id) and (market, tick).
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineReads } from '../runtime/read.js';
import { EVENT_DATA_SQL } from './position-events.js';
import { arrayParam, intArrayParam, unixSql } from '../runtime/sql.js';
import type {
  EventType,
  EventsArgs,
  EventsReply,
  Heads,
  HeadsArgs,
  ManyArgs,
  ManyReply,
  ServedEvent,
} from './messages.js';

/** How long events are kept (CONTRACT.md "Events": 7 days). */
export const EVENT_RETENTION_DAYS = 7;

/** An event's `created_at` as served: unix seconds to the millisecond. */
const CREATED_AT = unixSql('e.created_at');
/** An event as GET /events serves it, from `account_event e` (webhooks send the same object). */
export const EVENT_COLUMNS = `e.id::float8 as id, e.type, ${CREATED_AT} as created_at, ${EVENT_DATA_SQL} as data`;
/**
 * The same event as JSON text, built by PostgreSQL, for the streams: they send it as it is, so a
 * close's thousands of events are never parsed in the worker, copied to the front end as objects,
 * nor serialised again per send. The envelope is compact like JSON.stringify's; `data` is the json
 * text as it was appended (not re-serialised) or a position event's as built, the same object GET serves.
 */
const EVENT_JSON = `'{"id":' || e.id::text || ',"type":' || to_json(e.type)::text || ',"created_at":' || (${CREATED_AT})::text || ',"data":' || (${EVENT_DATA_SQL})::text || '}'`;
/** An account's head (its last event id, 0 before any) and its oldest kept event id (null: none kept). */
const HEAD_COLUMNS = (account: string) =>
  `coalesce((select last_id::float8 from account_event_head where account_id = ${account}), 0) as head,
   (select min(id)::float8 from account_event where account_id = ${account}) as oldest`;

/**
 * Whether the events after `after` were swept (CONTRACT.md: 410, "events exist from id X"): the
 * oldest kept is past after + 1, or none is kept past it while the head is.
 */
function goneFrom(after: number, head: number, oldest: number | null): number | null {
  const from = oldest ?? head + 1;
  return after + 1 < from && after < head ? from : null;
}

type Row = ServedEvent & { head: number; oldest: number | null };
/** An event as served: the statement's helper columns (head, oldest) left out. */
const served = ({ head: _h, oldest: _o, ...e }: Row): ServedEvent => e;

/** The events after `a.after`, oldest first, or `gone` when `after` is older than what is kept. */
export async function eventsAfter(em: EntityManager, a: EventsArgs): Promise<EventsReply> {
  const types = a.types ? arrayParam(a.types) : null;
  const rows = await em.execute<Row[]>(
    `select ${EVENT_COLUMNS}, h.head, h.oldest
       from (select ${HEAD_COLUMNS('?')}) h
       left join lateral (select * from account_event e where e.account_id = ? and e.id > ? and (?::text[] is null or e.type = any(?::text[]))
                           order by e.id limit ?) e on true
      order by e.id`,
    [a.accountId, a.accountId, a.accountId, a.after, types, types, a.limit],
  );
  const gone = goneFrom(a.after, rows[0]?.head ?? 0, rows[0]?.oldest ?? null);
  if (gone !== null) return { gone: true, from: gone };
  const events = rows.filter((r) => r.id !== null).map(served);
  return { events, next_after: events.at(-1)?.id ?? a.after };
}

/**
 * Many accounts' events after each one's own `after` (every type), at most `limit` each, in one
 * statement, each event as its JSON text (the streams send it as it is).
 */
export async function eventsOfMany(em: EntityManager, a: ManyArgs): Promise<ManyReply> {
  // One statement, never JIT-compiled (orm/config.ts CONNECTION_SETTINGS): its estimate can be large
  // (up to `limit` rows per account) while it runs in a few milliseconds of index lookups.
  const rows = await em.execute<
    {
      account_id: number;
      id: number | null;
      type: EventType;
      json: string;
      head: number;
      oldest: number | null;
    }[]
  >(
    `select x.account_id::float8 as account_id, e.id::float8 as id, e.type, ${EVENT_JSON} as json, h.head, h.oldest
       from unnest(?::bigint[], ?::bigint[]) as x(account_id, after)
       cross join lateral (select ${HEAD_COLUMNS('x.account_id')}) h
       left join lateral (select * from account_event e where e.account_id = x.account_id and e.id > x.after order by e.id limit ?) e on true
      order by x.account_id, e.id`,
    [
      intArrayParam(a.accounts.map((x) => x.accountId)),
      intArrayParam(a.accounts.map((x) => x.after)),
      a.limit,
    ],
  );
  const out: ManyReply = {};
  const afterOf = new Map(a.accounts.map((x) => [x.accountId, x.after]));
  for (const x of a.accounts) out[x.accountId] = { events: [] };
  for (const r of rows) {
    const entry = out[r.account_id];
    if ('gone' in entry) continue;
    const gone = goneFrom(afterOf.get(r.account_id)!, r.head, r.oldest);
    if (gone !== null) out[r.account_id] = { gone: true, from: gone };
    else if (r.id !== null) entry.events.push({ id: r.id, type: r.type, json: r.json });
  }
  return out;
}

export const eventReads = defineReads({
  'events.after': async ({ em }, a: EventsArgs) => eventsAfter(em, a),
  'events.many': async ({ em }, a: ManyArgs) => eventsOfMany(em, a),
  'events.heads': async ({ em }, a: HeadsArgs): Promise<Heads> => {
    const rows = await em.execute<{ id: number; head: number }[]>(
      'select account_id::float8 as id, last_id::float8 as head from account_event_head where account_id = any(?::bigint[])',
      [intArrayParam(a.accountIds)],
    );
    const heads: Heads = Object.fromEntries(a.accountIds.map((id) => [id, 0]));
    for (const r of rows) heads[r.id] = r.head;
    return heads;
  },
  /** A market's sessions closed after `afterTick` (oldest first, at most `limit`), each with the session opened after it. */
  'events.sessionsClosed': async (
    { em },
    a: { market: string; afterTick: number; limit: number },
  ) =>
    em.execute<{ tick: number; next_tick: number | null }[]>(
      `select s.tick::float8 as tick, (select min(n.tick)::float8 from market_session n where n.market = s.market and n.tick > s.tick) as next_tick
         from market_session s where s.market = ? and s.tick > ? and s.closed_at is not null order by s.tick limit ?`,
      [a.market, a.afterTick, a.limit],
    ),
});

/** Events one sweep statement deletes at most. */
export const EVENT_SWEEP_BATCH = 5000;

/**
 * Deletes up to `batch` events older than the retention before `at` (the service clock, real unix
 * seconds); returns how many (the sweeper repeats while it is `batch`).
 */
export async function sweepEvents(em: EntityManager, at: number, batch: number): Promise<number> {
  const r = await em.execute<{ n: number }[]>(
    `with gone as (delete from account_event where ctid = any(array(
       select ctid from account_event where created_at < to_timestamp(?) - make_interval(days => ?) order by created_at limit ?)) returning 1)
     select count(*)::int as n from gone`,
    [at, EVENT_RETENTION_DAYS, batch],
  );
  return r[0].n;
}
