// The holder's Manual desk (CONTRACT.md "The holder's money"): a trading account of their own, made
// at registration (`account.kind = 'manual'`), that takes the lines the holder picks, goods bought
// outright, and the USD side of their Gold Coin packs.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema } from '../../orm/entities/index.js';

export async function manualDesk(em: EntityManager, holderId: number): Promise<number> {
  const d = await em.findOne(
    AccountSchema,
    { holder: holderId, kind: 'manual' },
    { fields: ['id'] },
  );
  if (!d) throw new Error(`holder ${holderId} has no Manual desk`);
  return d.id;
}
