// The autonomous-funding rule (src/rules.ts FUNDING_PROFITABLE_TRADES) as the account actor applies
// it: what counts toward it, in SQL used by both the holder's switch and the console's agents list,
// and the refusals an agent gets while funding is off.
import { FUNDING_PROFITABLE_TRADES } from '../../src/rules.js';

/**
 * The settled trades in profit of the account `accountId` (an SQL expression) as an int subquery:
 * the agent's own (`user`) trades that settled with a positive realized P&L.
 */
export function profitableSettledTradesSql(accountId: string): string {
  return `(select count(*)::int from trade t where t.account_id = ${accountId} and t.actor = 'user' and t.settled and t.realized_pnl_cents > 0)`;
}

/** The switch refused: the agent has `has` of the trades it needs. */
export function fundingNotYetAllowed(has: number): string {
  return `autonomous funding is allowed after ${FUNDING_PROFITABLE_TRADES} settled trades of this agent in profit; it has ${has}`;
}

/**
 * Why `pay_from_balance` is refused (403): funding was never switched on (the holder may after the
 * threshold), or the holder switched it off at `changedAt` (then the agent should ask them, or
 * order for the holder's payment instead).
 */
export function payFromBalanceRefusal(agent: {
  on: boolean;
  holder: number | null;
  changed_at: string | null;
}): string {
  if (agent.holder !== null && !agent.on && agent.changed_at !== null) {
    return (
      `pay_from_balance needs autonomous funding, and your holder switched autonomous funding off at ${new Date(agent.changed_at).toISOString()}; ` +
      'ask them to switch it on again, or order without pay_from_balance and hand them purchase_url'
    );
  }
  return (
    `pay_from_balance needs autonomous funding, which the account holder switches on after ${FUNDING_PROFITABLE_TRADES} settled trades of this agent in profit; ` +
    'until then order without pay_from_balance and hand them purchase_url'
  );
}
