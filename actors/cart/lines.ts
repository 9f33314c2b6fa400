// Read models of carts (SPEC.md "Cart, cart line, permissions"): which carts a caller sees, their
// lines with the recorded deal each names, and the served cart entry, detail and line. One
// definition for the read tasks (reads.ts) and the turns that answer with a cart (actor.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { MARKETS, centsToNumber, positionTerms, type MarketId } from '../../src/engine/index.js';
import { LIST_CAPS, orderAmounts } from '../../src/rules.js';
import { instantSql, intArrayParam, isLinkToken } from '../runtime/sql.js';
import type { Caller, CartDetail, CartEntry } from './messages.js';
import {
  permissionsOf,
  type AgentFacts,
  type CartFacts,
  type LiveGrant,
  type Permissions,
} from './permissions.js';
import { feeCharged } from '../money/charge.js';
import { holderPays } from '../../src/payments/fee.js';
import { ActorError } from '../runtime/actor.js';
import { KEY_REVOKED } from '../agent/messages.js';

/** Lines not yet checked out one cart may hold (a bound; SPEC.md leaves it open). */
export const MAX_OPEN_LINES = 100;
/** Checked-out lines a cart's detail shows (the newest). */
export const ORDERED_LINES_SHOWN = 100;

export type CartRow = {
  id: number;
  agent_id: number | null;
  holder_id: number | null;
  name: string;
  kind: 'trade' | 'own';
  token: string;
  paid: boolean;
  owner_name: string;
  created_at: Date;
  updated_at: Date;
};
export type LineRow = {
  id: number;
  cart_id: number;
  agent_id: number | null;
  agent_name: string | null;
  market: string;
  tick: number;
  idx: number;
  offer_key: string;
  qty: number;
  note: string;
  closes_at: number;
  order_id: number | null;
  item_id: number | null;
  unit_cost_cents: number;
  list_price_cents: number;
  max_qty: number;
  title: string;
  sku_family: string | null;
  sales_velocity: number | null;
};

export const checkoutUrl = (baseUrl: string, token: string) => `${baseUrl}/carts/${token}`;
export const pairingUrl = (baseUrl: string, token: string) => `${baseUrl}/link/${token}`;

const CART_SELECT = `c.id::float8 as id, c.agent_id::float8 as agent_id, c.holder_id::float8 as holder_id, c.name, c.kind, c.token, c.paid,
  coalesce(g.name, nullif(h.display_name, ''), h.email, '') as owner_name, c.created_at, c.updated_at`;
const CART_FROM = `cart c left join agent g on g.id = c.agent_id left join holder h on h.id = c.holder_id and c.agent_id is null`;

/** Which carts a caller sees: an agent its own and, once connected, its holder's; a holder theirs. */
function seenBy(
  caller: Caller,
  holderOfAgent: number | null,
): { where: string; params: unknown[] } {
  if (caller.kind === 'holder') return { where: 'c.holder_id = ?', params: [caller.holderId] };
  if (holderOfAgent === null) return { where: 'c.agent_id = ?', params: [caller.agentId] };
  return { where: '(c.agent_id = ? or c.holder_id = ?)', params: [caller.agentId, holderOfAgent] };
}

/** The calling agent's facts and its holder's grants live at `at` (none for a holder or an unconnected agent). */
export async function callerFacts(
  em: EntityManager,
  caller: Caller,
  at: number,
): Promise<{ agent: AgentFacts | null; grants: LiveGrant[] }> {
  if (caller.kind === 'holder') return { agent: null, grants: [] };
  const [a] = await em.execute<
    { id: number; holder_id: number | null; on: boolean; revoked: boolean }[]
  >(
    'select id::float8 as id, holder_id::float8 as holder_id, autonomous_funding as on, revoked_at is not null as revoked from agent where id = ?',
    [caller.agentId],
  );
  if (!a) throw new Error(`no agent ${caller.agentId}`);
  // A front end that had not yet heard of the revocation let the request through.
  if (a.revoked) throw new ActorError(401, KEY_REVOKED);
  const agent = { id: a.id, holderId: a.holder_id, autonomousFunding: a.on };
  return { agent, grants: a.holder_id === null ? [] : await liveGrants(em, a.holder_id, at) };
}

/** The holder's grants neither revoked nor expired at `at`. */
export async function liveGrants(
  em: EntityManager,
  holderId: number,
  at: number,
): Promise<LiveGrant[]> {
  const rows = await em.execute<
    {
      id: number;
      agent_id: number | null;
      cart_id: number | null;
      level: 'write' | 'execute';
      pay_with: 'balance' | 'card';
      card_id: number | null;
    }[]
  >(
    `select id::float8 as id, agent_id::float8 as agent_id, cart_id::float8 as cart_id, level, pay_with, card_id::float8 as card_id
       from cart_grant where holder_id = ? and revoked_at is null and (expires_at is null or expires_at > ${instantSql()})
      order by id limit 1000`,
    [holderId, at],
  );
  return rows.map((r) => ({
    id: r.id,
    holderId,
    agentId: r.agent_id,
    cartId: r.cart_id,
    level: r.level,
    payWith: r.pay_with,
    cardId: r.card_id,
  }));
}

/** The carts a caller sees (oldest first, up to LIST_CAPS.carts): all, those changed after `since`, one by id, or one by token. */
export async function cartsSeen(
  em: EntityManager,
  caller: Caller,
  agent: AgentFacts | null,
  only: { since?: number; cartId?: number } = {},
): Promise<CartRow[]> {
  const seen = seenBy(caller, agent?.holderId ?? null);
  const params: unknown[] = [...seen.params];
  let where = seen.where;
  if (only.since !== undefined) {
    where += ' and c.updated_at > to_timestamp(?)';
    params.push(only.since);
  }
  if (only.cartId !== undefined) {
    where += ' and c.id = ?';
    params.push(only.cartId);
  }
  return em.execute<CartRow[]>(
    `select ${CART_SELECT} from ${CART_FROM} where ${where} order by c.id limit ?`,
    [...params, LIST_CAPS.carts],
  );
}

export async function cartByToken(em: EntityManager, token: string): Promise<CartRow | undefined> {
  if (!isLinkToken(token)) return undefined;
  const [row] = await em.execute<CartRow[]>(
    `select ${CART_SELECT} from ${CART_FROM} where c.token = ?`,
    [token],
  );
  return row;
}

const LINE_SELECT = `i.id::float8 as id, i.cart_id::float8 as cart_id, i.agent_id::float8 as agent_id, g.name as agent_name, i.market,
  i.tick::float8 as tick, i.idx, i.offer_key, i.qty, i.note, i.closes_at, i.order_id::float8 as order_id, i.item_id::float8 as item_id,
  m.unit_cost_cents, m.list_price_cents, m.max_qty, m.deal->'bundle'->>'title' as title, m.deal->>'sku_family' as sku_family,
  (m.deal->>'sales_velocity')::float8 as sales_velocity`;
const LINE_FROM = `cart_item i join menu_row m on m.market = i.market and m.tick = i.tick and m.idx = i.idx left join agent g on g.id = i.agent_id`;

/** The open lines of these carts (not checked out), oldest first; with `ordered`, also the newest checked-out ones. */
export async function linesOf(
  em: EntityManager,
  cartIds: number[],
  opts: { ordered?: boolean } = {},
): Promise<LineRow[]> {
  if (!cartIds.length) return [];
  const open = em.execute<LineRow[]>(
    `select ${LINE_SELECT} from ${LINE_FROM} where i.cart_id = any(?::bigint[]) and i.order_id is null and i.item_id is null order by i.id limit ?`,
    [intArrayParam(cartIds), cartIds.length * MAX_OPEN_LINES],
  );
  const done = opts.ordered
    ? em.execute<LineRow[]>(
        `select * from (select ${LINE_SELECT} from ${LINE_FROM}
          where i.cart_id = any(?::bigint[]) and (i.order_id is not null or i.item_id is not null) order by i.id desc limit ?) x order by id`,
        [intArrayParam(cartIds), ORDERED_LINES_SHOWN],
      )
    : Promise.resolve([]);
  const [o, d] = await Promise.all([open, done]);
  return [...d, ...o].sort((a, b) => a.id - b.id);
}

/** One line of a cart, checked out or not, or undefined. */
export async function lineOf(
  em: EntityManager,
  cartId: number,
  itemId: number,
): Promise<LineRow | undefined> {
  if (!Number.isSafeInteger(itemId)) return undefined;
  const [row] = await em.execute<LineRow[]>(
    `select ${LINE_SELECT} from ${LINE_FROM} where i.cart_id = ? and i.id = ?`,
    [cartId, itemId],
  );
  return row;
}

/** Lines of this cart by id, ordered or not (the cart's events), oldest first. */
export async function linesByIds(
  em: EntityManager,
  cartId: number,
  itemIds: number[],
): Promise<LineRow[]> {
  if (!itemIds.length) return [];
  return em.execute<LineRow[]>(
    `select ${LINE_SELECT} from ${LINE_FROM} where i.cart_id = ? and i.id = any(?::bigint[]) order by i.id`,
    [cartId, intArrayParam(itemIds)],
  );
}

/** A line's amounts, by the one definition of an order's amounts. */
export function lineAmounts(
  l: Pick<LineRow, 'market' | 'qty' | 'unit_cost_cents' | 'list_price_cents'>,
) {
  const terms = positionTerms(
    l.market as MarketId,
    { unit_cost_cents: l.unit_cost_cents, list_price_cents: l.list_price_cents } as never,
    l.qty,
  );
  return { terms, amounts: orderAmounts(l.qty, terms.unitCostCents, terms.feeCents) };
}

/** Stale: the deal's session closed on the service clock (CONTRACT.md "Session boundary"). */
export const isStale = (l: Pick<LineRow, 'closes_at'>, at: number) => at >= l.closes_at;
export const isCheckedOut = (l: Pick<LineRow, 'order_id' | 'item_id'>) =>
  l.order_id !== null || l.item_id !== null;

export function lineJson(
  l: LineRow,
  cart: Pick<CartRow, 'holder_id'>,
  at: number,
): CartDetail['items'][number] {
  const { amounts } = lineAmounts(l);
  const out: Record<string, unknown> = {
    id: l.id,
    market: l.market,
    tick: l.tick,
    offer_key: l.offer_key,
    deal_title: l.title ?? '',
    qty: l.qty,
    max_qty: l.max_qty,
    unit_cost: centsToNumber(l.unit_cost_cents),
    list_price: centsToNumber(l.list_price_cents),
  };
  // Ranking markets do not quote velocity: the field is absent there (SPEC.md "Deal object").
  if (MARKETS[l.market as MarketId]?.quotes_velocity) out.sales_velocity = l.sales_velocity;
  return Object.assign(out, {
    note: l.note,
    proposed_by:
      l.agent_id === null
        ? { kind: 'holder', agent_id: null, name: 'the account holder' }
        : { kind: 'agent', agent_id: l.agent_id, name: l.agent_name ?? '' },
    status: isCheckedOut(l) ? 'ordered' : cart.holder_id === null ? 'pending_pairing' : 'in_cart',
    stale: !isCheckedOut(l) && isStale(l, at),
    closes_at: l.closes_at,
    fee: centsToNumber(amounts.feeAmountCents),
    total: centsToNumber(amounts.totalCents),
    order_id: l.order_id,
    inventory_item_id: l.item_id,
  }) as CartDetail['items'][number];
}

/** A cart's lines not yet ordered, and those of them whose session is still open (what paying now buys) with their total. */
function openLines(c: CartRow, lines: LineRow[], at: number) {
  const open = lines.filter((l) => l.cart_id === c.id && !isCheckedOut(l));
  const current = open.filter((l) => !isStale(l, at));
  return {
    open,
    current,
    totalCents: current.reduce((sum, l) => sum + lineAmounts(l).amounts.totalCents, 0),
  };
}

export function entryJson(
  c: CartRow,
  lines: LineRow[],
  perms: Permissions,
  caller: Caller,
  baseUrl: string,
  at: number,
): CartEntry {
  const { open, current, totalCents: total } = openLines(c, lines, at);
  return {
    id: c.id,
    name: c.name,
    kind: c.kind,
    owner:
      c.agent_id === null
        ? { kind: 'holder', agent_id: null, name: c.owner_name }
        : { kind: 'agent', agent_id: c.agent_id, name: c.owner_name },
    mine: caller.kind === 'agent' ? c.agent_id === caller.agentId : c.holder_id === caller.holderId,
    associated: c.holder_id !== null,
    checkout_url: checkoutUrl(baseUrl, c.token),
    open_items: current.length,
    stale_items: open.length - current.length,
    total: centsToNumber(total),
    paid: c.paid,
    permissions: perms,
  };
}

/**
 * `feeCharged`: whether the cart's holder's fee of the month is charged. holder_pays is what a card
 * payment of the current lines made now would charge (CONTRACT.md "What the holder will pay"); null
 * without a current line.
 */
export function detailJson(
  c: CartRow,
  lines: LineRow[],
  perms: Permissions,
  caller: Caller,
  baseUrl: string,
  at: number,
  feeCharged: boolean,
): CartDetail {
  const own = lines.filter((l) => l.cart_id === c.id);
  const { current, totalCents } = openLines(c, own, at);
  return {
    ...entryJson(c, own, perms, caller, baseUrl, at),
    items: own.map((l) => lineJson(l, c, at)),
    holder_pays: current.length ? holderPays(totalCents, feeCharged) : null,
  };
}

export const cartFacts = (c: CartRow): CartFacts => ({
  id: c.id,
  agentId: c.agent_id,
  holderId: c.holder_id,
  kind: c.kind,
});

/** Every cart a caller sees, as served entries (GET /carts). */
export async function cartEntries(
  em: EntityManager,
  caller: Caller,
  opts: { since?: number; baseUrl: string; at: number },
): Promise<CartEntry[]> {
  const { agent, grants } = await callerFacts(em, caller, opts.at);
  const carts = await cartsSeen(em, caller, agent, { since: opts.since });
  const lines = await linesOf(
    em,
    carts.map((c) => c.id),
  );
  return carts.map((c) =>
    entryJson(
      c,
      lines,
      permissionsOf(cartFacts(c), caller, agent, grants),
      caller,
      opts.baseUrl,
      opts.at,
    ),
  );
}

/** One cart the caller sees, with its lines, or null. */
export async function cartDetail(
  em: EntityManager,
  caller: Caller,
  cartId: number,
  opts: { baseUrl: string; at: number },
): Promise<CartDetail | null> {
  const { agent, grants } = await callerFacts(em, caller, opts.at);
  const [c] = await cartsSeen(em, caller, agent, { cartId });
  if (!c) return null;
  const [lines, charged] = await Promise.all([
    linesOf(em, [c.id], { ordered: true }),
    feeCharged(em, c.holder_id, opts.at),
  ]);
  return detailJson(
    c,
    lines,
    permissionsOf(cartFacts(c), caller, agent, grants),
    caller,
    opts.baseUrl,
    opts.at,
    charged,
  );
}
