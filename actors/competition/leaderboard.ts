// The one ranking of a competition (CONTRACT.md "Competitions"): return on the starting balance
// from settled positions (the account's settled trades' realized P&L), ties by earlier entry. Both
// the served leaderboard and the prizes read it, so what is shown is what is paid.
import type { EntityManager } from '@mikro-orm/postgresql';

export type Ranked = {
  account_id: number;
  holder_id: number;
  name: string;
  pnl_cents: number;
  settled: number;
};

/** Entrants of `competitionId` in rank order, at most `limit`. */
export async function ranking(
  em: EntityManager,
  competitionId: string,
  limit: number,
): Promise<Ranked[]> {
  return em.execute<Ranked[]>(
    `select e.account_id::float8 as account_id, e.holder_id::float8 as holder_id,
            coalesce((select g.name from agent g where g.account_id = e.account_id), 'entrant ' || e.account_id) as name,
            coalesce(sum(t.realized_pnl_cents) filter (where t.settled), 0)::float8 as pnl_cents,
            count(t.id) filter (where t.settled)::int as settled
       from competition_entry e left join trade t on t.account_id = e.account_id
      where e.competition_id = ?
      group by e.account_id, e.holder_id, e.created_at
      order by pnl_cents desc, e.created_at, e.account_id
      limit ?`,
    [competitionId, limit],
  );
}
