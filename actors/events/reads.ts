// Read tasks of the event log: an account's events after an id (REST replay, streams, webhooks) and
// the accounts' heads (a stream learns whose log grew after a NOTIFY). Indexed by (account, id).
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineReads } from '../runtime/read.js';
import { arrayParam, intArrayParam } from '../runtime/sql.js';
import type { EventsArgs, EventsReply, Heads, HeadsArgs, ServedEvent } from './messages.js';

/** How long events are kept (CONTRACT.md "Events": 7 days). */
export const EVENT_RETENTION_DAYS = 7;

/** The events after `a.after`, oldest first, or `gone` when `after` is older than what is kept. */
export async function eventsAfter(em: EntityManager, a: EventsArgs): Promise<EventsReply> {
  const types = a.types ? arrayParam(a.types) : null;
  const rows = await em.execute<(ServedEvent & { head: number; oldest: number | null })[]>(
    `select e.id::float8 as id, e.type, floor(extract(epoch from e.created_at) * 1000)::float8 / 1000 as created_at, e.data,
            h.head, h.oldest
       from (select coalesce((select last_id::float8 from account_event_head where account_id = ?), 0) as head,
                    (select min(id)::float8 from account_event where account_id = ?) as oldest) h
       left join lateral (select * from account_event e where e.account_id = ? and e.id > ? and (?::text[] is null or e.type = any(?::text[]))
                           order by e.id limit ?) e on true
      order by e.id`,
    [a.accountId, a.accountId, a.accountId, a.after, types, types, a.limit],
  );
  const head = rows[0]?.head ?? 0;
  const oldest = rows[0]?.oldest ?? head + 1;
  // Events after `after` were swept when the oldest kept is past after + 1 (or none is kept past it).
  if (a.after + 1 < oldest && a.after < head) return { gone: true, from: oldest };
  const events = rows.filter((r) => r.id !== null).map(({ head: _h, oldest: _o, ...e }) => e);
  return { events, next_after: events.at(-1)?.id ?? a.after };
}

export const eventReads = defineReads({
  'events.after': async ({ em }, a: EventsArgs) => eventsAfter(em, a),
  'events.heads': async ({ em }, a: HeadsArgs): Promise<Heads> => {
    const rows = await em.execute<{ id: number; head: number }[]>(
      'select account_id::float8 as id, last_id::float8 as head from account_event_head where account_id = any(?::bigint[])', [intArrayParam(a.accountIds)],
    );
    const heads: Heads = Object.fromEntries(a.accountIds.map((id) => [id, 0]));
    for (const r of rows) heads[r.id] = r.head;
    return heads;
  },
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
