// A new order's row: the one builder of what an order holds when it is placed, used by the order
// batch (an agent's order, awaiting its holder or paid from the balance) and a cart checkout (the
// holder's lines, paid at once). Both write this row and answer with it, so a placed order is
// served the same whichever path placed it.
import type { positionTerms } from '../../src/engine/index.js';
import type { OrderAmounts } from '../../src/rules.js';
import type { OrderRow } from './views.js';

export type Terms = ReturnType<typeof positionTerms>;

export type NewOrder = {
  id: number;
  roundId: number;
  accountId: number;
  agentId: number | null;
  market: string;
  tick: number;
  idx: number;
  offerKey: string;
  qty: number;
  /** When its session closes (real unix seconds). */
  closesAt: number;
  /** The terms of its recorded menu row and what they come to for its qty. */
  terms: Terms;
  amounts: OrderAmounts;
  /** The purchase link's token. */
  token: string;
  /** Paid at once, from a balance or by a holder's card (`holderId`: the holder who paid; null for a competition account), or awaiting the holder (null). */
  paid: { source: 'card' | 'balance'; holderId: number | null } | null;
  /** The agent that funds it without its holder present (pay_from_balance, an execute checkout): its spending limits count it. */
  standingAgentId: number | null;
  /** When it was placed (and paid, when at once), on the service clock (real unix seconds). */
  at: number;
  /** The deal as its recorded menu row has it. */
  deal: OrderRow['deal'];
};

/** The row as written: the served row and the columns only the database keeps. */
export type PlacedOrder = OrderRow & {
  idx: number;
  fee_cents: number;
  holding_cents: number;
  paid_by_holder: number | null;
  standing_agent_id: number | null;
};

export function placedOrder(o: NewOrder): PlacedOrder {
  const at = new Date(o.at * 1000);
  return {
    id: o.id,
    round_id: o.roundId,
    account_id: o.accountId,
    agent_id: o.agentId,
    market: o.market,
    tick: o.tick,
    idx: o.idx,
    offer_key: o.offerKey,
    qty: o.qty,
    closes_at: o.closesAt,
    unit_cost_cents: o.terms.unitCostCents,
    list_price_cents: o.terms.listPriceCents,
    fee_cents: o.terms.feeCents,
    holding_cents: o.terms.holdingCents,
    gross_cents: o.amounts.grossCents,
    fee_amount_cents: o.amounts.feeAmountCents,
    total_cents: o.amounts.totalCents,
    status: o.paid ? 'paid' : 'awaiting_payment',
    payment_source: o.paid?.source ?? null,
    paid_by_holder: o.paid?.holderId ?? null,
    standing_agent_id: o.standingAgentId,
    token: o.token,
    created_at: at,
    paid_at: o.paid ? at : null,
    filled_at: null,
    position_id: null,
    deal: o.deal,
  };
}
