// Read tasks of the record: the market's trades (paged) and the dataset CSV frames.
import { MARKETS, centsToNumber, type MarketId } from '../../src/engine/index.js';
import { RANKING_HEAD, csv, datasetHeader, type Cell } from '../../src/analytics/dataset.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { defineReads } from '../runtime/read.js';
import type { DatasetArgs, TradesArgs, TradesReply } from './messages.js';
import { intArrayParam } from '../runtime/sql.js';
import { Outcomes, tradesByRow, type DealJson } from './history-rows.js';
import { recordedTicks } from './history.js';
import { TRADE_FROM, TRADE_SELECT, tradeJson, type TradeRow } from './trade-json.js';

/** The listing's own columns, quote fields by market kind. */
function dealCells(market: MarketId, d: DealJson): Cell[] {
  const head: Cell[] = [
    market,
    d.tick,
    d.key,
    d.cluster,
    d.sku_family,
    d.bundle.title,
    d.listed_at,
    d.unit_cost,
    d.list_price,
    d.margin,
    d.max_qty,
    d.house_accepted,
    d.house_qty,
  ];
  return MARKETS[market].quotes_velocity
    ? [...head, d.sales_velocity, d.inverse_sv]
    : [...head, ...RANKING_HEAD.map((f) => d[f])];
}

type LabeledRow = TradeRow & { deal: DealJson };
/** A dataset row with the session it belongs to. */
export type DatasetRow = { tick: number; cells: Cell[] };

const money = (c: number | null) => (c === null ? null : centsToNumber(c));

function labelCells(t: TradeRow): Cell[] {
  return [
    t.id,
    t.actor,
    t.qty,
    centsToNumber(t.cost_basis_cents),
    t.sales_by_tick.join(';'),
    t.units_sold,
    t.sold_out,
    t.regime,
    centsToNumber(t.revenue_cents),
    centsToNumber(t.holding_cost_cents),
    money(t.surcharge_cents),
    money(t.writeoff_cents),
    money(t.realized_pnl_cents),
  ];
}

/** One row per volume 1..max_qty of every executed deal: the profit there, empty where unknown. */
function expandedRows(seed: number, market: MarketId, trades: LabeledRow[]): DatasetRow[] {
  const outcomes = new Outcomes(seed, market);
  const out: DatasetRow[] = [];
  const groups = [...tradesByRow(trades).values()].sort(
    (x, y) => x[0].tick - y[0].tick || x[0].idx - y[0].idx,
  );
  for (const group of groups) {
    const first = group[0];
    const executed = Math.max(...group.map((t) => t.qty));
    const c = outcomes.curve(first.tick, first.idx, executed);
    const deal = dealCells(market, first.deal);
    const flags = [
      executed,
      group.some((t) => t.actor === 'house'),
      group.some((t) => t.actor === 'user'),
      c.known_up_to_qty,
    ];
    c.profit_curve_cents.forEach((p, i) =>
      out.push({ tick: first.tick, cells: [...deal, ...flags, i + 1, money(p)] }),
    );
  }
  return out;
}

/** The rows of a dataset frame over sessions a.from..a.to (the route clips `to`), in served order. */
export async function datasetRows(
  em: EntityManager,
  seed: number,
  a: DatasetArgs,
): Promise<DatasetRow[]> {
  if (a.to < a.from) return [];
  if (a.split === 'unlabeled') {
    const recorded = [...(await recordedTicks(em, a.market, a.from, a.to))];
    const menuRows = (await em.execute(
      `select m.deal,
              exists (select 1 from trade t where t.market = m.market and t.tick = m.tick and t.idx = m.idx and t.actor = 'house') as house_executed,
              exists (select 1 from trade t where t.market = m.market and t.tick = m.tick and t.idx = m.idx and t.actor = 'user') as user_executed
         from menu_row m where m.market = ? and m.tick = any(?::bigint[]) order by m.tick, m.idx`,
      [a.market, intArrayParam(recorded)],
    )) as { deal: DealJson; house_executed: boolean; user_executed: boolean }[];
    return menuRows.map((r) => ({
      tick: r.deal.tick,
      cells: [
        ...dealCells(a.market, r.deal),
        r.house_executed || r.user_executed,
        r.house_executed,
        r.user_executed,
      ],
    }));
  }
  const trades = (await em.execute(
    `select ${TRADE_SELECT}, m.deal from ${TRADE_FROM} where t.market = ? and t.tick between ? and ? and t.settled order by t.tick, t.id`,
    [a.market, a.from, a.to],
  )) as LabeledRow[];
  return a.expandQty
    ? expandedRows(seed, a.market, trades)
    : trades.map((t) => ({
        tick: t.tick,
        cells: [...dealCells(a.market, t.deal), ...labelCells(t)],
      }));
}

export const tradesReads = defineReads({
  'trades.list': async ({ em }, a: TradesArgs): Promise<TradesReply> => {
    if (a.to < a.from) return { total: 0, trades: [] };
    const actor = a.actor ? 'and t.actor = ?' : '';
    const params = a.actor ? [a.market, a.from, a.to, a.actor] : [a.market, a.from, a.to];
    // Counted over the rows the page lists (a trade is served with its session's menu row).
    const [{ total }] = await em.execute(
      `select count(*)::int as total from ${TRADE_FROM} where t.market = ? and t.tick between ? and ? ${actor}`,
      params,
    );
    const rows = (await em.execute(
      `select ${TRADE_SELECT} from ${TRADE_FROM} where t.market = ? and t.tick between ? and ? ${actor}
        order by t.tick, t.id limit ? offset ?`,
      [...params, a.limit, a.offset],
    )) as TradeRow[];
    return { total, trades: rows.map(tradeJson) };
  },

  'trades.dataset': async (
    { em, seed },
    a: DatasetArgs,
  ): Promise<{ csv: string; rows: number }> => {
    const rows = await datasetRows(em, seed, a);
    return {
      csv: csv(
        datasetHeader(a.market, a),
        rows.map((r) => r.cells),
      ),
      rows: rows.length,
    };
  },
});
