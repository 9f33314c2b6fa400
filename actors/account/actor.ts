// AccountActor ("account:42"): owns a trading account's money and its orders. Its turns place
// orders, fund them (a holder's payment, or the agent's own balance under autonomous funding) and
// flip the agent's autonomous-funding switch. Each turn ends in one transaction (orders share theirs
// with other accounts' orders: order-batch.ts) holding the market's session lock shared
// (market/session-lock.ts): an order is funded before its close or never.
import { connectAgent, lockAgent } from './pairing.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AccountSchema, AgentSchema, MarketSessionSchema } from '../../orm/entities/index.js';
import { ActorError, defineActor } from '../runtime/actor.js';
import { chargeHolder } from '../money/charge.js';
import { appendEvents } from '../events/log.js';
import { instantDate } from '../runtime/sql.js';
import { orderOf } from './views.js';
import type { Payment } from '../money/messages.js';
import { shareSessionLock } from '../market/session-lock.js';
import { OrderBatcher, type Placed } from './order-batch.js';
import { payOrders } from './order-write.js';
import type {
  AccountMessage,
  AccountReplies,
  Connected,
  FundingSet,
  LimitsSet,
  Paid,
  PayoutScheduled,
  ToppedUp,
} from './messages.js';
import { cancelOrder } from './cancel.js';
import { centsToNumber } from '../../src/engine/money.js';
import { schedulePayout, topup } from './holder-money.js';
import { FUNDING_PROFITABLE_TRADES } from '../../src/rules.js';
import { fundingNotYetAllowed, profitableSettledTradesSql } from './funding.js';

type AccountState = { accountId: number };
let batcher: OrderBatcher | undefined;
type OrderRow = {
  id: number;
  round_id: number;
  market: string;
  tick: number;
  offer_key: string;
  qty: number;
  status: string;
  total_cents: number;
  agent_id: number;
  closes_at: number;
  cancelled_by: string | null;
};

export const accountActor = defineActor<AccountState, AccountMessage, AccountReplies>({
  kind: 'account',
  // The order batch writes each order's stored answer in the orders' own statement.
  ownsIdempotency: ['order'],

  async activate(ctx) {
    const id = Number(ctx.id);
    if (!Number.isSafeInteger(id) || !(await ctx.em.count(AccountSchema, { id })))
      throw new ActorError(404, `no account ${ctx.id}`);
    return { accountId: id };
  },

  handlers: {
    async topup(state, msg, ctx): Promise<ToppedUp> {
      return ctx.em.transactional((em) => topup(em, state.accountId, msg));
    },

    async payout(state, msg, ctx): Promise<PayoutScheduled> {
      return ctx.em.transactional((em) => schedulePayout(em, state.accountId, msg, ctx.at));
    },

    async order(state, msg, ctx): Promise<Placed> {
      // Placed with the orders other actors of this worker queue meanwhile (one commit for all).
      batcher ??= new OrderBatcher(() => ctx.em, ctx.log);
      const { kind: _k, ...req } = msg;
      return batcher.submit({ ...req, accountId: state.accountId, idem: ctx.idem });
    },

    async cancel(state, msg, ctx): Promise<AccountReplies['cancel']> {
      return ctx.em.transactional((em) =>
        cancelOrder(em, state.accountId, msg.orderId, msg.who, ctx.at, ctx.baseUrl),
      );
    },

    async pay(state, msg, ctx): Promise<Paid> {
      return ctx.em.transactional((em) => pay(em, state.accountId, msg, ctx.baseUrl));
    },

    async connect(state, msg, ctx): Promise<Connected> {
      return ctx.em.transactional(async (em) => {
        try {
          await connectAgent(em, msg.agentId, msg.holderId, ctx.at, state.accountId);
          return { agent_id: msg.agentId, connected: true };
        } catch (err) {
          if (err instanceof ActorError && err.status === 403)
            return { agent_id: msg.agentId, connected: false };
          throw err;
        }
      });
    },

    async limits(state, msg, ctx): Promise<LimitsSet> {
      return ctx.em.transactional(async (em) => {
        const agent = await lockAgent(em, msg.agentId, state.accountId);
        if (!agent || (agent.holder?.id ?? null) !== msg.holderId)
          throw new ActorError(404, `no agent ${msg.agentId} of yours`);
        await em.nativeUpdate(
          AgentSchema,
          { id: msg.agentId },
          {
            limitMaxOrderCents: msg.maxOrderCents,
            limitMaxDayCents: msg.maxDayCents,
            limitMaxWeekCents: msg.maxWeekCents,
            limitMarkets: msg.markets,
            limitExpiresAt: msg.expiresAt,
          },
        );
        const usd = (c: number | null) => (c === null ? null : centsToNumber(c));
        const set = {
          agent_id: msg.agentId,
          limits: {
            max_order: usd(msg.maxOrderCents),
            max_day: usd(msg.maxDayCents),
            max_week: usd(msg.maxWeekCents),
            markets: msg.markets,
            expires_at: msg.expiresAt,
          },
        };
        await appendEvents(
          em,
          [{ account_id: state.accountId, type: 'limits.changed', data: set }],
          ctx.at,
        );
        return set;
      });
    },

    async funding(state, msg, ctx): Promise<FundingSet> {
      return ctx.em.transactional(async (em) => {
        const agent = await lockAgent(em, msg.agentId, state.accountId);
        if (!agent || (agent.holder?.id ?? null) !== msg.holderId)
          throw new ActorError(404, `no agent ${msg.agentId} of yours`);
        if (msg.enabled) {
          const [won] = await em.execute(`select ${profitableSettledTradesSql('?')} as n`, [
            state.accountId,
          ]);
          if (won.n < FUNDING_PROFITABLE_TRADES)
            throw new ActorError(403, fundingNotYetAllowed(won.n));
        }
        await em.nativeUpdate(
          AgentSchema,
          { id: msg.agentId },
          { autonomousFunding: msg.enabled, fundingChangedAt: instantDate(ctx.at) },
        );
        const set = { agent_id: msg.agentId, autonomous_funding: msg.enabled };
        await appendEvents(
          em,
          [{ account_id: state.accountId, type: 'funding.changed', data: set }],
          ctx.at,
        );
        return set;
      });
    },
  },
});

/** Holds the session lock shared (a close waits for this turn) and refuses a closed session. */
async function sessionOpen(
  em: EntityManager,
  market: string,
  tick: number,
  detail: string,
  status: number,
): Promise<void> {
  await shareSessionLock(em, [market]);
  if (!(await em.count(MarketSessionSchema, { market, tick, closedAt: null })))
    throw new ActorError(status, detail);
}

type PayMessage = Extract<AccountMessage, { kind: 'pay' }>;

/** One payment of a purchase link, in the turn's transaction (with its `order.paid` event). */
async function pay(
  em: EntityManager,
  accountId: number,
  msg: PayMessage,
  baseUrl: string,
): Promise<Paid> {
  const [order] = await em.execute<OrderRow[]>(
    `select id::float8 as id, round_id::float8 as round_id, market, tick::float8 as tick, offer_key, qty, status, total_cents::float8 as total_cents,
            agent_id::float8 as agent_id, closes_at, cancelled_by
       from orders where id = ? and account_id = ? for update`,
    [msg.orderId, accountId],
  );
  if (!order) throw new ActorError(404, `no order ${msg.orderId}`);
  if (order.status === 'refunded')
    throw new ActorError(
      409,
      "this order was refunded at its session's close and cannot be paid again; nothing was charged",
    );
  if (order.status === 'paid' || order.status === 'filled') {
    return {
      order_id: order.id,
      round_id: order.round_id,
      status: 'paid',
      already_paid: true,
      charged_cents: 0,
      fee_cents: 0,
      receipt: null,
    };
  }
  if (order.status === 'cancelled')
    throw new ActorError(
      409,
      order.cancelled_by === 'holder'
        ? 'this order was declined on its purchase page and takes no payment; nothing was charged'
        : 'this order was withdrawn by its agent and takes no payment; nothing was charged',
    );
  const expired =
    "this purchase link expired: the order's session closed before it was paid; nothing was charged";
  // CONTRACT.md "Session boundary": the clock decides, whether or not the record's close has run.
  if (order.status !== 'awaiting_payment' || msg.at >= order.closes_at)
    throw new ActorError(409, expired);
  await sessionOpen(em, order.market, order.tick, expired, 409);
  await connectAgent(em, order.agent_id, msg.holderId, msg.at, accountId);
  const paid = await fund(em, accountId, order, msg.holderId, msg.payment, msg.at, baseUrl);
  await appendEvents(
    em,
    [
      {
        account_id: accountId,
        type: 'order.paid',
        data: await orderOf(em, [accountId], order.id, baseUrl, msg.at),
      },
    ],
    msg.at,
  );
  return {
    order_id: order.id,
    round_id: order.round_id,
    status: 'paid',
    already_paid: false,
    ...paid,
  };
}

/**
 * Funds an order: the holder is charged (the money kernel: the card or the balance, the month's
 * participation fee when due), the order paid and its round funded. Everything rolls back together
 * on a refusal.
 */
async function fund(
  em: EntityManager,
  accountId: number,
  order: OrderRow,
  holderId: number,
  payment: Payment,
  at: number,
  issuer: string,
): Promise<{ charged_cents: number; fee_cents: number; receipt: string | null }> {
  const ref = `order:${order.id}`;
  const c = await chargeHolder(em, {
    holderId,
    payer: accountId,
    payment,
    at,
    debits: [{ ref, cents: order.total_cents }],
    ref,
    roundId: order.round_id,
    // The holder's own hand on the purchase link: a signed approval receipt.
    receipt: { issuer, at, approval: 'holder', agentId: order.agent_id, orders: [order] },
  });
  // The order paid and its round funded (order-write.ts: what a payment writes, the batch's and a cart's too).
  await payOrders(em, {
    roundId: order.round_id,
    orderIds: [order.id],
    source: c.method,
    holderId,
    at,
    receipt: c.receipt,
    feeCents: c.feeCents,
    chargedCents: c.chargedCents,
  });
  return { charged_cents: c.chargedCents, fee_cents: c.feeCents, receipt: c.receipt };
}
