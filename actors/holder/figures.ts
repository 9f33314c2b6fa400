// The console overview's figures (every figure agrees with the ledger and the positions):
// exact totals over every ledger entry and every open position of the holder's accounts, summed by
// PostgreSQL in integer cents in one statement, and the balance chart's window of the newest entries
// running on from the sums over every entry before it. Read-only SQL; the account and market actors
// write these tables (actors/money/ledger.ts, actors/market/store.ts). The answer is bounded: a few
// sums and at most FIGURES_WINDOW_MAX points.
import type { EntityManager } from '@mikro-orm/postgresql';
import { accountsOfHolder, pnlSoFarCentsSql } from '../account/views.js';
import { defineReads } from '../runtime/read.js';
import { arrayParam, intArrayParam, unixSql } from '../runtime/sql.js';
import { MOVED_KINDS, type HolderFigures, type HolderFiguresArgs } from './messages.js';

/** The most points the chart's window answers. */
export const FIGURES_WINDOW_MAX = 500;

/**
 * The figures of the holder's accounts (accountsOfHolder: the same accounts as the console's lists).
 * The window is the `window` newest entries by id, the order postings book them in (an account's
 * entries in id order are its balance's order: ledger.ts books under the account's row lock), so a
 * point's balance is the sum of every entry up to it: the sum of each account's balance_after then.
 */
export async function figuresOf(
  em: EntityManager,
  holderId: number,
  window: number,
): Promise<HolderFigures> {
  const accounts = intArrayParam(await accountsOfHolder(em, holderId));
  const size = Math.max(1, Math.min(FIGURES_WINDOW_MAX, Math.trunc(window)));
  const moved = arrayParam([...MOVED_KINDS]);
  const [row] = await em.execute<HolderFigures[]>(
    `with mine as (select l.id, l.kind, l.amount_cents, l.created_at, not (l.kind = any(?::text[])) as trading
                     from ledger l where l.account_id = any(?::bigint[])),
          w as (select * from mine order by id desc limit ?),
          tot as (select count(*)::int as entries, coalesce(sum(amount_cents), 0) as balance, coalesce(sum(amount_cents) filter (where trading), 0) as result,
                         coalesce(sum(amount_cents) filter (where id < (select min(id) from w)), 0) as balance_before,
                         coalesce(sum(amount_cents) filter (where id < (select min(id) from w) and trading), 0) as result_before
                    from mine),
          pts as (select w.id, w.created_at,
                         tot.balance_before + sum(w.amount_cents) over (order by w.id) as balance,
                         tot.result_before + sum(case when w.trading then w.amount_cents else 0 end) over (order by w.id) as result
                    from w, tot),
          open as (select count(*)::int as count, coalesce(sum(t.cost_basis_cents), 0) as cost, coalesce(sum(t.qty_left::bigint * t.list_price_cents), 0) as resale,
                          coalesce(sum(${pnlSoFarCentsSql()}), 0) as pnl
                     from position p join trade t on t.position_id = p.id where p.account_id = any(?::bigint[]) and not t.settled)
     select json_build_object('entries', tot.entries, 'balance_cents', tot.balance::bigint, 'result_cents', tot.result::bigint) as ledger,
            json_build_object('count', open.count, 'cost_cents', open.cost::bigint, 'resale_cents', open.resale::bigint, 'pnl_so_far_cents', open.pnl::bigint) as open,
            coalesce((select json_agg(json_build_object('id', id, 'at', ${unixSql('created_at')}, 'balance_cents', balance::bigint, 'result_cents', result::bigint) order by id)
                        from pts), '[]'::json) as history
       from tot, open`,
    [moved, accounts, size, accounts],
  );
  return row;
}

export const holderFiguresReads = defineReads({
  /** The console's overview: its figures as exact totals, and the balance chart's window. */
  'holder.figures': async ({ em }, a: HolderFiguresArgs) => figuresOf(em, a.holderId, a.window),
});
