// Read tasks of the holder's money on the console (CONTRACT.md "The holder's money"): every account
// the holder owns (the Manual desk and each agent's) with its balance and counts, the Gold Coin
// balance, and the payouts with their status. Read-only SQL; the account and holder actors write
// these tables (actors/account/ledger.ts, actors/holder/coins.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { LIST_CAPS } from '../../src/rules.js';
import { unix } from '../account/views.js';
import { defineReads } from '../runtime/read.js';
import type { HolderAccount, HolderMoney, HolderPayout } from './messages.js';

/** Payouts the console lists, newest first (older ones stay in the ledger and the timeline). */
export const PAYOUTS_LISTED = 50;

/**
 * Every account of the holder (its own, the Manual desk first, and its agents'; up to
 * LIST_CAPS.accounts, oldest first) with the counts GET /account serves per account, in one
 * statement: positions open and settled, orders in flight, realized P&L of settled trades.
 */
function accountsOf(em: EntityManager, holderId: number): Promise<HolderAccount[]> {
  return em.execute<HolderAccount[]>(
    `select a.id::float8 as account_id, a.kind, g.id::float8 as agent_id, g.name as agent_name, g.key_id,
            a.balance_cents::float8 as balance_cents,
            t.open_positions, t.settled_positions, t.realized_cents,
            (select count(*)::int from orders o where o.account_id = a.id and o.status in ('awaiting_payment', 'paid')) as pending_orders
       from account a
       left join agent g on g.account_id = a.id
       cross join lateral (
         select count(*) filter (where not t.settled)::int as open_positions, count(*) filter (where t.settled)::int as settled_positions,
                coalesce(sum(t.realized_pnl_cents) filter (where t.settled), 0)::float8 as realized_cents
           from position p join trade t on t.position_id = p.id where p.account_id = a.id) t
      where a.holder_id = ? or a.id in (select account_id from agent where holder_id = ?)
      order by a.kind = 'manual' desc, a.id
      limit ?`,
    [holderId, holderId, LIST_CAPS.accounts],
  );
}

async function payoutsOf(em: EntityManager, holderId: number): Promise<HolderPayout[]> {
  const rows = await em.execute(
    `select id::float8 as id, account_id::float8 as account_id, amount_cents::float8 as amount_cents, commission_cents::float8 as commission_cents,
            net_cents::float8 as net_cents, status, pay_at, created_at, paid_at
       from payout where holder_id = ? order by id desc limit ?`,
    [holderId, PAYOUTS_LISTED],
  );
  return rows.map(
    (r) => ({ ...r, created_at: unix(r.created_at)!, paid_at: unix(r.paid_at) }) as HolderPayout,
  );
}

async function gcBalanceOf(em: EntityManager, holderId: number): Promise<number> {
  const [h] = await em.execute(
    'select gc_balance_hundredths::float8 as gc from holder where id = ?',
    [holderId],
  );
  return h ? (h.gc as number) : 0;
}

async function moneyOf(em: EntityManager, holderId: number): Promise<HolderMoney> {
  const [accounts, gc, payouts] = await Promise.all([
    accountsOf(em.fork(), holderId),
    gcBalanceOf(em.fork(), holderId),
    payoutsOf(em.fork(), holderId),
  ]);
  return { accounts, gc_balance_hundredths: gc, payouts };
}

export const holderMoneyReads = defineReads({
  /** The console's overview: accounts with balances and counts, Gold Coins, payouts. */
  'holder.money': async ({ em }, a: { holderId: number }) => moneyOf(em, a.holderId),
});
