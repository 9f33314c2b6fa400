// An agent's trading (SPEC.md "Orders, positions, trades, account, inventory"): orders are turns of
// the agent's account actor, placed on a deal of the in-memory menu snapshot; everything else reads
// the account's own rows (another account's order or position is simply not found).
import Type, { type Static } from 'typebox';
import { accountRef } from '../../../actors/account/messages.js';
import { read } from '../../../actors/runtime/client.js';
import { LIST_CAPS } from '../../rules.js';
import {
  HttpError,
  json,
  route,
  type AgentContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import {
  AccountAnswer,
  InventoryAnswer,
  LedgerAnswer,
  MyTradesAnswer,
  ORDER_STATUSES,
  OrderCreate,
  OrderPlacedAnswer,
  OrdersAnswer,
  Position,
  ServedOrderAnswer,
  PositionsAnswer,
  RoundsAnswer,
  rowId,
  FundingRefused,
} from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import { recordOpen } from '../../market-data/live-session.js';
import { menuDealOr404, qtyRefusal } from '../order-terms.js';

const limit = (max: number, dflt: number) =>
  Type.Integer({
    minimum: 1,
    maximum: max,
    default: dflt,
    description: `most entries answered (1..${max})`,
  });
type OrdersQuery = Static<typeof OrdersQuery>;
const OrdersQuery = Type.Object({
  status: Type.Optional(
    Type.Union(
      ORDER_STATUSES.map((v) => Type.Literal(v)),
      { description: 'only orders in this status' },
    ),
  ),
  limit: limit(1000, 100),
});
type PositionsQuery = Static<typeof PositionsQuery>;
const PositionsQuery = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal('open'), Type.Literal('settled')], {
      description: 'only open or only settled positions',
    }),
  ),
  limit: limit(1000, 100),
});
const LimitQuery = (max: number, dflt: number) => Type.Object({ limit: limit(max, dflt) });
type LimitQuery = { limit: number };
const OrderParams = Type.Object({ order_id: rowId('order id') });
type OrderParams = Static<typeof OrderParams>;
const PositionParams = Type.Object({ position_id: rowId('position id') });
type PositionParams = Static<typeof PositionParams>;

/** The trading routes, in the order OpenAPI, the MCP tools and the docs list them. */
export function tradingRoutes(s: Services): Route[] {
  return [orderPlacementRoute(s), ...orderReadRoutes(s), ...positionRoutes(s), ...accountRoutes(s)];
}

/** POST /orders: an order on a deal of the current menu. */
function orderPlacementRoute(s: Services): Route {
  return route<unknown, unknown, OrderCreate>({
    method: 'POST',
    path: '/api/v1/orders',
    operationId: 'create_order',
    auth: 'key',
    summary:
      'Order a deal of the current menu; the holder funds it on purchase_url before the close (or pay_from_balance)',
    body: OrderCreate,
    // 403: pay_from_balance before the holder switched autonomous funding on, or over a limit.
    response: { 201: OrderPlacedAnswer, 403: FundingRefused },
    responses: {
      400: { description: 'pay_from_balance with an insufficient balance' },
      404: {
        description: 'unknown market, or the deal is not on the current menu (its session closed)',
      },
      503: {
        description:
          "the record has not opened the deal's session yet (the previous close still runs); retry",
      },
    },
    handler: (c) => createOrder(s, c),
    // The account actor builds the whole answer, so a stored one is answered as it was.
    replay: (placed) => json(placed, 201),
  });
}

/** The agent's orders: the list and one of them. */
function orderReadRoutes(s: Services): Route[] {
  return [
    route<unknown, OrdersQuery>({
      method: 'GET',
      path: '/api/v1/orders',
      operationId: 'list_orders',
      auth: 'key',
      summary: 'My orders, newest first',
      query: OrdersQuery,
      response: { 200: OrdersAnswer },
      handler: (c) => listOrders(s, c),
    }),
    route<OrderParams>({
      method: 'GET',
      path: '/api/v1/orders/{order_id}',
      operationId: 'get_order',
      auth: 'key',
      summary: 'One of my orders',
      params: OrderParams,
      response: { 200: ServedOrderAnswer },
      responses: { 404: { description: 'no such order on my account' } },
      handler: (c) => getOrder(s, c),
    }),
    route<OrderParams>({
      method: 'DELETE',
      path: '/api/v1/orders/{order_id}',
      operationId: 'cancel_order',
      auth: 'key',
      summary:
        'Withdraw one of my orders while it awaits payment: it becomes cancelled and its purchase link takes no payment',
      params: OrderParams,
      response: { 200: ServedOrderAnswer },
      responses: {
        404: { description: 'no such order on my account' },
        409: { description: 'the order is paid, filled, expired or refunded: nothing to withdraw' },
      },
      handler: (c) => cancelOrder(s, c),
    }),
  ];
}

/** The agent's positions: the list and one of them. */
function positionRoutes(s: Services): Route[] {
  return [
    route<unknown, PositionsQuery>({
      method: 'GET',
      path: '/api/v1/positions',
      operationId: 'list_positions',
      auth: 'key',
      summary: 'My positions, newest first',
      query: PositionsQuery,
      response: { 200: PositionsAnswer },
      handler: (c) => listPositions(s, c),
    }),
    route<PositionParams>({
      method: 'GET',
      path: '/api/v1/positions/{position_id}',
      operationId: 'get_position',
      auth: 'key',
      summary: 'One of my positions',
      params: PositionParams,
      response: { 200: Position },
      responses: { 404: { description: 'no such position on my account' } },
      handler: (c) => getPosition(s, c),
    }),
  ];
}

/** What the agent's account holds and did: its trades, the account with its ledger, goods, rounds. */
function accountRoutes(s: Services): Route[] {
  return [
    route<unknown, LimitQuery>({
      method: 'GET',
      path: '/api/v1/trades',
      operationId: 'list_my_trades',
      auth: 'key',
      summary: 'My executed trades as they appear in the market record',
      query: LimitQuery(2000, 200),
      response: { 200: MyTradesAnswer },
      handler: (c) => listMyTrades(s, c),
    }),
    route<unknown, LimitQuery>({
      method: 'GET',
      path: '/api/v1/account',
      operationId: 'get_account',
      auth: 'key',
      summary: 'My trading account: balance, counts, realised P&L, monthly fee, recent ledger',
      query: LimitQuery(500, 50),
      response: { 200: AccountAnswer },
      handler: (c) => getAccount(s, c),
    }),
    route<unknown, LimitQuery>({
      method: 'GET',
      path: '/api/v1/account/ledger',
      operationId: 'list_ledger',
      auth: 'key',
      summary: 'My ledger entries, newest first',
      query: LimitQuery(500, 50),
      response: { 200: LedgerAnswer },
      handler: (c) => listLedger(s, c),
    }),
    route({
      method: 'GET',
      path: '/api/v1/inventory',
      operationId: 'get_inventory',
      auth: 'key',
      summary: `Owned goods (unsold units of settled positions; the newest ${LIST_CAPS.inventory}) and open listings`,
      response: { 200: InventoryAnswer },
      handler: (c) => getInventory(s, c),
    }),
    route<unknown, LimitQuery>({
      method: 'GET',
      path: '/api/v1/rounds',
      operationId: 'list_rounds',
      auth: 'key',
      summary: 'My trade rounds (orders funded together), newest first',
      query: LimitQuery(1000, 100),
      response: { 200: RoundsAnswer },
      handler: (c) => listRounds(s, c),
    }),
  ];
}

/** Places an order on a deal of the current menu: a turn of the agent's account actor. */
async function createOrder(
  s: Services,
  { body, principal, idem }: AgentContext<unknown, unknown, OrderCreate>,
): Promise<Reply> {
  const base = s.config.baseUrl;
  const { market, snap, deal, idx, at } = menuDealOr404(s, body.market, body.offer_key);
  const tooMany = qtyRefusal(deal, body.qty);
  if (tooMany) throw tooMany;
  await recordOpen(s, snap);
  const placed = await s.runtime.ask(
    accountRef(principal.accountId),
    {
      kind: 'order',
      agentId: principal.agentId,
      market,
      tick: snap.tick,
      idx,
      offerKey: deal.key,
      qty: body.qty,
      closesAt: snap.closesAt,
      at,
      payFromBalance: body.pay_from_balance,
      baseUrl: base,
      // grouped: the worker places the orders it holds in one transaction, so they answer together
    },
    { idem, grouped: true },
  );
  return json(placed, 201);
}

async function listOrders(
  s: Services,
  { query, principal }: AgentContext<unknown, OrdersQuery>,
): Promise<Reply> {
  return json({
    orders: await read(s.runtime, 'account.orders', {
      accountIds: [principal.accountId],
      ...query,
      baseUrl: s.config.baseUrl,
    }),
  });
}

async function getOrder(
  s: Services,
  { params, principal }: AgentContext<OrderParams>,
): Promise<Reply> {
  const order = await read(s.runtime, 'account.order', {
    accountIds: [principal.accountId],
    orderId: params.order_id,
    baseUrl: s.config.baseUrl,
  });
  return json(order ?? raise(notMine('order', params.order_id)));
}

/** Withdraws an order awaiting payment: a turn of the agent's account actor (order.cancelled). */
async function cancelOrder(
  s: Services,
  { params, principal, idem }: AgentContext<OrderParams>,
): Promise<Reply> {
  return json(
    await s.runtime.ask(
      accountRef(principal.accountId),
      { kind: 'cancel', orderId: params.order_id, who: { by: 'agent' } },
      { idem },
    ),
  );
}

async function listPositions(
  s: Services,
  { query, principal }: AgentContext<unknown, PositionsQuery>,
): Promise<Reply> {
  return json({
    positions: await read(s.runtime, 'account.positions', {
      accountIds: [principal.accountId],
      ...query,
    }),
  });
}

async function getPosition(
  s: Services,
  { params, principal }: AgentContext<PositionParams>,
): Promise<Reply> {
  const position = await read(s.runtime, 'account.position', {
    accountIds: [principal.accountId],
    positionId: params.position_id,
  });
  return json(position ?? raise(notMine('position', params.position_id)));
}

async function listMyTrades(
  s: Services,
  { query, principal }: AgentContext<unknown, LimitQuery>,
): Promise<Reply> {
  return json({
    trades: await read(s.runtime, 'account.trades', {
      accountIds: [principal.accountId],
      limit: query.limit,
    }),
  });
}

async function getAccount(
  s: Services,
  { query, principal }: AgentContext<unknown, LimitQuery>,
): Promise<Reply> {
  const [account] = await read(s.runtime, 'account.summaries', {
    accountIds: [principal.accountId],
    ledgerLimit: query.limit,
    baseUrl: s.config.baseUrl,
    at: s.clock.realNow(),
  });
  return json(account);
}

async function listLedger(
  s: Services,
  { query, principal }: AgentContext<unknown, LimitQuery>,
): Promise<Reply> {
  return json({
    ledger: await read(s.runtime, 'account.ledger', {
      accountIds: [principal.accountId],
      limit: query.limit,
    }),
  });
}

async function getInventory(s: Services, { principal }: AgentContext): Promise<Reply> {
  return json(await read(s.runtime, 'account.inventory', { accountIds: [principal.accountId] }));
}

async function listRounds(
  s: Services,
  { query, principal }: AgentContext<unknown, LimitQuery>,
): Promise<Reply> {
  return json({
    rounds: await read(s.runtime, 'account.rounds', {
      accountIds: [principal.accountId],
      limit: query.limit,
    }),
  });
}

const notMine = (what: string, id: number) =>
  new HttpError(404, `no ${what} ${id} on your account`);

function raise(err: Error): never {
  throw err;
}
