// PayoutsActor's messages and replies ("payouts:due"): what the supervisor asks of it.

/** Marks every scheduled payout whose `pay_at` (real unix seconds) is at or before `at` paid, once. */
export type PayoutsMessage = { kind: 'payDue'; at: number };
export type PaidOut = { paid: number[] };
