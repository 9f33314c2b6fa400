// The holder's money on the console (CONTRACT.md "The holder's money"; SPEC.md "Web routes"): top-up
// and payout of an account the holder owns (turns of that account's actor, which refuses an account
// that is not theirs with 404), Gold Coin packs and stored cards (turns of the holder's actor), and
// agent keys the holder makes (a turn of the new key's agent actor). Cards are checked here first
// (src/web/pay-form.ts): a declined, mistyped or crypto payment reaches no actor.
import Type, { type Static } from 'typebox';
import {
  accountRef,
  type PayoutScheduled,
  type ToppedUp,
} from '../../../actors/account/messages.js';
import { agentRef, type AgentMessage, type Registered } from '../../../actors/agent/messages.js';
import { holderRef, type CardRemoved, type CoinsBought } from '../../../actors/holder/messages.js';
import { read } from '../../../actors/runtime/client.js';
import { inventKey, keyHash, keyIdOf, recallSuggestion } from '../../auth/api-keys.js';
import { centsToNumber, numberToCents } from '../../engine/money.js';
import { payoutPayAt } from '../../payments/payout-schedule.js';
import { GOLD_COINS } from '../../payments/terms.js';
import {
  AgentMadeForm,
  CardRemovedForm,
  CoinsForm,
  PayoutForm,
  TopupForm,
  amount,
  rowId,
} from '../../schemas/index.js';
import type { HolderPrincipal } from '../../http/authenticators/holder-session.js';
import { renderPage } from '../pages.js';
import { CardPayFields, TopupCardFields, cardPaymentOf } from '../pay-form.js';
import {
  HttpError,
  formAnswer,
  json,
  route,
  type Context,
  type HolderContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import type { Services } from '../../http/services.js';
import {
  holderFormRoute,
  invalidForm,
  webAction,
  wantsJson,
  type HolderForm,
  type Problem,
} from '../answers.js';
import { cardRemovedNotice, consoleReply } from '../console-notice.js';

/** The largest amount one top-up or payout form names (USD): a bound on input, far above any demo use. */
const MAX_FORM_AMOUNT = 1_000_000;

const Amount = (what: string) =>
  amount(`${what} (USD, at most 2 decimals)`, { exclusiveMinimum: 0, maximum: MAX_FORM_AMOUNT });
const AccountId = rowId("one of your trading accounts (the Manual desk or an agent's)");

type TopupFields = Static<typeof TopupFields>;
const TopupFields = Type.Object({
  account_id: AccountId,
  amount: Amount('what to add'),
  ...TopupCardFields,
});
type PayoutFields = Static<typeof PayoutFields>;
const PayoutFields = Type.Object({
  account_id: AccountId,
  amount: Amount('what leaves the balance; the commission is kept from it'),
  card_id: Type.Union([rowId('a stored card'), Type.Null()], {
    default: null,
    description: 'one of your stored cards to be paid to (demo: nothing is sent)',
  }),
});
type CoinFields = Static<typeof CoinFields>;
const CoinFields = Type.Object({
  pack: Type.Union(
    GOLD_COINS.packs.map((n) => Type.Literal(n)),
    { description: `Gold Coins in the pack: ${GOLD_COINS.packs.join(', ')}` },
  ),
  ...CardPayFields,
});
type RemoveCardFields = Static<typeof RemoveCardFields>;
const RemoveCardFields = Type.Object({ card_id: rowId('the stored card') });

/** What a person is told of a wrong field, named as the Money page labels it. */
const WORDS = {
  account_id: 'Account: choose one of your accounts',
  amount: `Amount (USD): must be an amount in USD above 0 and at most ${MAX_FORM_AMOUNT}, with at most 2 decimals`,
  pack: `Pack: choose a pack of ${GOLD_COINS.packs.join(', ')} coins`,
  card_id: 'Stored card: choose one of your stored cards',
};

type MoneyPage = (holder: HolderPrincipal, p?: Problem) => Promise<Reply>;

export function moneyRoutes(s: Services, moneyPage: MoneyPage): Route[] {
  const post = <B, R>(d: Omit<HolderForm<B, R>, 'words'>) =>
    holderFormRoute<B, R>({ ...d, words: WORDS }, moneyPage);

  return [
    post<TopupFields, ToppedUp>({
      path: '/console/topup',
      summary: 'Top up one of your accounts by card (ledger card_charge +; never a monthly fee)',
      body: TopupFields,
      answer: TopupForm,
      run: (holder, c) => topUp(s, holder, c),
      reply: (req, r) => topupReply(s, req, r),
    }),

    post<PayoutFields, PayoutScheduled>({
      path: '/console/payout',
      summary:
        'Pay out from one of your accounts: it leaves the balance now and is paid 3 days of service time later, minus the commission',
      body: PayoutFields,
      answer: PayoutForm,
      run: (holder, c) => requestPayout(s, holder, c),
      reply: (req, r) => payoutReply(s, req, r),
    }),

    post<CoinFields, CoinsBought>({
      path: '/console/coins',
      summary: `Buy a Gold Coin pack by card (${GOLD_COINS.coin_price.toFixed(2)} USD a coin; the month's participation fee when due)`,
      body: CoinFields,
      answer: CoinsForm,
      run: (holder, c) => buyCoins(s, holder, c),
      reply: (req, r) => coinsReply(s, req, r),
    }),

    post<RemoveCardFields, CardRemoved>({
      path: '/console/cards/remove',
      summary: 'Remove one of your stored cards',
      body: RemoveCardFields,
      answer: CardRemovedForm,
      run: (holder, c) => removeCard(s, holder, c),
      reply: (req, r) =>
        consoleReply(
          req,
          '/console/money',
          { card_id: r.card_id, removed: r.removed },
          cardRemovedNotice(r),
          s.config.baseUrl,
        ),
    }),
  ];
}

const now = (s: Services) => new Date(s.clock.realNow() * 1000);

async function topUp(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, TopupFields>,
): Promise<ToppedUp> {
  const amountCents = numberToCents(body.amount);
  const payment = cardPaymentOf(body, now(s));
  return s.runtime.ask(
    accountRef(body.account_id),
    { kind: 'topup', holderId: holder.holderId, amountCents, payment, at: s.clock.realNow() },
    { idem },
  );
}

function topupReply(s: Services, req: RequestInfo, r: ToppedUp): Reply {
  return consoleReply(
    req,
    '/console/money',
    {
      account_id: r.account_id,
      amount: centsToNumber(r.amount_cents),
      balance: centsToNumber(r.balance_cents),
    },
    {
      kind: 'topup',
      account_id: r.account_id,
      amount_cents: r.amount_cents,
      balance_cents: r.balance_cents,
    },
    s.config.baseUrl,
  );
}

async function requestPayout(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, PayoutFields>,
): Promise<PayoutScheduled> {
  const amountCents = numberToCents(body.amount);
  if (
    body.card_id !== null &&
    !(await read(s.runtime, 'holder.card', { holderId: holder.holderId, cardId: body.card_id }))
  ) {
    throw new HttpError(404, `no stored card ${body.card_id} of yours`);
  }
  return s.runtime.ask(
    accountRef(body.account_id),
    { kind: 'payout', holderId: holder.holderId, amountCents, payAt: payoutPayAt(s.clock) },
    { idem },
  );
}

function payoutReply(s: Services, req: RequestInfo, r: PayoutScheduled): Reply {
  return consoleReply(
    req,
    '/console/money',
    {
      payout_id: r.payout_id,
      amount: centsToNumber(r.amount_cents),
      commission: centsToNumber(r.commission_cents),
      net: centsToNumber(r.net_cents),
      pay_at: r.pay_at,
      status: r.status,
    },
    {
      kind: 'payout',
      payout_id: r.payout_id,
      account_id: r.account_id,
      amount_cents: r.amount_cents,
      commission_cents: r.commission_cents,
      net_cents: r.net_cents,
      pay_at: r.pay_at,
    },
    s.config.baseUrl,
  );
}

async function buyCoins(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, CoinFields>,
): Promise<CoinsBought> {
  const payment = cardPaymentOf(body, now(s));
  return s.runtime.ask(
    holderRef(holder.email),
    {
      kind: 'buyCoins',
      holderId: holder.holderId,
      pack: body.pack,
      payment,
      at: s.clock.realNow(),
    },
    { idem },
  );
}

function coinsReply(s: Services, req: RequestInfo, r: CoinsBought): Reply {
  return consoleReply(
    req,
    '/console/money',
    {
      coins: r.coins,
      gc_balance: r.gc_balance_hundredths / 100,
      charged: centsToNumber(r.charged_cents),
      fee: centsToNumber(r.fee_cents),
    },
    {
      kind: 'coins',
      coins: r.coins,
      charged_cents: r.charged_cents,
      fee_cents: r.fee_cents,
      gc_hundredths: r.gc_balance_hundredths,
    },
    s.config.baseUrl,
  );
}

function removeCard(
  s: Services,
  holder: HolderPrincipal,
  { body, idem }: Context<unknown, unknown, RemoveCardFields>,
): Promise<CardRemoved> {
  return s.runtime.ask(
    holderRef(holder.email),
    { kind: 'removeCard', holderId: holder.holderId, cardId: body.card_id },
    { idem },
  );
}

const AgentKeyFields = Type.Object({
  name: Type.String({
    minLength: 1,
    maxLength: 120,
    description: "the agent's name, shown to you",
  }),
  account_id: Type.Union([AccountId, Type.Null()], {
    default: null,
    description: 'an account of yours without an agent; empty: a new trading account',
  }),
  recall_phrase: Type.Union([Type.String({ minLength: 3, maxLength: 120 }), Type.Null()], {
    default: null,
    description: 'the phrase /agents/recall answers with; empty: one is suggested',
  }),
  purpose: Type.Union([Type.String({ maxLength: 500 }), Type.Null()], {
    default: null,
    description: 'what the agent is for',
  }),
});
type AgentKeyFields = Static<typeof AgentKeyFields>;

/** What the key page and the JSON answer show: the key only when it was just made. */
type AgentMade = {
  agent_id: number;
  account_id: number;
  key: string | null;
  key_id: string;
  recall_phrase: string;
};

/** The key is in this answer: no cache, proxy or browser history may keep it. */
const NO_STORE = { 'cache-control': 'no-store' };

/**
 * POST /console/agents: a holder-made agent key (CONTRACT.md "Competitions": the only time the key is
 * ever shown). The key is invented here and only its hash goes to the agent actor; the turn's stored
 * reply (under an Idempotency-Key) has no key, so a replay answers the agent without it. A browser
 * gets the page that shows the key (200, not 303: it cannot be shown again on a page after a redirect).
 */
export function agentKeyRoute(s: Services, agentsPage: AgentsPage): Route {
  return route<unknown, unknown, AgentKeyFields>({
    method: 'POST',
    path: '/console/agents',
    auth: 'holder',
    summary:
      'Make an agent key of yours, on a new trading account or one of yours without an agent: the key is shown once, never again',
    body: AgentKeyFields,
    response: {
      200: formAnswer(
        AgentMadeForm,
        'the agent key is made: the key (JSON), or the page that shows it once (browsers)',
      ),
    },
    onInvalid: invalidForm<HolderPrincipal>(
      {
        name: 'enter a name for the agent (1 to 120 characters)',
        recall_phrase: 'a recall phrase has 3 to 120 characters',
      },
      (_req, p, _raw, holder) => agentsPage(holder, p),
    ),
    handler: (c) => createAgentKey(s, agentsPage, c),
    replay: (r: Registered, { req, principal }) => replayed(s, req, principal, r),
  });
}

type AgentsPage = (holder: HolderPrincipal, p?: Problem) => Promise<Reply>;

async function createAgentKey(
  s: Services,
  agentsPage: AgentsPage,
  { req, body, principal: holder, idem }: HolderContext<unknown, unknown, AgentKeyFields>,
): Promise<Reply> {
  return webAction(
    req,
    async () => {
      const key = inventKey();
      const recallPhrase = body.recall_phrase ?? recallSuggestion();
      const profile = { name: body.name, recall_phrase: recallPhrase, purpose: body.purpose };
      const msg = {
        kind: 'registerForHolder',
        keyHash: keyHash(key),
        profile,
        holderId: holder.holderId,
        accountId: body.account_id,
      } satisfies AgentMessage;
      const r = await s.runtime.ask(agentRef(keyIdOf(key)), msg, { idem });
      // Another process answered this Idempotency-Key first: its agent has another key, which is gone.
      if (idem?.replayed) return replayed(s, req, holder, r);
      return answer(req, holder, {
        agent_id: r.agent_id,
        account_id: r.account_id,
        key,
        key_id: keyIdOf(key),
        recall_phrase: recallPhrase,
      });
    },
    (p) => agentsPage(holder, p),
  );
}

function answer(req: RequestInfo, holder: HolderPrincipal, made: AgentMade): Reply {
  if (wantsJson(req)) return json({ ok: true, ...made }, 200, NO_STORE);
  const page = renderPage(
    'console-agent-key',
    { title: 'Your agent key', holder, ...made, shown: made.key !== null },
    200,
  );
  return { ...page, headers: { ...page.headers, ...NO_STORE } };
}

/** A stored registration answered again: the agent as it is, never its key. */
async function replayed(
  s: Services,
  req: RequestInfo,
  holder: HolderPrincipal,
  r: Registered,
): Promise<Reply> {
  const agent = await read(s.runtime, 'agent.me', { agentId: r.agent_id, at: s.clock.realNow() });
  if (!agent) throw new HttpError(404, `no agent ${r.agent_id}`);
  return answer(req, holder, {
    agent_id: r.agent_id,
    account_id: r.account_id,
    key: null,
    key_id: agent.key_id,
    recall_phrase: agent.recall_phrase,
  });
}
