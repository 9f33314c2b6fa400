// MarketActor's messages and replies ("market:<id>"): what the supervisor may know of this actor kind.
import type { Quarantined } from './holder-orders.js';
import type { LapTimes } from '../runtime/laps.js';
import { actorRef } from '../runtime/protocol.js';

export type { Quarantined };

export type MarketMessage =
  /** Opens session `tick` if the market has no open session yet and plans the history record. */
  | { kind: 'start'; tick: number; backfillDays: number }
  /**
   * Closes session `tick` and opens the next one, once. `next` (default tick + 1) lets a catch-up
   * after long downtime skip sessions beyond its bound; skipped sessions never existed.
   */
  | { kind: 'close'; tick: number; next?: number }
  /** Records past sessions from..to (inclusive) that are not recorded yet. */
  | { kind: 'backfill'; from: number; to: number }
  /** The open session and whether the history is recorded, as the database has them now (a node that does not run the closes follows them). */
  | { kind: 'status' };

export type StartReply = { open: number; liveStart: number; fromTick: number };
/** `quarantined`: paid orders this close refunded instead of filling (empty when it closed nothing). */
/** `steps`: milliseconds by step of the close (actors/runtime/laps.ts), for its log line. */
export type CloseReply = {
  closed: boolean;
  open: number;
  ms: number;
  quarantined: Quarantined[];
  steps?: LapTimes;
};
export type BackfillReply = { recorded: number; ms: number };
/** `historyLoaded`: every past session the first start planned is recorded. */
export type StatusReply = { open: number | null; historyLoaded: boolean };

/** The reply to each message kind (actor.ts's handlers answer these). */
export type MarketReplies = {
  start: StartReply;
  close: CloseReply;
  backfill: BackfillReply;
  status: StatusReply;
};
/** The address of market `id`'s actor. */
export const marketRef = (id: string) => actorRef<MarketMessage, MarketReplies>('market', id);
