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
import { CartItemSchema, CartSchema, InventoryItemSchema, OrderSchema, TradeRoundSchema } from '../../orm/entities/index.js';
import { MARKETS, centsToNumber, type MarketId, type ServedDeal } from '../../src/engine/index.js';
import type { StoredCard } from '../../src/payments/cards.js';
import { cardToCharge } from '../account/cards.js';
import { ActorError } from '../runtime/actor.js';
import { intArrayParam } from '../runtime/sql.js';
import { checkoutEntries, feeDueCents, postEntries, recordFee, type Entry } from '../account/ledger.js';
import { orderJson, type OrderRow } from '../account/views.js';
import { manualDesk } from '../account/desk.js';
import { shareSessionLock } from '../market/session-lock.js';
import { familyTapes } from '../market/holder-orders.js';
import { mintPurchase } from '../market/goods.js';
import { callerFacts, cartFacts, isCheckedOut, isStale, lineAmounts, linesOf, type CartRow, type LineRow } from './lines.js';
import { grantsFor, permissionsOf } from './permissions.js';
import type { CartMessage, CheckedOut } from './messages.js';

type Checkout = Extract<CartMessage, { kind: 'checkout' }>;
/** How the money moves once the caller's right to pay is settled. */
type Funding = { holderId: number; method: 'card' | 'balance'; card?: StoredCard; onlyAgent?: number };

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

export async function checkout(em: EntityManager, cart: CartRow, msg: Checkout): Promise<CheckedOut> {
  const funding = await fundingOf(em, cart, msg);
  const all = await linesOf(em, [cart.id]);
  const picked = pickLines(all, msg.itemIds);
  await shareSessionLock(em, picked.map((l) => l.market));
  const open = await openSessions(em, picked);
  const current = picked.filter((l) => !isStale(l, msg.at) && open.has(`${l.market}/${l.tick}`));
  const skipped = picked.filter((l) => !current.includes(l));
  if (!current.length) {
    throw new ActorError(409, `nothing to pay: the session of every line closed (${skipped.length} stale line(s)); nothing was charged. Refresh the cart on the web or propose deals of the current menu`);
  }
  if (funding.onlyAgent !== undefined) {
    const others = current.filter((l) => l.agent_id !== funding.onlyAgent);
    if (others.length) {
      throw new ActorError(403, `lines ${others.map((l) => l.id).join(', ')} were not proposed by you: paying them from balances needs an execute grant from your holder; nothing was charged`);
    }
  }
  const feeCents = await feeDueCents(em, funding.holderId, msg.at);
  const deals = await dealsOf(em, current);
  const done = cart.kind === 'own'
    ? await buyOutright(em, cart, current, deals, funding, feeCents, msg.at)
    : await placeAndFund(em, cart, current, deals, funding, feeCents, msg.baseUrl, msg.at);
  await em.nativeUpdate(CartSchema, { id: cart.id }, { paid: true, updatedAt: new Date() });
  const total = current.reduce((s, l) => s + lineAmounts(l).amounts.totalCents, 0);
  return {
    cart_id: cart.id, kind: cart.kind, paid_with: funding.method,
    total: centsToNumber(total), fee: centsToNumber(feeCents), charged: centsToNumber(total + feeCents),
    skipped_stale: skipped.length, skipped_item_ids: skipped.map((l) => l.id), ordered_item_ids: current.map((l) => l.id),
    orders: done.orders, bought_outright: cart.kind === 'own', inventory_item_ids: done.items,
    note: cart.kind === 'own'
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
    if (cart.holder_id !== caller.holderId) throw new ActorError(404, `no cart ${cart.id} of yours`);
    const p = msg.payment;
    if (p.method === 'card') return { holderId: caller.holderId, method: 'card', card: await cardToCharge(em, caller.holderId, { new: p.card, save: p.save }, msg.at) };
    if (p.method === 'stored_card') return { holderId: caller.holderId, method: 'card', card: await cardToCharge(em, caller.holderId, { storedId: p.cardId }, msg.at) };
    if (p.method === 'balance') return { holderId: caller.holderId, method: 'balance' };
    throw new ActorError(400, 'a holder pays by card or from a balance');
  }
  if (msg.payment.method !== 'grant') throw new ActorError(400, 'an agent\'s checkout pays as its grant allows');
  const { agent, grants } = await callerFacts(em, caller);
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
  if (payWith === 'card') return { holderId, method: 'card', card: await cardToCharge(em, holderId, { storedId: grant!.cardId! }, msg.at) };
  return { holderId, method: 'balance', onlyAgent: grant ? undefined : caller.agentId };
}


/** The lines to pay: every open line, or those named (each must be in the cart and not yet checked out). */
function pickLines(all: LineRow[], itemIds?: number[]): LineRow[] {
  const open = all.filter((l) => !isCheckedOut(l));
  if (!itemIds) {
    if (!open.length) throw new ActorError(409, 'nothing to pay: the cart has no lines waiting (every line is ordered, or none was proposed); nothing was charged');
    return open;
  }
  const byId = new Map(open.map((l) => [l.id, l]));
  const missing = [...new Set(itemIds)].filter((id) => !byId.has(id));
  if (missing.length) throw new ActorError(409, `line(s) ${missing.join(', ')} are not waiting in this cart (already ordered, removed, or never here); nothing was charged`);
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
async function accountsOf(em: EntityManager, lines: LineRow[], holderId: number): Promise<Map<number, number>> {
  const agentIds = [...new Set(lines.map((l) => l.agent_id).filter((a): a is number => a !== null))];
  const rows = await em.execute<{ agent_id: number; account_id: number }[]>(
    'select id::float8 as agent_id, account_id::float8 as account_id from agent where id = any(?::bigint[])', [intArrayParam(agentIds)],
  );
  const byAgent = new Map(rows.map((r) => [r.agent_id, r.account_id]));
  const desk = lines.some((l) => l.agent_id === null) ? await manualDesk(em, holderId) : 0;
  return new Map(lines.map((l) => [l.id, l.agent_id === null ? desk : byAgent.get(l.agent_id)!]));
}


async function placeAndFund(
  em: EntityManager, cart: CartRow, lines: LineRow[], deals: Map<number, DealRow>, f: Funding, feeCents: number, baseUrl: string, at: number,
): Promise<{ orders: CheckedOut['orders']; items: number[] }> {
  const accountOf = await accountsOf(em, lines, f.holderId);
  const groups = [...new Set(lines.map((l) => accountOf.get(l.id)!))].sort((a, b) => a - b);
  const entries: Entry[] = [];
  const rows: OrderRow[] = [];
  const now = new Date();
  for (const [g, accountId] of groups.entries()) {
    const mine = lines.filter((l) => accountOf.get(l.id) === accountId);
    const fee = g === 0 ? feeCents : 0;
    const amount = mine.reduce((s, l) => s + lineAmounts(l).amounts.totalCents, 0);
    const round = em.create(TradeRoundSchema, {
      account: accountId, status: 'funded', source: f.method, amountCents: amount, feeAmountCents: fee, chargedCents: amount + fee, fundedAt: now,
    });
    const orders = mine.map((l) => {
      const { terms, amounts } = lineAmounts(l);
      return em.create(OrderSchema, {
        account: accountId, agent: l.agent_id, round, market: l.market, tick: l.tick, idx: l.idx, offerKey: l.offer_key, qty: l.qty,
        unitCostCents: terms.unitCostCents, listPriceCents: terms.listPriceCents, feeCents: terms.feeCents, holdingCents: terms.holdingCents,
        grossCents: amounts.grossCents, feeAmountCents: amounts.feeAmountCents, totalCents: amounts.totalCents, status: 'paid',
        paymentSource: f.method, paidByHolder: f.holderId, token: randomBytes(24).toString('base64url'), closesAt: l.closes_at, paidAt: now,
      });
    });
    await em.flush();
    await recordFee(em, f.holderId, at, accountId, round.id, fee);
    entries.push(...checkoutEntries(accountId, orders.map((o) => ({ ref: `order:${o.id}`, cents: o.totalCents })), fee, f.method, `cart:${cart.id}`));
    for (const [i, o] of orders.entries()) {
      const l = mine[i];
      await em.nativeUpdate(CartItemSchema, { id: l.id, order: null, item: null }, { order: o.id });
      const deal = deals.get(l.id)!.deal;
      rows.push({
        id: o.id, market: o.market, tick: o.tick, offer_key: o.offerKey, qty: o.qty, unit_cost_cents: o.unitCostCents, list_price_cents: o.listPriceCents,
        gross_cents: o.grossCents, fee_amount_cents: o.feeAmountCents, total_cents: o.totalCents, status: 'paid', payment_source: f.method, token: o.token,
        closes_at: o.closesAt, created_at: now, paid_at: now, filled_at: null, position_id: null, round_id: round.id, account_id: accountId,
        agent_id: l.agent_id, deal: { bundle: { title: deal.bundle.title, items: deal.bundle.items as unknown[] }, sales_velocity: (deal as { sales_velocity?: number }).sales_velocity },
      });
    }
  }
  await postEntries(em, entries, { requireFunds: f.method === 'balance' });
  return { orders: rows.map((r) => orderJson(r, baseUrl)), items: [] };
}

async function buyOutright(
  em: EntityManager, cart: CartRow, lines: LineRow[], deals: Map<number, DealRow>, f: Funding, feeCents: number, at: number,
): Promise<{ orders: CheckedOut['orders']; items: number[] }> {
  const desk = await manualDesk(em, f.holderId);
  const items: number[] = [];
  const debits: { ref: string; cents: number }[] = [];
  for (const market of [...new Set(lines.map((l) => l.market))]) {
    const here = lines.filter((l) => l.market === market);
    const window = MARKETS[market as MarketId].settlement_horizon_ticks;
    const tick = Math.min(...here.map((l) => l.tick));
    const tapes = await familyTapes(em, market, here.map((l) => deals.get(l.id)!.cluster), tick - window, tick - 1);
    for (const l of here) {
      const { terms, amounts } = lineAmounts(l);
      const d = deals.get(l.id)!;
      const goods = mintPurchase({
        market: market as MarketId, tick: l.tick, cluster: d.cluster, deal: d.deal, qty: l.qty, unitCostCents: terms.unitCostCents,
        listPriceCents: terms.listPriceCents, cartId: cart.id, cartItemId: l.id,
      }, tapes.get(d.cluster) ?? [], window);
      const item = em.create(InventoryItemSchema, {
        account: desk, holder: f.holderId, position: null, market, cluster: d.cluster, title: goods.title, qty: goods.qty, story: goods.story,
        rarity: goods.rarity, rarityScore: goods.rarity_score, history: goods.history, economy: goods.economy, source: goods.source, simulated: goods.simulated,
        provenance: goods.provenance,
      });
      await em.flush();
      await em.nativeUpdate(CartItemSchema, { id: l.id, order: null, item: null }, { item: item.id });
      items.push(item.id);
      debits.push({ ref: `cart_item:${l.id}`, cents: amounts.totalCents });
    }
  }
  await recordFee(em, f.holderId, at, desk, null, feeCents);
  await postEntries(em, checkoutEntries(desk, debits, feeCents, f.method, `cart:${cart.id}`), { requireFunds: f.method === 'balance' });
  return { orders: [], items };
}
