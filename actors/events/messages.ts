// The event log's contract (actors/events): what an append takes and what the read tasks (reads.ts)
// answer. Served shapes are typed by their schemas (src/schemas/events.ts), the one definition.
export type { EventType, ServedEvent } from '../../src/schemas/events.js';
import type { EventType, ServedEvent } from '../../src/schemas/events.js';

/** `after`: the last id the caller has; `types`: only these (absent: all). */
export type EventsArgs = { accountId: number; after: number; limit: number; types?: EventType[] };
/**
 * The events after `after`, oldest first; `gone`: `after` is older than what is kept (the
 * events from `from` on exist: CONTRACT.md answers 410), with nothing served.
 */
export type EventsReply =
  { events: ServedEvent[]; next_after: number } | { gone: true; from: number };
/** Many accounts' events at once (the front ends' streams): each account's after its own `after`, at most `limit` each. */
export type ManyArgs = { accounts: { accountId: number; after: number }[]; limit: number };
/** An event as the streams send it: its id and type, and the event (as GET serves it) as JSON text. */
export type EventText = { id: number; type: EventType; json: string };
/** Per account: its events (oldest first), or `gone` as for one account. */
export type ManyReply = Record<number, { events: EventText[] } | { gone: true; from: number }>;
/** Each account's last event id (0: none yet), for the front ends' streams to learn whose log grew. */
export type HeadsArgs = { accountIds: number[] };
export type Heads = Record<number, number>;

/** NOTIFY channels: an account's log grew (payload: the accounts, comma-separated, or `*`), a market's session closed (`market/tick`). */
export const EVENTS_CHANNEL = 'svc_events';
export const SESSIONS_CHANNEL = 'svc_sessions';
