// How a holder is charged (ARCHITECTURE.md rule 10): the one place that decides, for every
// real-money checkout (a purchase link, a cart, an execute checkout, a coin pack, an exchange
// purchase, a top-up), which card or balance pays, whether this checkout carries the month's
// participation fee (claimed by its row, by the rule of src/payments/fee.ts: the fee's amount,
// month and decision are named there only), the fee's row and the ledger postings. `chargeHolder` is the per-payer entry, called inside the
// caller's transaction; `chargeBatch` is the order batch's set-based entry (pay_from_balance),
// built from the same fee decision and the same entries.
import type { EntityManager } from '@mikro-orm/postgresql';
import { CardSchema } from '../../orm/entities/index.js';
import { expired, type StoredCard } from '../../src/payments/cards.js';
import {
  MONTHLY_FEE_CENTS,
  feeDue,
  feeKey,
  feeMonthAt,
  feeKeySql,
} from '../../src/payments/fee.js';
import { ActorError } from '../runtime/actor.js';
import { instantDate, instantSql, intArrayParam } from '../runtime/sql.js';
import { postEntries, type Entry } from './ledger.js';
import type { CardPayment, Payment } from './messages.js';
import { signReceipt, type ReceiptFacts } from './receipts.js';

/** What a payment pays from: a card (new or stored) or the balance (the orders' and rounds' `source`). */
export const sourceOf = (p: Payment): 'card' | 'balance' =>
  p.method === 'balance' ? 'balance' : 'card';

// --- The card ---------------------------------------------------------------------------------

/**
 * The card a payment charges (CONTRACT.md "Test cards": a stored card keeps only brand, last 4
 * digits and expiry): a new one (checked by the front end), kept for next time only when the holder
 * asked (`save_card=on`; one stored before stays as it is), or a stored one of the holder's that
 * has not expired at `at` (the service clock).
 */
async function cardToCharge(
  em: EntityManager,
  holderId: number,
  payment: CardPayment,
  at: number,
): Promise<StoredCard> {
  if (payment.method === 'new_card') {
    if (payment.save) {
      const c = payment.card;
      await em
        .createQueryBuilder(CardSchema)
        .insert({
          holder: holderId,
          brand: c.brand,
          last4: c.last4,
          expMonth: c.expMonth,
          expYear: c.expYear,
          createdAt: instantDate(at),
        })
        .onConflict()
        .ignore()
        .execute();
    }
    return payment.card;
  }
  const c = await em.findOne(
    CardSchema,
    { id: payment.cardId, holder: holderId },
    { fields: ['brand', 'last4', 'expMonth', 'expYear'] },
  );
  if (!c) throw new ActorError(404, `no stored card ${payment.cardId} of yours`);
  if (expired(c.expMonth, c.expYear, new Date(at * 1000))) {
    throw new ActorError(
      400,
      `stored card ${payment.cardId} has expired: pay with a new card; nothing was charged`,
    );
  }
  return { brand: c.brand, last4: c.last4, expMonth: c.expMonth, expYear: c.expYear };
}

// --- The month's participation fee -----------------------------------------------------------
// The rule (its amount, month, due or not, what the holder pays) is src/payments/fee.ts; the kernel
// alone reads and writes its rows by it. The fee's month is the service clock's (feeMonthAt of the
// checkout's `at`, real unix seconds), not the database's: with a scaled or test clock, a checkout
// belongs to the month the service says it is.

/** Whether the holder's fee of the month of `at` is charged (no holder: not charged). */
export async function feeCharged(
  em: EntityManager,
  holderId: number | null,
  at: number,
): Promise<boolean> {
  return (await feeStatus(em, holderId, at)).chargedAt !== null;
}

/** The holder's fee of the month of `at`: its month and when it was charged (null: not yet; no holder: never). */
export async function feeStatus(
  em: EntityManager,
  holderId: number | null,
  at: number,
): Promise<{ month: string; chargedAt: Date | string | null }> {
  const month = feeMonthAt(at);
  const [row] =
    holderId === null
      ? [{ charged_at: null }]
      : await em.execute(
          'select (select created_at from monthly_fee where holder_id = ? and month = ?) as charged_at',
          [holderId, month],
        );
  return { month, chargedAt: row.charged_at };
}

/**
 * The fees already charged of `holders` (an SQL bigint[] expression) in `months` (an SQL text[]
 * expression), as a json array of their feeKey: the order batch's read.
 */
export const chargedFeesSql = (holders: string, months: string) =>
  `(select coalesce(json_agg(${feeKeySql('holder_id', 'month')}), '[]') from monthly_fee where holder_id = any(${holders}) and month = any(${months}))`;

/**
 * The order batch's fee rows, from a source with (holder, month, account_id, round_id, fee): a plain
 * insert, so a fee another checkout charged since the batch read it as due fails the batch, which
 * is decided again and sees it charged. In holder order: two batches (two shards) charging the same
 * holders' fees wait for each other's rows in one order, a unique violation for the later, never a
 * deadlock.
 */
export const feeRowsInsertSql = (source: string) =>
  `insert into monthly_fee (holder_id, month, account_id, round_id, amount_cents, created_at)
   select holder, month, account_id, round_id, fee, ${instantSql('at')} from ${source} where fee > 0 order by holder, month`;

/**
 * Claims the month's fee for this checkout: its row is inserted unless the holder's fee of that
 * month is charged. The row's key decides, also against a concurrent checkout in another process
 * (the insert waits for it: committed, this one carries no fee; rolled back, this one does), so the
 * decision and the row are one statement and no race is left to retry.
 */
/**
 * Locks the accounts a purchase posts to, in id order, before its fee row is claimed: the order
 * batch's lock order (its read locks the funded accounts in id order, its write then inserts fee
 * rows). A pay turn that claimed the holder's fee row first and then waited for an account a
 * batch had locked, while that batch waited to insert the same fee row, would deadlock.
 */
async function lockAccounts(em: EntityManager, accountIds: number[]): Promise<void> {
  await em.execute('select id from account where id = any(?::bigint[]) order by id for update', [
    intArrayParam([...new Set(accountIds)]),
  ]);
}

async function claimFee(
  em: EntityManager,
  holderId: number,
  at: number,
  payer: number,
  roundId: number | null,
): Promise<number> {
  const claimed = await em.execute(
    `insert into monthly_fee (holder_id, month, account_id, round_id, amount_cents, created_at) values (?, ?, ?, ?, ?, ${instantSql()})
     on conflict (holder_id, month) do nothing returning holder_id`,
    [holderId, feeMonthAt(at), payer, roundId, MONTHLY_FEE_CENTS, at],
  );
  return feeDue(claimed.length === 0);
}

// --- What a charge books ---------------------------------------------------------------------

/** One purchase of a checkout: its own debit under its ref (on `account` when another of the holder's accounts books it). */
export type Debit = {
  ref: string;
  cents: number;
  account?: number;
  kind?: 'order_debit' | 'exchange_purchase';
};

/**
 * What a checkout books. For each account in the order its debits name it (the payer first when
 * it has debits): a card payment is charged onto it first (`ref`: what the holder paid for), then
 * each purchase is debited under its own ref; the participation fee, when this checkout carries it,
 * is the payer's own debit. A card leaves every account as it was; the balance pays the total.
 */
export function chargeEntries(
  payer: number,
  debits: Debit[],
  feeCents: number,
  method: 'card' | 'balance',
  ref: string,
): Entry[] {
  const accounts = [...new Set([payer, ...debits.map((d) => d.account ?? payer)])];
  const entries: Entry[] = [];
  for (const account of accounts) {
    const mine = debits.filter((d) => (d.account ?? payer) === account);
    const fee = account === payer ? feeCents : 0;
    const total = mine.reduce((sum, d) => sum + d.cents, 0) + fee;
    if (!total) continue;
    if (method === 'card')
      entries.push({ account_id: account, kind: 'card_charge', amount_cents: total, ref });
    for (const d of mine)
      entries.push({
        account_id: account,
        kind: d.kind ?? 'order_debit',
        amount_cents: -d.cents,
        ref: d.ref,
      });
    if (fee) entries.push({ account_id: account, kind: 'monthly_fee', amount_cents: -fee, ref });
  }
  return entries;
}

/** A top-up by card: the card's charge lands on the account (never a monthly fee). */
export const topupEntries = (accountId: number, cents: number, card: StoredCard): Entry[] => [
  {
    account_id: accountId,
    kind: 'card_charge',
    amount_cents: cents,
    ref: `topup:${card.brand}-${card.last4}`,
  },
];

// --- The per-payer entry ---------------------------------------------------------------------

/** Who pays, how, and for what. */
type ChargeBase = {
  holderId: number;
  /** The account that pays: a card's charge lands on it (or its balance pays), and it carries the month's fee. */
  payer: number;
  payment: Payment;
  /** When the holder paid, on the service clock (real unix seconds): the fee's month, a stored card's expiry. */
  at: number;
};
/** A purchase: debits under `ref` (what the holder paid for: the card charge's and the fee's ref). */
export type Purchase = ChargeBase & {
  debits: Debit[];
  ref: string;
  /** The trade round the fee row names (a purchase link's or a cart's first round); none for goods and coins. */
  roundId?: number | null;
  /** Entries of the same posting on another holder's account (an exchange sale's credit to the seller). */
  counterparts?: Entry[];
  /** Orders this charge funds by the holder's hand or standing grant: the receipt to sign (CONTRACT.md "Signed approval receipts"). */
  receipt?: Omit<ReceiptFacts, 'holderId' | 'chargedCents' | 'feeCents' | 'method'>;
};
/** A top-up: `cents` onto the payer by card, never a fee. */
export type Topup = ChargeBase & { topupCents: number };

export type Charged = {
  method: 'card' | 'balance';
  /** The card charged (null: the balance paid). */
  card: StoredCard | null;
  /** The month's participation fee this checkout carried (0 or the fee). */
  feeCents: number;
  /** What the holder paid: the purchases and the fee (a card's charge, or what left the balance). */
  chargedCents: number;
  /** The signed approval receipt, when the charge funded orders by the holder's hand or grant. */
  receipt: string | null;
};

const isPositiveCents = (c: number) => Number.isSafeInteger(c) && c > 0;

/**
 * Charges a holder, in the caller's transaction (which holds whatever locks make the purchase
 * valid: the order, the cart, the listing): resolves the card (a balance payment has none), claims
 * the month's fee when due (purchases only), and posts the entries in one ledger statement,
 * refusing a balance that does not cover them (400, nothing written). Asserts what it booked.
 */
export async function chargeHolder(em: EntityManager, charge: Purchase | Topup): Promise<Charged> {
  const { holderId, payer, payment, at } = charge;
  const topup = 'topupCents' in charge;
  const debits = topup ? [] : charge.debits;
  const total = topup ? charge.topupCents : debits.reduce((s, d) => s + d.cents, 0);
  assert(
    Number.isSafeInteger(holderId) && Number.isSafeInteger(payer) && Number.isFinite(at),
    'a charge names its holder, payer and instant',
  );
  assert(
    topup
      ? isPositiveCents(total)
      : debits.length > 0 && debits.every((d) => isPositiveCents(d.cents)),
    'a charge moves positive integer cents',
  );
  if (topup && payment.method === 'balance') throw new ActorError(400, 'a top-up is paid by card');

  const card = payment.method === 'balance' ? null : await cardToCharge(em, holderId, payment, at);
  const method = card ? 'card' : 'balance';
  if (!topup)
    await lockAccounts(em, [
      payer,
      ...debits.map((d) => d.account ?? payer),
      ...(charge.counterparts ?? []).map((e) => e.account_id),
    ]);
  const feeCents = topup ? 0 : await claimFee(em, holderId, at, payer, charge.roundId ?? null);
  const entries = topup
    ? topupEntries(payer, total, card!)
    : chargeEntries(payer, debits, feeCents, method, charge.ref);

  // Postconditions of what is booked: the fee once, at its amount; a card charged exactly the
  // purchases and the fee; the balance paying exactly that.
  const sum = (pick: (e: Entry) => boolean) =>
    entries.filter(pick).reduce((s, e) => s + e.amount_cents, 0);
  assert(feeCents === 0 || feeCents === MONTHLY_FEE_CENTS, "the fee is the month's fee or nothing");
  assert(
    sum((e) => e.kind === 'monthly_fee') === -feeCents,
    'the fee is booked once, on the payer',
  );
  assert(
    sum((e) => e.kind === 'card_charge') === (card ? total + feeCents : 0),
    'a card is charged the purchases and the fee, nothing else',
  );
  assert(
    sum(() => true) === (card ? (topup ? total : 0) : -(total + feeCents)),
    "the holder's accounts move by what was charged",
  );

  await postEntries(em, [...entries, ...(topup ? [] : (charge.counterparts ?? []))], at, {
    requireFunds: method === 'balance',
  });
  const facts = topup ? undefined : charge.receipt;
  const receipt = facts
    ? await signReceipt(em, {
        ...facts,
        holderId,
        chargedCents: total + feeCents,
        feeCents,
        method,
      })
    : null;
  return { method, card, feeCents, chargedCents: total + feeCents, receipt };
}

function assert(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`chargeHolder: ${what}`);
}

// --- The order batch's set-based entry -------------------------------------------------------

/** One order of a batch funded from its account's balance (pay_from_balance), with the fee the batch decided it carries. */
export type BatchFunding = {
  accountId: number;
  orderId: number;
  totalCents: number;
  feeCents: number;
};

/**
 * The fee an order of a batch carries, decided as `chargeHolder` decides it: due unless the
 * holder's fee of that month is among `charged` (the batch's read of monthly_fee, plus the fees
 * its earlier orders carry: the caller adds an order's key once it is accepted).
 */
export const batchFeeDue = (charged: Set<string>, holderId: number, at: number): number =>
  feeDue(charged.has(feeKey(holderId, at)));

/** What the batch's funded orders book: each a balance checkout of that order alone (its fee rows: feeRowsInsertSql). */
export function chargeBatch(funded: BatchFunding[]): Entry[] {
  return funded.flatMap((f) => {
    assert(
      isPositiveCents(f.totalCents) && (f.feeCents === 0 || f.feeCents === MONTHLY_FEE_CENTS),
      "a batch order pays positive cents and the month's fee or nothing",
    );
    const ref = `order:${f.orderId}`;
    return chargeEntries(f.accountId, [{ ref, cents: f.totalCents }], f.feeCents, 'balance', ref);
  });
}
