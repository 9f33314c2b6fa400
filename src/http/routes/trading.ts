// An agent's trading (SPEC.md "Orders, positions, trades, account, inventory"): orders are turns of
// the agent's account actor, placed on a deal of the in-memory menu snapshot; everything else reads
// the account's own rows (another account's order or position is simply not found).
import Type from 'typebox';
import type { OrderPlaced } from '../../../actors/account/messages.js';
import { read } from '../../../actors/runtime/client.js';
import { LIST_CAPS } from '../../rules.js';
import { positionTerms } from '../../engine/index.js';
import type { AgentPrincipal } from '../auth/keys.js';
import { HttpError, json, route, type Route } from '../route.js';
import type { Services } from '../services.js';
import { marketOr404, menuSnapshots } from './markets.js';
import { dealNotOnMenu } from '../../rules.js';

const OrderCreate = Type.Object({
  market: Type.String({ description: 'm15, m45, h2 or h10' }),
  offer_key: Type.String({ description: 'a deal key of the market\'s current menu' }),
  qty: Type.Integer({ minimum: 1, description: 'units, at most the deal\'s max_qty' }),
  pay_from_balance: Type.Boolean({ default: false, description: 'fund at once from the account balance (needs autonomous funding)' }),
});
type OrderCreate = { market: string; offer_key: string; qty: number; pay_from_balance: boolean };

const limit = (max: number, dflt: number) => Type.Integer({ minimum: 1, maximum: max, default: dflt });
const OrdersQuery = Type.Object({
  status: Type.Optional(Type.Union(['awaiting_payment', 'paid', 'filled', 'expired', 'refunded'].map((v) => Type.Literal(v)))),
  limit: limit(1000, 100),
});
const PositionsQuery = Type.Object({ status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('settled')])), limit: limit(1000, 100) });
const OrderParams = Type.Object({ order_id: Type.Integer({ minimum: 1 }) });
const PositionParams = Type.Object({ position_id: Type.Integer({ minimum: 1 }) });

const me = (principal: unknown) => principal as AgentPrincipal;

export function tradingRoutes(s: Services): Route[] {
  const base = s.config.baseUrl;
  const snapshots = menuSnapshots(s);
  const notMine = (what: string, id: number) => new HttpError(404, `no ${what} ${id} on your account`);

  return [
    route<unknown, unknown, OrderCreate>({
      method: 'POST', path: '/api/v1/orders', auth: 'key',
      summary: 'Order a deal of the current menu; the holder funds it on purchase_url before the close (or pay_from_balance)',
      body: OrderCreate,
      responses: {
        201: { description: 'the order, with purchase_url, closes_at and instructions' },
        400: { description: 'pay_from_balance with an insufficient balance' },
        403: { description: 'pay_from_balance before the holder switched autonomous funding on' },
        404: { description: 'unknown market, or the deal is not on the current menu (its session closed)' },
      },
      handler: async ({ body, principal, idem }) => {
        const market = marketOr404(body.market);
        const snap = snapshots.get(market);
        const row = snap.rows.get(body.offer_key);
        // CONTRACT.md "Session boundary": past tick_closes_at the deal is gone, even while its close runs.
        if (!row || s.clock.realNow() >= snap.closesAt) {
          throw new HttpError(404, dealNotOnMenu(base, market, body.offer_key, `is not on the current menu of ${market} (session ${snap.tick})`));
        }
        const { deal, idx } = row;
        if (body.qty > deal.max_qty) {
          throw new HttpError(422, [{ loc: ['body', 'qty'], msg: `Input should be less than or equal to ${deal.max_qty}`, type: 'less_than_equal', input: body.qty, ctx: { le: deal.max_qty } }]);
        }
        const p = me(principal);
        const placed = await s.runtime.ask<OrderPlaced>(`account:${p.accountId}`, {
          kind: 'order', agentId: p.agentId, market, tick: snap.tick, idx, offerKey: deal.key, qty: body.qty,
          closesAt: snap.closesAt, payFromBalance: body.pay_from_balance, baseUrl: base,
        }, { idem });
        return json(placed, 201);
      },
      // The account actor builds the whole answer, so a stored one is answered as it was.
      replay: (placed) => json(placed, 201),
    }),
    route<unknown, { status?: string; limit: number }>({
      method: 'GET', path: '/api/v1/orders', auth: 'key', summary: 'My orders, newest first',
      query: OrdersQuery,
      handler: async ({ query, principal }) => json({ orders: await read(s.runtime, 'account.orders', { accountIds: [me(principal).accountId], ...query, baseUrl: base }) }),
    }),
    route<{ order_id: number }>({
      method: 'GET', path: '/api/v1/orders/{order_id}', auth: 'key', summary: 'One of my orders',
      params: OrderParams,
      responses: { 404: { description: 'no such order on my account' } },
      handler: async ({ params, principal }) => json((await read(s.runtime, 'account.order', { accountIds: [me(principal).accountId], orderId: params.order_id, baseUrl: base })) ?? raise(notMine('order', params.order_id))),
    }),
    route<unknown, { status?: 'open' | 'settled'; limit: number }>({
      method: 'GET', path: '/api/v1/positions', auth: 'key', summary: 'My positions, newest first',
      query: PositionsQuery,
      handler: async ({ query, principal }) => json({ positions: await read(s.runtime, 'account.positions', { accountIds: [me(principal).accountId], ...query }) }),
    }),
    route<{ position_id: number }>({
      method: 'GET', path: '/api/v1/positions/{position_id}', auth: 'key', summary: 'One of my positions',
      params: PositionParams,
      responses: { 404: { description: 'no such position on my account' } },
      handler: async ({ params, principal }) => json((await read(s.runtime, 'account.position', { accountIds: [me(principal).accountId], positionId: params.position_id })) ?? raise(notMine('position', params.position_id))),
    }),
    route<unknown, { limit: number }>({
      method: 'GET', path: '/api/v1/trades', auth: 'key', summary: 'My executed trades as they appear in the market record',
      query: Type.Object({ limit: limit(2000, 200) }),
      handler: async ({ query, principal }) => json({ trades: await read(s.runtime, 'account.trades', { accountIds: [me(principal).accountId], limit: query.limit }) }),
    }),
    route<unknown, { limit: number }>({
      method: 'GET', path: '/api/v1/account', auth: 'key', summary: 'My trading account: balance, counts, realised P&L, monthly fee, recent ledger',
      query: Type.Object({ limit: limit(500, 50) }),
      handler: async ({ query, principal }) => json((await read(s.runtime, 'account.summaries', { accountIds: [me(principal).accountId], ledgerLimit: query.limit, baseUrl: base }))[0]),
    }),
    route<unknown, { limit: number }>({
      method: 'GET', path: '/api/v1/account/ledger', auth: 'key', summary: 'My ledger entries, newest first',
      query: Type.Object({ limit: limit(500, 50) }),
      handler: async ({ query, principal }) => json({ ledger: await read(s.runtime, 'account.ledger', { accountIds: [me(principal).accountId], limit: query.limit }) }),
    }),
    route({
      method: 'GET', path: '/api/v1/inventory', auth: 'key', summary: `Owned goods (unsold units of settled positions; the newest ${LIST_CAPS.inventory}) and open listings`,
      handler: async ({ principal }) => json(await read(s.runtime, 'account.inventory', { accountIds: [me(principal).accountId] })),
    }),
    route<unknown, { limit: number }>({
      method: 'GET', path: '/api/v1/rounds', auth: 'key', summary: 'My trade rounds (orders funded together), newest first',
      query: Type.Object({ limit: limit(1000, 100) }),
      handler: async ({ query, principal }) => json({ rounds: await read(s.runtime, 'account.rounds', { accountIds: [me(principal).accountId], limit: query.limit }) }),
    }),
  ];
}

function raise(err: Error): never {
  throw err;
}
