// HolderActor's messages and replies ("holder:<lowercased e-mail>"), and the arguments and replies of
// the holder read tasks (reads.ts): what the front end may know of this actor kind.

/** `address` is the client's address, for the throttles (throttle.ts). */
export type HolderMessage =
  | { kind: 'register'; email: string; password: string; display_name: string; address: string }
  | { kind: 'login'; email: string; password: string; address: string }
  | { kind: 'logout'; tokenHash: string }
  /** A new session for a holder whose register or login answer is being replayed (same key, same body, password included). */
  | { kind: 'resume'; holderId: number };

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
