// Arguments and replies of the record's read tasks (history.ts, trades.ts, projection-deal.ts,
// pulse.ts): what the front end may know of them. Record reads run on the pool (runtime.read).
import type { MarketId } from '../../src/engine/index.js';
import type { Static } from 'typebox';
import type * as schemas from '../../src/schemas/index.js';

export type HistoryArgs = {
  market: MarketId;
  /** Closed sessions only: the route clips `to` to the last closed session (to < from: none). */
  from: number;
  to: number;
  lastSettled: number;
  includeBundle: boolean;
  /** reveal=full, allowed by the route only with the oracle switch on. */
  oracle: boolean;
};

export type HistoryReply = {
  sessions: number;
  recorded_sessions: number;
  rows: Record<string, unknown>[];
};

export type CoverageReply = {
  recorded: { first_tick: number | null; last_tick: number | null; sessions: number };
  plan: {
    live_start_tick: number;
    from_tick: number;
    sessions_total: number;
    sessions_loaded: number;
    started_at: number;
    finished_at: number | null;
    engine: Record<string, unknown>;
  } | null;
  trades: { total: number; house: number; user: number };
};

export type TradesArgs = {
  market: MarketId;
  from: number;
  to: number;
  actor?: 'house' | 'user';
  limit: number;
  offset: number;
};
export type TradesReply = { total: number; trades: Record<string, unknown>[] };

/** labeled: `to` clipped to the last settled session; unlabeled: to the last closed one. */
export type DatasetArgs = {
  market: MarketId;
  from: number;
  to: number;
  split: 'labeled' | 'unlabeled';
  expandQty: boolean;
};

export type DealProjectionArgs = {
  market: MarketId;
  cluster: number;
  lookback: number;
  fit: 'trend' | 'mean';
  /** The record's open session: the deal's session. */
  open: number;
  unitCostCents: number;
  /** null: the family's mean list price of its latest listed session on record. */
  listPriceCents: number | null;
  listPriceBasis: 'deal' | 'menu_mean';
  maxQty: number;
  quotedVelocity: number | null;
};

/** A day's figures in integer cents. */
export type DayCents = {
  executions: number;
  units: number;
  turnover_cents: number;
  units_sold: number;
  pnl_cents: number;
};
export type TickerArgs = { markets: { market: MarketId; hi: number }[] };
/** Per market and UTC day: executions filled that day, results settled that day (cents). */
export type DayRow = { day: number; market: MarketId } & DayCents;
/** Days before `before` are final (every close of theirs has happened): the caller may keep them. */
export type FinalDays = { before: number; rows: DayRow[] };
export type PulseArgs = { open: Record<MarketId, number>; final: FinalDays | null; keep: boolean };
/** The pulse as served (GET /api/v1/pulse), from its schema, the one definition. */
export type PulseAnswer = Static<typeof schemas.PulseAnswer>;
export type PulseReply = { answer: PulseAnswer; final: FinalDays | null };

/**
 * One series of the record's per-session fragments: which answer they are parts of, and the query
 * flags that change a session's bytes. The front end keeps settled sessions' fragments in memory.
 */
export type FragmentSpec =
  | { kind: 'history'; market: MarketId; includeBundle: boolean; oracle: boolean }
  | { kind: 'trades'; market: MarketId }
  | { kind: 'tape'; market: MarketId; cluster: number }
  | { kind: 'stats'; market: MarketId; oracle: boolean }
  | { kind: 'dataset'; market: MarketId; split: 'labeled' | 'unlabeled'; expandQty: boolean };

/** Sessions from..to of a series, as the record stands at `open` (its last settled session given). */
export type FragmentsArgs = {
  spec: FragmentSpec;
  from: number;
  to: number;
  open: number;
  lastSettled: number;
};

/**
 * A session's part of an answer: its items (history rows, trades, tape or stats row, CSV lines)
 * serialised, JSON items joined by commas, CSV lines each ending in CRLF. `digest`: sha1 of `text`.
 */
export type SessionFragment = {
  tick: number;
  /** Recorded when read: its bytes never change once it is settled too. */
  recorded: boolean;
  text: string;
  digest: string;
  items: number;
  /** trades: each trade's actor, h(ouse) or u(ser), and the UTF-8 byte offset of each trade in `text` plus its length + 1. */
  actors?: string;
  starts?: number[];
};

/** One fragment per session from..to, in order. */
export type FragmentsReply = SessionFragment[];
