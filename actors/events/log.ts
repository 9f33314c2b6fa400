// The event log (ARCHITECTURE.md rule 9, CONTRACT.md "Events"): every change an agent cares about is
// appended in the change's own transaction, numbered by the account's own gap-free sequence. An
// append moves the account's head (`account_event_head.last_id`) by the events it adds under the
// head row's lock (taken in account order, so concurrent appends never deadlock) and inserts the
// events after the old value: ids are 1, 2, 3, ... per account, and a rolled-back append moves
// nothing. The front ends learn which accounts' logs grew (PostgreSQL NOTIFY): exactly those, in
// as many notices as the list needs, queued by the append's own statement (delivered at its
// commit) or, for the order batch, sent just after its commit (Announce below).
import type { EntityManager } from '@mikro-orm/postgresql';
import { arrayParam, instantSql, intArrayParam } from '../runtime/sql.js';
import { EVENTS_CHANNEL, type EventType } from './messages.js';

/**
 * A notice's list is cut where its running length passes this: a notice is at most this plus one id
 * (20 digits), under NOTIFY's limit (a payload shorter than 8000 bytes).
 */
export const NOTIFY_MAX_BYTES = 7900;

/** An event to append: the account whose log it joins, its type and `data` (the object as GET serves it). */
export type NewEvent = { account_id: number; type: EventType; data: unknown };

/** Moves each account of `ev_count(account_id, n)` by its count, in account order (concurrent appends never deadlock). */
const HEADS_CTE = `ev_heads as (insert into account_event_head as h (account_id, last_id) select account_id, n from ev_count order by account_id
                  on conflict (account_id) do update set last_id = h.last_id + excluded.last_id
                  returning h.account_id, h.last_id)`;

/**
 * The notices of the accounts whose logs grew, read from `appended`: their ids comma-separated, cut
 * into notices by the running length of the list (NOTIFY_MAX_BYTES). A close that moves 10k accounts
 * sends ~8 notices, and each front end wakes only the streams of those accounts (one `*` would make
 * every front end read every account it streams). One row (`payload`) per notice; none when nothing was
 * appended.
 */
const NOTICES = `select string_agg(account_id::text, ',' order by account_id) as payload
       from (select account_id, (sum(length(account_id::text) + 1) over (order by account_id) - 1) / ${NOTIFY_MAX_BYTES} as notice
               from (select distinct account_id from appended) d) c
      group by notice`;

/**
 * When an append's notices are sent:
 * - `in transaction`: NOTIFY in the append's statement, delivered at its commit. PostgreSQL
 *   serialises the commits of notifying transactions (a database-wide lock held from before the
 *   commit record until the commit is flushed): a small cost for the occasional turn and the close;
 * - `after commit`: the notices are kept in the connection's setting NOTICES_SETTING, and the
 *   caller sends NOTIFY_KEPT_SQL on that connection once its COMMIT succeeded, as a transaction of
 *   its own that writes nothing and flushes nothing. For the order batch, which commits hundreds of
 *   times a second from every shard and process: a NOTIFY in the transaction slows every commit
 *   far more than one after it (bench/notify-commit.mjs compares the two). If the notices are
 *   not sent (the connection lost between the two, a full NOTIFY queue), the events are committed
 *   and the front ends' safety net (the heads, every few seconds) finds them.
 */
export type Announce = 'in transaction' | 'after commit';
/** The session setting that carries an `after commit` append's notices to NOTIFY_KEPT_SQL (`;`-separated). */
export const NOTICES_SETTING = 'svc.event_notices';
/**
 * The CTE `notified` (the statement must read it: a plain SELECT CTE runs only when read): the
 * NOTIFYs, or the kept notices (always set, to none when nothing was appended, so a write without
 * events never sends the previous one's again; a rollback restores the setting and skips the send).
 */
const NOTIFIED_CTE: Record<Announce, string> = {
  'in transaction': `notified as (select pg_notify('${EVENTS_CHANNEL}', payload) as sent from (${NOTICES}) n)`,
  'after commit': `notified as (select set_config('${NOTICES_SETTING}', coalesce(string_agg(payload, ';'), ''), false) as sent from (${NOTICES}) n)`,
};
/** Sends the notices an `after commit` append kept (none when it appended nothing), after its COMMIT, on its connection. */
export const NOTIFY_KEPT_SQL = `select pg_notify('${EVENTS_CHANNEL}', payload)
  from unnest(string_to_array(nullif(current_setting('${NOTICES_SETTING}', true), ''), ';')) payload`;

/**
 * The insert of events that carry their ids, after a CTE `ev(account_id, id, type, data)` (and
 * `columns`: a position event's figures, events/position-events.ts), stamped `at` (a SQL expression
 * of the turn's instant, a parameter: never the database's clock), and its notices into `notified`
 * (sent as `announce` says). `ev` is read once, so PostgreSQL builds each event's data straight into
 * the insert: no sort and no materialised copy of the events.
 */
export function insertCtes(
  at: string,
  ev = 'ev',
  columns: readonly string[] = [],
  announce: Announce = 'in transaction',
): string {
  const cols = ['account_id', 'id', 'type', 'data', ...columns].join(', ');
  return `appended as (insert into account_event (${cols}, created_at) select ${cols}, ${at} from ${ev} returning account_id),
     ${NOTIFIED_CTE[announce]}`;
}

/**
 * The append as CTEs, after a CTE `ev(account_id, type, data, phase, ord)` of the events in order
 * (phase, then ord, within each account): moves each account's head by its count, numbers the
 * events after the old head, inserts them stamped `at` (insertCtes) and selects the notices into
 * `notified` (sent as `announce` says).
 */
export function appendCtes(at: string, announce: Announce = 'in transaction'): string {
  return `ev_count as (select account_id, count(*) as n from ev group by account_id),
     ev_seq as (select account_id, row_number() over (partition by account_id order by phase, ord) as seq, type, data from ev),
     ${HEADS_CTE},
     ev_ids as (select x.account_id, h.last_id - c.n + x.seq as id, x.type, x.data
                  from ev_seq x join ev_heads h on h.account_id = x.account_id join ev_count c on c.account_id = x.account_id),
     ${insertCtes(at, 'ev_ids', [], announce)}`;
}

/**
 * Takes the ids of events about to be appended, in the caller's transaction: moves each account's
 * head by its count (the head rows stay locked until commit, taken in account order) and answers
 * each account's first new id. For an append of thousands of events (the close): they are then
 * inserted carrying their ids (insertCtes), with no join of every event back to its account's head
 * and count in the insert, a real share of the cost of appending a close's position events.
 */
export async function reserveIds(
  em: EntityManager,
  counts: Map<number, number>,
): Promise<Map<number, number>> {
  const rows = await em.execute<{ account_id: number; last_id: number }[]>(
    `with ev_count as (select * from unnest(?::bigint[], ?::int[]) as c(account_id, n)), ${HEADS_CTE}
     select account_id::float8 as account_id, last_id::float8 as last_id from ev_heads`,
    [intArrayParam([...counts.keys()]), intArrayParam([...counts.values()])],
  );
  const first = new Map(rows.map((r) => [r.account_id, r.last_id - counts.get(r.account_id)! + 1]));
  // Postcondition: every account's head moved (an unknown account has no head row to take).
  if (first.size !== counts.size)
    throw new Error(
      `event log: ${counts.size} heads to move, ${first.size} moved (an unknown account?)`,
    );
  return first;
}

/** Each event's number within its account (1, 2, ... in the order given) and each account's count. */
export function numbered(accounts: readonly number[]): {
  seq: number[];
  counts: Map<number, number>;
} {
  const counts = new Map<number, number>();
  const seq = accounts.map((a) => {
    const n = (counts.get(a) ?? 0) + 1;
    counts.set(a, n);
    return n;
  });
  return { seq, counts };
}

/** The ids of events of these accounts, in order: each account's events take its next ids (reserveIds). */
export async function eventIds(em: EntityManager, accounts: readonly number[]): Promise<number[]> {
  const { seq, counts } = numbered(accounts);
  const first = await reserveIds(em, counts);
  return accounts.map((a, i) => first.get(a)! + seq[i] - 1);
}

/** `ev` from four array parameters (accounts, types, data as JSON text, and one phase for all), in order. */
const eventArraysCte = (params: [string, string, string], phase: number) =>
  `select account_id, type, data::json as data, ${phase} as phase, ord from unnest(${params.join(', ')}) with ordinality as x(account_id, type, data, ord)`;

/** The events as the three array columns `eventArraysCte` reads. */
function eventArrays(events: NewEvent[]): [number[], string[], string[]] {
  return [
    events.map((e) => e.account_id),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.data)),
  ];
}

/** Appends `events` in order (one statement) in the caller's transaction, stamped `at` (unix seconds: the turn's TurnContext.at). */
export async function appendEvents(
  em: EntityManager,
  events: NewEvent[],
  at: number,
): Promise<void> {
  if (!events.length) return;
  const [accounts, types, data] = eventArrays(events);
  const [r] = await em.execute<{ n: number }[]>(
    `with ev as (${eventArraysCte(['?::bigint[]', '?::text[]', '?::text[]'], 0)}), ${appendCtes(instantSql())}
     select (select count(*)::int from appended) as n, (select count(*) from notified) as notified`,
    [intArrayParam(accounts), arrayParam(types), arrayParam(data), at],
  );
  if (r.n !== events.length)
    throw new Error(
      `event log: ${events.length} events to append, ${r.n} appended (an unknown account?)`,
    );
}
