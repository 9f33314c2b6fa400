// The holder's spending limits (CONTRACT.md "Spending limits"): what an agent may fund without the
// holder present (pay_from_balance, an execute checkout). One decision, used by the order batch
// (per order, under its account locks) and the cart's execute checkout (per line, under the agent's
// account lock): so a concurrent burst cannot pass max_day, whichever path it takes.
import type { Static } from 'typebox';
import { centsToNumber } from '../../src/engine/money.js';
import type { LimitCheck as LimitCheckSchema } from '../../src/schemas/quote.js';

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
 * One limit checked against an order (CONTRACT.md "Spending limits"; a quote lists them): the limit
 * (USD, or the markets), what already counts against it and what is left (USD; null where nothing
 * accumulates), and whether the order is within it. Its schema is the served one.
 */
export type LimitCheck = Static<typeof LimitCheckSchema>;
type LimitName = LimitCheck['limit'];

/**
 * Every limit the holder set, checked against an order of `totalCents` on `market`, given what the
 * agent funded without the holder earlier that day (`spentCents`). The month's fee counts in none.
 */
export function limitChecks(
  l: Limits,
  spentCents: number,
  market: string,
  totalCents: number,
): LimitCheck[] {
  const checks: LimitCheck[] = [];
  if (l.markets)
    checks.push({
      limit: 'markets',
      limit_value: l.markets,
      spent: null,
      remaining: null,
      ok: l.markets.includes(market),
    });
  if (l.maxOrderCents !== null)
    checks.push({
      limit: 'max_order',
      limit_value: centsToNumber(l.maxOrderCents),
      spent: null,
      remaining: centsToNumber(l.maxOrderCents),
      ok: totalCents <= l.maxOrderCents,
    });
  if (l.maxDayCents !== null)
    checks.push({
      limit: 'max_day',
      limit_value: centsToNumber(l.maxDayCents),
      spent: centsToNumber(spentCents),
      remaining: centsToNumber(Math.max(0, l.maxDayCents - spentCents)),
      ok: spentCents + totalCents <= l.maxDayCents,
    });
  return checks;
}

/** A refusal over a limit: its sentence and the 403 body's machine-readable fields beside it. */
export type LimitRefusal = {
  detail: string;
  facts: Omit<LimitCheck, 'ok'> & { order_total: number };
};

/**
 * Why an order of `totalCents` on `market` is over the agent's limits (the first limit it passes,
 * in limitChecks' order), or null when it is within them.
 */
export function limitRefusal(
  l: Limits,
  spentCents: number,
  market: string,
  totalCents: number,
): LimitRefusal | null {
  const failed = limitChecks(l, spentCents, market, totalCents).find((c) => !c.ok);
  if (!failed) return null;
  const { ok: _ok, ...check } = failed;
  return {
    detail: `over the spending limits your holder set: ${refusalWords(l, spentCents, market, totalCents, failed.limit)}; nothing was charged`,
    facts: { ...check, order_total: centsToNumber(totalCents) },
  };
}

function refusalWords(
  l: Limits,
  spentCents: number,
  market: string,
  totalCents: number,
  limit: LimitName,
): string {
  if (limit === 'markets') return `markets is ${l.markets!.join(', ')}, not ${market}`;
  if (limit === 'max_order')
    return `max_order is ${usd(l.maxOrderCents!)} and this order is ${usd(totalCents)}`;
  return `max_day is ${usd(l.maxDayCents!)}, ${usd(spentCents)} already spent today (UTC) and this order is ${usd(totalCents)}`;
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
