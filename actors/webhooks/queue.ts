// The delivery queue's set-based SQL (webhook_delivery), each statement its own transaction:
// enqueue from the event log after each webhook's cursor (a webhook's queue is bounded), claim due
// deliveries fairly into the free places of this process's attempts in flight (FOR UPDATE SKIP
// LOCKED, a lease pushes next_attempt_at forward), record the attempts' results and the endpoints'
// health (an endpoint that keeps failing is slowed), measure the backlog, forget old ones.
// Claim → commit → send → record: no lock is held while a receiver answers; a process that dies
// after its claim leaves deliveries that come due again when the lease ends (at least once).
import type { EntityManager } from '@mikro-orm/postgresql';
import { EVENT_COLUMNS } from '../events/reads.js';
import type { ServedEvent } from '../events/messages.js';
import { instantSql, intArrayParam, jsonParam } from '../runtime/sql.js';

/** Webhooks one pass enqueues for, at most, and events per webhook. */
export const ENQUEUE_WEBHOOKS = 500;
export const ENQUEUE_EVENTS = 200;
/**
 * Attempts one process has in flight at once, at most, and of those for one agent's account and
 * for one endpoint (webhook): one agent's slow or dead receivers hold at most ACCOUNT_IN_FLIGHT of
 * the IN_FLIGHT_MAX places, and a free place goes first to the account with the fewest in flight.
 */
export const IN_FLIGHT_MAX = 128;
export const ACCOUNT_IN_FLIGHT = 8;
export const ENDPOINT_IN_FLIGHT = 4;
/**
 * An endpoint whose last SLOW_AFTER_FAILURES attempts (or more) in a row failed is slowed: nothing
 * is sent to it before its `slowed_until` (endpointDelaySeconds after the last failure), then one
 * attempt at a time until a 2xx.
 */
export const SLOW_AFTER_FAILURES = 3;
/** Pending deliveries a webhook may have; beyond them its events wait in the log (its cursor stays). */
export const PENDING_PER_WEBHOOK = 1000;
/** Due deliveries a claim looks at, per free place (the earliest due, rows of full endpoints and accounts skipped), at most CLAIM_LOOKS_MAX. */
const CLAIM_LOOKS_PER_PLACE = 8;
const CLAIM_LOOKS_MAX = 1000;
/** Seconds a claim holds a delivery: longer than an attempt can take (SVC_WEBHOOK_TIMEOUT_MS is at most 30 s); after it another pass may claim it again. */
export const LEASE_SECONDS = 60;
/** Due deliveries the backlog measure counts, at most. */
export const BACKLOG_COUNTED = 10_000;
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
  return Math.min(
    RETRY_CAP_SECONDS,
    RETRY_FIRST_SECONDS * 2 ** Math.min(Math.max(attempts - 1, 0), 30),
  );
}

/** How long an endpoint with `failures` failed attempts in a row (at least SLOW_AFTER_FAILURES) gets nothing: the retry delays again, from the first. */
export function endpointDelaySeconds(failures: number): number {
  return retryDelaySeconds(failures - SLOW_AFTER_FAILURES + 1);
}

/**
 * Enqueues a delivery for every event after each live webhook's cursor (its types only) and moves
 * the cursor past the events looked at (to the account's head when none is left after them, swept
 * ones included); a slowed endpoint's new deliveries are due at its slowed_until, like its others.
 * A webhook with PENDING_PER_WEBHOOK pending deliveries gets no more until some
 * end (its events wait in the log, its cursor stays), and is not looked at meanwhile. Webhooks
 * another process is enqueueing for are skipped; one delivery per (webhook, event) whatever
 * happens. Returns the deliveries made, whether a bound was reached, and whether any webhook is
 * live at all (the supervisor wakes a pass on NOTIFY only then).
 */
export async function enqueue(
  em: EntityManager,
  at: number,
): Promise<{ enqueued: number; more: boolean; live: boolean }> {
  const [r] = await em.execute<
    { enqueued: number; webhooks: number; full: number; live: boolean }[]
  >(
    `with w as (
       select w.id, w.account_id, w.types, w.last_event_id, w.slowed_until, h.last_id as head, least(?, ? - p.n) as room
         from webhook w join account_event_head h on h.account_id = w.account_id
         cross join lateral (
           select count(*)::int as n from (select 1 from webhook_delivery d where d.webhook_id = w.id and d.status = 'pending' limit ?) q) p
        where w.deleted_at is null and h.last_id > w.last_event_id and p.n < ?
        order by w.id limit ? for update of w skip locked),
     ev as (
       select w.id as webhook_id, w.account_id, w.types, w.slowed_until, e.id as event_id, e.type, e.created_at
         from w cross join lateral (
           select e.id, e.type, e.created_at from account_event e
            where e.account_id = w.account_id and e.id > w.last_event_id order by e.id limit w.room) e),
     seen as (select webhook_id, count(*) as n, max(event_id) as last from ev group by webhook_id),
     ins as (
       insert into webhook_delivery (webhook_id, account_id, event_id, next_attempt_at, expires_at, created_at)
       select webhook_id, account_id, event_id, greatest(?::float8, slowed_until), extract(epoch from created_at)::float8 + ?, ${instantSql()}
         from ev where types is null or type = any(types) order by webhook_id, event_id
       on conflict (webhook_id, event_id) do nothing
       returning 1),
     cur as (
       update webhook x set last_event_id = greatest(x.last_event_id, case when coalesce(s.n, 0) < w.room then w.head else s.last end)
         from w left join seen s on s.webhook_id = w.id
        where x.id = w.id
       returning 1)
     select (select count(*) from ins)::int as enqueued, (select count(*) from cur)::int as webhooks,
            (select count(*) from seen where n >= ?)::int as full,
            exists (select 1 from webhook where deleted_at is null) as live`,
    [
      ENQUEUE_EVENTS,
      PENDING_PER_WEBHOOK,
      PENDING_PER_WEBHOOK,
      PENDING_PER_WEBHOOK,
      ENQUEUE_WEBHOOKS,
      at,
      RETRY_WINDOW_SECONDS,
      at,
      ENQUEUE_EVENTS,
    ],
  );
  return { enqueued: r.enqueued, more: r.webhooks >= ENQUEUE_WEBHOOKS || r.full > 0, live: r.live };
}

/** A claimed delivery with what its attempt needs; `event` null when the event is no longer kept. */
export type Claimed = {
  id: number;
  webhook_id: number;
  account_id: number;
  event_id: number;
  attempts: number;
  expires_at: number;
  url: string;
  secret: string;
  deleted: boolean;
  /** The endpoint is slowed (SLOW_AFTER_FAILURES in a row): one attempt at a time. */
  failing: boolean;
  event: ServedEvent | null;
};

/** What this process has in flight (flight.ts): per webhook and per account, and those already at their cap. */
export type Busy = {
  webhooks: { id: number; n: number }[];
  accounts: { id: number; n: number }[];
  fullWebhooks: number[];
  fullAccounts: number[];
};

/**
 * Claims up to `places` due deliveries (pending, next_attempt_at reached), fairly: among the
 * earliest due (rows of endpoints and accounts already at their cap here skipped, rows another
 * process holds skipped; none of an endpoint before its slowed_until), at most ENDPOINT_IN_FLIGHT
 * per endpoint (1 while it is slowed) and
 * ACCOUNT_IN_FLIGHT per account counting those in flight, and a place goes first to the account
 * with the fewest in flight, then to the earliest due. Each claimed delivery gets one more attempt
 * counted and its next_attempt_at moved a lease ahead, committed before anything is sent.
 */
export async function claim(
  em: EntityManager,
  at: number,
  places: number,
  busy: Busy,
): Promise<Claimed[]> {
  if (places <= 0) return [];
  const rows = await em.execute<(Omit<Claimed, 'event'> & { event: ServedEvent | null })[]>(
    `with busy_w as (select * from jsonb_to_recordset(?::jsonb) as b(id bigint, n int)),
     busy_a as (select * from jsonb_to_recordset(?::jsonb) as b(id bigint, n int)),
     c as (
       select d.id, d.webhook_id, d.account_id, d.next_attempt_at from webhook_delivery d
        where d.status = 'pending' and d.next_attempt_at <= ? and d.webhook_id <> all(?::bigint[]) and d.account_id <> all(?::bigint[])
        order by d.next_attempt_at, d.id limit ? for update skip locked),
     per_endpoint as (
       select c.id, c.account_id, c.next_attempt_at, coalesce(ba.n, 0) as account_busy,
              coalesce(bw.n, 0) + row_number() over (partition by c.webhook_id order by c.next_attempt_at, c.id)
                <= case when w.consecutive_failures >= ? then 1 else ? end as fits
         from c join webhook w on w.id = c.webhook_id
         left join busy_w bw on bw.id = c.webhook_id left join busy_a ba on ba.id = c.account_id
        where w.slowed_until is null or w.slowed_until <= ?),
     per_account as (
       select id, next_attempt_at, account_busy + row_number() over (partition by account_id order by next_attempt_at, id) as turn
         from per_endpoint where fits),
     pick as (select id from per_account where turn <= ? order by turn, next_attempt_at, id limit ?),
     u as (
       update webhook_delivery d set attempts = d.attempts + 1, next_attempt_at = ?
         from pick where d.id = pick.id
       returning d.id, d.webhook_id, d.account_id, d.event_id, d.attempts, d.expires_at)
     select u.id::float8 as id, u.webhook_id::float8 as webhook_id, u.account_id::float8 as account_id, u.event_id::float8 as event_id,
            u.attempts, u.expires_at, w.url, w.secret, w.deleted_at is not null as deleted, w.consecutive_failures >= ? as failing,
            to_jsonb(e) as event
       from u join webhook w on w.id = u.webhook_id
       left join lateral (select ${EVENT_COLUMNS} from account_event e where e.account_id = u.account_id and e.id = u.event_id) e on true
      order by u.id`,
    [
      jsonParam(busy.webhooks),
      jsonParam(busy.accounts),
      at,
      intArrayParam(busy.fullWebhooks),
      intArrayParam(busy.fullAccounts),
      Math.min(CLAIM_LOOKS_MAX, places * CLAIM_LOOKS_PER_PLACE),
      SLOW_AFTER_FAILURES,
      ENDPOINT_IN_FLIGHT,
      at,
      ACCOUNT_IN_FLIGHT,
      places,
      at + LEASE_SECONDS,
      SLOW_AFTER_FAILURES,
    ],
  );
  // The event in the key order GET /events serves (jsonb orders keys its own way).
  return rows.map((r) => ({
    ...r,
    event: r.event && {
      id: r.event.id,
      type: r.event.type,
      created_at: r.event.created_at,
      data: r.event.data,
    },
  }));
}

/**
 * An attempt's result: delivered (2xx), or failed with the next attempt at `next` (null: no more,
 * the delivery failed). `endpoint`: the webhook whose health it tells (null when nothing was tried:
 * the webhook deleted, the event or the retry window gone).
 */
export type Result = {
  id: number;
  attempts: number;
  ok: boolean;
  code: number | null;
  error: string | null;
  next: number | null;
  endpoint: number | null;
};

/**
 * Records the attempts' results, then the endpoints' health, in one transaction. A 2xx marks the
 * delivery delivered even if its lease ran out meanwhile; a failure is recorded only by the claim
 * that made it (the attempt count still matches), so a late answer never undoes a newer claim.
 */
export async function record(em: EntityManager, at: number, results: Result[]): Promise<void> {
  if (!results.length) return;
  await em.transactional(async (em) => {
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
    await recordHealth(em, at, results);
  });
}

/**
 * The endpoints' health after `results`: a 2xx resets an endpoint (no failures, not slowed); each
 * failure counts, and from SLOW_AFTER_FAILURES in a row the endpoint is slowed until
 * endpointDelaySeconds after now, its pending deliveries moved to then (so they are not due, and
 * not looked at, before it).
 */
async function recordHealth(em: EntityManager, at: number, results: Result[]): Promise<void> {
  const byEndpoint = new Map<
    number,
    { id: number; ok: boolean; fails: number; error: string | null }
  >();
  for (const r of results) {
    if (r.endpoint === null) continue;
    const h = byEndpoint.get(r.endpoint) ?? { id: r.endpoint, ok: false, fails: 0, error: null };
    if (r.ok) h.ok = true;
    else Object.assign(h, { fails: h.fails + 1, error: r.error });
    byEndpoint.set(r.endpoint, h);
  }
  if (!byEndpoint.size) return;
  const counted = await em.execute<{ id: number; failures: number }[]>(
    `update webhook x set consecutive_failures = case when h.ok then 0 else x.consecutive_failures + h.fails end,
            last_error = case when h.ok then null else h.error end,
            slowed_until = case when h.ok then null else x.slowed_until end
       from jsonb_to_recordset(?::jsonb) as h(id bigint, ok boolean, fails int, error text)
      where x.id = h.id
     returning x.id::float8 as id, x.consecutive_failures as failures`,
    [jsonParam([...byEndpoint.values()])],
  );
  const slowed = counted
    .filter((w) => w.failures >= SLOW_AFTER_FAILURES)
    .map((w) => ({ id: w.id, until: at + endpointDelaySeconds(w.failures) }));
  if (!slowed.length) return;
  await em.execute(
    `with s as (select * from jsonb_to_recordset(?::jsonb) as s(id bigint, until float8)),
     w as (update webhook x set slowed_until = s.until from s where x.id = s.id returning 1)
     update webhook_delivery d set next_attempt_at = s.until
       from s where d.webhook_id = s.id and d.status = 'pending' and d.next_attempt_at < s.until`,
    [jsonParam(slowed)],
  );
}

/**
 * The backlog at `at`: deliveries due and not yet sent (at most BACKLOG_COUNTED counted), and how
 * long ago the earliest of them fell due, in seconds (0 when none). Those in flight (leased) and
 * those of a slowed endpoint (moved to its slowed_until) are not due.
 */
export async function backlog(
  em: EntityManager,
  at: number,
): Promise<{ due: number; oldestSeconds: number }> {
  const [r] = await em.execute<{ due: number; oldest: number | null }[]>(
    `select count(*)::int as due, min(next_attempt_at) as oldest
       from (select next_attempt_at from webhook_delivery where status = 'pending' and next_attempt_at <= ? order by next_attempt_at limit ?) d`,
    [at, BACKLOG_COUNTED],
  );
  return { due: r.due, oldestSeconds: r.oldest === null ? 0 : Math.max(0, at - r.oldest) };
}

/** Fails the pending deliveries of webhook `id` (deleted), in the caller's transaction. */
export async function failPending(
  em: EntityManager,
  webhookId: number,
  why: string,
): Promise<void> {
  await em.execute(
    `update webhook_delivery set status = 'failed', last_error = ? where webhook_id = ? and status = 'pending'`,
    [why, webhookId],
  );
}

/**
 * Fails up to one batch of pending deliveries whose retry window (24 hours from the event) ended
 * before `at`, those in flight here (`inFlight`) left to their attempt's result; returns how many.
 * (A slowed endpoint's deliveries may wait past their window without another attempt.)
 */
export async function expireDeliveries(
  em: EntityManager,
  at: number,
  inFlight: readonly number[],
): Promise<number> {
  const [r] = await em.execute<{ n: number }[]>(
    `with gone as (update webhook_delivery set status = 'failed', last_error = 'no 2xx answer within 24 hours of the event'
        where id = any(array(select id from webhook_delivery where status = 'pending' and expires_at <= ? and id <> all(?::bigint[]) limit ?))
        returning 1)
     select count(*)::int as n from gone`,
    [at, intArrayParam(inFlight), SWEEP_BATCH],
  );
  return r.n;
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
