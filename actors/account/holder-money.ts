// A holder's money in and out of a trading account they own (CONTRACT.md "The holder's money"): a
// top-up by card credits the account (`card_charge`, never a monthly fee); a payout leaves the
// balance at once (`payout`) and is paid, minus the commission, when the supervisor finds it due
// (actors/payouts). Both through the ledger's one posting definition, in the account's turn.
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, PayoutSchema } from '../../orm/entities/index.js';
import { chargeHolder } from '../money/charge.js';
import { PAYOUT_MINIMUM_CENTS, payoutCommissionCents } from '../../src/payments/terms.js';
import { centsToNumber } from '../../src/engine/money.js';
import { ActorError } from '../runtime/actor.js';
import { payoutEntries, postEntries } from '../money/ledger.js';
import { instantDate } from '../runtime/sql.js';
import type { AccountMessage, PayoutScheduled, ToppedUp } from './messages.js';

type Topup = Extract<AccountMessage, { kind: 'topup' }>;
type Payout = Extract<AccountMessage, { kind: 'payout' }>;

/**
 * The account when the holder owns it (404 otherwise: another holder's account is simply not found).
 * A competition account holds simulated USD only: no card tops it up and nothing is paid out of it (400).
 */
async function ownedAccount(
  em: EntityManager,
  accountId: number,
  holderId: number,
  moving: string,
) {
  const a = await em.findOne(
    AccountSchema,
    { id: accountId, holder: holderId },
    { fields: ['balanceCents', 'kind'] },
  );
  if (!a) throw new ActorError(404, `no account ${accountId} of yours`);
  if (a.kind === 'competition')
    throw new ActorError(
      400,
      `account ${accountId} is a competition account holding simulated USD: it takes no ${moving}; nothing moved`,
    );
  return a;
}

export async function topup(em: EntityManager, accountId: number, msg: Topup): Promise<ToppedUp> {
  if (!Number.isSafeInteger(msg.amountCents) || msg.amountCents <= 0)
    throw new ActorError(400, 'a top-up is a positive amount in USD');
  await ownedAccount(em, accountId, msg.holderId, 'top-up');
  await chargeHolder(em, {
    holderId: msg.holderId,
    payer: accountId,
    payment: msg.payment,
    at: msg.at,
    topupCents: msg.amountCents,
  });
  const after = await ownedAccount(em, accountId, msg.holderId, 'top-up');
  return {
    account_id: accountId,
    amount_cents: msg.amountCents,
    balance_cents: after.balanceCents,
  };
}

export async function schedulePayout(
  em: EntityManager,
  accountId: number,
  msg: Payout,
  at: number,
): Promise<PayoutScheduled> {
  const account = await ownedAccount(em, accountId, msg.holderId, 'payout');
  if (!Number.isSafeInteger(msg.amountCents) || msg.amountCents < PAYOUT_MINIMUM_CENTS) {
    throw new ActorError(
      400,
      `a payout is at least ${centsToNumber(PAYOUT_MINIMUM_CENTS).toFixed(2)} USD; nothing moved`,
    );
  }
  if (msg.amountCents > account.balanceCents) {
    throw new ActorError(
      400,
      `a payout of ${centsToNumber(msg.amountCents).toFixed(2)} USD is more than the balance (${centsToNumber(account.balanceCents).toFixed(2)} USD); nothing moved`,
    );
  }
  const commission = payoutCommissionCents(msg.amountCents);
  const payout = em.create(PayoutSchema, {
    account: accountId,
    holder: msg.holderId,
    amountCents: msg.amountCents,
    commissionCents: commission,
    netCents: msg.amountCents - commission,
    payAt: msg.payAt,
    createdAt: instantDate(at),
  });
  await em.flush();
  // The balance check above is advisory; the posting's own funds check decides under the row lock.
  await postEntries(em, payoutEntries(accountId, payout.id, msg.amountCents), at, {
    requireFunds: true,
  });
  return {
    payout_id: payout.id,
    account_id: accountId,
    amount_cents: msg.amountCents,
    commission_cents: commission,
    net_cents: msg.amountCents - commission,
    pay_at: msg.payAt,
    status: 'scheduled',
  };
}
