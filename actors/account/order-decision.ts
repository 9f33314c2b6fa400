// An order's decision (CONTRACT.md "Spending limits", "Money"): from the state the order batch reads
// under its locks (order-batch-sql.ts), whether an order is accepted, funded at once from the
// balance or left awaiting payment, with its terms and amounts, or why it is refused. Pure over that
// state: the batch decides each of its orders with it, and a quote (quote.ts) decides the same way
// on a snapshot without writing anything.
import { centsToNumber, positionTerms, type MarketId } from '../../src/engine/index.js';
import { dealNotOnMenu, orderAmounts, type OrderAmounts } from '../../src/rules.js';
import { ActorError } from '../runtime/actor.js';
import { KEY_REVOKED } from '../agent/messages.js';
import { payFromBalanceRefusal } from './funding.js';
import { batchFeeDue } from '../money/charge.js';
import { feeKey } from '../../src/payments/fee.js';
import { dayStart, limitRefusal, limitsOf, weekStart } from '../money/limits.js';
import type { OrderPlaced, OrderRequest } from './messages.js';
import type { Terms } from './order-row.js';

export type MenuRow = {
  market: string;
  tick: number;
  idx: number;
  offer_key: string;
  unit_cost_cents: number;
  list_price_cents: number;
  max_qty: number;
  title: string | null;
  items: unknown[] | null;
  sales_velocity: number | null;
};
export type StoredRow = {
  scope: string;
  key: string;
  hash: string;
  status: number;
  reply: OrderPlaced;
};
export type BatchAgent = {
  id: number;
  on: boolean;
  holder: number | null;
  changed_at: string | null;
  /** Its holder revoked its key (a front end that had not heard yet let the request through). */
  revoked: boolean;
} & Parameters<typeof limitsOf>[0];
/** What the batch's read answers (order-batch-sql.ts readSql), one object. */
export type BatchState = {
  sessions: { market: string; tick: number }[];
  agents: BatchAgent[];
  /** What each paying agent funded without its holder on each UTC day (`day`: its first unix second). */
  spent: { agent: number; day: number; cents: number }[];
  /** The same per ISO week (`day`: the week's first unix second). */
  spent_week: { agent: number; day: number; cents: number }[];
  accounts: { id: number; balance: number }[];
  /** The competition of each competition account in the batch (its window in real unix seconds). */
  competitions: Competing[];
  /** `holder/month` of the fees already charged. */
  fees: string[];
  menu: MenuRow[];
  answers: StoredRow[];
  ids: { o: number; r: number }[] | null;
};
export type Competing = {
  account: number;
  id: string;
  market: string;
  starts_at: number;
  ends_at: number;
  status: string;
};
/**
 * What an accepted order's decision fixed: its terms and amounts, whether it is funded at once from
 * the balance (pay_from_balance, or any order of a competition account), the monthly fee it
 * carries, and the holder paying that fee.
 */
export type Decision = {
  terms: Terms;
  amounts: OrderAmounts;
  funded: boolean;
  fee: number;
  holder: number | null;
  /** The agent that funds it without its holder present (pay_from_balance): its spending limits count it. */
  standing: number | null;
};

export const menuKey = (m: { market: string; tick: number; idx: number }) =>
  `${m.market}/${m.tick}/${m.idx}`;
export const spentKey = (agent: number, day: number) => `${agent}/${day}`;

/** The read's state as the decisions look it up; decide() spends from it. */
export type DecisionState = {
  isOpen: Set<string>;
  agents: Map<number, BatchAgent>;
  balances: Map<number, number>;
  feePaid: Set<string>;
  spent: Map<string, number>;
  spentWeek: Map<string, number>;
  competing: Map<number, Competing>;
  menu: Map<string, MenuRow>;
};

export function decisionState(state: BatchState): DecisionState {
  return {
    isOpen: new Set(state.sessions.map((x) => `${x.market}/${x.tick}`)),
    agents: new Map(state.agents.map((a) => [a.id, a])),
    balances: new Map(state.accounts.map((a) => [a.id, a.balance])),
    feePaid: new Set(state.fees),
    spent: new Map(state.spent.map((s) => [spentKey(s.agent, s.day), s.cents])),
    spentWeek: new Map(state.spent_week.map((s) => [spentKey(s.agent, s.day), s.cents])),
    competing: new Map(state.competitions.map((c) => [c.account, c])),
    menu: new Map(state.menu.map((m) => [menuKey(m), m])),
  };
}

/**
 * One order's decision on the state read (under the batch's locks, or a quote's snapshot): its terms
 * from the recorded menu row, or the refusal. It spends from `st` what it funds (balance, the day's
 * spending, the month's fee), so the next order of the same batch is decided after it.
 */
export function decide(req: OrderRequest, st: DecisionState): Decision | ActorError {
  const { isOpen, agents, balances, feePaid, spent, spentWeek } = st;
  const row = st.menu.get(menuKey(req));
  const competition = st.competing.get(req.accountId);
  if (agents.get(req.agentId)?.revoked) return new ActorError(401, KEY_REVOKED);
  if (!isOpen.has(`${req.market}/${req.tick}`))
    return new ActorError(
      404,
      dealNotOnMenu(
        req.baseUrl,
        req.market,
        req.offerKey,
        'is no longer on the menu: its session closed',
      ),
    );
  // The recorded row is what the close fills: an order that does not match it is refused now,
  // never discovered at the close.
  if (!row || row.offer_key !== req.offerKey)
    return new ActorError(
      404,
      dealNotOnMenu(
        req.baseUrl,
        req.market,
        req.offerKey,
        `is not on the recorded menu of ${req.market} session ${req.tick}`,
      ),
    );
  if (req.qty > row.max_qty)
    return new ActorError(409, `deal ${req.offerKey} takes at most ${row.max_qty} units`);
  const terms = positionTerms(req.market as MarketId, row as never, req.qty);
  const amounts = orderAmounts(req.qty, terms.unitCostCents, terms.feeCents);
  const total = amounts.totalCents;
  if (competition) return competitionOrder(req, competition, balances, { amounts, terms });
  if (!req.payFromBalance)
    return { amounts, funded: false, fee: 0, holder: null, standing: null, terms };
  const agent = agents.get(req.agentId);
  if (!agent?.on || agent.holder === null) {
    return new ActorError(
      403,
      payFromBalanceRefusal(agent ?? { on: false, holder: null, changed_at: null }),
    );
  }
  // The holder's standing instructions bound what the agent funds without them (the money kernel's decision).
  const day = spentKey(req.agentId, dayStart(req.at));
  const week = spentKey(req.agentId, weekStart(req.at));
  const over = limitRefusal(
    limitsOf(agent),
    { dayCents: spent.get(day) ?? 0, weekCents: spentWeek.get(week) ?? 0 },
    req.market,
    total,
    req.at,
  );
  if (over) return new ActorError(403, over.detail, undefined, over.facts);
  // The holder's first real-money checkout of the month carries the participation fee (the money kernel's decision).
  const fee = batchFeeDue(feePaid, agent.holder, req.at);
  const balance = balances.get(req.accountId) ?? 0;
  if (balance < total + fee) {
    return new ActorError(
      400,
      `insufficient balance: this order needs ${centsToNumber(total + fee)} USD, the account holds ${centsToNumber(balance)} USD`,
    );
  }
  balances.set(req.accountId, balance - total - fee);
  feePaid.add(feeKey(agent.holder, req.at));
  spent.set(day, (spent.get(day) ?? 0) + total);
  spentWeek.set(week, (spentWeek.get(week) ?? 0) + total);
  return { amounts, funded: true, fee, holder: agent.holder, standing: req.agentId, terms };
}

/**
 * An order of a competition account (CONTRACT.md "Competitions"): funded at once from the
 * simulated balance, with no switch and no participation fee (no real money moves), only while its
 * competition runs (its window on the service clock) and only on the competition's market (403).
 */
function competitionOrder(
  req: OrderRequest,
  c: Competing,
  balances: Map<number, number>,
  d: Pick<Decision, 'amounts' | 'terms'>,
): Decision | ActorError {
  if (c.status !== 'running' || req.at < c.starts_at || req.at >= c.ends_at) {
    return new ActorError(
      403,
      `competition ${c.id} is not running (it runs from ${new Date(c.starts_at * 1000).toISOString()} to ${new Date(c.ends_at * 1000).toISOString()}): its account places no orders now`,
    );
  }
  if (req.market !== c.market)
    return new ActorError(
      403,
      `competition ${c.id} trades market ${c.market} only, not ${req.market}`,
    );
  const total = d.amounts.totalCents;
  const balance = balances.get(req.accountId) ?? 0;
  if (balance < total) {
    return new ActorError(
      400,
      `insufficient balance: this order needs ${centsToNumber(total)} USD, the competition account holds ${centsToNumber(balance)} simulated USD`,
    );
  }
  balances.set(req.accountId, balance - total);
  return { ...d, funded: true, fee: 0, holder: null, standing: null };
}
