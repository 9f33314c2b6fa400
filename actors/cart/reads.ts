// Read tasks over carts: what a caller sees (GET /carts, GET /carts/{id}, GET /cart), the cart
// behind a link token (the holder's page), and where a holder's or an agent's default cart is.
import type { EntityManager } from '@mikro-orm/postgresql';
import { feeCharged } from '../money/charge.js';
import { CartSchema } from '../../orm/entities/index.js';
import { defineReads } from '../runtime/read.js';
import { cartByToken, cartDetail, cartEntries, cartFacts, detailJson, linesOf } from './lines.js';
import type {
  CartAgent,
  CartArgs,
  CartByToken,
  CartByTokenArgs,
  CartListArgs,
} from './messages.js';
import { permissionsOf } from './permissions.js';

/** The cart behind a link: its lines as the holder sees them (a visitor sees them too: the link is the secret). */
async function byToken(em: EntityManager, a: CartByTokenArgs): Promise<CartByToken> {
  const c = await cartByToken(em, a.token);
  if (!c) return null;
  const [lines, agent, charged] = await Promise.all([
    linesOf(em, [c.id], { ordered: true }),
    c.agent_id === null ? null : agentOf(em, c.agent_id),
    feeCharged(em, c.holder_id, a.at),
  ]);
  const caller = { kind: 'holder', holderId: a.holderId ?? 0 } as const;
  return {
    cart: detailJson(
      c,
      lines,
      permissionsOf(cartFacts(c), caller, null, []),
      caller,
      a.baseUrl,
      a.at,
      charged,
    ),
    agent,
    holder_id: c.holder_id,
    token: c.token,
    paid: c.paid,
  };
}

async function agentOf(em: EntityManager, agentId: number): Promise<CartAgent> {
  const [g] = await em.execute<CartAgent[]>(
    `select id::float8 as id, name, key_id, identity, operator, purpose, contact, holder_id::float8 as holder_id, account_id::float8 as account_id
       from agent where id = ?`,
    [agentId],
  );
  return g;
}

/** A default cart: the holder's own (one per holder), or the agent's first (made at registration). */
async function defaultCart(
  em: EntityManager,
  where: { holder: number; agent: null } | { agent: number },
): Promise<{ id: number; token: string }> {
  const c = await em.findOne(CartSchema, where, { fields: ['token'], orderBy: { id: 'asc' } });
  if (!c) throw new Error(`no default cart for ${JSON.stringify(where)}`);
  return { id: c.id, token: c.token };
}

export const cartReads = defineReads({
  'cart.list': async ({ em }, a: CartListArgs) => cartEntries(em, a.caller, a),
  'cart.detail': async ({ em }, a: CartArgs) => cartDetail(em, a.caller, a.cartId, a),
  'cart.byToken': async ({ em }, a: CartByTokenArgs) => byToken(em, a),
  'cart.holderCart': async ({ em }, a: { holderId: number }) =>
    defaultCart(em, { holder: a.holderId, agent: null }),
  'cart.agentDefault': async ({ em }, a: { agentId: number }) =>
    defaultCart(em, { agent: a.agentId }),
});
