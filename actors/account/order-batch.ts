// Group commit of order placement (ARCHITECTURE "Where the speed comes from"): the orders that
// queue up in a worker while one batch commits are placed together in the next transaction, with
// set-based SQL, and each caller is answered only after that commit. Every account actor still
// awaits its own order, so one account's turns never interleave; refusals (closed session, switch
// off, insufficient balance) are decided per order under the batch's row locks and write nothing.
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { MONTHLY_FEE_CENTS } from '../../src/payments/terms.js';
import { ActorError } from '../runtime/actor.js';
import { postingCtes } from './ledger.js';
import { sessionLockKey } from '../market/session-lock.js';

export type OrderRequest = {
  accountId: number;
  agentId: number;
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  qty: number;
  unitCostCents: number;
  listPriceCents: number;
  feeCents: number;
  holdingCents: number;
  closesAt: number;
  payFromBalance: boolean;
};

export type OrderPlaced = {
  order_id: number;
  round_id: number;
  token: string;
  status: 'awaiting_payment' | 'paid';
  /** The participation fee this order's funding charged (pay_from_balance only). */
  fee_cents: number;
  created_at: Date;
  paid_at: Date | null;
};

type Outcome = OrderPlaced | ActorError;

/** Most orders one transaction places; more wait for the next batch. */
export const MAX_BATCH = 512;
const UNIQUE_VIOLATION = '23505';
const json = (rows: unknown) => JSON.stringify(rows);

/** A connection of the worker's pool, spoken to in PostgreSQL's simple protocol (several statements per round trip). */
type Conn = { query(text: string): Promise<Result | Result[]>; escapeLiteral(s: string): string };
type Result = { rows: any[] };
type Pool = { acquireConnection(): Promise<Conn>; releaseConnection(c: Conn): Promise<void> };

/**
 * Places `batch` in one transaction and returns one outcome per request, in order. Two round trips:
 * BEGIN, the session lock and the read in one; the write and COMMIT in the other (the batch's
 * latency is what bounds the order rate: bench/README.md). A unique violation (another worker
 * charged the same holder's monthly fee a moment earlier) retries the whole batch, which then sees
 * the fee as charged.
 */
export async function placeOrders(em: EntityManager, batch: OrderRequest[]): Promise<Outcome[]> {
  const pool = (em.getKnex().client as unknown as Pool);
  for (let attempt = 1; ; attempt++) {
    const conn = await pool.acquireConnection();
    try {
      return await placeOnce(conn, batch);
    } catch (err) {
      await conn.query('rollback').catch(() => {});
      if ((err as { code?: string }).code !== UNIQUE_VIOLATION || attempt >= 3) throw err;
    } finally {
      await pool.releaseConnection(conn);
    }
  }
}

type BatchState = {
  sessions: { market: string; tick: number }[];
  agents: { id: number; on: boolean; holder: number | null }[];
  accounts: { id: number; balance: number }[];
  fees: number[];
};

const last = (r: Result | Result[]) => (Array.isArray(r) ? r[r.length - 1] : r);
const first = (r: Result | Result[]) => (Array.isArray(r) ? r[0] : r);

/** An id array literal; ids are safe integers (asserted), so the literal needs no escaping. */
function idArray(xs: number[]): string {
  for (const x of xs) if (!Number.isSafeInteger(x)) throw new Error(`not an id: ${x}`);
  return `'{${[...new Set(xs)].join(',')}}'::bigint[]`;
}

async function placeOnce(conn: Conn, batch: OrderRequest[]): Promise<Outcome[]> {
  const lit = (s: string) => conn.escapeLiteral(s);
  const markets = [...new Set(batch.map((r) => r.market))].sort();
  const funded = batch.filter((r) => r.payFromBalance);
  const agentIds = idArray(funded.map((r) => r.agentId));
  // A close waits for this batch; an order after the close finds its session closed. The lock is
  // its own statement (a statement's snapshot is taken before it waits), then one read for
  // everything the decisions need; the funded accounts are locked in id order (concurrent batches
  // of other workers never deadlock on them).
  const read = await conn.query(
    `begin;
     ${markets.map((m) => `select pg_advisory_xact_lock_shared(hashtext(${lit(sessionLockKey(m))}));`).join('\n')}
     select
       (select coalesce(json_agg(json_build_object('market', market, 'tick', tick)), '[]') from market_session
         where closed_at is null and market = any(array[${markets.map(lit).join(',')}])) as sessions,
       (select coalesce(json_agg(json_build_object('id', id, 'on', autonomous_funding, 'holder', holder_id)), '[]') from agent
         where id = any(${agentIds})) as agents,
       (select coalesce(json_agg(json_build_object('id', id, 'balance', balance_cents)), '[]') from
         (select id, balance_cents from account where id = any(${idArray(funded.map((r) => r.accountId))}) order by id for update) a) as accounts,
       (select coalesce(json_agg(f.holder_id), '[]') from monthly_fee f join agent g on g.holder_id = f.holder_id
         where g.id = any(${agentIds}) and f.month = to_char(now() at time zone 'UTC', 'YYYY-MM')) as fees`,
  );
  const state = last(read).rows[0] as BatchState;
  const isOpen = new Set(state.sessions.map((x) => `${x.market}/${x.tick}`));
  const agents = new Map(state.agents.map((a) => [a.id, a]));
  const balances = new Map(state.accounts.map((a) => [a.id, a.balance]));
  const feePaid = new Set(state.fees);

  const outcomes: Outcome[] = new Array(batch.length);
  const accepted: { req: OrderRequest; i: number; total: number; fee: number; holder: number | null }[] = [];
  batch.forEach((req, i) => {
    if (!isOpen.has(`${req.market}/${req.tick}`)) {
      outcomes[i] = new ActorError(404, `deal ${req.offerKey} is no longer on the menu: its session closed`);
      return;
    }
    const total = req.qty * req.unitCostCents + req.qty * req.feeCents;
    if (!req.payFromBalance) return void accepted.push({ req, i, total, fee: 0, holder: null });
    const agent = agents.get(req.agentId);
    if (!agent?.on || agent.holder === null) {
      outcomes[i] = new ActorError(403, 'pay_from_balance needs autonomous funding, which the account holder switches on after 3 settled trades of this agent in profit');
      return;
    }
    // The holder's first real-money checkout of the month carries the participation fee.
    const fee = feePaid.has(agent.holder) ? 0 : MONTHLY_FEE_CENTS;
    const balance = balances.get(req.accountId) ?? 0;
    if (balance < total + fee) {
      outcomes[i] = new ActorError(400, `insufficient balance: this order needs ${(total + fee) / 100} USD, the account holds ${balance / 100} USD`);
      return;
    }
    balances.set(req.accountId, balance - total - fee);
    feePaid.add(agent.holder);
    accepted.push({ req, i, total, fee, holder: agent.holder });
  });
  if (!accepted.length) {
    await conn.query('commit');
    return outcomes;
  }

  const tokens = accepted.map(() => randomBytes(24).toString('base64url'));
  const rowsJson = json(accepted.map((a, k) => ({
        account_id: a.req.accountId, agent_id: a.req.agentId, market: a.req.market, tick: a.req.tick, idx: a.req.idx, offer_key: a.req.offerKey,
        qty: a.req.qty, unit_cost_cents: a.req.unitCostCents, list_price_cents: a.req.listPriceCents, fee_cents: a.req.feeCents,
        holding_cents: a.req.holdingCents, token: tokens[k], closes_at: a.req.closesAt, paid: a.req.payFromBalance, holder: a.holder,
        total: a.total, fee: a.fee, k,
      })));
  // One statement writes the batch: ids, rounds, orders, monthly fees and the ledger postings of
  // the funded ones (order_debit, monthly_fee). Row k of the answer is accepted[k].
  const written = await conn.query(
    `with x as (
       select x.*, nextval('trade_round_id_seq') as round_id, nextval('orders_id_seq') as order_id
         from jsonb_to_recordset(${lit(rowsJson)}::jsonb) as x(account_id bigint, agent_id bigint, market text, tick bigint, idx int, offer_key text,
              qty int, unit_cost_cents int, list_price_cents int, fee_cents int, holding_cents int, token text, closes_at float8, paid boolean,
              holder bigint, total bigint, fee bigint, k bigint)),
     rounds as (
       insert into trade_round (id, account_id, amount_cents, status, source, fee_amount_cents, charged_cents, funded_at)
       select round_id, account_id, total, case when paid then 'funded' else 'awaiting_payment' end, case when paid then 'balance' end,
              fee, case when paid then total + fee else 0 end, case when paid then now() end from x),
     placed as (
       insert into orders (id, account_id, agent_id, round_id, market, tick, idx, offer_key, qty, unit_cost_cents, list_price_cents, fee_cents,
                           holding_cents, gross_cents, fee_amount_cents, total_cents, token, closes_at, status, payment_source, paid_at, paid_by_holder)
       select order_id, account_id, agent_id, round_id, market, tick, idx, offer_key, qty, unit_cost_cents, list_price_cents, fee_cents, holding_cents,
              qty * unit_cost_cents, qty * fee_cents, total, token, closes_at, case when paid then 'paid' else 'awaiting_payment' end,
              case when paid then 'balance' end, case when paid then now() end, holder from x),
     fees as (
       insert into monthly_fee (holder_id, month, account_id, round_id, amount_cents)
       select holder, to_char(now() at time zone 'UTC', 'YYYY-MM'), account_id, round_id, fee from x where fee > 0),
     e as (
       select account_id, 'order_debit' as kind, -total as amount_cents, 'order:' || order_id as ref, null::bigint as tick, 2 * k as seq from x where paid
       union all
       select account_id, 'monthly_fee', -fee, 'order:' || order_id, null, 2 * k + 1 from x where paid and fee > 0),
     ${postingCtes('false')}
     select order_id::float8 as order_id, round_id::float8 as round_id, now() as now from x order by k;
     commit`,
  );
  const placed = first(written).rows as { order_id: number; round_id: number; now: Date | string }[];
  accepted.forEach((a, k) => {
    const { order_id, round_id, now } = placed[k];
    outcomes[a.i] = {
      order_id, round_id, token: tokens[k], status: a.req.payFromBalance ? 'paid' : 'awaiting_payment', fee_cents: a.fee,
      created_at: new Date(now), paid_at: a.req.payFromBalance ? new Date(now) : null,
    };
  });
  return outcomes;
}

/**
 * Collects order requests and runs them through `placeOrders` one batch at a time: while a batch
 * commits, new requests queue and form the next one (natural group commit, no timer). Measured on
 * 2 cores, two batches in flight were slower than one (more, smaller commits): bench/README.md.
 */
export class OrderBatcher {
  private queue: { req: OrderRequest; resolve: (v: OrderPlaced) => void; reject: (e: unknown) => void }[] = [];
  private running = false;

  constructor(private readonly em: () => EntityManager) {}

  submit(req: OrderRequest): Promise<OrderPlaced> {
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        const outcomes = await placeOrders(this.em(), batch.map((b) => b.req));
        batch.forEach((b, i) => {
          const o = outcomes[i];
          if (o instanceof ActorError) b.reject(o);
          else b.resolve(o);
        });
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.running = false;
  }
}
