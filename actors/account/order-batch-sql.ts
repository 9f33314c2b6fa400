// The order batch's statements (order-batch.ts), prepared once per batch connection. Each batch
// sends EXECUTEs with its values as array literals, so PostgreSQL neither parses nor plans the
// batch's SQL again: planning the two statements, sent as text with a JSON literal, costs as much
// as executing them. PREPARE/EXECUTE
// rather than the protocol's own prepared statements: several EXECUTEs still ride in one simple
// query, so a batch keeps its two round trips (BEGIN with the read, the write with COMMIT).
import { ANSWER_RETENTION_HOURS } from '../runtime/idempotency.js';
import { arrayLiteral, arrayParam, instantSql } from '../runtime/sql.js';
import { sessionLockKey } from '../market/session-lock.js';
import { REVOCATION_LOCK } from '../agent/messages.js';
import {
  entriesArraysCte,
  entriesArrays,
  postconditionSql,
  postingCtes,
  type Entry,
} from '../money/ledger.js';
import { appendCtes } from '../events/log.js';
import { orderJsonSql } from './views.js';
import { chargedFeesSql, feeRowsInsertSql } from '../money/charge.js';
import { spentSql } from '../money/limits.js';
import { PLACED_COLUMNS, placeOrdersCtes } from './order-write.js';
import type { EntityManager } from '@mikro-orm/postgresql';

/** One column of values per array parameter. */
type Column = readonly (string | number | boolean | null)[];

/**
 * The paying agents whose holder set a day limit: only their day's spending is summed (the sum
 * reads every order the agent funded that day, a cost that grows through the day for every batch,
 * which no batch should pay while no limit needs it).
 */
const DAY_LIMITED =
  'array(select id from agent where id = any($2) and autonomous_funding and limit_max_day_cents is not null)';
/** The same for a week limit (max_week), summed over the ISO weeks $13. */
const WEEK_LIMITED =
  'array(select id from agent where id = any($2) and autonomous_funding and limit_max_week_cents is not null)';

/**
 * The accounts of the batch (`accounts`) whose rows the batch locks: those paying now (`funded`)
 * and competition accounts. Locked in their own statement before the read, in id order (concurrent
 * batches of other workers or processes never deadlock): the read's snapshot is then taken after
 * the wait, so it sees what the batch that held the lock committed. Read in the statement that
 * waited, a day's spending was summed from a snapshot older than the lock (only the locked row
 * itself is re-read after the wait), and two processes' batches together could pass max_day.
 */
const LOCKED_ACCOUNTS = (accounts: string, funded: string) =>
  `id = any(${accounts}) and (id = any(${funded}) or kind = 'competition')`;

/**
 * What the decisions need, in one statement (its snapshot taken after the session and account
 * locks): open sessions of $1 (markets), the batch's agents $2 (their holders' fees: holder_pays), the balances of the accounts $3
 * locked by order_batch_lock_accounts (those that pay now, $4, and competition accounts), their
 * competitions, the fees already charged ($5 months), the recorded menu rows ($6 markets, $7
 * ticks, $8 idx), the stored answers ($9 scopes, $10 keys), $11 pairs
 * of new order and round ids, and what the paying agents with a day limit funded without their
 * holder on each UTC day $12 (their spending limits: money/limits.ts).
 */
function readSql(): string {
  return `select
       (select coalesce(json_agg(json_build_object('market', market, 'tick', tick)), '[]') from market_session
         where closed_at is null and market = any($1)) as sessions,
       (select coalesce(json_agg(json_build_object('id', id, 'on', autonomous_funding, 'holder', holder_id, 'changed_at', funding_changed_at,
                 'limit_max_order_cents', limit_max_order_cents, 'limit_max_day_cents', limit_max_day_cents, 'limit_markets', limit_markets,
                 'limit_max_week_cents', limit_max_week_cents, 'limit_expires_at', limit_expires_at,
                 'revoked', revoked_at is not null)), '[]') from agent
         where id = any($2)) as agents,
       (select coalesce(json_agg(json_build_object('agent', s.agent, 'day', d.day, 'cents', s.cents)), '[]')
          from unnest($12::float8[]) as d(day) cross join lateral (${spentSql(DAY_LIMITED, 'd.day')}) s) as spent,
       (select coalesce(json_agg(json_build_object('agent', s.agent, 'day', w.week, 'cents', s.cents)), '[]')
          from unnest($13::float8[]) as w(week) cross join lateral (${spentSql(WEEK_LIMITED, 'w.week', 7)}) s) as spent_week,
       (select coalesce(json_agg(json_build_object('id', id, 'balance', balance_cents)), '[]') from
         (select id, balance_cents from account where ${LOCKED_ACCOUNTS('$3', '$4')} order by id) a) as accounts,
       (select coalesce(json_agg(json_build_object('account', e.account_id, 'id', c.id, 'market', c.market, 'starts_at', c.starts_at,
                 'ends_at', c.ends_at, 'status', c.status)), '[]')
          from competition_entry e join lateral (select * from competition c where c.id = e.competition_id limit 1) c on true
         where e.account_id = any($3)) as competitions,
       ${chargedFeesSql('array(select holder_id from agent where id = any($2))', '$5')} as fees,
       (select coalesce(json_agg(json_build_object('market', m.market, 'tick', m.tick, 'idx', m.idx, 'offer_key', m.offer_key,
                 'unit_cost_cents', m.unit_cost_cents, 'list_price_cents', m.list_price_cents, 'max_qty', m.max_qty,
                 'title', m.deal->'bundle'->'title', 'items', m.deal->'bundle'->'items', 'sales_velocity', m.deal->'sales_velocity')), '[]')
          from (select distinct * from unnest($6, $7, $8) as k(market, tick, idx)) k
          join lateral (select * from menu_row m where m.market = k.market and m.tick = k.tick and m.idx = k.idx limit 1) m on true) as menu,
       (select coalesce(json_agg(json_build_object('scope', i.scope, 'key', i.key, 'hash', i.request_hash, 'status', i.status, 'reply', i.reply)), '[]')
          from unnest($9, $10) as k(scope, key)
          join lateral (select * from idempotency i where i.scope = k.scope and i.key = k.key limit 1) i on true) as answers,
       (select json_agg(json_build_object('o', nextval('orders_id_seq'), 'r', nextval('trade_round_id_seq'))) from generate_series(1, $11)) as ids`;
}

/** The types of the read's parameters, $1 to $12. */
const READ_TYPES = [
  'text[]',
  'bigint[]',
  'bigint[]',
  'bigint[]',
  'text[]',
  'text[]',
  'bigint[]',
  'int[]',
  'text[]',
  'text[]',
  'int',
  'float8[]',
  'float8[]',
] as const;

/** The read's values, in its parameters' order. */
export type ReadArgs = {
  markets: string[];
  agents: number[];
  accounts: number[];
  funded: number[];
  months: string[];
  menu: { market: string; tick: number; idx: number }[];
  keys: { scope: string; key: string }[];
  n: number;
  /** The UTC days (their first unix second) of the paying orders: what their agents spent on each. */
  days: number[];
  /** The ISO weeks (their first unix second) of the paying orders, the same for max_week. */
  weeks: number[];
  /** The batch's instant (its latest order's, real unix seconds from the service clock): answers older than the retention before it are gone. */
  at: number;
};

/** The read's parameters $1 to $12, in order. */
const readValues = (a: ReadArgs) => [
  a.markets,
  a.agents,
  a.accounts,
  a.funded,
  a.months,
  a.menu.map((m) => m.market),
  a.menu.map((m) => m.tick),
  a.menu.map((m) => m.idx),
  a.keys.map((k) => k.scope),
  a.keys.map((k) => k.key),
  a.n,
  a.days,
  a.weeks,
];

/**
 * The batch's read alone, on `em` (a quote: quote.ts): the same statement on a snapshot, with no
 * session or account locks taken and no ids drawn (`n` is 0), so nothing is held or changed.
 */
export async function readUnlocked(em: EntityManager, a: ReadArgs): Promise<unknown> {
  if (a.n !== 0) throw new Error('an unlocked read draws no ids');
  const values = readValues(a);
  const bindings: unknown[] = [];
  const sql = readSql().replace(/\$(\d+)(::[a-z0-9]+\[\])?/g, (_, i: string) => {
    const v = values[Number(i) - 1];
    // An array goes as its literal: the ORM would spread a JS array into a list.
    bindings.push(Array.isArray(v) ? arrayParam(v) : v);
    return `?::${READ_TYPES[Number(i) - 1]}`;
  });
  const [row] = await em.execute(sql, bindings);
  return row;
}

/** BEGIN's statements: the session locks, the account locks (their own statements: a snapshot is taken before a wait), expired answers, the read. */
export function readStatements(a: ReadArgs, lit: (s: string) => string): string {
  const arr = (c: Column) => arrayLiteral(c, lit);
  const keys = [arr(a.keys.map((k) => k.scope)), arr(a.keys.map((k) => k.key))];
  return [
    ...a.markets.map((m) => `execute order_batch_lock(${lit(sessionLockKey(m))})`),
    // Revocations wait for the batches under way, and later batches for them (agent/revocation.ts).
    `execute order_batch_lock(${lit(REVOCATION_LOCK)})`,
    `execute order_batch_lock_accounts(${arr(a.accounts)}, ${arr(a.funded)})`,
    ...(a.keys.length
      ? [`execute order_batch_expire(${keys.join(', ')}, ${lit(String(a.at))})`]
      : []),
    `execute order_batch_read(${readValues(a)
      .map((v) => (Array.isArray(v) ? arr(v) : String(v)))
      .join(', ')})`,
  ].join(';\n');
}

/**
 * The columns of the batch's orders (the CTE `x`), with their types: one array parameter each. The
 * placed orders' columns (order-write.ts, the one builder of orders and their payment), and the
 * batch's own: the fee's month (its fee rows), and the month's fee a payment made now would carry
 * (holder_pays of an order left awaiting payment).
 */
const ORDER_COLUMNS = [...PLACED_COLUMNS, ['month', 'text'], ['participation', 'bigint']] as const;
export type OrderColumn = (typeof ORDER_COLUMNS)[number][0];
const ANSWER_COLUMNS = [
  ['scope', 'text'],
  ['key', 'text'],
  ['request_hash', 'text'],
  ['status', 'int'],
  ['reply', 'text'],
  ['at', 'float8'],
] as const;
/** A stored answer, kept from `at` (its order's instant). */
export type Answer = {
  scope: string;
  key: string;
  request_hash: string;
  status: number;
  reply: unknown;
  at: number;
};

function WRITE_TYPES(): string[] {
  return [
    ...ORDER_COLUMNS.map(([, t]) => `${t}[]`),
    ...ANSWER_COLUMNS.map(([, t]) => `${t}[]`),
    'bigint[]',
    'text[]',
    'bigint[]',
    'text[]',
    'bigint[]',
    'int',
    'text',
    'float8',
  ];
}

/**
 * The batch's writes in one statement: rounds and orders (order-write.ts, paid at once or awaiting payment), monthly fees, the stored answers, the
 * ledger postings of the funded orders (ledger.ts's one posting definition, its postcondition
 * checked in the statement) and the events (events/log.ts: each order's `order.created`, and
 * `order.paid` when funded, its `data` built here from the row just placed by views.ts's one
 * definition of the served order; then each posting's `ledger.posted`), their notices kept for
 * after the commit (placeOrders sends them). Parameters: the order columns, the answer columns,
 * the entries' columns, how many entries there are, the service's base URL and the batch's instant
 * (its postings' and events' time; each order, round and answer keeps its own request's).
 */
function writeSql(): string {
  const o = ORDER_COLUMNS.length;
  const p = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => `$${from + i}`).join(', ');
  const entries = Array.from({ length: 5 }, (_, i) => `$${o + ANSWER_COLUMNS.length + 1 + i}`);
  const base = `$${o + ANSWER_COLUMNS.length + 7}`;
  const at = instantSql(`$${o + ANSWER_COLUMNS.length + 8}`);
  return `with x as (select * from unnest(${p(1, o)}) as x(${ORDER_COLUMNS.map(([c]) => c).join(', ')})),
     ${placeOrdersCtes('x')},
     fees as (${feeRowsInsertSql('x')}),
     answers as (
       insert into idempotency (scope, key, request_hash, status, reply, created_at)
       select scope, key, request_hash, status, reply::jsonb, ${instantSql('at')} from unnest(${p(o + 1, ANSWER_COLUMNS.length)}) as a(${ANSWER_COLUMNS.map(([c]) => c).join(', ')})),
     ${entriesArraysCte(entries)},
     ${postingCtes('false', at)},
     served as (select o.account_id, o.id, o.status, ${orderJsonSql(base, 'x.participation')} as data from placed o
       join x on x.order_id = o.id
       join lateral (select deal from menu_row m where m.market = o.market and m.tick = o.tick and m.idx = o.idx limit 1) m on true),
     ev as (select account_id, 'order.created'::text as type, data, 0 as phase, id * 2 as ord from served
            union all select account_id, 'order.paid', data, 0, id * 2 + 1 from served where status = 'paid'
            union all select account_id, 'ledger.posted', entry, 1, id from posted),
     ${appendCtes(at, 'after commit')}
     select ${postconditionSql(`$${o + ANSWER_COLUMNS.length + 6}`)} as ok, (select count(*) from notified) as notified`;
}

/** The write's EXECUTE: the orders (one value per column each), the answers to store, the ledger entries, the service's base URL (the orders' events) and the batch's instant. */
export function writeStatement(
  orders: Record<OrderColumn, string | number | boolean | null>[],
  answers: Answer[],
  entries: Entry[],
  baseUrl: string | null,
  at: number,
  lit: (s: string) => string,
): string {
  const arr = (c: Column) => arrayLiteral(c, lit);
  return `execute order_batch_write(${[
    ...ORDER_COLUMNS.map(([c]) => arr(orders.map((r) => r[c]))),
    ...ANSWER_COLUMNS.map(([c]) =>
      arr(answers.map((a) => (c === 'reply' ? JSON.stringify(a.reply ?? null) : a[c]))),
    ),
    ...entriesArrays(entries).map(arr),
    String(entries.length),
    baseUrl === null ? 'NULL' : lit(baseUrl),
    lit(String(at)),
  ].join(', ')})`;
}

/**
 * Prepared on every new batch connection. Generic plans always: the batch's arrays change length
 * from one batch to the next, and a custom plan per EXECUTE would be planning again. A generic
 * plan is made once, from the tables' sizes when the connection first runs it, and kept for the
 * connection's life; so every look-up by key is written to reach its index whatever the sizes
 * (`join lateral (… limit 1)`, `= any(array(…))`, rows by ctid) and sequential scans are off on this
 * connection: made on small tables, plain joins became hash joins over a sequential scan of
 * `account`, `agent`, `idempotency` or `competition`, a cost per batch that grows with those tables
 * (order-batch.test.ts checks the plans).
 */
export const PREPARE_BATCH = `set plan_cache_mode = force_generic_plan;
set enable_seqscan = off;
prepare order_batch_lock(text) as select pg_advisory_xact_lock_shared(hashtext($1));
prepare order_batch_lock_accounts(bigint[], bigint[]) as
  select id from account where ${LOCKED_ACCOUNTS('$1', '$2')} order by id for update;
prepare order_batch_expire(text[], text[], float8) as
  delete from idempotency where ctid = any(array(
    select i.ctid from unnest($1, $2) as k(scope, key)
      join lateral (select ctid, created_at from idempotency i where i.scope = k.scope and i.key = k.key limit 1) i on true
     where i.created_at <= ${instantSql('$3')} - make_interval(hours => ${ANSWER_RETENTION_HOURS})));
prepare order_batch_read(${READ_TYPES.join(', ')}) as
${readSql()};
prepare order_batch_write(${WRITE_TYPES().join(', ')}) as
${writeSql()};`;
