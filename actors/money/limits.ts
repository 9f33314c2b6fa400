// The holder's spending limits (CONTRACT.md "Spending limits"): what an agent may fund without the
// holder present (pay_from_balance, an execute checkout). One decision, used by the order batch
// (per order, under its account locks) and the cart's execute checkout (per line, under the agent's
// account lock): so a concurrent burst cannot pass max_day or max_week, whichever path it takes.
import type { Static } from 'typebox';
import type { EntityManager } from '@mikro-orm/postgresql';
import { centsToNumber } from '../../src/engine/money.js';
import type { LimitCheck as LimitCheckSchema } from '../../src/schemas/quote.js';

/** Null: no limit. Cents; markets as ids; `expiresAt` real unix seconds of the service clock. */
export type Limits = {
  maxOrderCents: number | null;
  maxDayCents: number | null;
  maxWeekCents: number | null;
  markets: string[] | null;
  expiresAt: number | null;
};

export const NO_LIMITS: Limits = {
  maxOrderCents: null,
  maxDayCents: null,
  maxWeekCents: null,
  markets: null,
  expiresAt: null,
};

const SECONDS_PER_DAY = 86_400;

/** The UTC day of `at` (service clock, real unix seconds), as the unix second it starts at. */
export const dayStart = (at: number) => Math.floor(at / SECONDS_PER_DAY) * SECONDS_PER_DAY;

/** The ISO week of `at` (Monday 00:00 UTC), as the unix second it starts at (1970-01-01 was a Thursday). */
export const weekStart = (at: number) => {
  const day = Math.floor(at / SECONDS_PER_DAY);
  return (day - ((day + 3) % 7)) * SECONDS_PER_DAY;
};

const usd = (cents: number) => `${centsToNumber(cents).toFixed(2)} USD`;
const iso = (unix: number) => new Date(unix * 1000).toISOString().replace('.000Z', 'Z');

/**
 * One limit checked against an order (CONTRACT.md "Spending limits"; a quote lists them): the limit
 * (USD, the markets, or the instant), what already counts against it and what is left (USD; null
 * where nothing accumulates), and whether the order is within it. Its schema is the served one.
 */
export type LimitCheck = Static<typeof LimitCheckSchema>;

/** What the agent funded without the holder earlier in the order's UTC day and ISO week (cents). */
export type Spent = { dayCents: number; weekCents: number };

/** A limit that accumulates: its check from the limit, what counts against it and the order. */
function budget(
  limit: 'max_day' | 'max_week',
  capCents: number,
  spentCents: number,
  totalCents: number,
): LimitCheck {
  return {
    limit,
    limit_value: centsToNumber(capCents),
    spent: centsToNumber(spentCents),
    remaining: centsToNumber(Math.max(0, capCents - spentCents)),
    ok: spentCents + totalCents <= capCents,
  };
}

/**
 * Every limit the holder set, checked against an order of `totalCents` on `market` at `at`, given
 * what the agent funded without the holder earlier that day and week. The month's fee counts in none.
 */
export function limitChecks(
  l: Limits,
  spent: Spent,
  market: string,
  totalCents: number,
  at: number,
): LimitCheck[] {
  const checks: LimitCheck[] = [];
  if (l.expiresAt !== null)
    checks.push({
      limit: 'expires_at',
      limit_value: l.expiresAt,
      spent: null,
      remaining: null,
      ok: at < l.expiresAt,
    });
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
    checks.push(budget('max_day', l.maxDayCents, spent.dayCents, totalCents));
  if (l.maxWeekCents !== null)
    checks.push(budget('max_week', l.maxWeekCents, spent.weekCents, totalCents));
  return checks;
}

/** A refusal over a limit: its sentence and the 403 body's machine-readable fields beside it. */
export type LimitRefusal = {
  detail: string;
  facts: Omit<LimitCheck, 'ok'> & { order_total: number };
};

/**
 * Why an order of `totalCents` on `market` at `at` is over the agent's limits (the first limit it
 * passes, in limitChecks' order), or null when it is within them.
 */
export function limitRefusal(
  l: Limits,
  spent: Spent,
  market: string,
  totalCents: number,
  at: number,
): LimitRefusal | null {
  const failed = limitChecks(l, spent, market, totalCents, at).find((c) => !c.ok);
  if (!failed) return null;
  const { ok: _ok, ...check } = failed;
  return {
    detail: `over the spending limits your holder set: ${refusalWords(l, spent, market, totalCents, failed.limit)}; nothing was charged`,
    facts: { ...check, order_total: centsToNumber(totalCents) },
  };
}

function refusalWords(
  l: Limits,
  spent: Spent,
  market: string,
  totalCents: number,
  limit: LimitCheck['limit'],
): string {
  const order = `this order is ${usd(totalCents)}`;
  switch (limit) {
    case 'expires_at':
      return `they expired at ${iso(l.expiresAt!)} (expires_at): nothing is funded without your holder until they set your limits again`;
    case 'markets':
      return `markets is ${l.markets!.join(', ')}, not ${market}`;
    case 'max_order':
      return `max_order is ${usd(l.maxOrderCents!)} and ${order}`;
    case 'max_day':
      return `max_day is ${usd(l.maxDayCents!)}, ${usd(spent.dayCents)} already spent today (UTC) and ${order}`;
    case 'max_week':
      return `max_week is ${usd(l.maxWeekCents!)}, ${usd(spent.weekCents)} already spent this week (from Monday 00:00 UTC) and ${order}`;
  }
}

/**
 * What each of `agentIds` (an SQL bigint[] expression) funded without the holder present in the
 * `days` days (1: a UTC day, 7: an ISO week) starting at `from` (an SQL float8 expression): rows
 * (agent, cents), through orders_standing. An order the close refunded gave the money back: it is
 * not spent. `from` comes first in the text (bind `?` placeholders in that order: from, then agent ids).
 */
export const spentSql = (agentIds: string, from: string, days: 1 | 7 = 1) =>
  `select o.standing_agent_id as agent, sum(o.total_cents)::float8 as cents from (select to_timestamp(${from}) as since) d, orders o
    where o.standing_agent_id = any(${agentIds}) and o.paid_at >= d.since and o.paid_at < d.since + make_interval(days => ${days}) and o.status <> 'refunded'
    group by o.standing_agent_id`;

/** An agent row's limits columns as Limits. */
export const limitsOf = (r: {
  limit_max_order_cents: number | null;
  limit_max_day_cents: number | null;
  limit_max_week_cents: number | null;
  limit_markets: string[] | null;
  limit_expires_at: number | null;
}): Limits => ({
  maxOrderCents: r.limit_max_order_cents,
  maxDayCents: r.limit_max_day_cents,
  maxWeekCents: r.limit_max_week_cents,
  markets: r.limit_markets,
  expiresAt: r.limit_expires_at,
});

/** What agent `agentId` funded without its holder in the UTC day and ISO week of `at`, in `em`'s transaction. */
export async function spentOf(em: EntityManager, agentId: number, at: number): Promise<Spent> {
  const one = `coalesce((select cents from (${spentSql('array[?]::bigint[]', '?')}) s), 0)`;
  const week = `coalesce((select cents from (${spentSql('array[?]::bigint[]', '?', 7)}) s), 0)`;
  const [row] = await em.execute<{ day: number; week: number }[]>(
    `select ${one} as day, ${week} as week`,
    [dayStart(at), agentId, weekStart(at), agentId],
  );
  return { dayCents: row.day, weekCents: row.week };
}
