import { Migration } from '@mikro-orm/migrations';

/**
 * Fair webhook delivery (CONTRACT.md "Events" → Webhooks): an endpoint that keeps failing
 * is slowed, and its agent can see it.
 * - `webhook.consecutive_failures`: attempts in a row with no 2xx (0 after any 2xx);
 *   `slowed_until` (real unix seconds, the service clock): from the third failure in a row, nothing
 *   is sent to the endpoint before it (its pending deliveries wait until then, one attempt at a
 *   time after it), doubling with each further failure up to an hour; null when healthy;
 *   `last_error`: why its last attempt failed.
 * - `webhook_delivery_pending`: a webhook's pending deliveries, counted (a webhook's queue is
 *   bounded) and moved together (an endpoint slowed).
 */
export class Migration20261122000021 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhook add column consecutive_failures integer not null default 0,
      add column slowed_until float8 null, add column last_error text null,
      add constraint webhook_consecutive_failures_check check (consecutive_failures >= 0)`);
    this.addSql(
      `create index webhook_delivery_pending on webhook_delivery (webhook_id) where status = 'pending'`,
    );
  }
}
