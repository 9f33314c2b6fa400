// The purchase link of an order (SPEC.md "Web routes": GET /checkout/{token}, POST .../pay): the holder
// sees who asks (the agent's declared identity), for what, what the order bets on (src/web/deal-facts.ts)
// and the seconds left, and approves by paying. The card is checked here first, so a declined or
// mistyped card never reaches the account actor and nothing is charged; the payment itself is one
// turn of the order's account actor.
import Type, { type Static } from 'typebox';
import {
  accountRef,
  type OrderByTokenReply,
  type Paid,
  type ServedOrder,
} from '../../../actors/account/messages.js';
import { read } from '../../../actors/runtime/client.js';
import { PayFields, cardOptions, paymentOf } from '../pay-form.js';
import { holderOf, type HolderPrincipal } from '../../http/authenticators/holder-session.js';
import { renderPage } from '../pages.js';
import {
  HttpError,
  htmlPage,
  route,
  type HolderContext,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import { DeclinedForm, PaidForm } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { webAction, formReply, invalidForm, usd, type Problem } from '../answers.js';
import { centsToNumber, numberToCents } from '../../engine/index.js';
import { TokenParams, identityView, utc } from '../link-view.js';
import { dealFacts } from '../deal-facts.js';
import { countdown } from '../cart-view.js';
import {
  DoneCardFields,
  cardOf,
  confirmationView,
  donePath,
  isoOf,
  orderStatusWords,
  paidByBalance,
  paidCardView,
} from '../checkout-view.js';

const PayForm = Type.Object(PayFields);
type PayForm = Static<typeof PayForm>;

const DoneQuery = Type.Object(DoneCardFields);
type DoneQuery = Static<typeof DoneQuery>;

type Order = ServedOrder;

export function webCheckoutRoutes(s: Services): Route[] {
  return [
    route<{ token: string }, DoneQuery>({
      method: 'GET',
      path: '/checkout/{token}/done',
      auth: 'holder',
      summary:
        'The confirmation after paying an order: what was charged, and what happens next and when',
      params: TokenParams,
      query: DoneQuery,
      response: { 200: htmlPage('the confirmation of the payment') },
      responses: { 303: { description: 'not paid yet: back to the purchase link' } },
      handler: (c) => showCheckoutDone(s, c),
    }),
    route<{ token: string }>({
      method: 'GET',
      path: '/checkout/{token}',
      auth: 'none',
      summary: 'Purchase link of an order: review and pay',
      params: TokenParams,
      response: { 200: htmlPage('the order, who asks for it, and the payment form') },
      handler: (c) => showCheckout(s, c),
    }),
    route<{ token: string }, unknown, PayForm>({
      method: 'POST',
      path: '/checkout/{token}/pay',
      auth: 'holder',
      summary: 'Pay an order by card or from the account balance',
      response: { 200: PaidForm },
      responses: { 303: { description: 'browsers: sent on to the next page' } },
      params: TokenParams,
      body: PayForm,
      onInvalid: invalidForm<HolderPrincipal>({}, (req, p, raw, holder) =>
        pageOrMessage(s, req, raw.params.token, holder, p),
      ),
      handler: (c) => submitPayment(s, c),
      replay: (paid: Paid, { req, params, body }) => paidReply(req, params.token, body, paid),
    }),
    route<{ token: string }>({
      method: 'POST',
      path: '/checkout/{token}/decline',
      auth: 'holder',
      summary:
        'Decline an order instead of paying it: it is cancelled, its agent is told (order.cancelled) and nothing is charged',
      response: { 200: DeclinedForm },
      responses: { 303: { description: 'browsers: back to the purchase link, which says so' } },
      params: TokenParams,
      handler: (c) => declineOrder(s, c),
      replay: (order: Declined, { req, params }) => declinedReply(req, params.token, order),
    }),
  ];
}

async function showCheckoutDone(
  s: Services,
  { req, params, query, principal }: HolderContext<{ token: string }, DoneQuery>,
): Promise<Reply> {
  return webAction(
    req,
    () => donePage(s, params.token, principal, query),
    (q) =>
      renderPage(
        'message',
        {
          title: 'Order not found',
          heading: 'Order not found',
          message: q.message,
          is_error: true,
          holder: principal,
        },
        q.status,
      ),
  );
}

async function showCheckout(
  s: Services,
  { req, params }: PublicContext<{ token: string }>,
): Promise<Reply> {
  return pageOrMessage(s, req, params.token, await holderOf(s, req));
}

/** Pays an order: the card is checked first, then one turn of the order's account actor. */
async function submitPayment(
  s: Services,
  {
    req,
    params,
    body,
    principal: holder,
    idem,
  }: HolderContext<{ token: string }, unknown, PayForm>,
): Promise<Reply> {
  return webAction(
    req,
    async () => {
      const payment = paymentOf(body, new Date(s.clock.realNow() * 1000));
      const { order } = await findOrder(s, params.token);
      const paid = await s.runtime.ask(
        accountRef(order.account_id),
        {
          kind: 'pay',
          orderId: order.id,
          holderId: holder.holderId,
          payment,
          at: s.clock.realNow(),
        },
        { idem },
      );
      return paidReply(req, params.token, body, paid);
    },
    (p) => pageOrMessage(s, req, params.token, holder, p),
  );
}

/** Declines an order on its purchase link: one turn of the order's account actor, as paying is. */
async function declineOrder(
  s: Services,
  { req, params, principal: holder, idem }: HolderContext<{ token: string }>,
): Promise<Reply> {
  return webAction(
    req,
    async () => {
      const { order } = await findOrder(s, params.token);
      const declined = await s.runtime.ask(
        accountRef(order.account_id),
        { kind: 'cancel', orderId: order.id, who: { by: 'holder', holderId: holder.holderId } },
        { idem },
      );
      return declinedReply(req, params.token, declined);
    },
    (p) => pageOrMessage(s, req, params.token, holder, p),
  );
}

type Declined = { id: number; status: string };

/** Browsers go back to the purchase link, which now says the order was declined. */
function declinedReply(req: RequestInfo, token: string, order: Declined): Reply {
  return formReply(req, `/checkout/${encodeURIComponent(token)}`, {
    order_id: order.id,
    status: order.status,
  });
}

async function findOrder(s: Services, token: string): Promise<NonNullable<OrderByTokenReply>> {
  const found = await read(s.runtime, 'account.orderByToken', { token, baseUrl: s.config.baseUrl });
  if (!found)
    throw new HttpError(
      404,
      'no order has this purchase link: check the address the agent gave you',
    );
  return found;
}

/** The payment part of the page: only for a logged-in holder, on an open order of their own agent. */
async function payView(s: Services, holder: HolderPrincipal, order: Order) {
  const [cards, balance, { fee, pays }] = await Promise.all([
    read(s.runtime, 'holder.cards', { holderId: holder.holderId }),
    read(s.runtime, 'account.checkoutBalance', {
      accountId: order.account_id,
      holderId: holder.holderId,
    }),
    read(s.runtime, 'account.payNow', {
      holderId: holder.holderId,
      at: s.clock.realNow(),
      goodsCents: numberToCents(order.total_amount),
    }),
  ]);
  return {
    cards: cardOptions(cards),
    has_cards: cards.length > 0,
    // The balance is the agent's account: offered only once that account is the holder's.
    balance: balance === null ? null : usd(centsToNumber(balance)),
    fee_due: fee.due,
    fee_amount_month: usd(fee.amount),
    fee_month: fee.month,
    pay_total: usd(pays.total),
  };
}

async function page(
  s: Services,
  token: string,
  holder: HolderPrincipal | null,
  p?: Problem,
): Promise<Reply> {
  const { order: o, agent: a, cancelledBy } = await findOrder(s, token);
  // Opening a link while logged in connects the agent to the holder (SPEC.md "Authentication" 8).
  if (holder && a.holder_id === null) {
    const c = await s.runtime.ask(accountRef(o.account_id), {
      kind: 'connect',
      agentId: a.id,
      holderId: holder.holderId,
    });
    if (c.connected) a.holder_id = holder.holderId;
  }
  const paid = o.status === 'paid' || o.status === 'filled';
  const cancelled = o.status === 'cancelled';
  const closed =
    !paid && !cancelled && (o.status === 'expired' || o.closes_at <= s.clock.realNow());
  const otherHolder = !!holder && a.holder_id !== null && a.holder_id !== holder.holderId;
  const canPay = !!holder && !paid && !closed && !otherHolder;
  const [facts] = await dealFacts(s, [o]);
  return renderPage(
    'checkout',
    {
      title: `Order from ${a.name}`,
      holder,
      error: p?.message,
      token,
      ...identityView(a),
      market: o.market,
      tick: o.tick,
      offer_key: o.offer_key,
      deal_title: o.deal_title,
      items: o.items,
      qty: o.qty,
      unit_cost: usd(o.unit_cost),
      gross_amount: usd(o.gross_amount),
      fee_amount: usd(o.fee_amount),
      total_amount: usd(o.total_amount),
      status: closed && o.status === 'awaiting_payment' ? 'expired' : o.status,
      status_words: orderStatusWords(
        closed && o.status === 'awaiting_payment' ? 'expired' : o.status,
      ),
      closes: utc(o.closes_at),
      closes_iso: isoOf(o.closes_at),
      pay_total: usd(o.total_amount),
      closes_at: o.closes_at,
      countdown: countdown(o.closes_at, s.clock.realNow()),
      facts,
      scripts: ['/static/countdown.js', '/static/card-input.js'],
      paid,
      expired: closed,
      cancelled,
      declined: cancelledBy === 'holder',
      open: !paid && !closed && !cancelled,
      other_holder: otherHolder,
      can_pay: canPay,
      here_q: encodeURIComponent(`/checkout/${token}`),
      ...(canPay ? await payView(s, holder!, o) : {}),
    },
    p?.status ?? 200,
  );
}

/** A page that cannot be shown (unknown link): a message page for browsers, `{detail}` for JSON clients. */
async function pageOrMessage(
  s: Services,
  req: RequestInfo,
  token: string,
  holder: HolderPrincipal | null,
  p?: Problem,
): Promise<Reply> {
  return webAction(
    req,
    () => page(s, token, holder, p),
    (q) =>
      renderPage(
        'message',
        {
          title: 'Order not found',
          heading: 'Order not found',
          message: q.message,
          is_error: true,
          holder,
        },
        q.status,
      ),
  );
}

/**
 * The confirmation after paying: only for the holder whose agent placed the order. Before it is
 * paid the purchase page is the place to be (303 there).
 */
async function donePage(
  s: Services,
  token: string,
  holder: HolderPrincipal,
  q: DoneQuery,
): Promise<Reply> {
  const { order: o, agent: a, fundedByAgent } = await findOrder(s, token);
  if (a.holder_id !== holder.holderId)
    throw new HttpError(404, 'no order of yours has this purchase link');
  if (o.status !== 'paid' && o.status !== 'filled')
    return { status: 303, headers: { location: `/checkout/${encodeURIComponent(token)}` } };
  const ref = `order:${o.id}`;
  // The order says how it was paid: one paid from a balance used no card, whatever the query string
  // claims (a pay form's redirect carries the card it was sent with).
  const cardQuery: DoneQuery = paidByBalance([o]) ? {} : q;
  const [ledger, cards] = await Promise.all([
    read(s.runtime, 'account.ledger', { accountIds: [o.account_id], limit: 100 }),
    cardQuery.card_id === undefined && cardQuery.card === undefined
      ? Promise.resolve([])
      : read(s.runtime, 'holder.cards', { holderId: holder.holderId }),
  ]);
  const feeCents = ledger
    .filter((e) => e.ref === ref && e.kind === 'monthly_fee')
    .reduce((t, e) => t - Math.round(e.amount * 100), 0);
  const card = paidCardView(cardQuery, cards);
  return renderPage('checkout-done', {
    title: `Order ${o.id} is paid`,
    holder,
    token,
    agent_name: a.name,
    by_agent: fundedByAgent,
    deal_title: o.deal_title,
    qty: o.qty,
    market: o.market,
    tick: o.tick,
    ...confirmationView(o, feeCents, card.card, s.clock),
    ...card,
    scripts: [],
  });
}

/** Browsers go on to the confirmation (JSON clients get the payment, unchanged). */
function paidReply(req: RequestInfo, token: string, body: PayForm | undefined, paid: Paid): Reply {
  return formReply(req, donePath(token, cardOf(body)), {
    order_ids: [paid.order_id],
    round_id: paid.round_id,
    already_paid: paid.already_paid,
    charged: centsToNumber(paid.charged_cents),
    fee: centsToNumber(paid.fee_cents),
    receipt: paid.receipt,
  });
}
