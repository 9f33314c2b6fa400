// The holder's spending limits (CONTRACT.md "Spending limits"): what an agent may fund without the
// holder present (pay_from_balance, an execute checkout). One decision, used by the order batch
// (per order, under its account locks) and the cart's execute checkout (per line, under the agent's
// account lock): so a concurrent burst cannot pass max_day, whichever path it takes.
import { centsToNumber } from '../../src/engine/money.js';

/** Null: no limit. Cents; markets as ids. */
export type Limits = {
  maxOrderCents: number | null;
  maxDayCents: number | null;
  markets: string[] | null;
};

export const NO_LIMITS: Limits = { maxOrderCents: null, maxDayCents: null, markets: null };

const SECONDS_PER_DAY = 86_400;

/** The UTC day of `at` (service clock, real unix seconds), as the unix second it starts at. */
export const dayStart = (at: number) => Math.floor(at / SECONDS_PER_DAY) * SECONDS_PER_DAY;

const usd = (cents: number) => `${centsToNumber(cents).toFixed(2)} USD`;

/**
 * Why an order of `totalCents` on `market` is over the agent's limits, given what it funded
 * without the holder earlier that day (`spentCents`), or null when it is within them. The month's
 * fee counts in neither limit.
 */
export function limitRefusal(
  l: Limits,
  spentCents: number,
  market: string,
  totalCents: number,
): string | null {
  const over = 'over the spending limits your holder set';
  if (l.markets && !l.markets.includes(market))
    return `${over}: markets is ${l.markets.join(', ')}, not ${market}; nothing was charged`;
  if (l.maxOrderCents !== null && totalCents > l.maxOrderCents) {
    return `${over}: max_order is ${usd(l.maxOrderCents)} and this order is ${usd(totalCents)}; nothing was charged`;
  }
  if (l.maxDayCents !== null && spentCents + totalCents > l.maxDayCents) {
    return `${over}: max_day is ${usd(l.maxDayCents)}, ${usd(spentCents)} already spent today (UTC) and this order is ${usd(totalCents)}; nothing was charged`;
  }
  return null;
}

/**
 * What each of `agentIds` (an SQL bigint[] expression) funded without the holder present on the UTC
 * day starting at `day` (an SQL float8 expression): rows (agent, cents), through orders_standing.
 * An order the close refunded gave the money back: it is not spent.
 * `day` comes first in the text (bind `?` placeholders in that order: day, then agent ids).
 */
export const spentSql = (agentIds: string, day: string) =>
  `select o.standing_agent_id as agent, sum(o.total_cents)::float8 as cents from (select to_timestamp(${day}) as since) d, orders o
    where o.standing_agent_id = any(${agentIds}) and o.paid_at >= d.since and o.paid_at < d.since + interval '1 day' and o.status <> 'refunded'
    group by o.standing_agent_id`;

/** An agent row's limits columns as Limits. */
export const limitsOf = (r: {
  limit_max_order_cents: number | null;
  limit_max_day_cents: number | null;
  limit_markets: string[] | null;
}): Limits => ({
  maxOrderCents: r.limit_max_order_cents,
  maxDayCents: r.limit_max_day_cents,
  markets: r.limit_markets,
});
