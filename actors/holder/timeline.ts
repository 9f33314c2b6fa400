// The holder's timeline (/console/timeline): every event of the holder's accounts,
// newest first, paged by a cursor. One read-only statement: a union of one branch per kind of event
// (an order's steps, settlements, ledger entries, payouts paid, Gold Coin entries, cart grants),
// each branch already cut at the cursor and the page size, so a page reads at most
// `branches × (limit + 1)` rows before the final sort, however long the history. The cursor
// (src/schemas TIMELINE_CURSOR_PATTERN) is `<micros>-<branch>-<id>`: the order of the events.
import type { EntityManager } from '@mikro-orm/postgresql';
import { centsToNumber } from '../../src/engine/money.js';
import { LIST_CAPS } from '../../src/rules.js';
import { TIMELINE_PAGE_MAX, type TimelineKind } from '../../src/schemas/index.js';
import { defineReads } from '../runtime/read.js';
import type { TimelineArgs, TimelinePage } from './messages.js';

/** One kind of event: where its rows come from and what each column is. `detail` carries what its sentence needs. */
type Branch = {
  src: number;
  from: string;
  where: string;
  at: string;
  id: string;
  kind: string;
  account?: string;
  amount?: string;
  coins?: string;
  ref?: string;
  detail?: string;
};

const ORDER_FROM = 'orders o join acc on acc.id = o.account_id';
const GRANT_FROM =
  'cart_grant gr left join agent g on g.id = gr.agent_id left join cart c on c.id = gr.cart_id';
const GRANT_DETAIL = `jsonb_build_object('level', gr.level, 'agent', g.name, 'cart', c.name)`;

// The branch number is part of each event's order (ties at one instant) and of its cursor: keep them stable.
const BRANCHES: Branch[] = [
  {
    src: 1,
    from: `${ORDER_FROM} join menu_row m on m.market = o.market and m.tick = o.tick and m.idx = o.idx left join agent g on g.id = o.agent_id`,
    where: 'true',
    at: 'o.created_at',
    id: 'o.id',
    kind: `'order_placed'`,
    account: 'o.account_id',
    ref: `'order:' || o.id`,
    detail: `jsonb_build_object('market', o.market, 'tick', o.tick, 'qty', o.qty, 'total_cents', o.total_cents, 'title', m.deal->'bundle'->>'title', 'agent', g.name)`,
  },
  {
    src: 2,
    from: ORDER_FROM,
    where: 'o.paid_at is not null',
    at: 'o.paid_at',
    id: 'o.id',
    kind: `'order_paid'`,
    account: 'o.account_id',
    ref: `'order:' || o.id`,
    detail: `jsonb_build_object('source', o.payment_source, 'total_cents', o.total_cents)`,
  },
  {
    src: 3,
    from: ORDER_FROM,
    where: 'o.filled_at is not null',
    at: 'o.filled_at',
    id: 'o.id',
    kind: `'order_filled'`,
    account: 'o.account_id',
    ref: `'order:' || o.id`,
    detail: `jsonb_build_object('market', o.market, 'tick', o.tick, 'position_id', o.position_id)`,
  },
  {
    src: 4,
    from: ORDER_FROM,
    where: 'o.refunded_at is not null',
    at: 'o.refunded_at',
    id: 'o.id',
    kind: `'order_refunded'`,
    account: 'o.account_id',
    ref: `'order:' || o.id`,
    detail: `jsonb_build_object('reason', o.refund_reason)`,
  },
  {
    src: 5,
    from: 'trade t join acc on acc.id = t.account_id',
    where: 't.settled and t.settled_at is not null',
    at: 't.settled_at',
    id: 't.id',
    kind: `'position_settled'`,
    account: 't.account_id',
    ref: `'position:' || t.position_id`,
    detail: `jsonb_build_object('market', t.market, 'qty', t.qty, 'units_sold', t.units_sold, 'realized_cents', t.realized_pnl_cents)`,
  },
  {
    // Ledger entries by kind; a card top-up is `top_up`, a payout leaving the balance `payout_scheduled`.
    src: 6,
    from: 'ledger l join acc on acc.id = l.account_id',
    where: 'true',
    at: 'l.created_at',
    id: 'l.id',
    kind: `case when l.kind = 'topup' or (l.kind = 'card_charge' and l.ref like 'topup%') then 'top_up' when l.kind = 'payout' then 'payout_scheduled' else l.kind end`,
    account: 'l.account_id',
    amount: 'l.amount_cents',
    ref: 'l.ref',
    detail: `jsonb_build_object('balance_after_cents', l.balance_after_cents)`,
  },
  {
    src: 7,
    from: 'payout p join acc on acc.id = p.account_id',
    where: `p.status = 'paid'`,
    at: 'p.paid_at',
    id: 'p.id',
    kind: `'payout_paid'`,
    account: 'p.account_id',
    ref: `'payout:' || p.id`,
    detail: `jsonb_build_object('amount_cents', p.amount_cents, 'commission_cents', p.commission_cents, 'net_cents', p.net_cents)`,
  },
  {
    src: 8,
    from: 'gc_ledger x',
    where: 'x.holder_id = cur.holder',
    at: 'x.created_at',
    id: 'x.id',
    kind: 'x.kind',
    coins: 'x.amount_hundredths',
    ref: 'x.ref',
    detail: `jsonb_build_object('balance_after', x.balance_after_hundredths)`,
  },
  {
    src: 9,
    from: GRANT_FROM,
    where: 'gr.holder_id = cur.holder',
    at: 'gr.created_at',
    id: 'gr.id',
    kind: `'grant_made'`,
    ref: `'grant:' || gr.id`,
    detail: GRANT_DETAIL,
  },
  {
    src: 10,
    from: GRANT_FROM,
    where: 'gr.holder_id = cur.holder and gr.revoked_at is not null',
    at: 'gr.revoked_at',
    id: 'gr.id',
    kind: `'grant_revoked'`,
    ref: `'grant:' || gr.id`,
    detail: GRANT_DETAIL,
  },
];

/** One branch, cut at the cursor and the page size (its own order agrees with the timeline's). */
const branchSql = (b: Branch) =>
  `(select ${b.at} as at, ${b.src} as src, ${b.id}::bigint as id, ${b.kind}::text as kind, ${b.account ?? 'null'}::bigint as account_id,
          ${b.amount ?? 'null'}::bigint as amount_cents, ${b.coins ?? 'null'}::bigint as coins_hundredths, ${b.ref ?? 'null'}::text as ref,
          ${b.detail ?? `'{}'`}::jsonb as detail
     from ${b.from}, cur
    where ${b.where} and (cur.at is null or (${b.at}, ${b.src}::int, ${b.id}::bigint) < (cur.at, cur.src, cur.id))
    order by ${b.at} desc, ${b.id} desc limit (select lim from cur))`;

/**
 * The timeline statement. Parameters: holder, cursor micros, cursor branch, cursor id (all null on
 * the first page), rows wanted, and the holder again with the account cap. The holder's accounts
 * are those GET /console lists (its own and its agents').
 */
export const TIMELINE_SQL = `with cur as (
    select ?::bigint as holder, timestamptz 'epoch' + ?::bigint * interval '1 microsecond' as at, ?::int as src, ?::bigint as id, ?::int as lim),
  acc as (
    select id from (select id from account where holder_id = ? union select account_id from agent where holder_id = ?) a order by id limit ?)
select (extract(epoch from e.at) * 1000000)::bigint::text as at_us, e.src, e.id::float8 as id, e.kind, e.account_id::float8 as account_id,
       e.amount_cents::float8 as amount_cents, e.coins_hundredths::float8 as coins_hundredths, e.ref, e.detail
  from (${BRANCHES.map(branchSql).join('\n  union all\n')}) e
 order by e.at desc, e.src desc, e.id desc
 limit (select lim from cur)`;

type Row = {
  at_us: string;
  src: number;
  id: number;
  kind: TimelineKind;
  account_id: number | null;
  amount_cents: number | null;
  coins_hundredths: number | null;
  ref: string | null;
  detail: Record<string, any>;
};

const usd = (cents: number) => `${centsToNumber(cents).toFixed(2)} USD`;
const signed = (cents: number) => `${cents > 0 ? '+' : ''}${usd(cents)}`;
const coins = (hundredths: number) =>
  `${hundredths > 0 ? '+' : ''}${(hundredths / 100).toFixed(2)} Gold Coins`;
const on = (r: Row) => (r.account_id === null ? '' : ` on account ${r.account_id}`);

/** The event in a sentence, for a person reading the console. */
export function timelineText(r: Row): string {
  const d = r.detail;
  switch (r.kind) {
    case 'order_placed':
      return `Order ${r.id} placed${d.agent ? ` by ${d.agent}` : ' on your Manual desk'}: ${d.qty} × ${d.title} on ${d.market}, session ${d.tick}, ${usd(d.total_cents)}`;
    case 'order_paid':
      return `Order ${r.id} paid ${d.source === 'balance' ? 'from the account balance' : 'by card'}: ${usd(d.total_cents)}`;
    case 'order_filled':
      return `Order ${r.id} filled at the close of ${d.market} session ${d.tick}${d.position_id ? `: position ${d.position_id}` : ''}`;
    case 'order_refunded':
      return `Order ${r.id} refunded: ${d.reason}`;
    case 'position_settled':
      return `${r.ref!.replace('position:', 'Position ')} settled on ${d.market}: ${d.units_sold} of ${d.qty} units sold, realized P&L ${signed(d.realized_cents ?? 0)}`;
    case 'top_up':
      return `Top-up by card${on(r)}: ${signed(r.amount_cents!)}`;
    case 'card_charge':
      return `Card charged for ${r.ref}${on(r)}: ${signed(r.amount_cents!)}`;
    case 'crypto_payment':
      return `Crypto payment for ${r.ref}${on(r)}: ${signed(r.amount_cents!)}`;
    case 'order_debit':
      return `Paid for ${r.ref}${on(r)}: ${signed(r.amount_cents!)}`;
    case 'monthly_fee':
      return `Monthly participation fee${on(r)}: ${signed(r.amount_cents!)}`;
    case 'sale_credit':
      return `Sales of ${r.ref}${on(r)}: ${signed(r.amount_cents!)}`;
    case 'holding_fee':
      return `Holding fee of ${r.ref}${on(r)}: ${signed(r.amount_cents!)}`;
    case 'surcharge':
      return `Settlement surcharge of ${r.ref}${on(r)}: ${signed(r.amount_cents!)}`;
    case 'refund':
      return `Refund of ${r.ref}${on(r)}: ${signed(r.amount_cents!)}`;
    case 'payout_scheduled':
      return `Payout requested${on(r)} (${r.ref}): ${signed(r.amount_cents!)} left the balance`;
    case 'payout_paid':
      return `Payout ${r.id} paid: ${usd(d.net_cents)} (${usd(d.amount_cents)} minus ${usd(d.commission_cents)} commission)`;
    case 'gc_grant':
      return `Gold Coins granted (${r.ref}): ${coins(r.coins_hundredths!)}`;
    case 'gc_purchase':
      return `Gold Coin pack bought (${r.ref}): ${coins(r.coins_hundredths!)}`;
    case 'gc_spend':
      return `Gold Coins spent (${r.ref}): ${coins(r.coins_hundredths!)}`;
    case 'gc_sale':
      return `Gold Coins from a sale (${r.ref}): ${coins(r.coins_hundredths!)}`;
    case 'grant_made':
      return `You granted ${d.level} on ${d.cart ?? 'every cart of yours'} to ${d.agent ?? 'every agent of yours'} (${r.ref})`;
    case 'grant_revoked':
      return `You revoked the ${d.level} grant on ${d.cart ?? 'every cart of yours'} to ${d.agent ?? 'every agent of yours'} (${r.ref})`;
  }
}

const cursorOf = (r: Row) => `${r.at_us}-${r.src}-${r.id}`;

/** A page of the holder's timeline, newest first, starting after `before` (a cursor) when given. */
export async function timelineOf(em: EntityManager, a: TimelineArgs): Promise<TimelinePage> {
  const c = a.before === null ? null : a.before.split('-');
  const limit = Math.min(Math.max(1, a.limit), TIMELINE_PAGE_MAX);
  // One row more than the page: whether an older page exists.
  const rows = await em.execute<Row[]>(TIMELINE_SQL, [
    a.holderId,
    c?.[0] ?? null,
    c?.[1] ?? null,
    c?.[2] ?? null,
    limit + 1,
    a.holderId,
    a.holderId,
    LIST_CAPS.accounts,
  ]);
  const page = rows.slice(0, limit);
  return {
    events: page.map((r) => ({
      kind: r.kind,
      at: Number(r.at_us) / 1e6,
      account_id: r.account_id,
      ref: r.ref,
      amount: r.amount_cents === null ? null : centsToNumber(r.amount_cents),
      coins: r.coins_hundredths === null ? null : r.coins_hundredths / 100,
      text: timelineText(r),
      cursor: cursorOf(r),
    })),
    next_before: rows.length > limit ? cursorOf(page[page.length - 1]) : null,
  };
}

export const timelineReads = defineReads({
  'holder.timeline': async ({ em }, a: TimelineArgs) => timelineOf(em, a),
});
