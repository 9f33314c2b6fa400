import { Migration } from '@mikro-orm/migrations';

/**
 * Retries and idempotency (CONTRACT.md): the first answer to a request carrying an
 * `Idempotency-Key`, stored in the same transaction as its effect and kept 24 hours. `scope` is
 * the caller and the route (`agent:7 POST /api/v1/orders`), `request_hash` the body's sha256: the
 * same key with another body is refused. `reply` is the answer's JSON (2xx: what the route
 * renders; 4xx: `{"detail"}`). Also `svc_assert`, the postcondition check of ledger postings.
 */
export class Migration20261122000004 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table idempotency (
      scope text not null,
      key text not null,
      request_hash text not null,
      status int not null,
      reply jsonb not null,
      created_at timestamptz not null default now(),
      primary key (scope, key))`);
    // Retention sweeps by age (bounded batches).
    this.addSql(`create index idempotency_created_at on idempotency (created_at)`);
    // Postconditions inside a statement (ledger postings): a false one raises and rolls back.
    this
      .addSql(`create or replace function svc_assert(ok boolean, what text) returns boolean language plpgsql as $$
      begin
        if ok is not true then raise exception 'postcondition failed: %', what using errcode = 'P0001'; end if;
        return true;
      end $$`);
  }
}
