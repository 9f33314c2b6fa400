// A cart checkout (SPEC.md "Cart line": in_cart or pending_pairing → ordered; CONTRACT.md "Carts"):
// one real-money checkout for every current line of the cart. Trade carts place and fund one order
// per line on the account of the agent that proposed it (the holder's picks on the Manual desk), one
// trade round per account; own carts buy the goods outright into the holder's inventory from the
// Manual desk. The holder is charged once (a card: one card_charge per account funded), the
// participation fee at most once, everything through the ledger's one posting definition, in the
// turn's one transaction, under the cart's row lock and the markets' session locks: a concurrent or
// repeated checkout finds the lines ordered and charges nothing; a line whose session closed is
// skipped, never charged.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { CartItemSchema, CartSchema, InventoryItemSchema } from '../../orm/entities/index.js';
import { MARKETS, centsToNumber, type MarketId, type ServedDeal } from '../../src/engine/index.js';
import { ActorError } from '../runtime/actor.js';
import { instantDate, intArrayParam } from '../runtime/sql.js';
import { chargeHolder, sourceOf, type Charged, type Debit } from '../money/charge.js';
import type { Payment } from '../money/messages.js';
import { orderJson } from '../account/views.js';
import { placedOrder, type NewOrder, type PlacedOrder } from '../account/order-row.js';
import { payOrders, placeOrders, placedValues } from '../account/order-write.js';
import { limitRefusal, limitsOf, spentOf } from '../money/limits.js';
import { appendEvents } from '../events/log.js';
import { appendLineEventsOf } from './events.js';
import { manualDesk } from '../account/desk.js';
import { shareSessionLock } from '../market/session-lock.js';
import { familyTapes, type FamilyTape } from '../market/holder-orders.js';
import { mintPurchase, type PurchasedItem } from '../market/goods.js';
import {
  callerFacts,
  cartFacts,
  isCheckedOut,
  isStale,
  lineAmounts,
  linesOf,
  type CartRow,
  type LineRow,
} from './lines.js';
import { grantsFor, permissionsOf } from './permissions.js';
import type { CartMessage, CheckedOut } from './messages.js';

type Checkout = Extract<CartMessage, { kind: 'checkout' }>;
/**
 * How the money moves once the caller's right to pay is settled: the holder charged, how, (an agent
 * paying from balances without a grant) whose lines alone, and (an execute checkout: no holder
 * present) the agent whose spending limits bound it.
 */
type Funding = { holderId: number; payment: Payment; onlyAgent?: number; standingAgentId?: number };

/** The cart's row, locked to the end of the turn's transaction: checkouts of one cart run one at a time, across processes too. */
export async function lockCart(em: EntityManager, cartId: number): Promise<CartRow | undefined> {
  const [c] = await em.execute<CartRow[]>(
    `select c.id::float8 as id, c.agent_id::float8 as agent_id, c.holder_id::float8 as holder_id, c.name, c.kind, c.token, c.paid,
            '' as owner_name, c.created_at, c.updated_at
       from cart c where c.id = ? for update`,
    [cartId],
  );
  return c;
}

export async function checkout(
  em: EntityManager,
  cart: CartRow,
  msg: Checkout,
): Promise<CheckedOut> {
  const funding = await fundingOf(em, cart, msg);
  const all = await linesOf(em, [cart.id]);
  const picked = pickLines(all, msg.itemIds);
  await shareSessionLock(
    em,
    picked.map((l) => l.market),
  );
  const open = await openSessions(em, picked);
  const current = picked.filter((l) => !isStale(l, msg.at) && open.has(`${l.market}/${l.tick}`));
  const skipped = picked.filter((l) => !current.includes(l));
  if (!current.length) {
    throw new ActorError(
      409,
      `nothing to pay: the session of every line closed (${skipped.length} stale line(s)); nothing was charged. Refresh the cart on the web or propose deals of the current menu`,
    );
  }
  if (funding.onlyAgent !== undefined) {
    const others = current.filter((l) => l.agent_id !== funding.onlyAgent);
    if (others.length) {
      throw new ActorError(
        403,
        `lines ${others.map((l) => l.id).join(', ')} were not proposed by you: paying them from balances needs an execute grant from your holder; nothing was charged`,
      );
    }
  }
  if (funding.standingAgentId !== undefined)
    await withinLimits(em, funding.standingAgentId, current, msg.at);
  const deals = await dealsOf(em, current);
  const done =
    cart.kind === 'own'
      ? await buyOutright(em, cart, current, deals, funding, msg.at)
      : await placeAndFund(em, cart, current, deals, funding, msg.baseUrl, msg.at);
  await em.nativeUpdate(
    CartSchema,
    { id: cart.id },
    { paid: true, updatedAt: instantDate(msg.at) },
  );
  await appendLineEventsOf(
    em,
    cart,
    'cart.line_ordered',
    current.map((l) => l.id),
    msg.at,
  );
  const total = current.reduce((s, l) => s + lineAmounts(l).amounts.totalCents, 0);
  return {
    cart_id: cart.id,
    kind: cart.kind,
    paid_with: done.charged.method,
    total: centsToNumber(total),
    fee: centsToNumber(done.charged.feeCents),
    charged: centsToNumber(done.charged.chargedCents),
    skipped_stale: skipped.length,
    skipped_item_ids: skipped.map((l) => l.id),
    ordered_item_ids: current.map((l) => l.id),
    orders: done.orders,
    bought_outright: cart.kind === 'own',
    inventory_item_ids: done.items,
    receipt: done.charged.receipt,
    note:
      cart.kind === 'own'
        ? `Bought outright: ${done.items.length} lot(s) of goods are in the holder's inventory. No order, position or trade was opened.`
        : `${done.orders.length} order(s) placed and funded; they fill at their session's close and sell through as positions.`,
  };
}

/**
 * Who pays and how: the holder of the cart on the web, or an agent under its execute right. A holder
 * pays only a cart already theirs: an agent's cart becomes a holder's only through its link (the
 * `open` turn the link's pages send first), never through a cart id in a form.
 */
async function fundingOf(em: EntityManager, cart: CartRow, msg: Checkout): Promise<Funding> {
  const caller = msg.caller;
  if (caller.kind === 'holder') {
    if (cart.holder_id !== caller.holderId)
      throw new ActorError(404, `no cart ${cart.id} of yours`);
    const p = msg.payment;
    if (p.method !== 'grant') return { holderId: caller.holderId, payment: p };
    throw new ActorError(400, 'a holder pays by card or from a balance');
  }
  if (msg.payment.method !== 'grant')
    throw new ActorError(400, "an agent's checkout pays as its grant allows");
  const { agent, grants } = await callerFacts(em, caller, msg.at);
  const perms = permissionsOf(cartFacts(cart), caller, agent, grants);
  if (!perms.read) throw new ActorError(404, `no cart ${cart.id} you can see`);
  if (!perms.execute) throw new ActorError(403, perms.execute_note);
  const own = cart.agent_id === caller.agentId && cart.kind === 'trade';
  const exec = grantsFor(cartFacts(cart), agent!, grants).filter((g) => g.level === 'execute');
  const payWith = msg.payment.payWith ?? perms.execute_pay_with!;
  const grant = exec.find((g) => g.payWith === payWith);
  if (!grant && !(own && payWith === 'balance')) {
    throw new ActorError(403, `this checkout may not pay with ${payWith}: ${perms.execute_note}`);
  }
  const holderId = cart.holder_id!;
  if (payWith === 'card')
    return {
      holderId,
      payment: { method: 'stored_card', cardId: grant!.cardId! },
      standingAgentId: caller.agentId,
    };
  return {
    holderId,
    payment: { method: 'balance' },
    onlyAgent: grant ? undefined : caller.agentId,
    standingAgentId: caller.agentId,
  };
}

/**
 * An execute checkout pays without the holder present: its lines, each an order, must be within the
 * agent's spending limits (money/limits.ts, the order batch's decision), counted with what the agent
 * funded that day. The agent's account row is locked first, as the order batch locks it: a
 * concurrent burst of orders and checkouts is decided one at a time.
 */
async function withinLimits(
  em: EntityManager,
  agentId: number,
  lines: LineRow[],
  at: number,
): Promise<void> {
  const [agent] = await em.execute<(Parameters<typeof limitsOf>[0] & { account_id: number })[]>(
    `select a.account_id::float8 as account_id, a.limit_max_order_cents::float8 as limit_max_order_cents,
            a.limit_max_day_cents::float8 as limit_max_day_cents, a.limit_markets,
            a.limit_max_week_cents::float8 as limit_max_week_cents, a.limit_expires_at
       from agent a where a.id = ?`,
    [agentId],
  );
  await em.execute('select id from account where id = ? for update', [agent.account_id]);
  const spent = await spentOf(em, agentId, at);
  for (const l of lines) {
    const total = lineAmounts(l).amounts.totalCents;
    const over = limitRefusal(limitsOf(agent), spent, l.market, total, at);
    if (over) throw new ActorError(403, `line ${l.id}: ${over.detail}`, undefined, over.facts);
    spent.dayCents += total;
    spent.weekCents += total;
  }
}

/** The lines to pay: every open line, or those named (each must be in the cart and not yet checked out). */
function pickLines(all: LineRow[], itemIds?: number[]): LineRow[] {
  const open = all.filter((l) => !isCheckedOut(l));
  if (!itemIds) {
    if (!open.length)
      throw new ActorError(
        409,
        'nothing to pay: the cart has no lines waiting (every line is ordered, or none was proposed); nothing was charged',
      );
    return open;
  }
  const byId = new Map(open.map((l) => [l.id, l]));
  const missing = [...new Set(itemIds)].filter((id) => !byId.has(id));
  if (missing.length)
    throw new ActorError(
      409,
      `line(s) ${missing.join(', ')} are not waiting in this cart (already ordered, removed, or never here); nothing was charged`,
    );
  return [...new Set(itemIds)].map((id) => byId.get(id)!);
}

async function openSessions(em: EntityManager, lines: LineRow[]): Promise<Set<string>> {
  const rows = await em.execute<{ market: string; tick: number }[]>(
    `select market, tick::float8 as tick from market_session where closed_at is null and market = any(string_to_array(?, ','))`,
    [[...new Set(lines.map((l) => l.market))].join(',')],
  );
  return new Set(rows.map((r) => `${r.market}/${r.tick}`));
}

type DealRow = { id: number; cluster: number; deal: ServedDeal };

async function dealsOf(em: EntityManager, lines: LineRow[]): Promise<Map<number, DealRow>> {
  const rows = await em.execute<DealRow[]>(
    `select i.id::float8 as id, m.cluster, m.deal from cart_item i join menu_row m on m.market = i.market and m.tick = i.tick and m.idx = i.idx
      where i.id = any(?::bigint[])`,
    [intArrayParam(lines.map((l) => l.id))],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** Each line's order lands on the proposing agent's account; the holder's picks on the holder's Manual desk. */
async function accountsOf(
  em: EntityManager,
  lines: LineRow[],
  holderId: number,
): Promise<Map<number, number>> {
  const agentIds = [
    ...new Set(lines.map((l) => l.agent_id).filter((a): a is number => a !== null)),
  ];
  const rows = await em.execute<{ agent_id: number; account_id: number }[]>(
    'select id::float8 as agent_id, account_id::float8 as account_id from agent where id = any(?::bigint[])',
    [intArrayParam(agentIds)],
  );
  const byAgent = new Map(rows.map((r) => [r.agent_id, r.account_id]));
  const desk = lines.some((l) => l.agent_id === null) ? await manualDesk(em, holderId) : 0;
  return new Map(lines.map((l) => [l.id, l.agent_id === null ? desk : byAgent.get(l.agent_id)!]));
}

/** What a checkout did: the orders placed or the goods bought, and what the holder was charged. */
type Done = { orders: CheckedOut['orders']; items: number[]; charged: Charged };

/** A cart line pointed at what its checkout made of it (its order, or its goods), once. */
async function linkLine(
  em: EntityManager,
  lineId: number,
  made: { order: number } | { item: number },
): Promise<void> {
  await em.nativeUpdate(CartItemSchema, { id: lineId, order: null, item: null }, made);
}

/**
 * A trade cart's lines: one round per account (the proposing agents' accounts, the holder's picks
 * on the Manual desk) and one order per line (order-row.ts's row), placed by the order batch's
 * builder (account/order-write.ts) as it places an order awaiting its holder; then one charge for
 * all of them (the first account carries the month's fee and names it in its round), written on
 * each round and its orders as the pay turn writes a purchase link's payment.
 */
async function placeAndFund(
  em: EntityManager,
  cart: CartRow,
  lines: LineRow[],
  deals: Map<number, DealRow>,
  f: Funding,
  baseUrl: string,
  at: number,
): Promise<Done> {
  const plan = await planTrade(em, lines, f.holderId);
  const source = sourceOf(f.payment);
  const orderOf = (l: LineRow, i: number, paid: NewOrder['paid']) =>
    lineOrder(plan, deals.get(l.id)!.deal, f, l, i, paid, at);
  await placeOrders(
    em,
    lines.map((l, i) => placedValues(orderOf(l, i, null), at, 0)),
  );
  const placed = lines.map((l, i) => orderOf(l, i, { source, holderId: f.holderId }));
  for (const [i, o] of placed.entries()) await linkLine(em, lines[i].id, { order: o.id });
  const charged = await chargeOrders(em, cart, f, plan, placed, baseUrl, at);
  for (const o of placed) o.receipt = charged.receipt;
  await payRounds(em, f, plan, placed, charged, at);
  const orders = placed.map((o) => orderJson(o, baseUrl));
  await appendOrderEvents(em, placed, orders, at);
  return { orders, items: [], charged };
}

/**
 * Where a trade cart's orders go: each line's account, those accounts in ascending order, the round
 * taken for each, and each line's order id and purchase-link token.
 */
type TradePlan = {
  accountOf: Map<number, number>;
  groups: number[];
  roundOf: Map<number, number>;
  ids: number[];
  tokens: string[];
};

async function planTrade(
  em: EntityManager,
  lines: LineRow[],
  holderId: number,
): Promise<TradePlan> {
  const accountOf = await accountsOf(em, lines, holderId);
  const groups = [...new Set(lines.map((l) => accountOf.get(l.id)!))].sort((a, b) => a - b);
  const roundIds = await nextIds(em, 'trade_round_id_seq', groups.length);
  const roundOf = new Map(groups.map((accountId, i) => [accountId, roundIds[i]]));
  const ids = await nextIds(em, 'orders_id_seq', lines.length);
  const tokens = lines.map(() => randomBytes(24).toString('base64url'));
  return { accountOf, groups, roundOf, ids, tokens };
}

/** Line `i`'s order: as placed (`paid` null), or as its funding writes it. */
function lineOrder(
  plan: TradePlan,
  deal: ServedDeal,
  f: Funding,
  l: LineRow,
  i: number,
  paid: NewOrder['paid'],
  at: number,
): PlacedOrder {
  const { terms, amounts } = lineAmounts(l);
  const accountId = plan.accountOf.get(l.id)!;
  return placedOrder({
    id: plan.ids[i],
    roundId: plan.roundOf.get(accountId)!,
    accountId,
    agentId: l.agent_id,
    market: l.market,
    tick: l.tick,
    idx: l.idx,
    offerKey: l.offer_key,
    qty: l.qty,
    closesAt: l.closes_at,
    terms,
    amounts,
    token: plan.tokens[i],
    paid,
    standingAgentId: f.standingAgentId ?? null,
    at,
    deal: {
      bundle: { title: deal.bundle.title, items: deal.bundle.items as unknown[] },
      sales_velocity: (deal as { sales_velocity?: number }).sales_velocity,
    },
  });
}

/** The one charge for a trade cart's orders, paid by its first account (which carries the month's fee). */
function chargeOrders(
  em: EntityManager,
  cart: CartRow,
  f: Funding,
  plan: TradePlan,
  placed: PlacedOrder[],
  baseUrl: string,
  at: number,
): Promise<Charged> {
  const payer = plan.groups[0];
  return chargeHolder(em, {
    holderId: f.holderId,
    payer,
    payment: f.payment,
    at,
    ref: `cart:${cart.id}`,
    roundId: plan.roundOf.get(payer)!,
    debits: placed.map((o): Debit => ({
      account: o.account_id,
      ref: `order:${o.id}`,
      cents: o.total_cents,
    })),
    // The holder's hand on the cart, or their standing grant (an execute checkout): a signed approval receipt.
    receipt: {
      issuer: baseUrl,
      at,
      approval: f.standingAgentId === undefined ? 'holder' : 'standing',
      agentId: f.standingAgentId ?? cart.agent_id,
      orders: placed,
    },
  });
}

/** The charge written on each account's round and its orders, account by account in ascending order. */
async function payRounds(
  em: EntityManager,
  f: Funding,
  plan: TradePlan,
  placed: PlacedOrder[],
  charged: Charged,
  at: number,
): Promise<void> {
  const payer = plan.groups[0];
  for (const accountId of plan.groups) {
    const mine = placed.filter((o) => o.account_id === accountId);
    const fee = accountId === payer ? charged.feeCents : 0;
    await payOrders(em, {
      roundId: plan.roundOf.get(accountId)!,
      orderIds: mine.map((o) => o.id),
      source: sourceOf(f.payment),
      holderId: f.holderId,
      at,
      receipt: charged.receipt,
      feeCents: fee,
      chargedCents: mine.reduce((s, o) => s + o.total_cents, 0) + fee,
    });
  }
}

/** CONTRACT.md "Events": an order funded at once is created and paid, on the account it is placed on. */
async function appendOrderEvents(
  em: EntityManager,
  placed: PlacedOrder[],
  orders: CheckedOut['orders'],
  at: number,
): Promise<void> {
  await appendEvents(
    em,
    orders.flatMap((data, i) =>
      (['order.created', 'order.paid'] as const).map((type) => ({
        account_id: placed[i].account_id,
        type,
        data,
      })),
    ),
    at,
  );
}

/** The next `n` ids of a sequence (the batch reads its own the same way, in its read). */
async function nextIds(
  em: EntityManager,
  sequence: 'orders_id_seq' | 'trade_round_id_seq',
  n: number,
): Promise<number[]> {
  const rows = await em.execute<{ id: number }[]>(
    `select nextval('${sequence}')::float8 as id from generate_series(1, ?)`,
    [n],
  );
  return rows.map((r) => r.id);
}

/**
 * An own cart's lines: bought outright market by market onto the holder's Manual desk, then one
 * charge for all of them, paid by the desk.
 */
async function buyOutright(
  em: EntityManager,
  cart: CartRow,
  lines: LineRow[],
  deals: Map<number, DealRow>,
  f: Funding,
  at: number,
): Promise<Done> {
  const desk = await manualDesk(em, f.holderId);
  const items: number[] = [];
  const debits: Debit[] = [];
  for (const market of [...new Set(lines.map((l) => l.market))]) {
    const here = lines.filter((l) => l.market === market);
    const bought = await buyMarketLines(
      em,
      { cartId: cart.id, desk, holderId: f.holderId },
      market as MarketId,
      here,
      deals,
      at,
    );
    items.push(...bought.items);
    debits.push(...bought.debits);
  }
  const charged = await chargeHolder(em, {
    holderId: f.holderId,
    payer: desk,
    payment: f.payment,
    at,
    ref: `cart:${cart.id}`,
    debits,
  });
  return { orders: [], items, charged };
}

/** Whose goods an outright purchase makes: the cart's, onto the holder's Manual desk. */
type Buyer = { cartId: number; desk: number; holderId: number };

/**
 * One market's lines bought outright: each minted as goods carrying its family's tape of the
 * settlement window before the market's earliest line, stored, its line pointed at it.
 */
async function buyMarketLines(
  em: EntityManager,
  buyer: Buyer,
  market: MarketId,
  here: LineRow[],
  deals: Map<number, DealRow>,
  at: number,
): Promise<{ items: number[]; debits: Debit[] }> {
  const window = MARKETS[market].settlement_horizon_ticks;
  const tick = Math.min(...here.map((l) => l.tick));
  const tapes = await familyTapes(
    em,
    market,
    here.map((l) => deals.get(l.id)!.cluster),
    tick - window,
    tick - 1,
  );
  const items: number[] = [];
  const debits: Debit[] = [];
  for (const l of here) {
    const d = deals.get(l.id)!;
    const goods = mintLine(buyer.cartId, market, l, d, tapes.get(d.cluster) ?? [], window);
    const itemId = await storeGoods(em, buyer, market, d.cluster, goods, at);
    await linkLine(em, l.id, { item: itemId });
    items.push(itemId);
    debits.push({ ref: `cart_item:${l.id}`, cents: lineAmounts(l).amounts.totalCents });
  }
  return { items, debits };
}

function mintLine(
  cartId: number,
  market: MarketId,
  l: LineRow,
  d: DealRow,
  tape: FamilyTape,
  window: number,
): PurchasedItem {
  const { terms } = lineAmounts(l);
  return mintPurchase(
    {
      market,
      tick: l.tick,
      cluster: d.cluster,
      deal: d.deal,
      qty: l.qty,
      unitCostCents: terms.unitCostCents,
      listPriceCents: terms.listPriceCents,
      cartId,
      cartItemId: l.id,
    },
    tape,
    window,
  );
}

/** The goods as an inventory item of the desk, flushed at once for its id. */
async function storeGoods(
  em: EntityManager,
  buyer: Buyer,
  market: MarketId,
  cluster: number,
  goods: PurchasedItem,
  at: number,
): Promise<number> {
  const item = em.create(InventoryItemSchema, {
    account: buyer.desk,
    holder: buyer.holderId,
    position: null,
    market,
    cluster,
    title: goods.title,
    qty: goods.qty,
    story: goods.story,
    rarity: goods.rarity,
    rarityScore: goods.rarity_score,
    history: goods.history,
    economy: goods.economy,
    source: goods.source,
    simulated: goods.simulated,
    provenance: goods.provenance,
    createdAt: instantDate(at),
  });
  await em.flush();
  return item.id;
}
