import { Migration } from '@mikro-orm/migrations';

/**
 * Authority that ends (CONTRACT.md "Spending limits"): `agent.revoked_at`, set once when the holder
 * revokes the agent's key for good (every later request with it is a 401); `cart_grant.expires_at`,
 * after which a grant is served as expired and allows nothing. Null: not revoked, no expiry.
 */
export class Migration20261122000024 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table agent add column revoked_at timestamptz null`);
    this.addSql(`alter table cart_grant add column expires_at timestamptz null`);
  }
}
