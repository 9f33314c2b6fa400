// Position events (`position.advanced`, `position.settled`) are stored as the figures their close
// moved, not as their object: the close writes 10k of them in one statement, and building and
// storing 10k served positions of ~28 keys would be most of what the log adds to it. Their `data`
// is built when read, by the one definition of the served position
// (account/views.ts positionJsonSql) with its changing figures taken from the event: what stays
// fixed once a trade is filled is read from the position and its trade, what a close moves from the
// event, and what settling sets from the trade only when the event is the settlement (a settled
// trade never moves again). The trade's sales path only grows, so the event cuts it at its own
// session count. Every other event stores its object whole (`data`).
import {
  POSITION_FROM,
  positionJsonSql,
  type MovingTradeColumn,
  type PositionState,
} from '../account/views.js';
import { intArrayParam, jsonObjectSql, usdSql } from '../runtime/sql.js';

/** A booked session of one position, as its event stores it: the session's own figures and the trade's after it. */
export type PositionFigures = {
  position_id: number;
  session_tick: number;
  session_sold: number;
  session_revenue_cents: number;
  session_holding_cents: number;
  revealed_ticks: number;
  qty_left: number;
  units_sold: number;
  revenue_cents: number;
  holding_cost_cents: number;
};

/** The event's columns for its figures, with their SQL types, in PositionFigures' order (the entity declares the same: orm/entities/events.ts). */
export const FIGURE_COLUMNS = [
  ['position_id', 'bigint'],
  ['session_tick', 'bigint'],
  ['session_sold', 'int'],
  ['session_revenue_cents', 'bigint'],
  ['session_holding_cents', 'bigint'],
  ['revealed_ticks', 'int'],
  ['qty_left', 'int'],
  ['units_sold', 'int'],
  ['revenue_cents', 'bigint'],
  ['holding_cost_cents', 'bigint'],
] as const satisfies readonly (readonly [keyof PositionFigures, string])[];

/** The trade columns an open position's event keeps (the rest of MovingTradeColumn is set only at settlement). */
const STORED: ReadonlySet<MovingTradeColumn> = new Set([
  'qty_left',
  'revealed_ticks',
  'revenue_cents',
  'units_sold',
  'holding_cost_cents',
]);

const SETTLEMENT = `(e.type = 'position.settled')`;
/** A position event's figures, from `account_event e` and its position's trade `t`. */
const EVENT_STATE: PositionState = {
  settled: SETTLEMENT,
  col: (c) =>
    STORED.has(c)
      ? `e.${c}`
      : c === 'sales_by_tick'
        ? 't.sales_by_tick'
        : `case when ${SETTLEMENT} then t.${c} end`,
};

/**
 * The `data` of the event `e` as served: its stored object, or a position event's built from its
 * figures (a subquery run only for those: `coalesce` stops at a stored object) and its own account's
 * position (as the close's insert joined it before the figures: a log never serves another
 * account's position).
 */
export const EVENT_DATA_SQL = `coalesce(e.data, (select ${positionJsonSql(
  [
    [
      'session',
      jsonObjectSql([
        ['tick', 'e.session_tick'],
        ['sold', 'e.session_sold'],
        ['revenue', usdSql('e.session_revenue_cents')],
        ['holding_cost', usdSql('e.session_holding_cents')],
      ]),
    ],
  ],
  EVENT_STATE,
)} from ${POSITION_FROM} where p.id = e.position_id and p.account_id = e.account_id))`;

/** The figures as one array parameter per column (FIGURE_COLUMNS' order), for `unnest`. */
export const figureArrays = (rows: readonly PositionFigures[]): string[] =>
  FIGURE_COLUMNS.map(([c]) => intArrayParam(rows.map((r) => r[c])));
