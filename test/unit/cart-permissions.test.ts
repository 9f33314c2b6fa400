// SPEC.md "Authentication" 9 and "Cart connection, kind and funding switch" as properties of the one
// decision (actors/cart/permissions.ts): reads follow the holder, writes need ownership or a grant,
// execution needs the switch and an execute grant (or the agent's own trade cart from its balance).
import fc from 'fast-check';
import t from 'tap';
import {
  grantsFor,
  permissionsOf,
  type AgentFacts,
  type CartFacts,
  type LiveGrant,
} from '../../actors/cart/permissions.js';

const HOLDERS = [1, 2];
const AGENTS = [10, 11, 12];
const CARTS = [100, 101];

const cartArb = fc.record({
  id: fc.constantFrom(...CARTS),
  agentId: fc.option(fc.constantFrom(...AGENTS), { nil: null }),
  holderId: fc.option(fc.constantFrom(...HOLDERS), { nil: null }),
  kind: fc.constantFrom('trade' as const, 'own' as const),
}) satisfies fc.Arbitrary<CartFacts>;
const agentArb = fc.record({
  id: fc.constantFrom(...AGENTS),
  holderId: fc.option(fc.constantFrom(...HOLDERS), { nil: null }),
  autonomousFunding: fc.boolean(),
}) satisfies fc.Arbitrary<AgentFacts>;
const grantArb = fc.record({
  id: fc.integer({ min: 1, max: 1000 }),
  holderId: fc.constantFrom(...HOLDERS),
  agentId: fc.option(fc.constantFrom(...AGENTS), { nil: null }),
  cartId: fc.option(fc.constantFrom(...CARTS), { nil: null }),
  level: fc.constantFrom('write' as const, 'execute' as const),
  payWith: fc.constantFrom('balance' as const, 'card' as const),
  cardId: fc.constantFrom(7),
}) satisfies fc.Arbitrary<LiveGrant>;

const covers = (g: LiveGrant, c: CartFacts, a: AgentFacts) =>
  c.holderId !== null &&
  a.holderId === c.holderId &&
  g.holderId === c.holderId &&
  (g.agentId === null || g.agentId === a.id) &&
  (g.cartId === null || g.cartId === c.id);

t.test('the rules hold for every cart, agent and set of grants', async () => {
  fc.assert(
    fc.property(cartArb, agentArb, fc.array(grantArb, { maxLength: 6 }), (cart, agent, grants) => {
      const p = permissionsOf(cart, { kind: 'agent', agentId: agent.id }, agent, grants);
      const own = cart.agentId === agent.id;
      const sameHolder = agent.holderId !== null && agent.holderId === cart.holderId;
      const covering = grants.filter((g) => covers(g, cart, agent));
      // Reads: own carts, and once connected every cart of the holder.
      if (p.read !== (own || sameHolder)) return false;
      // Writes: own carts, or a covering grant (execute includes write).
      if (p.write !== (own || covering.length > 0)) return false;
      // Executes: only with the switch on, and an execute grant or the own trade cart.
      const canExecute =
        p.read &&
        agent.autonomousFunding &&
        (covering.some((g) => g.level === 'execute') || (own && cart.kind === 'trade'));
      if (p.execute !== canExecute) return false;
      if (!p.execute && (p.execute_pay_with !== null || p.execute_card_id !== null)) return false;
      if (p.execute_pay_with === 'card' && p.execute_card_id === null) return false;
      if (p.autonomous_funding !== agent.autonomousFunding) return false;
      return p.execute_note.length > 0;
    }),
    { numRuns: 5000 },
  );
});

t.test(
  "the matrix of the issue: own, another agent's, write grant, execute grant with the switch off and on, revoked",
  async (t) => {
    const holder = 1;
    const me: AgentFacts = { id: 10, holderId: holder, autonomousFunding: false };
    const myCart: CartFacts = { id: 100, agentId: 10, holderId: holder, kind: 'trade' };
    const theirs: CartFacts = { id: 101, agentId: 11, holderId: holder, kind: 'trade' };
    const write: LiveGrant = {
      id: 1,
      holderId: holder,
      agentId: 10,
      cartId: 101,
      level: 'write',
      payWith: 'balance',
      cardId: null,
    };
    const exec: LiveGrant = {
      id: 2,
      holderId: holder,
      agentId: 10,
      cartId: 101,
      level: 'execute',
      payWith: 'card',
      cardId: 7,
    };
    const caller = { kind: 'agent', agentId: 10 } as const;
    const p = (c: CartFacts, a: AgentFacts, g: LiveGrant[]) => {
      const x = permissionsOf(c, caller, a, g);
      return [x.read, x.write, x.execute, x.execute_pay_with];
    };
    t.same(p(myCart, me, []), [true, true, false, null], 'own cart, switch off');
    t.same(
      p(myCart, { ...me, autonomousFunding: true }, []),
      [true, true, true, 'balance'],
      'own cart, switch on: its own balance',
    );
    t.same(
      p({ ...myCart, kind: 'own' }, { ...me, autonomousFunding: true }, []),
      [true, true, false, null],
      'an own (buy outright) cart needs a grant',
    );
    t.same(
      p(theirs, me, []),
      [true, false, false, null],
      "another agent's cart of the holder: read only",
    );
    t.same(p(theirs, me, [write]), [true, true, false, null], 'write grant');
    t.same(p(theirs, me, [write, exec]), [true, true, false, null], 'execute grant, switch off');
    t.same(
      p(theirs, { ...me, autonomousFunding: true }, [write, exec]),
      [true, true, true, 'card'],
      'execute grant, switch on',
    );
    t.equal(
      permissionsOf(theirs, caller, { ...me, autonomousFunding: true }, [exec]).execute_card_id,
      7,
    );
    t.same(
      p(theirs, { ...me, autonomousFunding: true }, []),
      [true, false, false, null],
      'revoked (no live grant)',
    );
    t.same(
      p({ ...theirs, holderId: 2 }, me, [write]),
      [false, false, false, null],
      "another holder's cart: nothing, whatever the grants",
    );
    t.same(
      p({ ...myCart, holderId: null }, { ...me, holderId: null }, []),
      [true, true, false, null],
      "an unconnected agent's own cart",
    );
  },
);

t.test('the most specific grant decides how an execute checkout pays', async (t) => {
  const cart: CartFacts = { id: 100, agentId: 11, holderId: 1, kind: 'trade' };
  const agent: AgentFacts = { id: 10, holderId: 1, autonomousFunding: true };
  const all: LiveGrant = {
    id: 5,
    holderId: 1,
    agentId: null,
    cartId: null,
    level: 'execute',
    payWith: 'balance',
    cardId: null,
  };
  const exact: LiveGrant = {
    id: 3,
    holderId: 1,
    agentId: 10,
    cartId: 100,
    level: 'execute',
    payWith: 'card',
    cardId: 7,
  };
  t.same(
    grantsFor(cart, agent, [all, exact]).map((g) => g.id),
    [3, 5],
  );
  t.equal(
    permissionsOf(cart, { kind: 'agent', agentId: 10 }, agent, [all, exact]).execute_pay_with,
    'card',
  );
});

t.test("a holder may do everything with their carts and nothing with others'", async (t) => {
  const cart: CartFacts = { id: 100, agentId: 11, holderId: 1, kind: 'trade' };
  const mine = permissionsOf(cart, { kind: 'holder', holderId: 1 }, null, []);
  t.same([mine.read, mine.write, mine.execute], [true, true, true]);
  const other = permissionsOf(cart, { kind: 'holder', holderId: 2 }, null, []);
  t.same([other.read, other.write, other.execute], [false, false, false]);
});
