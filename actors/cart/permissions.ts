// Who may do what with a cart (SPEC.md "Authentication" 9 and "Cart connection, kind and funding
// switch"), decided in one place for the reads (`permissions` in every cart answer) and for the turns
// that write or check out. Pure: the facts come in, the decision and its reason go out.
import type { Caller } from './messages.js';

export type CartFacts = {
  id: number;
  agentId: number | null;
  holderId: number | null;
  kind: 'trade' | 'own';
};
/** The calling agent: its holder and its autonomous-funding switch. */
export type AgentFacts = { id: number; holderId: number | null; autonomousFunding: boolean };
export type LiveGrant = {
  id: number;
  holderId: number;
  agentId: number | null;
  cartId: number | null;
  level: 'write' | 'execute';
  payWith: 'balance' | 'card';
  cardId: number | null;
};

export type Permissions = {
  read: boolean;
  write: boolean;
  execute: boolean;
  execute_pay_with: 'balance' | 'card' | null;
  execute_card_id: number | null;
  autonomous_funding: boolean;
  execute_note: string;
};

/** How specific a grant is: one agent and one cart beats one cart, beats one agent, beats all. */
const specificity = (g: LiveGrant) => (g.cartId !== null ? 2 : 0) + (g.agentId !== null ? 1 : 0);

/** The grants of the cart's holder covering this agent and this cart, the most specific (then newest) first. */
export function grantsFor(cart: CartFacts, agent: AgentFacts, grants: LiveGrant[]): LiveGrant[] {
  if (cart.holderId === null || agent.holderId !== cart.holderId) return [];
  return grants
    .filter(
      (g) =>
        g.holderId === cart.holderId &&
        (g.agentId === null || g.agentId === agent.id) &&
        (g.cartId === null || g.cartId === cart.id),
    )
    .sort((a, b) => specificity(b) - specificity(a) || b.id - a.id);
}

const NONE = { execute: false, execute_pay_with: null, execute_card_id: null } as const;

export function permissionsOf(
  cart: CartFacts,
  caller: Caller,
  agent: AgentFacts | null,
  grants: LiveGrant[],
): Permissions {
  if (caller.kind === 'holder') {
    const mine = cart.holderId === caller.holderId;
    return {
      read: mine,
      write: mine,
      ...NONE,
      execute: mine,
      autonomous_funding: false,
      execute_note: mine
        ? "you pay on the cart's page, by card or from a balance"
        : 'this cart is not yours',
    };
  }
  if (!agent || agent.id !== caller.agentId)
    throw new Error("permissionsOf: the calling agent's facts are missing");
  const own = cart.agentId === agent.id;
  const sameHolder = agent.holderId !== null && cart.holderId === agent.holderId;
  const read = own || sameHolder;
  const covering = grantsFor(cart, agent, grants);
  const write = own || covering.length > 0;
  const base = { read, write, autonomous_funding: agent.autonomousFunding };
  if (!read)
    return { ...base, ...NONE, execute_note: "this cart is not yours and not your holder's" };
  if (!agent.autonomousFunding) {
    return {
      ...base,
      ...NONE,
      execute_note:
        'your holder has not switched autonomous funding on for you: hand the checkout_url to your holder, who pays',
    };
  }
  const exec = covering.find((g) => g.level === 'execute');
  if (exec) {
    return {
      ...base,
      execute: true,
      execute_pay_with: exec.payWith,
      execute_card_id: exec.payWith === 'card' ? exec.cardId : null,
      execute_note:
        exec.payWith === 'card'
          ? `execute grant ${exec.id}: checkout charges your holder's stored card ${exec.cardId}`
          : `execute grant ${exec.id}: checkout pays each line from its own account's balance`,
    };
  }
  if (own && cart.kind === 'trade') {
    return {
      ...base,
      execute: true,
      execute_pay_with: 'balance',
      execute_card_id: null,
      execute_note: 'your own cart: checkout pays your lines from your own balance',
    };
  }
  return {
    ...base,
    ...NONE,
    execute_note: own
      ? 'an own (buy outright) cart is paid by your holder, or with an execute grant'
      : 'checking out a cart that is not yours needs an execute grant from your holder',
  };
}
