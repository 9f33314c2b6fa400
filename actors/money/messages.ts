// How a holder pays (the one payment shape of every real-money checkout: purchase links, carts,
// coin packs, exchange purchases, top-ups). The front end checks only what the holder typed (a new
// card by the demo rules, crypto refused, a stored card chosen); the money kernel
// (actors/money/charge.ts) alone resolves a stored card, judges its expiry and charges.
import type { StoredCard } from '../../src/payments/cards.js';

/** A card the holder typed, checked by the front end; `save`: the holder asked to keep it (save_card=on). */
export type NewCard = { method: 'new_card'; card: StoredCard; save: boolean };
/** One of the holder's stored cards, by its id: the kernel checks it is theirs and not expired. */
export type StoredCardChoice = { method: 'stored_card'; cardId: number };
/** A card payment: a new card or a stored one (top-ups and coin packs take no other). */
export type CardPayment = NewCard | StoredCardChoice;
/** A holder's payment: a card, or the balance of the account that pays. */
export type Payment = CardPayment | { method: 'balance' };
