// Read tasks of the record: the market's trades (paged) and the dataset CSV frames.
import { MARKETS, centsToNumber, type MarketId } from '../../src/engine/index.js';
import { defineReads } from '../runtime/read.js';
import type { DatasetArgs, TradesArgs, TradesReply } from './messages.js';
import { intArrayParam } from '../runtime/sql.js';
import { Outcomes, tradesByRow, type DealJson } from './history-rows.js';
import { recordedTicks } from './history.js';
import { TRADE_FROM, TRADE_SELECT, tradeJson, type TradeRow } from './trade-json.js';

type Cell = string | number | boolean | null | undefined;

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled; null is empty. */
function cell(v: Cell): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') return String(v);
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

const csv = (header: string[], rows: Cell[][]) => [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';

const DEAL_HEAD = ['market', 'tick', 'offer_key', 'cluster', 'sku_family', 'title', 'listed_at', 'unit_cost', 'list_price', 'margin', 'max_qty', 'house_accepted', 'house_qty'];
const VELOCITY_HEAD = ['sv', 'isv'];
const RANKING_HEAD = ['sales_rank', 'sales_rank_avg', 'rank_drops', 'rank_drops_long', 'nsellers'];

/** The listing's own columns, quote fields by market kind. */
function dealCells(market: MarketId, d: DealJson): Cell[] {
  const head: Cell[] = [market, d.tick, d.key, d.cluster, d.sku_family, d.bundle.title, d.listed_at, d.unit_cost, d.list_price, d.margin, d.max_qty, d.house_accepted, d.house_qty];
  return MARKETS[market].quotes_velocity ? [...head, d.sales_velocity, d.inverse_sv] : [...head, ...RANKING_HEAD.map((f) => d[f])];
}

const dealHead = (market: MarketId) => [...DEAL_HEAD, ...(MARKETS[market].quotes_velocity ? VELOCITY_HEAD : RANKING_HEAD)];

const LABEL_HEAD = ['trade_id', 'actor', 'qty', 'cost_basis', 'sales_by_tick', 'units_sold', 'sold_out', 'regime', 'revenue', 'holding_cost', 'surcharge', 'writeoff', 'realized_pnl'];
const EXPAND_HEAD = ['executed_qty', 'house_executed', 'user_executed', 'known_up_to_qty', 'qty', 'profit'];
const FLAG_HEAD = ['executed', 'house_executed', 'user_executed'];

type LabeledRow = TradeRow & { deal: DealJson };

const money = (c: number | null) => (c === null ? null : centsToNumber(c));

function labelCells(t: TradeRow): Cell[] {
  return [
    t.id, t.actor, t.qty, centsToNumber(t.cost_basis_cents), t.sales_by_tick.join(';'), t.units_sold, t.sold_out, t.regime,
    centsToNumber(t.revenue_cents), centsToNumber(t.holding_cost_cents), money(t.surcharge_cents), money(t.writeoff_cents), money(t.realized_pnl_cents),
  ];
}

/** One row per volume 1..max_qty of every executed deal: the profit there, empty where unknown. */
function expandedRows(seed: number, market: MarketId, trades: LabeledRow[]): Cell[][] {
  const outcomes = new Outcomes(seed, market);
  const out: Cell[][] = [];
  const groups = [...tradesByRow(trades).values()].sort((x, y) => x[0].tick - y[0].tick || x[0].idx - y[0].idx);
  for (const group of groups) {
    const first = group[0];
    const executed = Math.max(...group.map((t) => t.qty));
    const c = outcomes.curve(first.tick, first.idx, executed);
    const deal = dealCells(market, first.deal);
    const flags = [executed, group.some((t) => t.actor === 'house'), group.some((t) => t.actor === 'user'), c.known_up_to_qty];
    c.profit_curve_cents.forEach((p, i) => out.push([...deal, ...flags, i + 1, money(p)]));
  }
  return out;
}

export const tradesReads = defineReads({
  'trades.list': async ({ em }, a: TradesArgs): Promise<TradesReply> => {
    if (a.to < a.from) return { total: 0, trades: [] };
    const actor = a.actor ? 'and t.actor = ?' : '';
    const params = a.actor ? [a.market, a.from, a.to, a.actor] : [a.market, a.from, a.to];
    const [{ total }] = await em.execute(`select count(*)::int as total from trade t where t.market = ? and t.tick between ? and ? ${actor}`, params);
    const rows = (await em.execute(
      `select ${TRADE_SELECT} from ${TRADE_FROM} where t.market = ? and t.tick between ? and ? ${actor}
        order by t.tick, t.id limit ? offset ?`,
      [...params, a.limit, a.offset],
    )) as TradeRow[];
    return { total, trades: rows.map(tradeJson) };
  },

  'trades.dataset': async ({ em, seed }, a: DatasetArgs): Promise<{ csv: string; rows: number }> => {
    const head = dealHead(a.market);
    if (a.split === 'unlabeled') {
      const header = [...head, ...FLAG_HEAD];
      if (a.to < a.from) return { csv: csv(header, []), rows: 0 };
      const recorded = [...(await recordedTicks(em, a.market, a.from, a.to))];
      const menuRows = (await em.execute(
        `select m.deal,
                exists (select 1 from trade t where t.market = m.market and t.tick = m.tick and t.idx = m.idx and t.actor = 'house') as house_executed,
                exists (select 1 from trade t where t.market = m.market and t.tick = m.tick and t.idx = m.idx and t.actor = 'user') as user_executed
           from menu_row m where m.market = ? and m.tick = any(?::bigint[]) order by m.tick, m.idx`,
        [a.market, intArrayParam(recorded)],
      )) as { deal: DealJson; house_executed: boolean; user_executed: boolean }[];
      const rows = menuRows.map((r) => [...dealCells(a.market, r.deal), r.house_executed || r.user_executed, r.house_executed, r.user_executed]);
      return { csv: csv(header, rows), rows: rows.length };
    }
    const header = [...head, ...(a.expandQty ? EXPAND_HEAD : LABEL_HEAD)];
    if (a.to < a.from) return { csv: csv(header, []), rows: 0 };
    const trades = (await em.execute(
      `select ${TRADE_SELECT}, m.deal from ${TRADE_FROM} where t.market = ? and t.tick between ? and ? and t.settled order by t.tick, t.id`,
      [a.market, a.from, a.to],
    )) as LabeledRow[];
    const rows = a.expandQty ? expandedRows(seed, a.market, trades) : trades.map((t) => [...dealCells(a.market, t.deal), ...labelCells(t)]);
    return { csv: csv(header, rows), rows: rows.length };
  },
});
