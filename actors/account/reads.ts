// Read tasks over the account actor's tables (orders, positions, ledger, rounds, owned goods): the
// agents' API and the holder's console and checkout pages read through these, on the pool, never
// on the front end's thread. Each answers plain data (structured clone), shaped by views.ts.
import { defineReads } from '../runtime/read.js';
import { listingsOf } from '../exchange/reads.js';
import { LIST_CAPS } from '../../src/rules.js';
import type {
  CheckoutBalanceArgs,
  LedgerArgs,
  ListArgs,
  OrderArgs,
  OrderByTokenArgs,
  OrderByTokenReply,
  OrdersArgs,
  PositionArgs,
  PositionsArgs,
  QuoteArgs,
  SummaryArgs,
  ServedOrder,
} from './messages.js';
import { orderInstructions } from './order-reply.js';
import { quoteOf } from './quote.js';
import {
  accountIdsOf,
  accountSummary,
  checkoutBalanceCents,
  holderOfAccounts,
  inventoryOf,
  ledgerOf,
  monthlyFeeStatus,
  orderByToken,
  payNow,
  orderOf,
  ordersOf,
  positionOf,
  positionsOf,
  roundsOf,
  tradesOf,
} from './views.js';

/** A served order with what to do next (GET /orders answers it so; events carry the order alone). */
const withNext = (o: ServedOrder, baseUrl: string) => ({
  ...o,
  instructions: orderInstructions(o, baseUrl),
});

export const accountReads = defineReads({
  'account.orders': async ({ em, at }, a: OrdersArgs) =>
    (
      await ordersOf(em, await accountIdsOf(em, a), {
        status: a.status,
        limit: a.limit,
        baseUrl: a.baseUrl,
        at,
      })
    ).map((o) => withNext(o, a.baseUrl)),
  /** One order of these accounts (or a holder's), or null (another account's order is not found either). */
  'account.order': async ({ em, at }, a: OrderArgs) => {
    const o = await orderOf(em, await accountIdsOf(em, a), a.orderId, a.baseUrl, at);
    return o && withNext(o, a.baseUrl);
  },
  /** An order by its purchase-link token, with the agent that placed it (the checkout page). */
  'account.orderByToken': async ({ em, at }, a: OrderByTokenArgs) =>
    (await orderByToken(em, a.token, a.baseUrl, at)) as OrderByTokenReply,
  'account.positions': async ({ em }, a: PositionsArgs) =>
    positionsOf(em, await accountIdsOf(em, a), { status: a.status, limit: a.limit }),
  'account.position': async ({ em }, a: PositionArgs) => positionOf(em, a.accountIds, a.positionId),
  'account.trades': async ({ em }, a: ListArgs) => tradesOf(em, a.accountIds, a.limit),
  'account.ledger': async ({ em }, a: LedgerArgs) =>
    ledgerOf(em, await accountIdsOf(em, a), a.limit),
  'account.rounds': async ({ em }, a: ListArgs) => roundsOf(em, a.accountIds, a.limit),
  /** The holder's owned goods and open listings (an agent without a holder: its own minted goods, no listings). */
  'account.inventory': async ({ em }, a: { accountIds: number[] }) => {
    const holderId = await holderOfAccounts(em, a.accountIds);
    const listings =
      holderId === null
        ? []
        : await listingsOf(em, {
            currency: null,
            family: null,
            holderId,
            limit: LIST_CAPS.listings,
          });
    return { items: await inventoryOf(em, a.accountIds, holderId), listings };
  },
  /** A holder's owned goods (the console's inventory page). */
  'account.holderInventory': async ({ em }, a: { holderId: number }) =>
    inventoryOf(em, [], a.holderId),
  /** Summaries of these accounts, in their order (the console's overview reads its agents' at once). */
  'account.summaries': async ({ em }, a: SummaryArgs) =>
    Promise.all(
      a.accountIds.map((id) =>
        accountSummary(em.fork(), id, { ledgerLimit: a.ledgerLimit, baseUrl: a.baseUrl, at: a.at }),
      ),
    ),
  /** `at`: now on the service clock (real unix seconds): the fee's month is the service's. */
  'account.monthlyFee': async ({ em }, a: { holderId: number; at: number }) =>
    monthlyFeeStatus(em, a.holderId, a.at),
  /** The pay forms' figures: the holder's fee of the month and what paying `goodsCents` now charges (holder_pays: src/payments/fee.ts). */
  'account.payNow': async ({ em }, a: { holderId: number; at: number; goodsCents: number }) =>
    payNow(em, a.holderId, a.at, a.goodsCents),
  'account.checkoutBalance': async ({ em }, a: CheckoutBalanceArgs) =>
    checkoutBalanceCents(em, a.accountId, a.holderId),
  /** What POST /orders would answer for this order now, and the limits and funding behind it (nothing written). */
  'account.quote': async ({ em }, a: QuoteArgs) => quoteOf(em, a),
});
