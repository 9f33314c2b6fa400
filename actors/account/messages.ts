// AccountActor's messages and replies ("account:<id>"), and the arguments and replies of the account
// read tasks (reads.ts): what the front end may know of this actor kind.
import type { Static } from 'typebox';
import type * as schemas from '../../src/schemas/index.js';
import type { CardPayment, Payment } from '../money/messages.js';
import { actorRef, type IdemRequest } from '../runtime/protocol.js';
import type { LimitCheck, Limits } from '../money/limits.js';

/** The holder's spending limits as the `limits` message sets them (money/limits.ts decides with them). */
export type LimitsSetting = Limits;

/** Who withdraws an order: its agent, or a holder on the purchase page (who must be the agent's holder). */
export type Canceller = { by: 'agent' } | { by: 'holder'; holderId: number };

/** One order as the batch places it (actors/account/order-batch.ts). */
export type OrderRequest = {
  accountId: number;
  agentId: number;
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  qty: number;
  closesAt: number;
  /** When the order was accepted on the service clock (real unix seconds): its created_at, and the month its participation fee belongs to. */
  at: number;
  payFromBalance: boolean;
  /** The service's public address, for the answer's purchase_url. */
  baseUrl: string;
  idem?: IdemRequest;
};

/** The 201 answer (SPEC.md Order + instructions), or the stored answer of a retried key. */
export type OrderPlaced = Record<string, unknown>;

/** An agent's order on a deal of the current menu (its terms come from the recorded menu row). */
export type PlaceOrder = { kind: 'order' } & Omit<OrderRequest, 'accountId' | 'idem'>;

export type AccountMessage =
  | PlaceOrder
  /**
   * A holder pays an order of this account (purchase link), by card or from the account balance.
   * `at`: when the holder paid, on the service clock (real unix seconds): a link past its session's close is refused.
   */
  | { kind: 'pay'; orderId: number; holderId: number; payment: Payment; at: number }
  /**
   * The order withdrawn (CONTRACT.md "Withdrawing an order"): by its agent, or declined by the holder
   * on its purchase link. Answers the order as served, `cancelled`.
   */
  | { kind: 'cancel'; orderId: number; who: Canceller }
  /** A logged-in holder opened the agent's cart link: connects the agent if it has no holder yet. */
  | { kind: 'connect'; agentId: number; holderId: number }
  /** The holder's autonomous-funding switch for the agent of this account. */
  | { kind: 'funding'; agentId: number; holderId: number; enabled: boolean }
  /** The holder's spending limits for the agent of this account (null: no limit); a limits.changed event. */
  | ({ kind: 'limits'; agentId: number; holderId: number } & Limits)
  /**
   * A top-up of this account (one the holder owns) by card: a new card the front end checked, or a
   * stored one. Ledger `card_charge` (+); never a monthly fee. `at`: service clock (real unix seconds).
   */
  | { kind: 'topup'; holderId: number; amountCents: number; payment: CardPayment; at: number }
  /** A payout from this account: at least the minimum, at most the balance; it leaves the balance now and is paid at `payAt`. */
  | { kind: 'payout'; holderId: number; amountCents: number; payAt: number };

export type Paid = {
  order_id: number;
  round_id: number;
  status: 'paid';
  already_paid: boolean;
  charged_cents: number;
  fee_cents: number;
  receipt: string | null;
};
export type FundingSet = { agent_id: number; autonomous_funding: boolean };
export type ToppedUp = { account_id: number; amount_cents: number; balance_cents: number };
export type PayoutScheduled = {
  payout_id: number;
  account_id: number;
  amount_cents: number;
  commission_cents: number;
  net_cents: number;
  pay_at: number;
  status: 'scheduled';
};
/** `connected`: the agent is this holder's (now or before); false when another holder has it. */
export type Connected = { agent_id: number; connected: boolean };

/** The reply to each message kind (actor.ts's handlers answer these). */
export type AccountReplies = {
  order: OrderPlaced;
  pay: Paid;
  cancel: ServedOrder & { instructions: string };
  connect: Connected;
  funding: FundingSet;
  topup: ToppedUp;
  payout: PayoutScheduled;
  limits: LimitsSet;
};
/** The limits as set, in USD (CONTRACT.md "Spending limits"). */
export type LimitsSet = {
  agent_id: number;
  limits: {
    max_order: number | null;
    max_day: number | null;
    max_week: number | null;
    markets: string[] | null;
    expires_at: number | null;
  };
};
/** The address of trading account `id`'s actor. */
export const accountRef = (id: number) => actorRef<AccountMessage, AccountReplies>('account', id);

// Read tasks (reads.ts). Served objects are the SPEC.md resources as views.ts shapes them.

/** Whose rows a list reads: these accounts, or every account of a holder (the console). */
export type AccountScope = { accountIds: number[] } | { holderId: number };
export type OrdersArgs = AccountScope & { status?: string; limit: number; baseUrl: string };
/** One order of the scope's accounts (an agent's own, or any of a holder's: the console's receipt page). */
export type OrderArgs = AccountScope & { orderId: number; baseUrl: string };
export type OrderByTokenArgs = { token: string; baseUrl: string };
export type PositionsArgs = AccountScope & { status?: 'open' | 'settled'; limit: number };
export type PositionArgs = { accountIds: number[]; positionId: number };
export type ListArgs = { accountIds: number[]; limit: number };
export type LedgerArgs = AccountScope & { limit: number };
/** `at`: now on the service clock, for the monthly fee's month. */
export type SummaryArgs = {
  accountIds: number[];
  ledgerLimit: number;
  baseUrl: string;
  at: number;
};
/** The agent's account balance offered on a checkout page: only once that account is the holder's. */
export type CheckoutBalanceArgs = { accountId: number; holderId: number };

/** The served Order (SPEC.md "Order"), typed by its schema. */
export type ServedOrder = Static<typeof schemas.Order>;
/** The agent that placed an order, as its checkout page shows it. */
export type OrderAgent = {
  id: number;
  name: string;
  key_id: string;
  identity: Record<string, unknown> | null;
  operator: Record<string, unknown> | null;
  purpose: string | null;
  contact: string | null;
  holder_id: number | null;
};
/** `fundedByAgent`: the agent funded it without the holder present (its standing instructions). */
export type OrderByTokenReply = {
  order: ServedOrder;
  agent: OrderAgent;
  fundedByAgent: boolean;
  /** Who withdrew it, once cancelled: its agent, or the holder who declined it. */
  cancelledBy: 'agent' | 'holder' | null;
} | null;
// The served objects' types derive from their schemas (src/schemas), the one definition.
export type LedgerEntry = Static<typeof schemas.LedgerEntry>;
export type MonthlyFeeStatus = Static<typeof schemas.MonthlyFee>;
export type AccountSummary = Static<typeof schemas.AccountAnswer>;

/** A quote's order (the account.quote read): as POST /orders would place it, with its total. */
export type QuoteArgs = Omit<OrderRequest, 'idem'> & { totalCents: number };

export type QuoteFacts = {
  /** What POST /orders would answer: 201, or the refusal's status and body. */
  would: { status: number } & Record<string, unknown>;
  limits: { allowed: boolean; checks: LimitCheck[] };
  funding: { pay_from_balance_allowed: boolean; balance: number };
  /** Whether the holder's participation fee of the month is charged (no holder: not). */
  feeCharged: boolean;
};
