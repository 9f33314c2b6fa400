// Gold Coins (CONTRACT.md "The holder's money"): one balance per holder, in hundredths of a coin,
// with its own ledger, never converted to USD and never mixed with it. `postCoins` is the one place
// the balance moves (like actors/money/ledger.ts for USD): one statement moves it and writes the
// entries with their running balance, refusing a debit the balance does not cover.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CardSchema } from '../../orm/entities/index.js';
import { GC_HUNDREDTHS, isPack, packPriceCents } from '../../src/payments/terms.js';
import { ActorError } from '../runtime/actor.js';
import { instantSql, jsonParam } from '../runtime/sql.js';
import { chargeHolder } from '../money/charge.js';
import { appendGrantEvents } from './grants.js';
import { manualDesk } from '../account/desk.js';
import type { CardRemoved, CoinsBought, CoinsMessage } from './messages.js';

export type GcKind = 'gc_grant' | 'gc_purchase' | 'gc_spend' | 'gc_sale';
export type CoinEntry = { kind: GcKind; hundredths: number; ref: string };

/**
 * Moves the holder's Gold Coin balance by `entries` in order, booked at `at` (the turn's instant);
 * returns the balance after. 400 when a debit is not covered.
 */
export async function postCoins(
  em: EntityManager,
  holderId: number,
  entries: CoinEntry[],
  at: number,
): Promise<number> {
  for (const e of entries) {
    if (!Number.isSafeInteger(e.hundredths) || e.hundredths === 0)
      throw new Error(`a Gold Coin entry is non-zero integer hundredths, got ${e.hundredths}`);
  }
  const net = entries.reduce((s, e) => s + e.hundredths, 0);
  const [row] = await em.execute<{ after: number | null; written: number }[]>(
    `with e as (select * from jsonb_to_recordset(?::jsonb) as x(kind text, hundredths bigint, ref text, seq int)),
          upd as (update holder set gc_balance_hundredths = gc_balance_hundredths + ? where id = ? and gc_balance_hundredths + ? >= 0
                  returning gc_balance_hundredths as after, gc_balance_hundredths - ? as before),
          ins as (insert into gc_ledger (holder_id, kind, amount_hundredths, balance_after_hundredths, ref, created_at)
                  select ?, e.kind, e.hundredths, upd.before + sum(e.hundredths) over (order by e.seq), e.ref, ${instantSql()} from e, upd order by e.seq returning 1)
     select (select after::float8 from upd) as after, (select count(*)::int from ins) as written`,
    [jsonParam(entries.map((e, seq) => ({ ...e, seq }))), net, holderId, net, net, holderId, at],
  );
  if (row.after === null) throw new ActorError(400, 'not enough Gold Coins');
  if (row.written !== entries.length)
    throw new Error('gold coin ledger rows written differ from the entries posted');
  return row.after;
}

/** The 5.0 free coins of a new holder. */
export const registrationGrant = (grant: number): CoinEntry[] => [
  { kind: 'gc_grant', hundredths: grant, ref: 'registration' },
];

type BuyCoins = Extract<CoinsMessage, { kind: 'buyCoins' }>;

/**
 * A pack of coins by card: a real-money checkout (the month's participation fee when due). The USD
 * side is booked on the holder's Manual desk (charged and debited at once: the desk nets to zero),
 * the coins on the Gold Coin ledger; one transaction.
 */
export async function buyCoins(em: EntityManager, msg: BuyCoins): Promise<CoinsBought> {
  if (!isPack(msg.pack))
    throw new ActorError(400, `a pack is 5, 10, 25, 50 or 100 coins, not ${msg.pack}`);
  const desk = await manualDesk(em, msg.holderId);
  const ref = `coins:${msg.pack}`;
  const c = await chargeHolder(em, {
    holderId: msg.holderId,
    payer: desk,
    payment: msg.payment,
    at: msg.at,
    debits: [{ ref, cents: packPriceCents(msg.pack) }],
    ref,
  });
  const after = await postCoins(
    em,
    msg.holderId,
    [{ kind: 'gc_purchase', hundredths: msg.pack * GC_HUNDREDTHS, ref: `pack:${msg.pack}` }],
    msg.at,
  );
  return {
    coins: msg.pack,
    gc_balance_hundredths: after,
    charged_cents: c.chargedCents,
    fee_cents: c.feeCents,
  };
}

/** Forgets a stored card at `at`; the live grants that charge it are revoked with it (their history stays). */
export async function removeCard(
  em: EntityManager,
  holderId: number,
  cardId: number,
  at: number,
): Promise<CardRemoved> {
  const card = await em.findOne(
    CardSchema,
    { id: cardId, holder: holderId },
    { fields: ['brand', 'last4'] },
  );
  if (!card) throw new ActorError(404, `no stored card ${cardId} of yours`);
  const revoked = await em.execute<{ id: number }[]>(
    `update cart_grant set revoked_at = ${instantSql()} where card_id = ? and holder_id = ? and revoked_at is null returning id::float8 as id`,
    [at, cardId, holderId],
  );
  await appendGrantEvents(
    em,
    holderId,
    revoked.map((r) => r.id),
    'revoked',
    at,
  );
  const removed = await em.nativeDelete(CardSchema, { id: cardId, holder: holderId });
  return { card_id: cardId, removed: removed > 0, brand: card.brand, last4: card.last4 };
}
