// The only way a balance changes (CONTRACT.md "Money"): one ledger row per change, written in the
// same statement that moves the balance, with balance_after from the row the update returned. So at
// every commit a balance equals the sum of its ledger amounts, across processes too (ARCHITECTURE
// rule 2: atomic SQL, the database is the last word). What a holder's checkout books is charge.ts's;
// what the close, payouts and competitions book is here.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { LEDGER_KINDS } from '../../orm/entities/index.js';
import { ActorError } from '../runtime/actor.js';
import {
  arrayParam,
  instantSql,
  intArrayParam,
  jsonObjectSql,
  unixSql,
  usdSql,
} from '../runtime/sql.js';
import { appendCtes } from '../events/log.js';

export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** A signed amount: + credits, - debits. `tick` marks entries of a session close (booked once). */
export type Entry = {
  account_id: number;
  kind: LedgerKind;
  amount_cents: number;
  ref: string;
  tick?: number | null;
};

/**
 * Postcondition checks that cost a query per posting (balance = Σ ledger of every touched account):
 * on in tests (`SVC_LEDGER_CHECKS=1`), off in production where the posting statement's own row
 * count check stays.
 */
export const LEDGER_CHECKS = process.env.SVC_LEDGER_CHECKS === '1';

function assertCents(entries: Entry[]): void {
  for (const e of entries) {
    if (!Number.isSafeInteger(e.amount_cents) || e.amount_cents === 0)
      throw new Error(`ledger amount must be non-zero integer cents, got ${e.amount_cents}`);
  }
}

/**
 * The CTE `e` of entries from five array parameters (account ids, kinds, amounts, refs, ticks), in
 * order: arrays cost PostgreSQL less to read than JSON, and let the order batch's statement be
 * prepared once.
 */
export const entriesArraysCte = (params: string[]) =>
  `e as (select * from unnest(${params.join(', ')}) with ordinality as x(account_id, kind, amount_cents, ref, tick, seq))`;

/** Entries as the five columns `entriesArraysCte` reads, each asserted to be integer cents. */
export function entriesArrays(
  entries: Entry[],
): [number[], string[], number[], string[], (number | null)[]] {
  assertCents(entries);
  return [
    entries.map((e) => e.account_id),
    entries.map((e) => e.kind),
    entries.map((e) => e.amount_cents),
    entries.map((e) => e.ref),
    entries.map((e) => e.tick ?? null),
  ];
}

/**
 * A ledger row of table alias `t` as GET serves it (SPEC.md "Ledger entry"): the one definition, read
 * by the account's ledger and written into `ledger.posted` events by the posting itself. Amounts in
 * USD from integer cents; `created_at` in unix seconds to the millisecond (as a Date reads it).
 */
export const ledgerEntryJsonSql = (t: string) =>
  jsonObjectSql([
    ['id', `${t}.id`],
    ['account_id', `${t}.account_id`],
    ['kind', `${t}.kind`],
    ['amount', usdSql(`${t}.amount_cents`)],
    ['currency', "'USD'"],
    ['balance_after', usdSql(`${t}.balance_after_cents`)],
    ['ref', `${t}.ref`],
    ['created_at', unixSql(`${t}.created_at`)],
  ]);

/**
 * The posting as SQL CTEs, after a CTE `e` (`entriesCte`): moves each account's balance by the sum
 * of its entries (only if `requireFunds` is false or the balance covers the debits) and inserts the
 * entries with their running balance_after into `posted`, stamped `at` (a SQL expression of the
 * turn's instant: instantSql). The one definition every posting uses.
 * The accounts are reached by their key (`= any(array(…))`) also in the order batch's generic plan,
 * which would otherwise hash-join `tot` against a sequential scan of every account. `entries`:
 * whether `posted` carries each entry as served (for its `ledger.posted` event; the close's 20k
 * session entries travel inside the position events and are not built).
 */
export function postingCtes(requireFunds: string, at: string, entries = true): string {
  return `tot as (select account_id, sum(amount_cents) as net, sum(least(amount_cents, 0)) as debits from e group by account_id),
     upd as (update account a set balance_cents = a.balance_cents + tot.net from tot
              where a.id = tot.account_id and a.id = any(array(select account_id from tot))
                and (not ${requireFunds} or a.balance_cents + tot.debits >= 0)
          returning a.id, a.balance_cents - tot.net as before),
     posted as (insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, tick, created_at)
       select e.account_id, e.kind, e.amount_cents,
              upd.before + sum(e.amount_cents) over (partition by e.account_id order by e.seq), e.ref, e.tick, ${at}
         from e join upd on upd.id = e.account_id
        order by e.seq
       returning account_id, id, ${entries ? ledgerEntryJsonSql('ledger') : 'null::json'} as entry)`;
}

/**
 * The postcondition of a posting inside its own statement (so it also guards statements that commit
 * in the same round trip): every expected entry was written, and with LEDGER_CHECKS every touched
 * account's balance equals the sum of its ledger. A violation raises, rolling the transaction back.
 */
export function postconditionSql(expected: string): string {
  const rows = `svc_assert((select count(*) from posted) = ${expected}, 'ledger rows written differ from the entries posted')`;
  if (!LEDGER_CHECKS) return rows;
  // The statement does not see its own ledger rows: before it, balance and Σ ledger must agree
  // (both then move by the same entries).
  return `${rows} and svc_assert(not exists (
      select 1 from upd where upd.before <> (select coalesce(sum(l.amount_cents), 0) from ledger l where l.account_id = upd.id)),
      'balance differs from the sum of its ledger')`;
}

/** The `ledger.posted` events of a posting (CONTRACT.md "Events"), as the event log's `ev` CTE reads them. */
export const ledgerEventsCte = (when: string) =>
  `ev as (select account_id, 'ledger.posted'::text as type, entry as data, 1 as phase, id as ord from posted where ${when})`;

/**
 * Posts `entries` in order (one statement) at `at` (unix seconds: the turn's TurnContext.at): each account's balance moves by the sum of its entries
 * and every entry records the running balance after it; each entry is a `ledger.posted` event of
 * its account in the same statement, except the close's session entries (`events: false`: they
 * travel inside the position events). With `requireFunds`, the statement moves nothing unless each
 * account's balance covers its debits, and the caller gets a 400.
 */
export async function postEntries(
  em: EntityManager,
  entries: Entry[],
  at: number,
  opts: { requireFunds?: boolean; events?: boolean } = {},
): Promise<void> {
  if (!entries.length) return;
  const accounts = new Set(entries.map((e) => e.account_id)).size;
  const [ids, kinds, amounts, refs, ticks] = entriesArrays(entries);
  const events = opts.events ?? true;
  const [r] = await em.execute<{ accounts: number }[]>(
    `with ${entriesArraysCte(['?::bigint[]', '?::text[]', '?::bigint[]', '?::text[]', '?::bigint[]'])}, ${postingCtes('?::boolean', instantSql(), events)},
          ${ledgerEventsCte('?::boolean')}, ${appendCtes(instantSql())}
     select count(distinct account_id)::int as accounts, (select count(*) from notified) as notified, (select count(*) from appended) as appended from posted
      where (select count(*) from upd) = 0 or ${postconditionSql('(select count(*) from e join upd on upd.id = e.account_id)')}`,
    [
      intArrayParam(ids),
      arrayParam(kinds),
      intArrayParam(amounts),
      arrayParam(refs),
      arrayParam(ticks),
      opts.requireFunds ?? false,
      at,
      events,
      at,
    ],
  );
  if (r.accounts !== accounts) {
    // Only a funds check (or an unknown account) leaves an account unmoved: nothing was written for it.
    if (opts.requireFunds) throw new ActorError(400, 'insufficient balance');
    throw new Error(`ledger: ${accounts - r.accounts} account(s) not found`);
  }
}

/** A payout leaves the balance whole when it is scheduled (the commission is taken from what is paid out). */
export function payoutEntries(accountId: number, payoutId: number, cents: number): Entry[] {
  return [
    { account_id: accountId, kind: 'payout', amount_cents: -cents, ref: `payout:${payoutId}` },
  ];
}

/**
 * What a session of an open position books at the close (ref `position:<id>`, the close's tick):
 * what sold is credited, holding is charged, and at settlement the surcharge is debited. Movements
 * of zero book nothing.
 */
export function sessionEntries(
  accountId: number,
  positionId: number,
  tick: number,
  moved: { soldCents: number; holdingCents: number; surchargeCents: number },
): Entry[] {
  const ref = `position:${positionId}`;
  const entries: Entry[] = [];
  const book = (kind: LedgerKind, amount: number) =>
    amount && entries.push({ account_id: accountId, kind, amount_cents: amount, ref, tick });
  book('sale_credit', moved.soldCents);
  book('holding_fee', -moved.holdingCents);
  book('surcharge', -moved.surchargeCents);
  return entries;
}

/** A paid order the close could not fill gets back what its funding debited (ref `order:<id>`, the close's tick). */
export function refundEntries(
  accountId: number,
  orderId: number,
  tick: number,
  debitedCents: number,
): Entry[] {
  return debitedCents > 0
    ? [
        {
          account_id: accountId,
          kind: 'refund',
          amount_cents: debitedCents,
          ref: `order:${orderId}`,
          tick,
        },
      ]
    : [];
}

/**
 * A competition account's starting balance: simulated USD credited once when the holder enters
 * (kind `topup`, ref `competition:<id>`); it never came from a card and can never leave as money
 * (holder-money.ts refuses top-ups and payouts on competition accounts).
 */
export function competitionStartEntries(
  accountId: number,
  competitionId: string,
  cents: number,
): Entry[] {
  return [
    {
      account_id: accountId,
      kind: 'topup',
      amount_cents: cents,
      ref: `competition:${competitionId}`,
    },
  ];
}

/** A competition's prizes: each winner's share credited to their holder's Manual desk (ref `competition:<id>`). */
export function prizeEntries(
  competitionId: string,
  prizes: { deskId: number; cents: number }[],
): Entry[] {
  return prizes
    .filter((p) => p.cents > 0)
    .map((p) => ({
      account_id: p.deskId,
      kind: 'prize' as const,
      amount_cents: p.cents,
      ref: `competition:${competitionId}`,
    }));
}
