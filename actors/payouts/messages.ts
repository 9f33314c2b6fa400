// PayoutsActor's messages and replies ("payouts:due"): what the supervisor asks of it.
import { actorRef } from '../runtime/protocol.js';

/** Marks every scheduled payout whose `pay_at` (real unix seconds) is at or before `at` paid, once. */
export type PayoutsMessage = { kind: 'payDue'; at: number };
/** `nextAt`: when the earliest payout still scheduled is due (real unix seconds); null: none is. */
export type PaidOut = { paid: number[]; nextAt: number | null };

export type PayoutsReplies = { payDue: PaidOut };
/** The one PayoutsActor's address. */
export const payoutsRef = actorRef<PayoutsMessage, PayoutsReplies>('payouts', 'due');
