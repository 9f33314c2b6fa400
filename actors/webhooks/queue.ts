// The delivery queue's set-based SQL (webhook_delivery), each statement its own transaction:
// enqueue from the event log after each webhook's cursor, claim due deliveries (FOR UPDATE SKIP
// LOCKED, a lease pushes next_attempt_at forward), record the attempts' results, forget old ones.
// Claim → commit → send → record: no lock is held while a receiver answers; a process that dies
// after its claim leaves deliveries that come due again when the lease ends (at least once).
import type { EntityManager } from '@mikro-orm/postgresql';
import { EVENT_COLUMNS } from '../events/reads.js';
import type { ServedEvent } from '../events/messages.js';
import { instantSql, jsonParam } from '../runtime/sql.js';

/** Webhooks one pass enqueues for, at most, and events per webhook. */
export const ENQUEUE_WEBHOOKS = 500;
export const ENQUEUE_EVENTS = 200;
/** Deliveries one pass claims (and sends at once), at most. */
export const CLAIM_BATCH = 64;
/** Seconds a claim holds a delivery: longer than an attempt can take; after it another pass may claim it again. */
export const LEASE_SECONDS = 60;
/** CONTRACT.md: retried for 24 hours from the event. */
export const RETRY_WINDOW_SECONDS = 24 * 3600;
/** Retry delays: doubling from the first to the cap (5 s, 10 s, 20 s, ... 1 h). */
export const RETRY_FIRST_SECONDS = 5;
export const RETRY_CAP_SECONDS = 3600;
/** Finished deliveries (delivered, failed) are kept this long, then forgotten in batches. */
export const DELIVERY_RETENTION_DAYS = 7;
const SWEEP_BATCH = 5000;

/** The delay before the attempt after failed attempt `attempts` (1-based). */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(RETRY_CAP_SECONDS, RETRY_FIRST_SECONDS * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
}

/**
 * Enqueues a delivery for every event after each live webhook's cursor (its types only) and moves
 * the cursor past the events looked at (to the account's head when none is left after them, swept
 * ones included). Webhooks another process is enqueueing for are skipped; one delivery per
 * (webhook, event) whatever happens. Returns the deliveries made, whether a bound was reached, and
 * whether any webhook is live at all (the supervisor wakes a pass on NOTIFY only then).
 */
export async function enqueue(em: EntityManager, at: number): Promise<{ enqueued: number; more: boolean; live: boolean }> {
  const [r] = await em.execute<{ enqueued: number; webhooks: number; full: number; live: boolean }[]>(
    `with w as (
       select w.id, w.account_id, w.types, w.last_event_id, h.last_id as head
         from webhook w join account_event_head h on h.account_id = w.account_id
        where w.deleted_at is null and h.last_id > w.last_event_id
        order by w.id limit ? for update of w skip locked),
     ev as (
       select w.id as webhook_id, w.account_id, w.types, e.id as event_id, e.type, e.created_at
         from w cross join lateral (
           select e.id, e.type, e.created_at from account_event e
            where e.account_id = w.account_id and e.id > w.last_event_id order by e.id limit ?) e),
     seen as (select webhook_id, count(*) as n, max(event_id) as last from ev group by webhook_id),
     ins as (
       insert into webhook_delivery (webhook_id, account_id, event_id, next_attempt_at, expires_at, created_at)
       select webhook_id, account_id, event_id, ?, extract(epoch from created_at)::float8 + ?, ${instantSql()}
         from ev where types is null or type = any(types) order by webhook_id, event_id
       on conflict (webhook_id, event_id) do nothing
       returning 1),
     cur as (
       update webhook x set last_event_id = greatest(x.last_event_id, case when coalesce(s.n, 0) < ? then w.head else s.last end)
         from w left join seen s on s.webhook_id = w.id
        where x.id = w.id
       returning 1)
     select (select count(*) from ins)::int as enqueued, (select count(*) from cur)::int as webhooks,
            (select count(*) from seen where n >= ?)::int as full,
            exists (select 1 from webhook where deleted_at is null) as live`,
    [ENQUEUE_WEBHOOKS, ENQUEUE_EVENTS, at, RETRY_WINDOW_SECONDS, at, ENQUEUE_EVENTS, ENQUEUE_EVENTS],
  );
  return { enqueued: r.enqueued, more: r.webhooks >= ENQUEUE_WEBHOOKS || r.full > 0, live: r.live };
}

/** A claimed delivery with what its attempt needs; `event` null when the event is no longer kept. */
export type Claimed = {
  id: number;
  account_id: number;
  event_id: number;
  attempts: number;
  expires_at: number;
  url: string;
  secret: string;
  deleted: boolean;
  event: ServedEvent | null;
};

/**
 * Claims up to `limit` due deliveries (pending, next_attempt_at reached), oldest due first, rows
 * another process holds skipped: each gets one more attempt counted and its next_attempt_at moved
 * a lease ahead, committed before anything is sent.
 */
export async function claim(em: EntityManager, at: number, limit = CLAIM_BATCH): Promise<Claimed[]> {
  const rows = await em.execute<(Omit<Claimed, 'event'> & { event: ServedEvent | null })[]>(
    `with c as (
       select id from webhook_delivery
        where status = 'pending' and next_attempt_at <= ?
        order by next_attempt_at, id limit ? for update skip locked),
     u as (
       update webhook_delivery d set attempts = d.attempts + 1, next_attempt_at = ?
         from c where d.id = c.id
       returning d.id, d.webhook_id, d.account_id, d.event_id, d.attempts, d.expires_at)
     select u.id::float8 as id, u.account_id::float8 as account_id, u.event_id::float8 as event_id, u.attempts, u.expires_at,
            w.url, w.secret, w.deleted_at is not null as deleted, to_jsonb(e) as event
       from u join webhook w on w.id = u.webhook_id
       left join lateral (select ${EVENT_COLUMNS} from account_event e where e.account_id = u.account_id and e.id = u.event_id) e on true
      order by u.id`,
    [at, limit, at + LEASE_SECONDS],
  );
  // The event in the key order GET /events serves (jsonb orders keys its own way).
  return rows.map((r) => ({ ...r, event: r.event && { id: r.event.id, type: r.event.type, created_at: r.event.created_at, data: r.event.data } }));
}

/** An attempt's result: delivered (2xx), or failed with the next attempt at `next` (null: no more, the delivery failed). */
export type Result = { id: number; attempts: number; ok: boolean; code: number | null; error: string | null; next: number | null };

/**
 * Records the attempts' results in one statement. A 2xx marks the delivery delivered even if its
 * lease ran out meanwhile; a failure is recorded only by the claim that made it (the attempt count
 * still matches), so a late answer never undoes a newer claim.
 */
export async function record(em: EntityManager, at: number, results: Result[]): Promise<void> {
  if (!results.length) return;
  await em.execute(
    `update webhook_delivery d set
        status = case when r.ok then 'delivered' when r.next is null then 'failed' else 'pending' end,
        last_status_code = r.code,
        last_error = r.error,
        next_attempt_at = coalesce(r.next, d.next_attempt_at),
        delivered_at = case when r.ok then ${instantSql()} end
       from jsonb_to_recordset(?::jsonb) as r(id bigint, attempts integer, ok boolean, code integer, error text, next float8)
      where d.id = r.id and d.status = 'pending' and (r.ok or d.attempts = r.attempts)`,
    [at, jsonParam(results)],
  );
}

/** Fails the pending deliveries of webhook `id` (deleted), in the caller's transaction. */
export async function failPending(em: EntityManager, webhookId: number, why: string): Promise<void> {
  await em.execute(`update webhook_delivery set status = 'failed', last_error = ? where webhook_id = ? and status = 'pending'`, [why, webhookId]);
}

/** Forgets up to one batch of finished deliveries older than the retention before `at`; returns how many. */
export async function sweepDeliveries(em: EntityManager, at: number): Promise<number> {
  const [r] = await em.execute<{ n: number }[]>(
    `with gone as (delete from webhook_delivery where id = any(array(
       select id from webhook_delivery where created_at < ${instantSql()} - make_interval(days => ?) and status <> 'pending'
        order by created_at limit ?)) returning 1)
     select count(*)::int as n from gone`,
    [at, DELIVERY_RETENTION_DAYS, SWEEP_BATCH],
  );
  return r.n;
}
