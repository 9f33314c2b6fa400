// A cart's events (CONTRACT.md "Events"): its lines added, ordered and removed (the cart connected
// to a holder is account/pairing.ts's, with the agent it connects), appended in the cart turn's transaction to the log of the account of the
// agent whose cart it is (a holder's own cart has no agent: no log to append to).
import type { EntityManager } from '@mikro-orm/postgresql';
import { appendEvents } from '../events/log.js';
import type { EventType } from '../events/messages.js';
import { lineJson, linesByIds, type CartRow, type LineRow } from './lines.js';

/** The account whose log a cart's events join: its agent's, or none. */
async function accountOf(
  em: EntityManager,
  cart: Pick<CartRow, 'agent_id'>,
): Promise<number | null> {
  if (cart.agent_id === null) return null;
  const [a] = await em.execute<{ account_id: number }[]>(
    'select account_id::float8 as account_id from agent where id = ?',
    [cart.agent_id],
  );
  return a?.account_id ?? null;
}

/** `lines` as cart events of `type`, each the line as the cart's GET serves it (at `at`, the service clock), with its cart. */
export async function appendLineEvents(
  em: EntityManager,
  cart: CartRow,
  type: Extract<EventType, `cart.line_${string}`>,
  lines: LineRow[],
  at: number,
): Promise<void> {
  if (!lines.length) return;
  const account = await accountOf(em, cart);
  if (account === null) return;
  await appendEvents(
    em,
    lines.map((l) => ({
      account_id: account,
      type,
      data: { ...lineJson(l, cart, at), cart_id: cart.id },
    })),
    at,
  );
}

/** The same for lines named by id, read as they are now (after the change). */
export async function appendLineEventsOf(
  em: EntityManager,
  cart: CartRow,
  type: Extract<EventType, `cart.line_${string}`>,
  itemIds: number[],
  at: number,
): Promise<void> {
  if (cart.agent_id === null || !itemIds.length) return;
  await appendLineEvents(em, cart, type, await linesByIds(em, cart.id, itemIds), at);
}
