import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks (CONTRACT.md "Events" → Webhooks): an agent's endpoints and the
 * deliveries of its account's events to them, read from the event log (a restart loses nothing).
 * - `webhook`: the agent's URL, the event types it wants (null: every type), its signing secret
 *   (`whsec_...`, shown once), and `last_event_id`, the cursor: the last event of the account
 *   whose delivery was enqueued (starts at the account's head when the webhook is made). A deleted
 *   webhook keeps its row (`deleted_at`) for its deliveries' history.
 * - `webhook_delivery`: one event to one webhook, once (unique webhook + event): `pending` until a
 *   2xx (`delivered`) or until `expires_at` (24 hours after the event) passes with no 2xx
 *   (`failed`). `next_attempt_at` (real unix seconds, the service clock) is when it is due: a
 *   claim pushes it forward by a lease, so a crashed process's claims come due again.
 */
export class Migration20261122000016 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table webhook (
      id bigserial primary key,
      agent_id bigint not null references agent (id) on delete cascade,
      account_id bigint not null references account (id) on delete cascade,
      url text not null,
      types text[] null,
      secret text not null,
      last_event_id bigint not null default 0,
      created_at timestamptz not null default now(),
      deleted_at timestamptz null,
      constraint webhook_url_check check (length(url) <= 2048),
      constraint webhook_last_event_id_check check (last_event_id >= 0))`);
    this.addSql(`create index webhook_agent on webhook (agent_id, id) where deleted_at is null`);
    this.addSql(`create index webhook_live on webhook (account_id) where deleted_at is null`);
    this.addSql(`create table webhook_delivery (
      id bigserial primary key,
      webhook_id bigint not null references webhook (id) on delete cascade,
      account_id bigint not null references account (id) on delete cascade,
      event_id bigint not null,
      status text not null default 'pending',
      attempts integer not null default 0,
      last_status_code integer null,
      last_error text null,
      next_attempt_at float8 not null,
      expires_at float8 not null,
      created_at timestamptz not null default now(),
      delivered_at timestamptz null,
      constraint webhook_delivery_once unique (webhook_id, event_id),
      constraint webhook_delivery_status_check check (status in ('pending', 'delivered', 'failed')),
      constraint webhook_delivery_attempts_check check (attempts >= 0),
      constraint webhook_delivery_delivered check ((status = 'delivered') = (delivered_at is not null)))`);
    this.addSql(
      `create index webhook_delivery_due on webhook_delivery (next_attempt_at) where status = 'pending'`,
    );
    this.addSql(`create index webhook_delivery_created on webhook_delivery (created_at)`);
  }
}
