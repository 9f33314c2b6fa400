// The service's business rules that more than one place needs, each defined once: the
// actors decide by them, the texts served to agents and holders quote them. Pure: no I/O, so both
// src/ and actors/ import it. Where SQL must apply a rule, its SQL twin sits next to the JS one and
// test/unit/rules.test.ts + test/api/rules-sql.test.ts prove they agree.
import { SETTLEMENT_HORIZON_SESSIONS } from './engine/markets.js';

/** Sessions a filled position sells through before it settles (the engine's market definition). */
export { SETTLEMENT_HORIZON_SESSIONS };

/** Settled trades in profit an agent needs before its holder may switch autonomous funding on. */
export const FUNDING_PROFITABLE_TRADES = 3;

/** What an order of `qty` units costs (SPEC.md "Cash accounting": cost_basis = q·c + q·f), in integer cents. */
export type OrderAmounts = {
  /** qty × unit cost */
  grossCents: number;
  /** qty × fulfilment fee per unit */
  feeAmountCents: number;
  /** gross + fee: what funding the order debits, and the position's cost basis */
  totalCents: number;
};

/** The amounts of an order (also the house's outlay and a trade's cost basis). Integer cents in, integer cents out. */
export function orderAmounts(qty: number, unitCostCents: number, feeCents: number): OrderAmounts {
  for (const [name, v] of [
    ['qty', qty],
    ['unitCostCents', unitCostCents],
    ['feeCents', feeCents],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0)
      throw new RangeError(`${name} must be a non-negative integer, got ${v}`);
  }
  const grossCents = qty * unitCostCents;
  const feeAmountCents = qty * feeCents;
  const totalCents = grossCents + feeAmountCents;
  if (!Number.isSafeInteger(totalCents))
    throw new RangeError('order amount too large for exact cents');
  return { grossCents, feeAmountCents, totalCents };
}

/** Days a holder's web session (the login cookie) lasts. */
export const SESSION_DAYS = 30;

/**
 * Caps of the lists SPEC.md gives no `limit` for (every other list takes a bounded `limit`): a list
 * shows its first rows up to the cap, so no holder or agent can make one page read without end.
 */
export const LIST_CAPS = {
  /** GET /api/v1/inventory: owned goods, newest first. */
  inventory: 1000,
  /** Stored cards offered on a checkout page, newest first. */
  cards: 20,
  /** A holder's agents on the console (overview, agents page), oldest first. */
  agents: 100,
  /** A holder's accounts whose orders, positions and ledger the console lists, oldest first. */
  accounts: 1000,
  /** Carts in GET /api/v1/agents/me, oldest first. */
  carts: 200,
  /** Open exchange listings: the largest `limit` of GET /api/v1/exchange/listings, the /exchange page, an inventory's own listings. */
  listings: 500,
} as const;

/** Where the current menu of `market` is served: the link every refusal of a gone deal carries. */
export function menuUrl(baseUrl: string, market: string): string {
  return `${baseUrl}/api/v1/markets/${encodeURIComponent(market)}/deals`;
}

/**
 * The 404 detail of a deal that is not (or no longer) on the menu, with `why` saying how (its
 * session closed, ...): one text for GET /markets/{m}/deals/{key}, POST /orders and the order batch.
 */
export function dealNotOnMenu(
  baseUrl: string,
  market: string,
  offerKey: string,
  why: string,
): string {
  return (
    `deal ${JSON.stringify(offerKey)} ${why}; deal keys are valid only during the session that published them: ` +
    `the current menu is ${menuUrl(baseUrl, market)}`
  );
}

/**
 * Competitions (CONTRACT.md "Competitions"): each market always has one running, in windows of a
 * whole number of that market's sessions, so a window holds enough sessions for positions to fill
 * and settle (8 sessions) several times over. Windows are aligned to session numbers (window w of
 * a market covers sessions w·N … w·N+N-1), so every process derives the same windows and ids.
 * m15 (15 min): 96 sessions = 1 day; m45: 64 = 2 days; h2: 36 = 3 days; h10: 21 ≈ 8.75 days.
 */
export const COMPETITION_WINDOW_SESSIONS: Readonly<Record<string, number>> = {
  m15: 96,
  m45: 64,
  h2: 36,
  h10: 21,
};

export const COMPETITION = {
  /** Simulated USD every entrant's competition account starts with. */
  startingBalanceCents: 10_000_00,
  /** The sponsor-funded prize pool of every competition (real USD, paid to the winners' Manual desks). */
  prizePoolCents: 300_00,
  sponsor: 'Demo Sponsor',
  /** Shares of the pool (percent) for ranks 1, 2, 3. */
  prizeShares: [50, 30, 20] as readonly number[],
  /** Leaderboard rows in the list answer; the single competition answers up to `leaderboardMax`. */
  leaderboardInList: 10,
  leaderboardMax: 1000,
} as const;

/** The id of a market's competition window `w`: stable across processes (`h2-1234`). */
export const competitionId = (market: string, window: number) => `${market}-${window}`;

/** The prizes (cents) of ranks 1..3 of a pool: the shares, the rounding remainder to the winner. */
export function prizeSplit(poolCents: number): number[] {
  const shares = COMPETITION.prizeShares.map((p) => Math.floor((poolCents * p) / 100));
  shares[0] += poolCents - shares.reduce((a, b) => a + b, 0);
  return shares;
}
