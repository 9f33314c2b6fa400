import { Migration } from '@mikro-orm/migrations';

/**
 * Throttles of holder login and registration (actors/holder/throttle.ts), shared by every process
 * on the database: rate-limiter-flexible's PostgreSQL layout (its own `create table` is switched
 * off), `key` = `<limit>:<e-mail or address>`, `expire` in unix milliseconds. `key` is text, not
 * the library's varchar(255): an e-mail may be 254 characters before its prefix.
 */
export class Migration20261122000006 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table rate_limit (
      key text primary key,
      points integer not null default 0,
      expire bigint)`);
    // The library's sweep deletes by age.
    this.addSql(`create index rate_limit_expire on rate_limit (expire)`);
  }
}
