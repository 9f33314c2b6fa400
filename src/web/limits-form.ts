// The spending-limits form (CONTRACT.md "Spending limits": POST /console/agents/{agent_id}/limits):
// `max_order` and `max_day` in USD (empty: no limit), `markets` comma-separated ids or the ids
// ticked in the console's list, one field each (none: every market). An unknown market is a 422 at
// its field; nothing is set.
import Type, { type Static } from 'typebox';
import { MARKET_IDS, MARKETS } from '../engine/index.js';
import { amount } from '../schemas/index.js';
import { HttpError } from '../http/route.js';
import type { LimitsSetting } from '../../actors/account/messages.js';

/** The largest limit a form takes (USD): far above any order, and integer cents stay exact. */
const MAX_LIMIT = 1_000_000;
const Limit = (what: string) =>
  Type.Union(
    [
      amount(`${what} (USD, at most 2 decimals); empty: no limit`, {
        minimum: 0,
        maximum: MAX_LIMIT,
      }),
      Type.Null(),
    ],
    { default: null, description: `${what}; empty: no limit` },
  );

/** An instant a form takes as whole unix seconds, or empty for never: when an authority ends. */
export const Expiry = (what: string) =>
  Type.Union(
    [
      Type.Integer({
        minimum: 0,
        maximum: 32_503_680_000,
        description: `unix seconds: ${what}`,
      }),
      Type.Null(),
    ],
    { default: null, description: `${what} (unix seconds); empty: never` },
  );

export const LimitsFields = Type.Object({
  max_order: Limit('what one order (one line of an execute checkout) may total'),
  max_day: Limit('what a UTC day (service clock) may total'),
  max_week: Limit('what an ISO week (from Monday 00:00 UTC, service clock) may total'),
  expires_at: Expiry('when the limits end: from then on the agent funds nothing without you'),
  markets: Type.Union(
    [
      Type.String({
        maxLength: 200,
        description: `comma-separated market ids (${MARKET_IDS.join(', ')}); empty: every market`,
      }),
      Type.Array(Type.String({ maxLength: 20 }), {
        maxItems: 2 * MARKET_IDS.length,
        description: 'market ids, one field each (the console ticks them in a list)',
      }),
    ],
    { default: '', description: `the markets the agent may fund; none: every market` },
  ),
});
export type LimitsFields = Static<typeof LimitsFields>;

/** The fields as the console's form labels them (its error messages name them so). */
export const LIMIT_LABELS = {
  max_order: 'Most per order (USD)',
  max_day: 'Most per day (USD)',
  max_week: 'Most per week (USD)',
  markets: 'Markets',
  expires_at: 'Ends at (unix seconds)',
};
const AMOUNT_RULE = `must be an amount in USD from 0 to ${MAX_LIMIT} with at most 2 decimals, or empty for no limit`;
const MARKETS_RULE = `choose among the market ids ${MARKET_IDS.join(', ')} (a list, or separated by commas), or none for every market`;

export const LIMIT_WORDS = {
  max_order: `${LIMIT_LABELS.max_order}: ${AMOUNT_RULE}`,
  max_day: `${LIMIT_LABELS.max_day}: ${AMOUNT_RULE}`,
  max_week: `${LIMIT_LABELS.max_week}: ${AMOUNT_RULE}`,
  markets: `${LIMIT_LABELS.markets}: ${MARKETS_RULE}`,
  expires_at: `${LIMIT_LABELS.expires_at}: a whole number of unix seconds, or empty for never`,
};

const cents = (usd: number | null) => (usd === null ? null : Math.round(usd * 100));

/** The form as the account actor's `limits` message takes it. */
export function limitsOfForm(f: LimitsFields): LimitsSetting {
  const listed = Array.isArray(f.markets) ? f.markets : f.markets.split(',');
  const ids = [...new Set(listed.map((m) => m.trim()).filter(Boolean))];
  const unknown = ids.filter((m) => !(MARKET_IDS as readonly string[]).includes(m));
  if (unknown.length) {
    throw new HttpError(422, [
      {
        loc: ['body', 'markets'],
        msg: `unknown market(s) ${unknown.join(', ')}: ${MARKETS_RULE}`,
        type: 'value_error',
      },
    ]);
  }
  return {
    maxOrderCents: cents(f.max_order),
    maxDayCents: cents(f.max_day),
    maxWeekCents: cents(f.max_week),
    markets: ids.length ? ids : null,
    expiresAt: f.expires_at,
  };
}

/** The console's list of markets to tick, the agent's `markets` (comma-separated; empty: none ticked) ticked. */
export function marketChoices(markets: string): { id: string; label: string; checked: boolean }[] {
  const ticked = new Set(markets.split(',').map((m) => m.trim()));
  return MARKET_IDS.map((id) => ({ id, label: MARKETS[id].label, checked: ticked.has(id) }));
}
