// HolderActor's messages and replies ("holder:<lowercased e-mail>"), and the arguments and replies of
// the holder read tasks (reads.ts): what the front end may know of this actor kind.
import type { StoredCard } from '../../src/payments/cards.js';

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
  | { kind: 'buyCoins'; holderId: number; pack: number; card: { new: StoredCard } | { storedId: number }; at: number }
  | { kind: 'removeCard'; holderId: number; cardId: number };
export type CoinsBought = { coins: number; gc_balance_hundredths: number; charged_cents: number; fee_cents: number };
export type CardRemoved = { card_id: number; removed: boolean };

/** A new web session: `token` goes into the cookie, its hash into holder_session. */
export type HolderSession = { holder_id: number; email: string; display_name: string; token: string; expires_at: number };
export type LoggedOut = { ended: boolean };

// Read tasks (reads.ts).

/** The holder a live session token hash belongs to. */
export type SessionHolder = { id: number; email: string; display_name: string };
/** A stored card as a checkout page lists it. */
export type CardRow = { id: number; brand: string; last4: string; exp_month: number; exp_year: number };
/** One of the holder's agents on the console, with its settled trades in profit (`wins`). */
export type ConsoleAgent = { id: number; name: string; key_id: string; model: string | null; account_id: number; autonomous_funding: boolean; wins: number };

// Grants (grants.ts): the holder lets an agent (or every agent of theirs) write to, or execute, a
// cart (or every cart of theirs). Turns of the holder's actor.
export type GrantMessage =
  | { kind: 'grant'; holderId: number; agentId: number | null; cartId: number | null; level: 'write' | 'execute'; payWith: 'balance' | 'card'; cardId: number | null; note: string }
  | { kind: 'revoke'; holderId: number; grantId: number };
export type Granted = { grant_id: number };
export type Revoked = { grant_id: number; revoked: boolean };
