import { Migration } from '@mikro-orm/migrations';

/**
 * Trading (agents, keys, orders): holders and their web sessions, agents (one key = one agent
 * = one trading account), carts (the registration's default cart), trade rounds, orders, positions,
 * the ledger, the monthly participation fee and owned goods. Money in integer cents.
 */
export class Migration20261122000003 extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table holder (
      id bigserial primary key,
      email text not null unique check (email = lower(email)),
      password_hash text not null,
      display_name text not null default '',
      created_at timestamptz not null default now())`);

    // Only a hash of the cookie's token is stored: a database leak does not leak sessions.
    this.addSql(`create table holder_session (
      token_hash text primary key,
      holder_id bigint not null references holder(id) on delete cascade,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null)`);

    // A balance may go below zero only through fees the close charges (holding, surcharge) on an
    // account that had nothing left; every debit a caller asks for checks the balance atomically.
    this.addSql(`create table account (
      id bigserial primary key,
      balance_cents bigint not null default 0,
      holder_id bigint null references holder(id),
      created_at timestamptz not null default now())`);
    this.addSql(`create index account_holder on account (holder_id) where holder_id is not null`);

    // key_hash: sha256 of the whole 80-character key (keys are random, so a fast hash is enough).
    this.addSql(`create table agent (
      id bigserial primary key,
      key_id text not null unique check (length(key_id) = 20),
      key_hash text not null,
      name text not null,
      recall_phrase text not null,
      identity jsonb null,
      operator jsonb null,
      purpose text null,
      contact text null,
      account_id bigint not null unique references account(id),
      holder_id bigint null references holder(id),
      paired_at timestamptz null,
      autonomous_funding boolean not null default false,
      funding_changed_at timestamptz null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index agent_holder on agent (holder_id) where holder_id is not null`);

    this.addSql(`create table cart (
      id bigserial primary key,
      agent_id bigint null references agent(id),
      holder_id bigint null references holder(id),
      name text not null,
      kind text not null check (kind in ('trade', 'own')),
      token text not null unique,
      paid boolean not null default false,
      created_at timestamptz not null default now())`);

    // A stored card keeps only brand, last 4 digits and expiry (CONTRACT.md "Test cards").
    this.addSql(`create table card (
      id bigserial primary key,
      holder_id bigint not null references holder(id),
      brand text not null,
      last4 text not null,
      exp_month integer not null,
      exp_year integer not null,
      created_at timestamptz not null default now(),
      unique (holder_id, brand, last4, exp_month, exp_year))`);

    this.addSql(`create table trade_round (
      id bigserial primary key,
      account_id bigint not null references account(id),
      status text not null default 'awaiting_payment' check (status in ('awaiting_payment', 'funded', 'expired', 'completed')),
      source text null check (source in ('card', 'balance')),
      amount_cents bigint not null,
      fee_amount_cents bigint not null default 0,
      charged_cents bigint not null default 0,
      transferred_units integer not null default 0,
      created_at timestamptz not null default now(),
      funded_at timestamptz null,
      completed_at timestamptz null)`);
    this.addSql(`create index trade_round_account on trade_round (account_id, id)`);

    // The deal terms are copied at creation: the order is what the caller saw, whatever happens later.
    this.addSql(`create table orders (
      id bigserial primary key,
      account_id bigint not null references account(id),
      agent_id bigint not null references agent(id),
      round_id bigint not null references trade_round(id),
      market text not null,
      tick bigint not null,
      idx integer not null,
      offer_key text not null,
      qty integer not null check (qty > 0),
      unit_cost_cents integer not null,
      list_price_cents integer not null,
      fee_cents integer not null,
      holding_cents integer not null,
      gross_cents bigint not null,
      fee_amount_cents bigint not null,
      total_cents bigint not null check (total_cents = gross_cents + fee_amount_cents),
      status text not null default 'awaiting_payment' check (status in ('awaiting_payment', 'paid', 'filled', 'expired')),
      payment_source text null check (payment_source in ('card', 'balance')),
      -- No foreign key: a holder funding a fleet would have every order key-share-lock one holder row.
      paid_by_holder bigint null,
      token text not null unique,
      closes_at double precision not null,
      created_at timestamptz not null default now(),
      paid_at timestamptz null,
      filled_at timestamptz null,
      position_id bigint null)`);
    this.addSql(`create index orders_account on orders (account_id, id)`);
    this.addSql(
      `create index orders_session on orders (market, tick) where status in ('awaiting_payment', 'paid')`,
    );

    // A position is a filled order; its moving state is the user trade of the market record
    // (trade.position_id), so the position and the record can never disagree.
    this.addSql(`create table position (
      id bigserial primary key,
      order_id bigint not null unique references orders(id),
      account_id bigint not null references account(id),
      market text not null,
      tick bigint not null,
      created_at timestamptz not null default now(),
      transferred_units integer null,
      item_id bigint null,
      transferred_at timestamptz null)`);
    this.addSql(`create index position_account on position (account_id, id)`);
    this.addSql(
      `create unique index trade_position on trade (position_id) where position_id is not null`,
    );

    this.addSql(`create table ledger (
      id bigserial primary key,
      account_id bigint not null references account(id),
      kind text not null check (kind in ('card_charge', 'crypto_payment', 'order_debit', 'monthly_fee', 'sale_credit',
        'holding_fee', 'surcharge', 'payout', 'topup')),
      amount_cents bigint not null,
      balance_after_cents bigint not null,
      ref text not null,
      tick bigint null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index ledger_account on ledger (account_id, id)`);
    // Entries of a session close carry its tick: a close books a position's session once, whatever replays it.
    this.addSql(
      `create unique index ledger_close_once on ledger (ref, kind, tick) where tick is not null`,
    );

    // The participation fee: the primary key makes "once per holder and calendar month" a fact.
    this.addSql(`create table monthly_fee (
      holder_id bigint not null references holder(id),
      month text not null,
      account_id bigint not null references account(id),
      round_id bigint null,
      amount_cents bigint not null,
      created_at timestamptz not null default now(),
      primary key (holder_id, month))`);

    this.addSql(`create table inventory_item (
      id bigserial primary key,
      account_id bigint not null references account(id),
      holder_id bigint null references holder(id),
      position_id bigint not null unique references position(id),
      market text not null,
      cluster integer not null,
      title text not null,
      qty integer not null check (qty > 0),
      story text not null,
      rarity text not null,
      rarity_score double precision not null,
      history jsonb not null,
      economy jsonb not null,
      source text not null,
      provenance jsonb not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index inventory_account on inventory_item (account_id, id)`);
  }
}
