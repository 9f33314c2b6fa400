// The card a holder's payment charges (CONTRACT.md "Test cards": a stored card keeps only brand, last
// 4 digits and expiry): one definition for every checkout (purchase links, carts, top-ups, coin packs).
import type { EntityManager } from '@mikro-orm/postgresql';
import { CardSchema } from '../../orm/entities/index.js';
import { expired, type StoredCard } from '../../src/payments/cards.js';
import { ActorError } from '../runtime/actor.js';
import type { CardChoice } from './messages.js';

/**
 * The card a payment charges: a new one, kept for next time only when the holder asked (CONTRACT.md
 * "Strict requests": `save_card=on`), or a stored one of the holder's.
 */
export async function cardToCharge(em: EntityManager, holderId: number, card: CardChoice, at: number): Promise<StoredCard> {
  if ('new' in card) {
    if (!card.save) return card.new;
    await em.createQueryBuilder(CardSchema)
      .insert({ holder: holderId, brand: card.new.brand, last4: card.new.last4, expMonth: card.new.expMonth, expYear: card.new.expYear })
      .onConflict().ignore().execute();
    return card.new;
  }
  const c = await em.findOne(CardSchema, { id: card.storedId, holder: holderId }, { fields: ['brand', 'last4', 'expMonth', 'expYear'] });
  if (!c) throw new ActorError(404, `no stored card ${card.storedId} of yours`);
  if (expired(c.expMonth, c.expYear, new Date(at * 1000))) throw new ActorError(400, `stored card ${card.storedId} has expired; nothing was charged`);
  return { brand: c.brand, last4: c.last4, expMonth: c.expMonth, expYear: c.expYear };
}

