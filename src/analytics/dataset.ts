// The dataset CSV frames' text (GET /markets/{id}/dataset.csv): RFC 4180 cells, lines ended by
// CRLF, and the header of each frame. Pure: the record's read task writes the rows and the front
// end writes the header line in front of rows it kept from earlier answers.
import { MARKETS, type MarketId } from '../engine/index.js';

export type Cell = string | number | boolean | null | undefined;

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled; null is empty. */
export function cell(v: Cell): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'string') return String(v);
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** One CSV line with its CRLF. */
export const csvLine = (cells: Cell[]) => cells.map(cell).join(',') + '\r\n';

/** A whole frame: the header line, then one line per row. */
export const csv = (header: string[], rows: Cell[][]) =>
  csvLine(header) + rows.map(csvLine).join('');

const DEAL_HEAD = [
  'market',
  'tick',
  'offer_key',
  'cluster',
  'sku_family',
  'title',
  'listed_at',
  'unit_cost',
  'list_price',
  'margin',
  'max_qty',
  'house_accepted',
  'house_qty',
];
const VELOCITY_HEAD = ['sv', 'isv'];
export const RANKING_HEAD = [
  'sales_rank',
  'sales_rank_avg',
  'rank_drops',
  'rank_drops_long',
  'nsellers',
];
const LABEL_HEAD = [
  'trade_id',
  'actor',
  'qty',
  'cost_basis',
  'sales_by_tick',
  'units_sold',
  'sold_out',
  'regime',
  'revenue',
  'holding_cost',
  'surcharge',
  'writeoff',
  'realized_pnl',
];
const EXPAND_HEAD = [
  'executed_qty',
  'house_executed',
  'user_executed',
  'known_up_to_qty',
  'qty',
  'profit',
];
const FLAG_HEAD = ['executed', 'house_executed', 'user_executed'];

export type DatasetFrame = { split: 'labeled' | 'unlabeled'; expandQty: boolean };

/** The header of a frame: the listing's columns (quote fields by market kind), then the frame's own. */
export function datasetHeader(market: MarketId, f: DatasetFrame): string[] {
  const deal = [...DEAL_HEAD, ...(MARKETS[market].quotes_velocity ? VELOCITY_HEAD : RANKING_HEAD)];
  return [
    ...deal,
    ...(f.split === 'unlabeled' ? FLAG_HEAD : f.expandQty ? EXPAND_HEAD : LABEL_HEAD),
  ];
}
