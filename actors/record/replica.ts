// Which record reads a streaming replica may serve, and when. Every one reads closed sessions only,
// and a close is one transaction: a replica that has replayed the close of each market's last
// session the front end knows (its mark) shows those sessions exactly as the primary does. A
// history still loading is written outside the closes, so the front end sends no mark (primary)
// until every market's history is loaded, and a replica whose own copy is not loaded is not used.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReplicaReads } from '../runtime/replica.js';
import { readTasks } from './index.js';

/** market -> its open session, as the front end has seen it committed. */
export type RecordMark = Record<string, number>;
/** market -> the replica's open session, and whether its history is loaded there. */
export type RecordPosition = Record<string, { open: number; loaded: boolean }>;

async function position(em: EntityManager): Promise<RecordPosition> {
  const rows = await em.execute<{ market: string; open: number; loaded: boolean }[]>(
    `select s.market, max(s.tick)::float8 as open, bool_and(h.finished_at is not null) as loaded
       from market_session s left join history_load h on h.market = s.market
      where s.closed_at is null group by s.market`,
  );
  return Object.fromEntries(
    rows.map((r) => [r.market, { open: r.open, loaded: r.loaded === true }]),
  );
}

export function covers(p: RecordPosition, mark: RecordMark): boolean {
  for (const [market, open] of Object.entries(mark)) {
    const at = p[market];
    if (!at || !at.loaded || at.open < open) return false;
  }
  return true;
}

// 'record.warm' builds the fragments the front end caches: they too are closed sessions only.
export const replicaReads: ReplicaReads<RecordPosition, RecordMark> = {
  names: Object.keys(readTasks),
  position,
  covers,
};
