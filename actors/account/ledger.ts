// The only way a balance changes (CONTRACT.md "Money"): one ledger row per change, written in the
// same statement that moves the balance, with balance_after from the row the update returned. So at
// every commit a balance equals the sum of its ledger amounts, across processes too (ARCHITECTURE
// rule 2: atomic SQL, the database is the last word).
import type { EntityManager } from '@mikro-orm/postgresql';
import { ActorError } from '../runtime/actor.js';

export type LedgerKind = 'card_charge' | 'crypto_payment' | 'order_debit' | 'monthly_fee' | 'sale_credit' | 'holding_fee' | 'surcharge' | 'payout' | 'topup';

/** A signed amount: + credits, - debits. `tick` marks entries of a session close (booked once). */
export type Entry = { account_id: number; kind: LedgerKind; amount_cents: number; ref: string; tick?: number | null };

const json = (rows: unknown) => JSON.stringify(rows);

/**
 * The posting as SQL CTEs, for statements that derive their entries in SQL: given a CTE `e`
 * (account_id, kind, amount_cents, ref, tick, seq), moves each account's balance by the sum of its
 * entries (only if `requireFunds` is false or the balance covers the debits) and inserts the
 * entries with their running balance_after into `posted`.
 */
export function postingCtes(requireFunds: string): string {
  return `tot as (select account_id, sum(amount_cents) as net, sum(least(amount_cents, 0)) as debits from e group by account_id),
     upd as (update account a set balance_cents = a.balance_cents + tot.net from tot
              where a.id = tot.account_id and (not ${requireFunds} or a.balance_cents + tot.debits >= 0)
          returning a.id, a.balance_cents - tot.net as before),
     posted as (insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, tick)
       select e.account_id, e.kind, e.amount_cents,
              upd.before + sum(e.amount_cents) over (partition by e.account_id order by e.seq), e.ref, e.tick
         from e join upd on upd.id = e.account_id
        order by e.seq
       returning account_id)`;
}

/**
 * Posts `entries` in order (one statement): each account's balance moves by the sum of its entries
 * and every entry records the running balance after it. With `requireFunds`, the statement moves
 * nothing unless each account's balance covers its debits, and the caller gets a 400.
 */
export async function postEntries(em: EntityManager, entries: Entry[], opts: { requireFunds?: boolean } = {}): Promise<void> {
  if (!entries.length) return;
  for (const e of entries) {
    if (!Number.isSafeInteger(e.amount_cents)) throw new Error(`ledger amount must be integer cents, got ${e.amount_cents}`);
  }
  const accounts = new Set(entries.map((e) => e.account_id)).size;
  const rows = entries.map((e, seq) => ({ ...e, tick: e.tick ?? null, seq }));
  const posted = await em.execute(
    `with e as (select * from jsonb_to_recordset(?::jsonb) as x(account_id bigint, kind text, amount_cents bigint, ref text, tick bigint, seq int)),
     ${postingCtes('?::boolean')}
     select account_id from posted`,
    [json(rows), opts.requireFunds ?? false],
  );
  const moved = new Set(posted.map((r) => Number(r.account_id))).size;
  if (moved !== accounts) {
    // Only a funds check (or an unknown account) leaves an account unmoved: nothing was written for it.
    if (opts.requireFunds) throw new ActorError(400, 'insufficient balance');
    throw new Error(`ledger: ${accounts - moved} account(s) not found`);
  }
}

/**
 * What funding an order books: a card payment is charged onto the account and debited at once;
 * the participation fee, when this checkout carries it, is its own debit.
 */
export function fundingEntries(accountId: number, orderId: number, totalCents: number, feeCents: number, method: 'card' | 'balance'): Entry[] {
  const ref = `order:${orderId}`;
  const entries: Entry[] = [];
  if (method === 'card') entries.push({ account_id: accountId, kind: 'card_charge', amount_cents: totalCents + feeCents, ref });
  entries.push({ account_id: accountId, kind: 'order_debit', amount_cents: -totalCents, ref });
  if (feeCents) entries.push({ account_id: accountId, kind: 'monthly_fee', amount_cents: -feeCents, ref });
  return entries;
}
