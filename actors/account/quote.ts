// A quote (CONTRACT.md "Quotes"): what POST /orders would answer now for an order, decided by the
// order batch's own decision (order-decision.ts) on the batch's own read, taken as a snapshot with
// no lock held and nothing written: the same answer for the same state, nothing reserved.
import type { EntityManager } from '@mikro-orm/postgresql';
import { feeKey, feeMonthAt } from '../../src/payments/fee.js';
import { dayStart, limitChecks, limitsOf, weekStart } from '../money/limits.js';
import { centsToNumber } from '../../src/engine/money.js';
import { ActorError } from '../runtime/actor.js';
import { readUnlocked } from './order-batch-sql.js';
import { decide, decisionState, spentKey, type BatchState } from './order-decision.js';
import type { QuoteArgs, QuoteFacts } from './messages.js';

export async function quoteOf(em: EntityManager, q: QuoteArgs): Promise<QuoteFacts> {
  const { totalCents, ...req } = q;
  const day = dayStart(req.at);
  const week = weekStart(req.at);
  const state = (await readUnlocked(em, {
    markets: [req.market],
    agents: [req.agentId],
    accounts: [req.accountId],
    funded: [req.accountId],
    months: [feeMonthAt(req.at)],
    menu: [{ market: req.market, tick: req.tick, idx: req.idx }],
    keys: [],
    n: 0,
    days: [day],
    weeks: [week],
    at: req.at,
  })) as BatchState;
  const st = decisionState(state);
  const agent = st.agents.get(req.agentId);
  const balance = st.balances.get(req.accountId) ?? 0;
  const spent = {
    dayCents: st.spent.get(spentKey(req.agentId, day)) ?? 0,
    weekCents: st.spentWeek.get(spentKey(req.agentId, week)) ?? 0,
  };
  const checks = agent ? limitChecks(limitsOf(agent), spent, req.market, totalCents, req.at) : [];
  const holder = agent?.holder ?? null;
  const feeCharged = holder !== null && st.feePaid.has(feeKey(holder, req.at));
  // Decided as placed, and once more as pay_from_balance: whether the balance would fund it now.
  const as = (payFromBalance: boolean) => decide({ ...req, payFromBalance }, decisionState(state));
  const placed = as(req.payFromBalance);
  const fromBalance = as(true);
  return {
    would:
      placed instanceof ActorError ? { status: placed.status, ...placed.body } : { status: 201 },
    limits: { allowed: checks.every((c) => c.ok), checks },
    funding: {
      pay_from_balance_allowed: !(fromBalance instanceof ActorError),
      balance: centsToNumber(balance),
    },
    feeCharged,
  };
}
