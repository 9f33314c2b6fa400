// The payment fields of the holder's pay forms (SPEC.md "Web routes": purchase links, cart links,
// POST /cart/checkout, the console's top-up and coin packs) and what they become. A new card is
// checked here, before any actor turn, so a declined or mistyped card never reaches an account and
// nothing is charged (CONTRACT.md "Test cards"). Only what the holder typed is judged here: a stored
// card is named by its id and the money kernel (actors/money/charge.ts) alone finds it and judges
// its expiry, in the paying turn (no round trip to read it first). Crypto is listed but not ready
// (SPEC.md item 10): choosing it is refused here, before anything.
import Type from 'typebox';
import type { CardPayment, Payment } from '../../actors/money/messages.js';
import type { CardRow } from '../../actors/holder/messages.js';
import { checkCard, type CardInput, type StoredCard } from '../payments/cards.js';
import { HttpError } from '../http/route.js';
import { rowId } from '../schemas/index.js';

/** The fields every pay form has (spread into a form's Type.Object). */
/** The card fields of every pay form: a stored card, or a typed one. */
export const CardFields = {
  card_id: Type.Union([rowId('a stored card'), Type.Null()], {
    default: null,
    description: 'one of your stored cards (method card)',
  }),
  number: Type.String({ maxLength: 64, default: '' }),
  exp: Type.String({ maxLength: 16, default: '' }),
  cvc: Type.String({ maxLength: 16, default: '' }),
  holder: Type.String({ maxLength: 160, default: '' }),
  save_card: Type.Optional(
    Type.Union([Type.Literal('on'), Type.Literal('off')], {
      description:
        'on: keep the new card (brand, last 4 digits, expiry) for next time; otherwise it is not stored',
    }),
  ),
};
/** CONTRACT.md "Strict requests": a new card is stored only when the form says so. */
export const saveCard = (f: { save_card?: 'on' | 'off' }): boolean => f.save_card === 'on';
export const PayFields = {
  method: Type.Union(
    [
      Type.Literal('new_card'),
      Type.Literal('balance'),
      Type.Literal('card'),
      Type.Literal('crypto'),
    ],
    {
      default: 'new_card',
      description:
        'new_card (the card fields), card (a stored card: card_id), balance, or crypto (listed, not ready: refused)',
    },
  ),
  ...CardFields,
};
export type PayFields = {
  method: 'new_card' | 'balance' | 'card' | 'crypto';
  card_id: number | null;
  save_card?: 'on' | 'off';
} & CardInput & { holder: string };

/** Forms that charge a card only (top-up, coin packs): no balance; without `method`, a `card_id` means that stored card. */
export const CardPayFields = {
  method: Type.Optional(
    Type.Union([Type.Literal('new_card'), Type.Literal('card'), Type.Literal('crypto')], {
      description:
        'new_card (the card fields), card (a stored card: card_id), or crypto (listed, not ready: refused); default: card when card_id is given, else new_card',
    }),
  ),
  ...CardFields,
};
export type CardPayFields = {
  method?: 'new_card' | 'card' | 'crypto';
  card_id: number | null;
  save_card?: 'on' | 'off';
} & CardInput & { holder: string };

/**
 * The top-up's card fields (SPEC.md "Web routes", CONTRACT.md "The holder's money"): a stored
 * `card_id`, or `number`, `exp`, `holder`; no `cvc` (one sent is ignored, never checked).
 */
const { cvc: _cvc, ...NoCvcCardFields } = CardFields;
export const TopupCardFields = { method: CardPayFields.method, ...NoCvcCardFields };

/** SPEC.md item 10: the crypto method exists but is not ready. */
export const CRYPTO_NOT_READY =
  'crypto payments are not ready yet: nothing was charged; pay by card';

/** Refuses the crypto method (400), before any sign-in, card check or turn: nothing is charged. */
export function refuseCrypto(method: string | undefined): void {
  if (method === 'crypto') throw new HttpError(400, CRYPTO_NOT_READY);
}

/** A typed card judged by the demo rules: its stored form, or the refusal (402 declined, 400 mistyped or expired). */
export function checkedCard(f: CardInput, now: Date): StoredCard {
  const c = checkCard(f, now);
  if (!c.ok) throw new HttpError(c.status, c.detail);
  return c.card;
}

/** How a pay form pays (purchase links, carts, exchange purchases): the balance, or a card as `cardPaymentOf` reads it. */
export function paymentOf(f: PayFields, now: Date): Payment {
  refuseCrypto(f.method);
  if (f.method === 'balance') return { method: 'balance' };
  return cardPaymentOf({ ...f, method: f.method === 'crypto' ? undefined : f.method }, now);
}

/**
 * The card a form pays with: a new card checked by the demo rules (stored only when the holder
 * asked), or one of the holder's stored cards by its id (without `method`, a `card_id` means that card).
 */
export function cardPaymentOf(f: CardPayFields, now: Date): CardPayment {
  const method = f.method ?? (f.card_id !== null ? 'card' : 'new_card');
  refuseCrypto(method);
  if (method === 'new_card')
    return { method: 'new_card', card: checkedCard(f, now), save: saveCard(f) };
  if (f.card_id === null) throw new HttpError(400, 'choose one of your stored cards (card_id)');
  return { method: 'stored_card', cardId: f.card_id };
}

/** Stored cards as a pay form offers them. */
export const cardOptions = (cards: CardRow[]) =>
  cards.map((c) => ({
    id: c.id,
    label: `${c.brand} •••• ${c.last4}, ${String(c.exp_month).padStart(2, '0')}/${String(c.exp_year).slice(-2)}`,
  }));
