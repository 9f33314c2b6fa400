// HolderActor's messages and replies ("holder:<lowercased e-mail>"), and the arguments and replies of
// the holder read tasks (reads.ts): what the front end may know of this actor kind.
import type { Static } from 'typebox';
import type { CardPayment } from '../money/messages.js';
import type * as schemas from '../../src/schemas/index.js';
import { actorRef } from '../runtime/protocol.js';

/** `address` is the client's address, for the throttles (throttle.ts). */
export type HolderMessage =
  | { kind: 'register'; email: string; password: string; display_name: string; address: string }
  | { kind: 'login'; email: string; password: string; address: string }
  | { kind: 'logout'; tokenHash: string }
  /** A new session for a holder whose register or login answer is being replayed (same key, same body, password included). */
  | { kind: 'resume'; holderId: number }
  | GrantMessage
  | CoinsMessage;

/**
 * Gold Coins (coins.ts): a pack bought by card (a real-money checkout: the month's participation fee
 * when due, booked on the holder's Manual desk), and a stored card removed. `at`: service clock.
 */
export type CoinsMessage =
  | { kind: 'buyCoins'; holderId: number; pack: number; payment: CardPayment; at: number }
  | { kind: 'removeCard'; holderId: number; cardId: number };
export type CoinsBought = {
  coins: number;
  gc_balance_hundredths: number;
  charged_cents: number;
  fee_cents: number;
};
/** `brand` and `last4`: the card removed, for the console's words (absent in an answer stored before they were added). */
export type CardRemoved = { card_id: number; removed: boolean; brand?: string; last4?: string };

/** A new web session: `token` goes into the cookie, its hash into holder_session. */
export type HolderSession = {
  holder_id: number;
  email: string;
  display_name: string;
  token: string;
  expires_at: number;
};
export type LoggedOut = { ended: boolean };

/** The reply to each message kind (actor.ts's handlers answer these). */
export type HolderReplies = {
  register: HolderSession;
  login: HolderSession;
  logout: LoggedOut;
  resume: HolderSession;
  grant: Granted;
  revoke: Revoked;
  buyCoins: CoinsBought;
  removeCard: CardRemoved;
};
/** The address of the actor of the holder with (lowercased) e-mail `email`. */
export const holderRef = (email: string) => actorRef<HolderMessage, HolderReplies>('holder', email);

// Read tasks (reads.ts).

/** The holder a live session token hash belongs to. */
export type SessionHolder = { id: number; email: string; display_name: string };
/** A stored card as a checkout page lists it. */
export type CardRow = {
  id: number;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
};
/** One of the holder's agents on the console, with its settled trades in profit (`wins`). */
export type ConsoleAgent = {
  id: number;
  name: string;
  key_id: string;
  model: string | null;
  account_id: number;
  autonomous_funding: boolean;
  wins: number;
  /** Its spending limits (USD; null: none), the markets comma-separated (null: every market). */
  max_order: number | null;
  max_day: number | null;
  max_week: number | null;
  markets: string | null;
  /** When its limits end (unix seconds), or null. */
  expires_at: number | null;
  /** When its holder revoked its key (unix seconds), or null. */
  revoked_at: number | null;
};

// The console's money (money-reads.ts) and timeline (timeline.ts).

/** One account of the holder as the console's overview shows it (money in integer cents). */
export type HolderAccount = {
  account_id: number;
  kind: 'manual' | 'agent';
  agent_id: number | null;
  agent_name: string | null;
  key_id: string | null;
  balance_cents: number;
  open_positions: number;
  settled_positions: number;
  pending_orders: number;
  realized_cents: number;
};
export type HolderPayout = {
  id: number;
  account_id: number;
  amount_cents: number;
  commission_cents: number;
  net_cents: number;
  status: 'scheduled' | 'paid';
  pay_at: number;
  created_at: number;
  paid_at: number | null;
};
/** What the overview shows of the holder's money, read at once. */
export type HolderMoney = {
  accounts: HolderAccount[];
  gc_balance_hundredths: number;
  payouts: HolderPayout[];
};

/**
 * Ledger kinds of money the holder moved in or out (card payments in, top-ups, payouts): not
 * trading, so the console's trading result (src/web/console-view.ts FIGURES.result) leaves them out.
 */
export const MOVED_KINDS = ['card_charge', 'crypto_payment', 'topup', 'payout'] as const;

/** The overview's figures (figures.ts): the chart's `window` newest ledger entries (1..FIGURES_WINDOW_MAX). */
export type HolderFiguresArgs = { holderId: number; window: number };
/** The total balance and trading result after one ledger entry (integer cents), `at` its instant (unix seconds). */
export type FiguresPoint = { id: number; at: number; balance_cents: number; result_cents: number };
/**
 * The console overview's figures as exact totals over every ledger entry and position of the
 * holder's accounts (integer cents): `ledger` sums every entry (the balance, and the trading result:
 * every entry but MOVED_KINDS); `open` sums every open position; `history` is the chart's window,
 * oldest first, each point running on from the sums over every entry before the window, so its last
 * point is `ledger`'s totals.
 */
export type HolderFigures = {
  ledger: { entries: number; balance_cents: number; result_cents: number };
  open: { count: number; cost_cents: number; resale_cents: number; pnl_so_far_cents: number };
  history: FiguresPoint[];
};

/** A page of the timeline: newest first, after the cursor `before` when given. */
export type TimelineArgs = { holderId: number; before: string | null; limit: number };
/** A served timeline event (src/schemas TimelineEvent). */
export type TimelineEventView = Static<typeof schemas.TimelineEvent>;
export type TimelinePage = Static<typeof schemas.TimelineAnswer>;

// Grants (grants.ts): the holder lets an agent (or every agent of theirs) write to, or execute, a
// cart (or every cart of theirs). Turns of the holder's actor.
export type GrantMessage =
  | {
      kind: 'grant';
      holderId: number;
      agentId: number | null;
      cartId: number | null;
      level: 'write' | 'execute';
      payWith: 'balance' | 'card';
      cardId: number | null;
      note: string;
      /** Unix seconds after which the grant allows nothing; null or absent: until revoked. */
      expiresAt?: number | null;
    }
  | { kind: 'revoke'; holderId: number; grantId: number };
export type Granted = { grant_id: number };
export type Revoked = { grant_id: number; revoked: boolean };
