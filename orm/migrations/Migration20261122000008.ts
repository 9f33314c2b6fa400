import { Migration } from '@mikro-orm/migrations';

/**
 * Carts (SPEC.md "Cart, cart line, permissions").
 * - `account.kind`: an agent's trading account, or a holder's Manual desk (CONTRACT.md "The
 *   holder's money"), which takes the lines the holder picks; one desk per holder, and every holder
 *   registered before this migration gets one.
 * - `orders.agent_id` becomes nullable: an order of the Manual desk has no agent.
 * - every holder's own cart (`agent_id` null), one per holder.
 * - `cart.updated_at`: `GET /carts?since=` answers the carts created, connected or changed after it.
 * - `cart_item`: a proposed line; `agent_id` is the proposing agent (null: the holder picked it).
 *   Its deal is the recorded menu row (market, tick, idx); `order_id` (trade carts) or `item_id`
 *   (own carts: goods bought outright) once checked out, never both.
 * - `cart_grant`: a holder's write or execute grant to one agent or all, on one cart or all;
 *   `revoked_at` set when revoked (kept for the console's history). Removing a stored card revokes
 *   the grants charging it and forgets the card (`card_id` set null on the revoked ones).
 * - `inventory_item.position_id` becomes nullable: goods bought outright come from no position.
 */
export class Migration20261122000008 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table account add column kind text not null default 'agent'`);
    this.addSql(
      `alter table account add constraint account_kind_check check (kind in ('agent', 'manual'))`,
    );
    this.addSql(
      `create unique index account_manual_desk on account (holder_id) where kind = 'manual'`,
    );
    this.addSql(
      `insert into account (holder_id, kind) select id, 'manual' from holder order by id`,
    );

    this.addSql(`alter table orders alter column agent_id drop not null`);

    this.addSql(`alter table cart add column updated_at timestamptz not null default now()`);
    this.addSql(`create index cart_agent on cart (agent_id) where agent_id is not null`);
    this.addSql(`create index cart_holder on cart (holder_id) where holder_id is not null`);
    // A connected agent's carts are its holder's (every agent of the holder sees them).
    this.addSql(
      `update cart c set holder_id = g.holder_id from agent g where g.id = c.agent_id and c.holder_id is null and g.holder_id is not null`,
    );
    // Every holder has one cart of their own (the lines they pick), made at registration.
    this.addSql(`create unique index cart_holder_own on cart (holder_id) where agent_id is null`);
    this.addSql(`insert into cart (holder_id, name, kind, token)
      select id, 'My cart', 'trade', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '') from holder order by id`);

    this.addSql(`alter table inventory_item alter column position_id drop not null`);

    this.addSql(`create table cart_item (
      id bigserial primary key,
      cart_id bigint not null references cart(id) on delete cascade,
      agent_id bigint null references agent(id),
      market text not null,
      tick bigint not null,
      idx integer not null,
      offer_key text not null,
      qty integer not null check (qty > 0),
      note text not null default '' check (length(note) <= 255),
      closes_at float8 not null,
      order_id bigint null unique references orders(id),
      item_id bigint null unique references inventory_item(id),
      created_at timestamptz not null default now(),
      constraint cart_item_checked_out_once check (order_id is null or item_id is null))`);
    this.addSql(`create index cart_item_cart on cart_item (cart_id, id)`);

    this.addSql(`create table cart_grant (
      id bigserial primary key,
      holder_id bigint not null references holder(id),
      agent_id bigint null references agent(id),
      cart_id bigint null references cart(id) on delete cascade,
      level text not null check (level in ('write', 'execute')),
      pay_with text not null default 'balance' check (pay_with in ('balance', 'card')),
      card_id bigint null references card(id) on delete set null,
      note text not null default '' check (length(note) <= 255),
      created_at timestamptz not null default now(),
      revoked_at timestamptz null,
      constraint cart_grant_card check (pay_with = 'balance' or card_id is not null or revoked_at is not null))`);
    this.addSql(`create index cart_grant_live on cart_grant (holder_id) where revoked_at is null`);
  }
}
