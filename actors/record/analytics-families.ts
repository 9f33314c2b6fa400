// Read tasks: the families of the current menu with their recorded outcomes, and a ranking
// family's signals per session (from the engine: rank and sellers are public at session open).
import {
  familyQuotes,
  familyRow,
  type FamilyOutcomes,
  type MenuFamily,
} from '../../src/analytics/families.js';
import { MARKETS, familyTicks, type MarketId } from '../../src/engine/index.js';
import { defineReads } from '../runtime/read.js';

export type FamiliesArgs = { market: MarketId; window: number; open: number };
export type SignalsArgs = { market: MarketId; cluster: number; from: number; to: number };

export const familiesReads = defineReads({
  /** Families on the open session's menu; outcomes of trades filled in sessions open-window..open-1. */
  'analytics.families': async ({ em }, a: FamiliesArgs) => {
    const from = a.open - a.window;
    const to = a.open - 1;
    const menu = await em.execute(
      `select cluster, count(*)::int as deals, count(*) filter (where house_accepted)::int as house_bids,
              avg(unit_cost_cents)::float8 as cost, avg(list_price_cents)::float8 as price,
              avg(list_price_cents - unit_cost_cents)::float8 as margin, (array_agg(deal order by idx))[1] as deal
         from menu_row where market = ? and tick = ? group by cluster order by cluster`,
      [a.market, a.open],
    );
    const outcomes = await em.execute(
      `select cluster, count(*)::int as executed, count(*) filter (where settled)::int as settled,
              coalesce(sum(realized_pnl_cents) filter (where settled), 0)::float8 as pnl,
              count(*) filter (where settled and realized_pnl_cents > 0)::int as profitable,
              count(*) filter (where settled and regime)::int as downside,
              count(*) filter (where settled and sold_out)::int as sold_out
         from trade where market = ? and tick between ? and ? group by cluster`,
      [a.market, from, to],
    );
    // Units sold per family from the per-family tape rows; sessions = recorded sessions (tape of the whole market).
    const sold = await em.execute(
      `select cluster, sum((row->>'sold')::float8)::float8 as sold from tape
        where market = ? and tick between ? and ? group by cluster`,
      [a.market, from, to],
    );
    const sessions = await em.execute(
      'select count(*)::int as n from tape where market = ? and cluster = -1 and tick between ? and ?',
      [a.market, from, to],
    );
    const out = new Map<number, FamilyOutcomes>(
      outcomes.map((o) => [
        o.cluster,
        {
          executed: o.executed,
          settled: o.settled,
          pnlSumCents: o.pnl,
          profitable: o.profitable,
          downside: o.downside,
          soldOut: o.sold_out,
        },
      ]),
    );
    const soldBy = new Map<number, number>(sold.map((s) => [s.cluster, s.sold]));
    const velocity = MARKETS[a.market].quotes_velocity;
    const families = menu.map((m) => {
      const fam: MenuFamily = {
        cluster: m.cluster,
        sku_family: m.deal.sku_family,
        deals: m.deals,
        house_bids: m.house_bids,
        meanCostCents: m.cost,
        meanPriceCents: m.price,
        meanMarginCents: m.margin,
        quotes: familyQuotes(m.deal, velocity),
      };
      return familyRow(fam, out.get(m.cluster), soldBy.get(m.cluster) ?? 0, sessions[0].n);
    });
    return { sessions: sessions[0].n, families };
  },

  /** Rank and sellers at each session's open, and the rank drops of the session before. */
  'analytics.signals': async ({ seed }, a: SignalsArgs) => {
    const rows = [];
    let prev = a.from <= a.to ? familyTicks(seed, a.market, a.from - 1)[a.cluster] : undefined;
    for (let tick = a.from; tick <= a.to; tick++) {
      const now = familyTicks(seed, a.market, tick)[a.cluster];
      rows.push({
        tick,
        sales_rank: now.rank,
        rank_drops_prev: prev!.drops,
        nsellers: now.nsellers,
      });
      prev = now;
    }
    return rows;
  },
});
