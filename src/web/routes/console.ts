// The holder's console (SPEC.md "Web routes"): overview (accounts, Gold Coins, payouts, stored cards
// and the money forms), positions, orders, ledger, the timeline, and agents with the
// autonomous-funding switch, the grants and holder-made keys. The holder's data is every account
// whose holder is them and every account of an agent connected to them; rows come from the same
// read models as the agents' API.
import Type, { type Static } from 'typebox';
import {
  holderRef,
  type GrantMessage,
  type HolderAccount,
  type HolderMessage,
  type HolderReplies,
} from '../../../actors/holder/messages.js';
import { cardOptions } from '../pay-form.js';
import { accountRef, type FundingSet, type LimitsSet } from '../../../actors/account/messages.js';
import {
  Expiry,
  LIMIT_LABELS,
  LIMIT_WORDS,
  LimitsFields,
  limitsOfForm,
  marketChoices,
} from '../limits-form.js';
import { FUNDING_PROFITABLE_TRADES } from '../../rules.js';
import { centsToNumber } from '../../engine/index.js';
import { read } from '../../../actors/runtime/client.js';
import type { HolderPrincipal } from '../../http/authenticators/holder-session.js';
import { renderPage } from '../pages.js';
import {
  HttpError,
  Media,
  HTML,
  htmlPage,
  json,
  route,
  type HolderContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import {
  FundingForm,
  LimitsForm,
  GrantForm,
  RevokedForm,
  TIMELINE_CURSOR_PATTERN,
  TIMELINE_PAGE_MAX,
  TimelineAnswer,
  rowId,
} from '../../schemas/index.js';
import type { Services } from '../../http/services.js';
import {
  enteredOf,
  holderFormRoute,
  invalidForm,
  refill,
  usd,
  wantsJson,
  webAction,
  type HolderForm,
  type Problem,
} from '../answers.js';
import { consoleReply, noticeOf, noticeText, type Notice } from '../console-notice.js';
import { GOLD_COINS, PAYOUTS } from '../../payments/terms.js';
import { agentKeyRoute, moneyRoutes } from './money.js';
import { keyRevokeRoute } from './key-revoke.js';
import { CHART_H, CHART_W, chartPoints } from '../charts.js';
import {
  EVENT_WORDS,
  FIGURES,
  LEDGER_WORDS,
  activityView,
  balanceChart,
  openView,
  refWords,
  waitingView,
  wordsOf,
} from '../console-view.js';
import type { CartDetail } from '../../../actors/cart/messages.js';
import { isoOf, orderStatusWords } from '../checkout-view.js';
import { receiptView } from '../receipt-view.js';

const PAGE_ROWS = 100;

const TABS = [
  { href: '/console', label: 'Overview' },
  { href: '/console/positions', label: 'Positions' },
  { href: '/console/orders', label: 'Orders' },
  { href: '/console/ledger', label: 'Ledger' },
  { href: '/console/inventory', label: 'Inventory' },
  { href: '/console/timeline', label: 'Timeline' },
  { href: '/console/agents', label: 'Agents' },
  { href: '/console/money', label: 'Money' },
];

/** Events a timeline page shows unless `limit` says otherwise. */
const TIMELINE_PAGE = 50;
const TimelineQuery = Type.Object({
  before: Type.Optional(
    Type.String({
      pattern: TIMELINE_CURSOR_PATTERN,
      description: 'a cursor from the previous page: the events older than it',
    }),
  ),
  limit: Type.Integer({
    minimum: 1,
    maximum: TIMELINE_PAGE_MAX,
    default: TIMELINE_PAGE,
    description: 'events per page',
  }),
});
type TimelineQuery = Static<typeof TimelineQuery>;

const when = (unix: number | null) =>
  unix === null ? '' : `${new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** Served amounts (numbers in USD) shown with 2 decimals; other fields untouched. */
function money<T extends Record<string, unknown>>(row: T, keys: string[]): T {
  const out: Record<string, unknown> = { ...row };
  for (const k of keys) out[k] = usd(row[k] as number | null);
  return out as T;
}

const STATUSES = ['', 'open', 'settled'] as const;
const PositionsQuery = Type.Object({
  status: Type.Union(
    STATUSES.map((v) => Type.Literal(v)),
    { default: '' },
  ),
});
type PositionsQuery = { status: '' | 'open' | 'settled' };
type FundingFields = { enabled: 'on' | 'off' };

type ConsoleView = Record<string, unknown>;
type Loader<Q> = (holder: HolderPrincipal, query: Q) => Promise<ConsoleView>;

/** The agents tab again, with a refused form's problem. */
type AgentsTab = (holder: HolderPrincipal, p?: Problem) => Promise<Reply>;

export function webConsoleRoutes(s: Services): Route[] {
  const agentsTab: AgentsTab = (holder, p) => agentsPage(s, holder, p);
  return [
    ...consoleTabRoutes(s),
    ...agentSettingRoutes(s, agentsTab),
    ...grantRoutes(s, agentsTab),
    ...moneyRoutes(s, (holder, p) => moneyPage(s, holder, p)),
    agentKeyRoute(s, agentsTab),
    keyRevokeRoute(s, agentsTab),
  ];
}

/** The console's pages (GET): the tabs, an order's receipt, the timeline. */
function consoleTabRoutes(s: Services): Route[] {
  return [
    consolePage(s, '/console', 'console', 'Console', (h) => overview(s, h)),
    consolePage<PositionsQuery>(
      s,
      '/console/positions',
      'console-positions',
      'Positions',
      (h, q) => positionsView(s, h, q),
      PositionsQuery,
    ),
    consolePage(s, '/console/orders', 'console-orders', 'Orders', (h) => ordersView(s, h)),
    route<{ order_id: number }>({
      method: 'GET',
      path: '/console/orders/{order_id}/receipt',
      auth: 'holder',
      params: Type.Object({ order_id: rowId('the order') }),
      summary:
        "Console: a paid order's signed approval receipt, readable (what, how much, when, approved how), with the JWS and how to verify it",
      response: { 200: htmlPage('the receipt') },
      responses: { 404: { description: 'no order of yours, or one without a receipt' } },
      handler: (c) => showReceipt(s, c),
    }),
    consolePage(s, '/console/ledger', 'console-ledger', 'Ledger', (h) => ledgerView(s, h)),
    consolePage(s, '/console/inventory', 'console-inventory', 'Inventory', (h) =>
      inventoryView(s, h),
    ),
    consolePage(s, '/console/agents', 'console-agents', 'Agents', (h) => agentsView(s, h)),
    consolePage(s, '/console/money', 'console-money', 'Money', (h) => moneyView(s, h)),
    route<unknown, TimelineQuery>({
      method: 'GET',
      path: '/console/timeline',
      auth: 'holder',
      query: TimelineQuery,
      summary:
        'Console: every event of your accounts, newest first, paged by before= (a cursor) and limit',
      response: {
        200: new Media('the timeline: a page, or the events as JSON (Accept: application/json)', {
          [HTML]: undefined,
          'application/json': TimelineAnswer,
        }),
      },
      handler: (c) => showTimeline(s, c),
    }),
  ];
}

/** An agent's settings: the autonomous-funding switch and the spending limits. */
function agentSettingRoutes(s: Services, agentsTab: AgentsTab): Route[] {
  return [
    route<{ agent_id: number }, unknown, FundingFields>({
      method: 'POST',
      path: '/console/agents/{agent_id}/funding',
      auth: 'holder',
      response: { 200: FundingForm },
      responses: { 303: { description: 'browsers: sent on to the next page' } },
      summary: `Autonomous-funding switch of an agent (on after ${FUNDING_PROFITABLE_TRADES} settled trades in profit; off at any time)`,
      params: Type.Object({ agent_id: rowId('the agent') }),
      body: Type.Object({ enabled: Type.Union([Type.Literal('on'), Type.Literal('off')]) }),
      onInvalid: invalidForm<HolderPrincipal>(
        { enabled: 'choose on or off' },
        (_req, p, _raw, holder) => agentsTab(holder, p),
      ),
      handler: (c) => setFunding(s, c),
      replay: (set: FundingSet, { req }) => fundingReply(req, set, s.config.baseUrl),
    }),
    route<{ agent_id: number }, unknown, LimitsFields>({
      method: 'POST',
      path: '/console/agents/{agent_id}/limits',
      auth: 'holder',
      response: { 200: LimitsForm },
      responses: {
        303: { description: 'browsers: sent on to the next page' },
        404: { description: 'no such agent of yours' },
      },
      summary:
        'Spending limits of an agent: what it may fund without you (pay_from_balance, execute checkouts); empty: no limit',
      params: Type.Object({ agent_id: rowId('the agent') }),
      body: LimitsFields,
      onInvalid: invalidForm<HolderPrincipal>(LIMIT_WORDS, (_req, p, _raw, holder) =>
        agentsTab(holder, p),
      ),
      handler: (c) => setLimits(s, c),
      replay: (set: LimitsSet, { req }) => limitsReply(req, set, s.config.baseUrl),
    }),
  ];
}

/** A console tab (GET): the holder's view `load` makes, in the console's layout. */
function consolePage<Q>(
  s: Services,
  path: string,
  name: string,
  title: string,
  load: Loader<Q>,
  query?: ReturnType<typeof Type.Object>,
): Route {
  return route<unknown, Q>({
    method: 'GET',
    path,
    auth: 'holder',
    summary: `Console: ${title.toLowerCase()}`,
    query,
    response: { 200: htmlPage(`the console: ${title.toLowerCase()}`) },
    handler: (c) => showConsolePage(s, name, title, load, c),
  });
}

async function showConsolePage<Q>(
  s: Services,
  name: string,
  title: string,
  load: Loader<Q>,
  { req, principal: holder, query }: HolderContext<unknown, Q>,
): Promise<Reply> {
  return show(s, req, name, title, holder, await load(holder, query));
}

async function showReceipt(
  s: Services,
  { req, params, principal }: HolderContext<{ order_id: number }>,
): Promise<Reply> {
  return webAction(
    req,
    () => receiptPage(s, req, principal, params.order_id),
    (p) =>
      renderPage(
        'message',
        {
          title: 'No receipt',
          heading: 'No receipt',
          message: p.message,
          is_error: true,
          holder: principal,
        },
        p.status,
      ),
  );
}

/** A page of the timeline: HTML, or the page as JSON for a client that asks for it. */
async function showTimeline(
  s: Services,
  { req, principal: holder, query: q }: HolderContext<unknown, TimelineQuery>,
): Promise<Reply> {
  const page = await read(s.runtime, 'holder.timeline', {
    holderId: holder.holderId,
    before: q.before ?? null,
    limit: q.limit,
  });
  if (wantsJson(req)) return json(page);
  const more = (cursor: string) =>
    `/console/timeline?before=${encodeURIComponent(cursor)}${q.limit === TIMELINE_PAGE ? '' : `&limit=${q.limit}`}`;
  return show(s, req, 'console-timeline', 'Timeline', holder, {
    events: page.events.map((e) => ({
      ...e,
      what: wordsOf(EVENT_WORDS, e.kind),
      text: refWords(e.text),
      iso: isoOf(e.at),
      when: `${new Date(e.at * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`,
      amount: e.amount === null ? '' : usd(e.amount),
      coins: e.coins === null ? '' : e.coins.toFixed(2),
      account_id: e.account_id ?? '',
    })),
    has_events: page.events.length > 0,
    older: page.next_before === null ? null : more(page.next_before),
    paged: q.before !== undefined,
  });
}

async function setFunding(
  s: Services,
  {
    req,
    params,
    body,
    principal: holder,
    idem,
  }: HolderContext<{ agent_id: number }, unknown, FundingFields>,
): Promise<Reply> {
  return webAction(
    req,
    async () => {
      const [agent] = await agentsOf(s, holder.holderId, params.agent_id);
      if (!agent) throw new HttpError(404, `no agent ${params.agent_id} of yours`);
      const set = await s.runtime.ask(
        accountRef(agent.account_id),
        {
          kind: 'funding',
          agentId: agent.id,
          holderId: holder.holderId,
          enabled: body.enabled === 'on',
        },
        { idem },
      );
      return fundingReply(req, set, s.config.baseUrl);
    },
    (p) => agentsPage(s, holder, p),
  );
}

async function setLimits(
  s: Services,
  {
    req,
    params,
    body,
    principal: holder,
    idem,
  }: HolderContext<{ agent_id: number }, unknown, LimitsFields>,
): Promise<Reply> {
  return webAction(
    req,
    async () => {
      const [agent] = await agentsOf(s, holder.holderId, params.agent_id);
      if (!agent) throw new HttpError(404, `no agent ${params.agent_id} of yours`);
      const set = await s.runtime.ask(
        accountRef(agent.account_id),
        { kind: 'limits', agentId: agent.id, holderId: holder.holderId, ...limitsOfForm(body) },
        { idem },
      );
      return limitsReply(req, set, s.config.baseUrl);
    },
    (p) => agentsPage(s, holder, { ...p, entered: enteredOf(req.url, body) }),
    LIMIT_WORDS,
  );
}

async function positionsView(
  s: Services,
  holder: HolderPrincipal,
  q: PositionsQuery,
): Promise<ConsoleView> {
  const rows = await read(s.runtime, 'account.positions', {
    holderId: holder.holderId,
    status: q.status || undefined,
    limit: PAGE_ROWS,
  });
  return {
    status: q.status,
    filters: STATUSES.map((v) => ({ value: v, label: v || 'all', selected: v === q.status })),
    rows: rows.map((r) =>
      money(r, ['unit_cost', 'cost_basis', 'revenue', 'pnl_so_far', 'realized_pnl']),
    ),
  };
}

async function ordersView(s: Services, holder: HolderPrincipal): Promise<ConsoleView> {
  const rows = await read(s.runtime, 'account.orders', {
    holderId: holder.holderId,
    limit: PAGE_ROWS,
    baseUrl: s.config.baseUrl,
  });
  return {
    rows: rows.map((r) => ({
      ...money(r, ['unit_cost', 'fee_amount', 'total_amount']),
      created: when(r.created_at as number),
      payment_source: r.payment_source ?? '',
      awaiting: r.status === 'awaiting_payment',
      purchase_path: r.purchase_url ? new URL(r.purchase_url).pathname : null,
      status_words: orderStatusWords(r.status as string),
      receipt_path: r.receipt ? `/console/orders/${r.id}/receipt` : null,
      no_receipt: !r.receipt && r.paid_at !== null,
    })),
  };
}

async function ledgerView(s: Services, holder: HolderPrincipal): Promise<ConsoleView> {
  const rows = await read(s.runtime, 'account.ledger', {
    holderId: holder.holderId,
    limit: PAGE_ROWS,
  });
  return {
    rows: rows.map((r) => ({
      ...money(r, ['amount', 'balance_after']),
      created: when(r.created_at),
      what: wordsOf(LEDGER_WORDS, r.kind),
      for: refWords(r.ref),
      neg: r.amount < 0,
    })),
  };
}

async function inventoryView(s: Services, holder: HolderPrincipal): Promise<ConsoleView> {
  const items = await read(s.runtime, 'account.holderInventory', { holderId: holder.holderId });
  return {
    chart_w: CHART_W,
    chart_h: CHART_H,
    items: items.map((i) => ({
      ...i,
      created: when(i.created_at),
      owners: i.provenance.length,
      points: chartPoints(i.history.price_close),
    })),
  };
}

/** The holder's agents (up to LIST_CAPS.agents), or just `agentId` if it is one of them. */
const agentsOf = (s: Services, holderId: number, agentId?: number) =>
  read(s.runtime, 'holder.agents', { holderId, agentId });

/** One console page: the shared tabs, the holder in the layout, and a message when something was refused or done. */
async function render(
  s: Services,
  name: string,
  title: string,
  holder: HolderPrincipal,
  view: ConsoleView,
  p?: Problem,
  notice?: string | null,
): Promise<Reply> {
  const href = name === 'console' ? '/console' : `/console/${name.replace('console-', '')}`;
  const tabs = TABS.map((t) => ({ ...t, current: t.href === href }));
  return renderPage(
    name,
    { title, holder, tabs, error: p?.message, notice, ...view },
    p?.status ?? 200,
  );
}

/** A console page asked for (GET): with the notice of the form just posted, if any, cleared once shown. */
async function show(
  s: Services,
  req: RequestInfo,
  name: string,
  title: string,
  holder: HolderPrincipal,
  view: ConsoleView,
): Promise<Reply> {
  const { notice, clear } = noticeOf(req, s.config.baseUrl);
  const page = await render(
    s,
    name,
    title,
    holder,
    view,
    undefined,
    notice && (await noticeWords(s, holder, notice)),
  );
  return { ...page, headers: { ...page.headers, ...clear } };
}

/** A notice's words, naming only the holder's own accounts and agents as they are now. */
async function noticeWords(
  s: Services,
  holder: HolderPrincipal,
  n: Notice,
): Promise<string | undefined> {
  const [money, agents] = await Promise.all([holderMoney(s, holder), agentsOf(s, holder.holderId)]);
  return noticeText(n, {
    account: (id) => {
      const a = money.accounts.find((x) => x.account_id === id);
      return a && accountOwner(a);
    },
    agent: (id) => agents.find((g) => g.id === id),
  });
}

const holderMoney = (s: Services, holder: HolderPrincipal) =>
  read(s.runtime, 'holder.money', { holderId: holder.holderId });

/** Every account the holder owns (Manual desk first) with its balance and counts, and the month's fee. */
const accountsView = async (s: Services, holder: HolderPrincipal) => {
  const [money, fee] = await Promise.all([
    holderMoney(s, holder),
    read(s.runtime, 'account.monthlyFee', { holderId: holder.holderId, at: s.clock.realNow() }),
  ]);
  const accounts = money.accounts;
  // Summed in integer cents (counts are whole numbers).
  const sum = (
    k:
      | 'balance_cents'
      | 'open_positions'
      | 'settled_positions'
      | 'pending_orders'
      | 'realized_cents',
  ) => accounts.reduce((t, a) => t + a[k], 0);
  return {
    money,
    view: {
      accounts: accounts.map((a) => ({
        ...a,
        owner: accountOwner(a),
        balance: usd(centsToNumber(a.balance_cents)),
        realized_pnl_total: usd(centsToNumber(a.realized_cents)),
        realized_neg: a.realized_cents < 0,
      })),
      has_agents: accounts.some((a) => a.kind === 'agent'),
      totals: {
        balance: usd(centsToNumber(sum('balance_cents'))),
        realized_pnl_total: usd(centsToNumber(sum('realized_cents'))),
        realized_neg: sum('realized_cents') < 0,
        open_positions: sum('open_positions'),
        settled_positions: sum('settled_positions'),
        pending_orders: sum('pending_orders'),
      },
      gc_balance: (money.gc_balance_hundredths / 100).toFixed(2),
      fee: { ...fee, amount: usd(fee.amount), charged: when(fee.charged_at) },
    },
  };
};

/** The holder's carts with lines still to pay (up to 10), with their lines' deadlines. */
async function openCarts(s: Services, holder: HolderPrincipal): Promise<CartDetail[]> {
  const caller = { kind: 'holder' as const, holderId: holder.holderId };
  const at = s.clock.realNow();
  const entries = (await read(s.runtime, 'cart.list', { caller, baseUrl: s.config.baseUrl, at }))
    .filter((e) => e.open_items > 0)
    .slice(0, 10);
  const details = await Promise.all(
    entries.map((e) =>
      read(s.runtime, 'cart.detail', { caller, cartId: e.id, baseUrl: s.config.baseUrl, at }),
    ),
  );
  return details.filter((c): c is CartDetail => c !== null);
}

/** The dashboard: balances and the result over time, the open positions' value, what waits for the holder, recent activity. */
const overview = async (s: Services, holder: HolderPrincipal): Promise<ConsoleView> => {
  const now = s.clock.realNow();
  const [{ view }, figures, events, awaiting, carts] = await Promise.all([
    accountsView(s, holder),
    // Exact totals over every ledger entry and open position, and the chart's newest entries.
    read(s.runtime, 'holder.figures', { holderId: holder.holderId, window: PAGE_ROWS }),
    read(s.runtime, 'holder.timeline', { holderId: holder.holderId, before: null, limit: 10 }),
    read(s.runtime, 'account.orders', {
      holderId: holder.holderId,
      status: 'awaiting_payment',
      limit: PAGE_ROWS,
      baseUrl: s.config.baseUrl,
    }),
    openCarts(s, holder),
  ]);
  const waiting = waitingView(awaiting, carts, now);
  return {
    ...view,
    chart: balanceChart(figures),
    figures: FIGURES,
    open: openView(figures.open),
    waiting,
    has_waiting: waiting.length > 0,
    activity: activityView(events.events),
    has_activity: events.events.length > 0,
    scripts: ['/static/countdown.js'],
  };
};

/** The money tab: top-ups, Gold Coin packs, payouts, stored cards; a refused form shows what was typed into it. */
const moneyView = async (
  s: Services,
  holder: HolderPrincipal,
  p?: Problem,
): Promise<ConsoleView> => {
  const [{ money, view }, cards] = await Promise.all([
    accountsView(s, holder),
    read(s.runtime, 'holder.cards', { holderId: holder.holderId }),
  ]);
  const amountForm = (action: string) => {
    const f = refill(action, { account_id: '', amount: '' }, p);
    return {
      ...f,
      accounts: view.accounts.map((a) => ({
        ...a,
        selected: String(a.account_id) === f.account_id,
      })),
    };
  };
  const pack = refill('/console/coins', { pack: '' }, p).pack;
  return {
    ...view,
    topup: amountForm('/console/topup'),
    payout: amountForm('/console/payout'),
    packs: GOLD_COINS.packs.map((n) => ({
      coins: n,
      price: usd(n * GOLD_COINS.coin_price),
      selected: String(n) === pack,
    })),
    coin_price: usd(GOLD_COINS.coin_price),
    payouts: money.payouts.map((p) => ({
      ...p,
      amount: usd(centsToNumber(p.amount_cents)),
      commission: usd(centsToNumber(p.commission_cents)),
      net: usd(centsToNumber(p.net_cents)),
      pays: when(p.pay_at),
      paid: when(p.paid_at),
      requested: when(p.created_at),
    })),
    has_payouts: money.payouts.length > 0,
    payout_terms: {
      minimum: usd(PAYOUTS.minimum),
      commission_pct: PAYOUTS.commission_pct,
      delay_days: PAYOUTS.delay_days,
    },
    cards: cardOptions(cards),
    has_cards: cards.length > 0,
    topup_card: { no_cvc: true }, // SPEC.md's top-up form has no cvc
    scripts: ['/static/card-input.js'],
  };
};
const moneyPage = async (s: Services, holder: HolderPrincipal, p?: Problem) =>
  render(s, 'console-money', 'Money', holder, await moneyView(s, holder, p), p);

const agentsView = async (
  s: Services,
  holder: HolderPrincipal,
  p?: Problem,
): Promise<ConsoleView> => {
  const [agents, grants, carts, cards, money] = await Promise.all([
    agentsOf(s, holder.holderId),
    read(s.runtime, 'holder.grants', { holderId: holder.holderId }),
    read(s.runtime, 'cart.list', {
      caller: { kind: 'holder', holderId: holder.holderId },
      baseUrl: s.config.baseUrl,
      at: s.clock.realNow(),
    }),
    read(s.runtime, 'holder.cards', { holderId: holder.holderId }),
    holderMoney(s, holder),
  ]);
  return {
    // A new key goes on a new account, or on an account of the holder's that no agent trades yet;
    // the Manual desk stays the holder's own (the lines they pick), so the form does not offer it.
    free_accounts: money.accounts
      .filter((a) => a.agent_id === null && a.kind !== 'manual')
      .map((a) => ({ id: a.account_id, owner: accountOwner(a) })),
    needed: FUNDING_PROFITABLE_TRADES,
    has_agents: agents.length > 0,
    agents: agents.map((a) => ({
      ...a,
      revoked: a.revoked_at === null ? null : { when: when(a.revoked_at) },
      model: a.model ?? 'not declared',
      eligible: a.wins >= FUNDING_PROFITABLE_TRADES,
      limits: limitsView(a, p),
    })),
    labels: LIMIT_LABELS,
    grants: grants.map((g) => ({
      ...g,
      agent: g.agent_id === null ? 'every agent of yours' : g.agent_name,
      cart: g.cart_id === null ? 'every cart of yours' : g.cart_name,
      pays:
        g.level !== 'execute' ? '' : g.pay_with === 'card' ? `stored card ${g.card_id}` : 'balance',
      created: when(g.created_at),
      ends:
        g.expires_at === null
          ? 'until revoked'
          : `${g.expired ? 'expired ' : ''}${when(g.expires_at)}`,
    })),
    has_grants: grants.length > 0,
    carts: carts.map((c) => ({ id: c.id, name: c.name, owner: c.owner.name })),
    cards: cardOptions(cards),
  };
};
type AgentLimits = {
  id: number;
  max_order: number | null;
  max_day: number | null;
  max_week: number | null;
  markets: string | null;
  expires_at: number | null;
};

/** An agent's limits form: what is stored, or what was just typed when it was refused. */
function limitsView(a: AgentLimits, p?: Problem) {
  const f = refill(
    `/console/agents/${a.id}/limits`,
    {
      max_order: usd(a.max_order),
      max_day: usd(a.max_day),
      max_week: usd(a.max_week),
      markets: a.markets ?? '',
      expires_at: a.expires_at === null ? '' : String(Math.round(a.expires_at)),
    },
    p,
  );
  return { ...f, choices: marketChoices(f.markets) };
}
const agentsPage = async (s: Services, holder: HolderPrincipal, p?: Problem) =>
  render(s, 'console-agents', 'Agents', holder, await agentsView(s, holder, p), p);

/** A paid order's receipt, readable (only an order of the holder's that carries one). */
async function receiptPage(
  s: Services,
  req: RequestInfo,
  holder: HolderPrincipal,
  orderId: number,
): Promise<Reply> {
  const order = await read(s.runtime, 'account.order', {
    holderId: holder.holderId,
    orderId,
    baseUrl: s.config.baseUrl,
  });
  if (!order) throw new HttpError(404, `no order ${orderId} of yours`);
  if (!order.receipt)
    throw new HttpError(
      404,
      `order ${orderId} has no receipt: only a payment you made (or your standing grant) signs one; an agent's pay_from_balance order has none`,
    );
  const view = await receiptView(
    order.receipt,
    await read(s.runtime, 'receipts.jwks', {}),
    `${s.config.baseUrl}/.well-known/jwks.json`,
    new Map([[order.id, order.deal_title]]),
  );
  return show(s, req, 'console-receipt', `Receipt of order ${orderId}`, holder, {
    order_id: orderId,
    ...view,
  });
}

/** Who an account is for, as the console names it. */
const accountOwner = (a: HolderAccount) =>
  a.kind === 'manual' ? 'Manual desk' : `${a.agent_name} (${a.key_id})`;

const GrantFields = Type.Object({
  agent_id: Type.Union([rowId('the agent'), Type.Null()], {
    default: null,
    description: 'the agent; empty: every agent of yours',
  }),
  cart_id: Type.Union([rowId('the cart'), Type.Null()], {
    default: null,
    description: 'the cart; empty: every cart of yours',
  }),
  level: Type.Union([Type.Literal('write'), Type.Literal('execute')], { default: 'write' }),
  pay_with: Type.Union([Type.Literal('balance'), Type.Literal('card')], { default: 'balance' }),
  card_id: Type.Union([rowId('the stored card'), Type.Null()], { default: null }),
  note: Type.String({ maxLength: 255, default: '' }),
  expires_at: Expiry('when the grant ends: from then on it allows nothing'),
});
type GrantFields = Static<typeof GrantFields>;
const RevokeFields = Type.Object({ grant_id: rowId('the grant') });

type RevokeFields = Static<typeof RevokeFields>;

/**
 * The holder's cart grants (SPEC.md "Cart connection, kind and funding switch"): turns of the
 * holder's actor; the console's agents page lists them with their forms.
 */
function grantRoutes(s: Services, agentsPage: AgentsTab): Route[] {
  const base = s.config.baseUrl;
  return [
    grantPost<GrantFields, 'grant'>(s, agentsPage, {
      path: '/cart/grant',
      summary:
        'Let an agent (or every agent of yours) write to, or execute, a cart (or every cart of yours)',
      body: GrantFields,
      answer: GrantForm,
      message: grantMessage,
      reply: (req, g) =>
        consoleReply(
          req,
          '/console/agents',
          { grant_id: g.grant_id },
          { kind: 'grant', grant_id: g.grant_id },
          base,
        ),
    }),
    grantPost<RevokeFields, 'revoke'>(s, agentsPage, {
      path: '/cart/grant/revoke',
      summary: 'Revoke a grant',
      body: RevokeFields,
      answer: RevokedForm,
      message: (h, b) => ({ kind: 'revoke', holderId: h.holderId, grantId: b.grant_id }),
      reply: (req, r) =>
        consoleReply(
          req,
          '/console/agents',
          { grant_id: r.grant_id, revoked: r.revoked },
          { kind: 'revoke', grant_id: r.grant_id },
          base,
        ),
    }),
  ];
}

/** A grant form: the turn of the holder's actor it asks for (`message`) in place of a `run`. */
type GrantPost<B, K extends GrantMessage['kind']> = Omit<
  HolderForm<B, HolderReplies[K]>,
  'run' | 'words'
> & {
  message: (holder: HolderPrincipal, body: B) => GrantMessage & { kind: K };
};

/** A grant form's route: its message asked of the holder's actor under the form's Idempotency-Key. */
function grantPost<B, K extends GrantMessage['kind']>(
  s: Services,
  agentsPage: AgentsTab,
  { message, ...form }: GrantPost<B, K>,
): Route {
  return holderFormRoute<B, HolderReplies[K]>(
    {
      ...form,
      run: (holder, { body: b, idem }) =>
        s.runtime.ask<HolderMessage, HolderReplies, K>(
          holderRef(holder.email),
          message(holder, b),
          {
            idem,
          },
        ),
    },
    agentsPage,
  );
}

const grantMessage = (h: HolderPrincipal, b: GrantFields): GrantMessage & { kind: 'grant' } => ({
  kind: 'grant',
  holderId: h.holderId,
  agentId: b.agent_id,
  cartId: b.cart_id,
  level: b.level,
  payWith: b.pay_with,
  cardId: b.card_id,
  expiresAt: b.expires_at,
  note: b.note,
});

function limitsReply(req: RequestInfo, set: LimitsSet, baseUrl: string): Reply {
  return consoleReply(
    req,
    '/console/agents',
    set,
    { kind: 'limits', agent_id: set.agent_id },
    baseUrl,
  );
}

function fundingReply(req: RequestInfo, set: FundingSet, baseUrl: string): Reply {
  return consoleReply(
    req,
    '/console/agents',
    { agent_id: set.agent_id, autonomous_funding: set.autonomous_funding },
    { kind: 'funding', agent_id: set.agent_id },
    baseUrl,
  );
}
