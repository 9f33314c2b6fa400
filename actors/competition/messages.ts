// CompetitionActor's messages and replies ("competition:<id>", id `<market>-<window>`), and the
// competition read tasks' arguments and replies: what the front end and the supervisor may know.
import { actorRef } from '../runtime/protocol.js';

/** Times are real unix seconds on the service clock. */
export type CompetitionMessage =
  /** The supervisor: make this window's competition if missing; answers the market's ended, unpaid ones. */
  | { kind: 'open'; market: string; name: string; startsAt: number; endsAt: number; at: number }
  /** A holder enters (free): their competition account, made once. */
  | { kind: 'join'; holderId: number; at: number }
  /** The supervisor, after `endsAt`: finish once and pay the prizes. */
  | { kind: 'finish'; at: number };

export type Opened = { id: string; due: string[] };
export type Joined = { ok: true; account_id: number; competition_id: string; joined: boolean };
export type Finished = {
  id: string;
  finished: boolean;
  prizes: { rank: number; account_id: number; holder_id: number; amount_cents: number }[];
};

/** The reply to each message kind (actor.ts's handlers answer these). */
export type CompetitionReplies = { open: Opened; join: Joined; finish: Finished };
/** The address of competition `id`'s actor (`<market>-<window>`, src/rules.ts competitionId). */
export const competitionRef = (id: string) =>
  actorRef<CompetitionMessage, CompetitionReplies>('competition', id);

export type LeaderRow = {
  rank: number;
  name: string;
  return_pct: number;
  realized_pnl: number;
  settled_trades: number;
};
export type CompetitionView = {
  id: string;
  name: string;
  status: 'upcoming' | 'running' | 'finished';
  market: string;
  starts_at: string;
  ends_at: string;
  starting_balance: number;
  entrants: number;
  prize_pool: { amount: number; currency: 'USD'; sponsor: string };
  leaderboard: LeaderRow[];
};
export type CompetitionListArgs = { at: number; leaderboard: number; limit: number };
export type CompetitionOneArgs = { id: string; at: number; leaderboard: number };
