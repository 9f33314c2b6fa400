// Competition read tasks: the served competitions (CONTRACT.md "Competitions") with their ranking
// (leaderboard.ts), status read from the service clock's `at` (real unix seconds).
import type { EntityManager } from '@mikro-orm/postgresql';
import { centsToNumber } from '../../src/engine/index.js';
import { defineReads } from '../runtime/read.js';
import { ranking } from './leaderboard.js';
import type { CompetitionListArgs, CompetitionOneArgs, CompetitionView } from './messages.js';

type Row = {
  id: string;
  name: string;
  market: string;
  status: string;
  starts_at: number;
  ends_at: number;
  starting_balance_cents: number;
  prize_pool_cents: number;
  sponsor: string;
  entrants: number;
};

const SELECT = `select c.id, c.name, c.market, c.status, c.starts_at, c.ends_at, c.starting_balance_cents::float8 as starting_balance_cents,
  c.prize_pool_cents::float8 as prize_pool_cents, c.sponsor, (select count(*)::int from competition_entry e where e.competition_id = c.id) as entrants
  from competition c`;

const iso = (s: number) => new Date(s * 1000).toISOString();

async function view(
  em: EntityManager,
  c: Row,
  at: number,
  leaderboard: number,
): Promise<CompetitionView> {
  const status =
    c.status === 'finished' || at >= c.ends_at
      ? 'finished'
      : at < c.starts_at
        ? 'upcoming'
        : 'running';
  const ranked = await ranking(em, c.id, leaderboard);
  return {
    id: c.id,
    name: c.name,
    status,
    market: c.market,
    starts_at: iso(c.starts_at),
    ends_at: iso(c.ends_at),
    starting_balance: centsToNumber(c.starting_balance_cents),
    entrants: c.entrants,
    prize_pool: { amount: centsToNumber(c.prize_pool_cents), currency: 'USD', sponsor: c.sponsor },
    leaderboard: ranked.map((r, i) => ({
      rank: i + 1,
      name: r.name,
      return_pct: Math.round((r.pnl_cents / c.starting_balance_cents) * 10000) / 100,
      realized_pnl: centsToNumber(r.pnl_cents),
      settled_trades: r.settled,
    })),
  };
}

export const competitionReads = defineReads({
  /** The newest competitions (the running ones first, then by end), each with the top of its leaderboard. */
  'competition.list': async ({ em }, a: CompetitionListArgs): Promise<CompetitionView[]> => {
    const rows = await em.execute<Row[]>(
      `${SELECT} order by (c.status = 'running' and c.ends_at > ?) desc, c.ends_at desc, c.market limit ?`,
      [a.at, a.limit],
    );
    return Promise.all(rows.map((r) => view(em.fork(), r, a.at, a.leaderboard)));
  },
  'competition.one': async ({ em }, a: CompetitionOneArgs): Promise<CompetitionView | null> => {
    const [row] = await em.execute<Row[]>(`${SELECT} where c.id = ?`, [a.id]);
    return row ? view(em, row, a.at, a.leaderboard) : null;
  },
});
