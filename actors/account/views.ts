// Read models of trading accounts: the served Order, Position, ledger entry, round and owned-goods
// objects (SPEC.md "Resources"), one definition for the API (an agent's own account) and the
// holder's console (every account the holder owns). Run by the account read tasks (reads.ts) on the
// pool: writes go through the account actor, and these queries are indexed by account.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema } from '../../orm/entities/index.js';
import { MARKETS, centsToNumber, type MarketId } from '../../src/engine/index.js';
import {
  MONTHLY_FEE,
  feeDueSql,
  feeMonthAt,
  holderPays,
  holderPaysSql,
  type HolderPays,
} from '../../src/payments/fee.js';
import { LIST_CAPS } from '../../src/rules.js';
import { TRADE_FROM, TRADE_SELECT, tradeJson, type TradeRow } from '../record/trade-json.js';
import type {
  AccountScope,
  AccountSummary,
  LedgerEntry,
  MonthlyFeeStatus,
  ServedOrder,
} from './messages.js';
import {
  intArrayParam as ids,
  isLinkToken,
  jsonObjectSql,
  unixSql,
  usdSql,
  type JsonPairs,
} from '../runtime/sql.js';
import { ledgerEntryJsonSql } from '../money/ledger.js';
import { feeStatus } from '../money/charge.js';

/** Every account of a holder: its own and those of its agents (up to LIST_CAPS.accounts, oldest first). */
export async function accountsOfHolder(em: EntityManager, holderId: number): Promise<number[]> {
  const rows = await em.execute(
    'select id::float8 as id from account where holder_id = ? union select account_id::float8 from agent where holder_id = ? order by id limit ?',
    [holderId, holderId, LIST_CAPS.accounts],
  );
  return rows.map((r) => r.id as number);
}

/** The accounts a read names: given ones, or a holder's. */
export const accountIdsOf = (em: EntityManager, scope: AccountScope): Promise<number[]> =>
  'accountIds' in scope ? Promise.resolve(scope.accountIds) : accountsOfHolder(em, scope.holderId);
export const unix = (d: Date | string | null) =>
  d === null ? null : Math.round(new Date(d).getTime()) / 1000;

export const purchaseUrl = (baseUrl: string, token: string) => `${baseUrl}/checkout/${token}`;

export type OrderRow = {
  id: number;
  market: string;
  tick: number;
  offer_key: string;
  qty: number;
  unit_cost_cents: number;
  list_price_cents: number;
  gross_cents: number;
  fee_amount_cents: number;
  total_cents: number;
  status: string;
  payment_source: string | null;
  token: string;
  closes_at: number;
  created_at: Date;
  paid_at: Date | null;
  filled_at: Date | null;
  position_id: number | null;
  round_id: number;
  account_id: number;
  agent_id: number | null;
  deal: { bundle: { title: string; items: unknown[] }; sales_velocity?: number };
  refund_reason?: string | null;
  receipt?: string | null;
};

/** The markets whose orders serve `sales_velocity` (ranking markets do not quote it: SPEC.md "Deal object"). */
const VELOCITY_MARKETS = Object.values(MARKETS)
  .filter((m) => m.quotes_velocity)
  .map((m) => `'${m.id}'`)
  .join(', ');

/**
 * The served Order (SPEC.md "Order object") of `orders o` joined with its `menu_row m`, as json: the
 * one SQL definition GET reads and the events carry (the batch's `order.created`/`order.paid`, the
 * pay turn's `order.paid`, the close's fills, refunds and expiries). `base` is the SQL of the
 * service's base URL (a text parameter). orderJson below builds the same object from a row just
 * placed, for the placing reply; a test keeps the two equal.
 */
/**
 * `participationCents`: SQL of the fee a payment made now would carry (feeDueSql), for holder_pays
 * of an order awaiting payment; without it (an event of a filled, expired or refunded order, none
 * awaiting) holder_pays is null.
 */
export const orderJsonSql = (base: string, participationCents?: string) => {
  const pairs: JsonPairs = [
    ['id', 'o.id'],
    ['market', 'o.market'],
    ['tick', 'o.tick'],
    ['offer_key', 'o.offer_key'],
    ['deal_title', "m.deal->'bundle'->'title'"],
    ['items', "m.deal->'bundle'->'items'"],
    ['qty', 'o.qty'],
    ['unit_cost', usdSql('o.unit_cost_cents')],
    ['list_price', usdSql('o.list_price_cents')],
    ['gross_amount', usdSql('o.gross_cents')],
    ['fee_amount', usdSql('o.fee_amount_cents')],
    ['total_amount', usdSql('o.total_cents')],
    ['status', 'o.status'],
    ['payment_source', 'o.payment_source'],
    [
      'purchase_url',
      `case when o.status = 'expired' then null else ${base} || '/checkout/' || o.token end`,
    ],
    ['closes_at', 'o.closes_at'],
    ['created_at', unixSql('o.created_at')],
    ['paid_at', unixSql('o.paid_at')],
    ['filled_at', unixSql('o.filled_at')],
    ['position_id', 'o.position_id'],
    ['round_id', 'o.round_id'],
    ['account_id', 'o.account_id'],
    ['agent_id', 'o.agent_id'],
    ['refund_reason', 'o.refund_reason'],
    ['receipt', 'o.receipt'],
    [
      'holder_pays',
      participationCents === undefined
        ? 'null::json'
        : `case when o.status = 'awaiting_payment' then ${holderPaysSql('o.total_cents', participationCents, usdSql)} end`,
    ],
  ];
  return jsonObjectSql(pairs, {
    when: `o.market in (${VELOCITY_MARKETS})`,
    pairs: [['sales_velocity', "m.deal->'sales_velocity'"]],
  });
};
/** The order's menu row, by its key (the row exists: an order is placed on a recorded menu row). */
export const ORDER_FROM = `orders o join menu_row m on m.market = o.market and m.tick = o.tick and m.idx = o.idx`;
/** Served orders: the base URL is the query's first parameter (a column of `b`: the json's branches both read it). */
/** Whether the fee of month `b.month` of the order's holder is charged (no holder: not charged). */
const HOLDER_FEE_CHARGED =
  'exists (select 1 from account fa join monthly_fee f on f.holder_id = fa.holder_id where fa.id = o.account_id and f.month = b.month)';
const ORDER_SELECT = `${orderJsonSql('b.base', feeDueSql(HOLDER_FEE_CHARGED))} as "order"`;
/** Parameters: the base URL, then the fee month of the read's instant (holder_pays: a payment made now). */
const ORDER_READ = `(select ?::text as base, ?::text as month) b, ${ORDER_FROM}`;

/** `feeCharged`: whether the holder's fee of the month is charged, for holder_pays while it awaits payment (undefined: null). */
export function orderJson(r: OrderRow, baseUrl: string, feeCharged?: boolean): ServedOrder {
  const out: Record<string, unknown> = {
    id: r.id,
    market: r.market,
    tick: r.tick,
    offer_key: r.offer_key,
    deal_title: r.deal.bundle.title,
    items: r.deal.bundle.items,
    qty: r.qty,
    unit_cost: centsToNumber(r.unit_cost_cents),
    list_price: centsToNumber(r.list_price_cents),
  };
  // Ranking markets do not quote velocity: the field is absent there (SPEC.md "Deal object").
  if (MARKETS[r.market as MarketId]?.quotes_velocity)
    out.sales_velocity = r.deal.sales_velocity ?? null;
  return Object.assign(out, {
    gross_amount: centsToNumber(r.gross_cents),
    fee_amount: centsToNumber(r.fee_amount_cents),
    total_amount: centsToNumber(r.total_cents),
    status: r.status,
    payment_source: r.payment_source,
    purchase_url: r.status === 'expired' ? null : purchaseUrl(baseUrl, r.token),
    closes_at: r.closes_at,
    created_at: unix(r.created_at),
    paid_at: unix(r.paid_at),
    filled_at: unix(r.filled_at),
    position_id: r.position_id,
    round_id: r.round_id,
    account_id: r.account_id,
    agent_id: r.agent_id,
    refund_reason: r.refund_reason ?? null,
    receipt: r.receipt ?? null,
    holder_pays:
      r.status === 'awaiting_payment' && feeCharged !== undefined
        ? holderPays(r.total_cents, feeCharged)
        : null,
  }) as ServedOrder; // built field by field above; the tests check every reply against the schema
}

export async function ordersOf(
  em: EntityManager,
  accountIds: number[],
  opts: { status?: string; limit: number; baseUrl: string; at: number },
) {
  const rows = await em.execute<{ order: ServedOrder }[]>(
    `select ${ORDER_SELECT} from ${ORDER_READ} where o.account_id = any(?::bigint[]) and (?::text is null or o.status = ?) order by o.id desc limit ?`,
    [
      opts.baseUrl,
      feeMonthAt(opts.at),
      ids(accountIds),
      opts.status ?? null,
      opts.status ?? null,
      opts.limit,
    ],
  );
  return rows.map((r) => r.order);
}

/** One order of these accounts, or null (another account's order is not found either). */
export async function orderOf(
  em: EntityManager,
  accountIds: number[],
  orderId: number,
  baseUrl: string,
  at: number,
): Promise<ServedOrder | null> {
  const [row] = await em.execute<{ order: ServedOrder }[]>(
    `select ${ORDER_SELECT} from ${ORDER_READ} where o.id = ? and o.account_id = any(?::bigint[])`,
    [baseUrl, feeMonthAt(at), orderId, ids(accountIds)],
  );
  return row?.order ?? null;
}

/**
 * An order by its purchase-link token (the checkout page), with the agent's declared identity and
 * whether the agent funded it without the holder present (pay_from_balance, an execute checkout).
 */
export async function orderByToken(em: EntityManager, token: string, baseUrl: string, at: number) {
  if (!isLinkToken(token)) return null;
  const [row] = await em.execute<
    {
      order: ServedOrder;
      agent: Record<string, unknown>;
      by_agent: boolean;
      cancelled_by: 'agent' | 'holder' | null;
    }[]
  >(
    `select ${ORDER_SELECT}, json_build_object('id', g.id, 'name', g.name, 'key_id', g.key_id, 'identity', g.identity, 'operator', g.operator,
            'purpose', g.purpose, 'contact', g.contact, 'holder_id', g.holder_id) as agent,
            o.standing_agent_id is not null as by_agent, o.cancelled_by
       from ${ORDER_READ} join agent g on g.id = o.agent_id where o.token = ?`,
    [baseUrl, feeMonthAt(at), token],
  );
  return row
    ? {
        order: row.order,
        agent: row.agent,
        fundedByAgent: row.by_agent,
        cancelledBy: row.cancelled_by,
      }
    : null;
}

/**
 * Where a served position's changing figures come from: the SQL of each trade column that moves
 * while it is open or when it settles, and of whether it has settled. GET reads the trade as it is
 * now (TRADE_STATE); a position event reads the figures its close stored (events/position-events.ts).
 */
export type PositionState = { settled: string; col: (c: MovingTradeColumn) => string };
/** The trade's columns a close moves (store.ts updateTrades); the rest of the trade never changes once filled. */
export type MovingTradeColumn =
  | 'qty_left'
  | 'revealed_ticks'
  | 'revenue_cents'
  | 'units_sold'
  | 'holding_cost_cents'
  | 'sales_by_tick'
  | 'writeoff_cents'
  | 'surcharge_cents'
  | 'realized_pnl_cents'
  | 'sold_out'
  | 'regime'
  | 'settled_at';
/** The trade as it is now. */
export const TRADE_STATE: PositionState = { settled: 't.settled', col: (c) => `t.${c}` };

/**
 * A position's P&L so far in integer cents (SQL over its `trade t`): sales minus cost, holding fees
 * and, once settled, the surcharge. The one definition: the served `pnl_so_far` and the console's
 * total over every open position (actors/holder/figures.ts).
 */
export const pnlSoFarCentsSql = (state: PositionState = TRADE_STATE) =>
  `(${state.col('revenue_cents')} - t.cost_basis_cents - ${state.col('holding_cost_cents')} - coalesce(case when ${state.settled} then ${state.col('surcharge_cents')} end, 0))`;

/**
 * The served Position (SPEC.md "Position object") of `position p`, its `trade t` and the trade's
 * `menu_row m`, as json, its changing figures from `state`: the one definition GET reads and the
 * close's `position.advanced` / `position.settled` events carry (with `extra` pairs: the session's
 * figures). The trade row holds the revealed state only, so this never serves the future; its sales
 * path is cut to the revealed sessions.
 */
export const positionJsonSql = (extra: JsonPairs = [], state: PositionState = TRADE_STATE) => {
  const { col } = state;
  const settledOnly = (sql: string) => `case when ${state.settled} then ${sql} end`;
  const pairs: JsonPairs = [
    ['id', 'p.id'],
    ['order_id', 'p.order_id'],
    ['market', 't.market'],
    ['opened_tick', 't.tick'],
    ['settles_at_tick', 't.tick + t.horizon'],
    ['deal_title', "m.deal->'bundle'->'title'"],
    ['offer_key', 't.offer_key'],
    ['qty', 't.qty'],
    ['qty_left', col('qty_left')],
    ['ticks_done', col('revealed_ticks')],
    ['horizon', 't.horizon'],
    ['unit_cost', usdSql('t.unit_cost_cents')],
    ['list_price', usdSql('t.list_price_cents')],
    ['cost_basis', usdSql('t.cost_basis_cents')],
    ['revenue', usdSql(col('revenue_cents'))],
    ['units_sold', col('units_sold')],
    ['holding_cost', usdSql(col('holding_cost_cents'))],
    ['writeoff', usdSql(col('writeoff_cents'))],
    ['surcharge', settledOnly(usdSql(col('surcharge_cents')))],
    ['pnl_so_far', usdSql(pnlSoFarCentsSql(state))],
    ['realized_pnl', usdSql(col('realized_pnl_cents'))],
    ['status', `case when ${state.settled} then 'settled' else 'open' end`],
    ['sales_by_tick', `to_json(${col('sales_by_tick')}[1:${col('revealed_ticks')}])`],
    ['created_at', unixSql('p.created_at')],
    ['settled_at', unixSql(col('settled_at'))],
    ...extra,
  ];
  return jsonObjectSql(pairs, {
    when: state.settled,
    pairs: [
      [
        'outcome',
        jsonObjectSql([
          ['sold_out', col('sold_out')],
          ['downside_event', col('regime')],
          ['surcharge', usdSql(col('surcharge_cents'))],
          ['writeoff', usdSql(col('writeoff_cents'))],
        ]),
      ],
      [
        'inventory',
        jsonObjectSql([
          ['transferred_units', 'p.transferred_units'],
          ['item_id', 'p.item_id'],
          ['transferred_at', unixSql('p.transferred_at')],
        ]),
      ],
    ],
  });
};
/** A position with its trade and the trade's menu row. */
export const POSITION_FROM = `position p join ${TRADE_FROM} on t.position_id = p.id`;
const POSITION_QUERY = `select ${positionJsonSql()} as position from ${POSITION_FROM}`;

export async function positionsOf(
  em: EntityManager,
  accountIds: number[],
  opts: { status?: 'open' | 'settled'; limit: number },
) {
  const rows = await em.execute<{ position: Record<string, unknown> }[]>(
    `${POSITION_QUERY} where p.account_id = any(?::bigint[]) and (?::text is null or t.settled = (?::text = 'settled')) order by p.id desc limit ?`,
    [ids(accountIds), opts.status ?? null, opts.status ?? null, opts.limit],
  );
  return rows.map((r) => r.position);
}

export async function positionOf(em: EntityManager, accountIds: number[], positionId: number) {
  const [row] = await em.execute<{ position: Record<string, unknown> }[]>(
    `${POSITION_QUERY} where p.id = ? and p.account_id = any(?::bigint[])`,
    [positionId, ids(accountIds)],
  );
  return row?.position ?? null;
}

/** The account's executed trades exactly as the market record serves them. */
export async function tradesOf(em: EntityManager, accountIds: number[], limit: number) {
  const rows = await em.execute<TradeRow[]>(
    `select ${TRADE_SELECT} from ${TRADE_FROM} where t.account_id = any(?::bigint[]) order by t.id desc limit ?`,
    [ids(accountIds), limit],
  );
  return rows.map(tradeJson);
}

/** The newest ledger entries of these accounts, as the posting's `ledger.posted` events carry them (one definition: ledgerEntryJsonSql). */
export async function ledgerOf(
  em: EntityManager,
  accountIds: number[],
  limit: number,
): Promise<LedgerEntry[]> {
  const rows = await em.execute<{ entry: LedgerEntry }[]>(
    `select ${ledgerEntryJsonSql('l')} as entry from ledger l where l.account_id = any(?::bigint[]) order by l.id desc limit ?`,
    [ids(accountIds), limit],
  );
  return rows.map((r) => r.entry);
}

/** Whether the holder's participation fee of the calendar month (UTC, service clock) of `at` is still due. */
export async function monthlyFeeStatus(
  em: EntityManager,
  holderId: number | null,
  at: number,
): Promise<MonthlyFeeStatus> {
  return (await payNow(em, holderId, at, 0)).fee;
}

/**
 * What a payment of `goodsCents` by the holder made at `at` charges (the pay forms' one total): the
 * holder's fee of the month and holder_pays (src/payments/fee.ts: the goods and the fee unless charged).
 */
export async function payNow(
  em: EntityManager,
  holderId: number | null,
  at: number,
  goodsCents: number,
): Promise<{ fee: MonthlyFeeStatus; pays: HolderPays }> {
  const fee = await feeStatus(em, holderId, at);
  const charged = fee.chargedAt !== null;
  return {
    fee: { ...MONTHLY_FEE, month: fee.month, due: !charged, charged_at: unix(fee.chargedAt) },
    pays: holderPays(goodsCents, charged),
  };
}

export async function accountSummary(
  em: EntityManager,
  accountId: number,
  opts: { ledgerLimit: number; baseUrl: string; at: number },
): Promise<AccountSummary> {
  const [a] = await em.execute(
    `select a.id::float8 as id, a.balance_cents::float8 as balance_cents, a.holder_id::float8 as holder_id,
            p.open_positions, p.settled_positions,
            (select count(*)::int from orders o where o.account_id = a.id and o.status in ('awaiting_payment', 'paid')) as pending_orders,
            (select coalesce(sum(t.realized_pnl_cents), 0)::float8 from trade t where t.account_id = a.id and t.settled) as realized_cents
       from account a,
            lateral (select count(*) filter (where not t.settled)::int as open_positions, count(*) filter (where t.settled)::int as settled_positions
                       from position p join trade t on t.position_id = p.id where p.account_id = a.id) p
      where a.id = ?`,
    [accountId],
  );
  return {
    account_id: a.id,
    currency: 'USD',
    balance: centsToNumber(a.balance_cents),
    open_positions: a.open_positions,
    settled_positions: a.settled_positions,
    pending_orders: a.pending_orders,
    realized_pnl_total: centsToNumber(a.realized_cents),
    console_url: `${opts.baseUrl}/console`,
    monthly_fee: await monthlyFeeStatus(em, a.holder_id, opts.at),
    ledger: await ledgerOf(em, [accountId], opts.ledgerLimit),
  };
}

export async function roundsOf(em: EntityManager, accountIds: number[], limit: number) {
  const rows = await em.execute(
    `select r.id::float8 as id, r.status, r.source, r.amount_cents::float8 as amount_cents, r.fee_amount_cents::float8 as fee_amount_cents,
            r.charged_cents::float8 as charged_cents, r.transferred_units, r.created_at, r.funded_at, r.completed_at,
            coalesce((select json_agg(json_build_object('id', o.id, 'market', o.market, 'tick', o.tick, 'offer_key', o.offer_key, 'qty', o.qty,
                      'status', o.status, 'total_amount', o.total_cents / 100.0, 'position_id', o.position_id) order by o.id)
                      from orders o where o.round_id = r.id), '[]') as orders
       from trade_round r where r.account_id = any(?::bigint[]) order by r.id desc limit ?`,
    [ids(accountIds), limit],
  );
  return rows.map((r) => ({
    id: r.id,
    orders: r.orders,
    amount: centsToNumber(r.amount_cents),
    fee_amount: centsToNumber(r.fee_amount_cents),
    charged: centsToNumber(r.charged_cents),
    source: r.source,
    status: r.status,
    transferred_units: r.transferred_units,
    created_at: unix(r.created_at),
    funded_at: unix(r.funded_at),
    completed_at: unix(r.completed_at),
  }));
}

/** The served columns of an inventory item (alias `i`), read by itemJson; the exchange's listings carry them too. */
export const ITEM_COLUMNS = (i: string) =>
  `${i}.id::float8 as id, ${i}.account_id::float8 as account_id, ${i}.position_id::float8 as position_id, ${i}.market, ${i}.cluster, ${i}.title, ${i}.qty,
   ${i}.story, ${i}.rarity, ${i}.rarity_score, ${i}.history, ${i}.economy, ${i}.source, ${i}.simulated, ${i}.provenance, ${i}.created_at`;

/** An inventory item as served (src/schemas InventoryItem), from ITEM_COLUMNS. */
export function itemJson(r: Record<string, any>) {
  return {
    id: r.id,
    account_id: r.account_id,
    position_id: r.position_id,
    market: r.market,
    cluster: r.cluster,
    title: r.title,
    qty: r.qty,
    story: r.story,
    rarity: r.rarity,
    rarity_score: r.rarity_score,
    history: r.history,
    economy: r.economy,
    source: r.source,
    simulated: r.simulated,
    provenance: r.provenance,
    created_at: unix(r.created_at)!,
  };
}

/** The holder who owns these accounts (a Manual desk's, or a connected agent's), or null. */
export async function holderOfAccounts(
  em: EntityManager,
  accountIds: number[],
): Promise<number | null> {
  const [r] = await em.execute<{ holder_id: number | null }[]>(
    `select coalesce(a.holder_id, g.holder_id)::float8 as holder_id from account a left join agent g on g.account_id = a.id
      where a.id = any(?::bigint[]) and coalesce(a.holder_id, g.holder_id) is not null limit 1`,
    [ids(accountIds)],
  );
  return r?.holder_id ?? null;
}

/**
 * Owned goods belong to holders (CONTRACT.md "Exchange"): a holder's goods from every source and
 * account (bought on the exchange too); without a holder, the goods these accounts' trades minted.
 */
export async function inventoryOf(
  em: EntityManager,
  accountIds: number[],
  holderId: number | null,
) {
  const items = await em.execute(
    `select ${ITEM_COLUMNS('i')} from inventory_item i
      where (?::bigint is not null and i.holder_id = ?::bigint) or (?::bigint is null and i.account_id = any(?::bigint[]))
      order by i.id desc limit ?`,
    [holderId, holderId, holderId, ids(accountIds), LIST_CAPS.inventory],
  );
  return items.map(itemJson);
}

/** The account's balance in cents if `holderId` holds it (a checkout page offers it then), else null. */
export async function checkoutBalanceCents(
  em: EntityManager,
  accountId: number,
  holderId: number,
): Promise<number | null> {
  const a = await em.findOne(
    AccountSchema,
    { id: accountId, holder: holderId },
    { fields: ['balanceCents'] },
  );
  return a ? a.balanceCents : null;
}
