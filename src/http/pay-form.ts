// The payment fields of the holder's pay forms (SPEC.md "Web routes": purchase links, cart links,
// POST /cart/checkout) and what they become. A new card is checked here, before any actor turn, so
// a declined or mistyped card never reaches an account and nothing is charged (CONTRACT.md "Test
// cards"); a stored card must be the holder's and not expired.
import Type from 'typebox';
import type { Payment } from '../../actors/cart/messages.js';
import type { CardRow } from '../../actors/holder/messages.js';
import { read } from '../../actors/runtime/client.js';
import { checkCard, expired, type CardInput, type StoredCard } from '../payments/cards.js';
import { HttpError } from './route.js';
import { rowId } from '../schemas/index.js';
import type { Services } from './services.js';

/** The fields every pay form has (spread into a form's Type.Object). */
export const PayFields = {
  method: Type.Union([Type.Literal('new_card'), Type.Literal('balance'), Type.Literal('card')], { default: 'new_card', description: 'new_card (the card fields), card (a stored card: card_id) or balance' }),
  card_id: Type.Union([rowId('a stored card'), Type.Null()], { default: null, description: 'one of your stored cards (method card)' }),
  number: Type.String({ maxLength: 64, default: '' }),
  exp: Type.String({ maxLength: 16, default: '' }),
  cvc: Type.String({ maxLength: 16, default: '' }),
  holder: Type.String({ maxLength: 160, default: '' }),
};
export type PayFields = { method: 'new_card' | 'balance' | 'card'; card_id: number | null } & CardInput & { holder: string };

/** A typed card judged by the demo rules: its stored form, or the refusal (402 declined, 400 mistyped or expired). */
export function checkedCard(f: CardInput, now: Date): StoredCard {
  const c = checkCard(f, now);
  if (!c.ok) throw new HttpError(c.status, c.detail);
  return c.card;
}

/** One of the holder's stored cards, still valid. */
export async function storedCard(s: Services, holderId: number, cardId: number | null, now: Date): Promise<StoredCard> {
  if (cardId === null) throw new HttpError(400, 'choose one of your stored cards (card_id)');
  const c = await read(s.runtime, 'holder.card', { holderId, cardId });
  if (!c) throw new HttpError(404, `no stored card ${cardId} of yours`);
  if (expired(c.expMonth, c.expYear, now)) throw new HttpError(400, 'that stored card has expired: pay with a new card');
  return c;
}

/** How a cart checkout pays, from the form (the cart actor charges; the card was checked here). */
export async function cartPayment(s: Services, holderId: number, f: PayFields, now: Date): Promise<Payment> {
  if (f.method === 'balance') return { method: 'balance' };
  if (f.method === 'new_card') return { method: 'card', card: checkedCard(f, now) };
  await storedCard(s, holderId, f.card_id, now);
  return { method: 'stored_card', cardId: f.card_id! };
}

/** Stored cards as a pay form offers them. */
export const cardOptions = (cards: CardRow[]) =>
  cards.map((c) => ({ id: c.id, label: `${c.brand} •••• ${c.last4}, ${String(c.exp_month).padStart(2, '0')}/${String(c.exp_year).slice(-2)}` }));
