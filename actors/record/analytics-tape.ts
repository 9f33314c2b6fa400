// Read tasks over the tape: tape rows (with the settled-only figures from trade and menu_row) and
// the synthetic book of the last sessions.
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  bookFromTape,
  orderedTapeRow,
  settledTapeFields,
  type BookTapeRow,
} from '../../src/analytics/tape.js';
import { defineReads } from '../runtime/read.js';

export type TapeArgs = {
  market: string;
  from: number;
  to: number;
  cluster: number;
  open: number;
  lastSettled: number;
};
export type BookArgs = {
  market: string;
  cluster: number;
  window: number;
  step: number;
  levels: number;
  open: number;
};

/** Smallest spread the book quotes, as a fraction of mid. */
export const BOOK_FLOOR_FRAC = 0.005;

// `?::int < 0 or cluster = ?`: cluster -1 means the whole market.
const CLUSTER = '(?::int < 0 or cluster = ?)';

/** Settled-only figures of sessions from..to, per tick (restricted to a family when cluster >= 0). */
async function settledFigures(
  em: EntityManager,
  market: string,
  from: number,
  to: number,
  cluster: number,
) {
  const trades = await em.execute(
    `select tick::float8 as tick,
            coalesce(sum(realized_pnl_cents) filter (where actor = 'house'), 0)::float8 as house,
            coalesce(sum(realized_pnl_cents) filter (where actor = 'user'), 0)::float8 as holder,
            count(*) filter (where settled)::int as settled,
            count(*) filter (where settled and realized_pnl_cents > 0)::int as profitable,
            count(*) filter (where settled and regime)::int as downside
       from trade where market = ? and tick between ? and ? and ${CLUSTER}
      group by tick`,
    [market, from, to, cluster, cluster],
  );
  const menus = await em.execute(
    `select m.tick::float8 as tick, count(*)::int as rows,
            count(*) filter (where exists (select 1 from trade t where t.market = m.market and t.tick = m.tick and t.idx = m.idx))::int as executed
       from menu_row m where m.market = ? and m.tick between ? and ? and (?::int < 0 or m.cluster = ?)
      group by m.tick`,
    [market, from, to, cluster, cluster],
  );
  const byTick = new Map(trades.map((r) => [r.tick as number, r]));
  const out = new Map<number, ReturnType<typeof settledTapeFields>>();
  for (const m of menus) {
    const t = byTick.get(m.tick);
    out.set(
      m.tick,
      settledTapeFields({
        housePnlCents: t?.house ?? 0,
        holderPnlCents: t?.holder ?? 0,
        settled: t?.settled ?? 0,
        profitable: t?.profitable ?? 0,
        downside: t?.downside ?? 0,
        menuRows: m.rows,
        executedRows: m.executed,
      }),
    );
  }
  return out;
}

/** Tape rows of closed recorded sessions from..to; settled sessions carry the settled-only figures. */
export async function tapeRows(
  em: EntityManager,
  a: TapeArgs,
): Promise<({ tick: number } & Record<string, unknown>)[]> {
  const rows = await em.execute(
    `select tick::float8 as tick, row from tape
      where market = ? and cluster = ? and tick between ? and ? and tick < ? order by tick`,
    [a.market, a.cluster, a.from, a.to, a.open],
  );
  const lastSettled = Math.min(a.to, a.lastSettled);
  const settled =
    lastSettled >= a.from
      ? await settledFigures(em, a.market, a.from, lastSettled, a.cluster)
      : new Map();
  // A family carried by earlier positions but not listed that session executed nothing: sums 0, rates null.
  const none = settledTapeFields({
    housePnlCents: 0,
    holderPnlCents: 0,
    settled: 0,
    profitable: 0,
    downside: 0,
    menuRows: 0,
    executedRows: 0,
  });
  return rows.map((r) => ({
    tick: r.tick as number,
    ...orderedTapeRow(r.row),
    ...(r.tick <= a.lastSettled ? (settled.get(r.tick) ?? none) : {}),
  }));
}

export const tapeReads = defineReads({
  'analytics.tape': async ({ em }, a: TapeArgs) => tapeRows(em, a),

  /** The synthetic book from the tape of sessions open-window..open-1 and the open session's menu. */
  'analytics.book': async ({ em }, a: BookArgs) => {
    const tape = await em.execute(
      `select tick::float8 as tick, row from tape
        where market = ? and cluster = ? and tick between ? and ? order by tick`,
      [a.market, a.cluster, a.open - a.window, a.open - 1],
    );
    const [listed] = await em.execute(
      `select count(*)::int as n, min(list_price_cents)::float8 as lo, max(list_price_cents)::float8 as hi
         from menu_row where market = ? and tick = ? and ${CLUSTER}`,
      [a.market, a.open, a.cluster, a.cluster],
    );
    const num = (v: unknown) => (typeof v === 'number' ? v : null);
    const rows: BookTapeRow[] = tape.map((r) => ({
      tick: r.tick,
      price_close: num(r.row.price_close),
      price_high: num(r.row.price_high),
      price_low: num(r.row.price_low),
      units: num(r.row.units),
      sold: num(r.row.sold),
    }));
    const book = bookFromTape(rows, {
      step: a.step,
      levels: a.levels,
      floorFrac: BOOK_FLOOR_FRAC,
      tick: a.open,
      listed: {
        n: listed.n,
        low: listed.lo === null ? null : listed.lo / 100,
        high: listed.hi === null ? null : listed.hi / 100,
      },
    });
    return book && { sessions: rows.length, book };
  },
});
