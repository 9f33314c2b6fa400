// Agents: invent a key, register it, recall it, read one's own state (SPEC.md "Agent registration
// body", "Authentication"). Registration is a turn of the key's agent actor; reads are indexed by
// the key id.
import { agentRef, type CartView, type Registered } from '../../../actors/agent/messages.js';
import { read } from '../../../actors/runtime/client.js';
import {
  KEY_ID_LENGTH,
  inventKey,
  keyHash,
  keyIdOf,
  recallSuggestion,
} from '../../auth/api-keys.js';
import { centsToNumber } from '../../engine/index.js';
import { FUNDING_PROFITABLE_TRADES } from '../../rules.js';
import type { AgentPrincipal } from '../../http/authenticators/agent-key.js';
import {
  json,
  route,
  type AgentContext,
  type PublicContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import {
  AgentMeAnswer,
  AgentRegister,
  Recall,
  RecallAnswer,
  RegisteredAnswer,
  TokenAnswer,
} from '../../schemas/index.js';
import type { Services } from '../../http/services.js';

export const CART_NOTE =
  'Your cart is where you propose deals to your account holder: POST /api/v1/cart/items with {market, offer_key, qty, note}. ' +
  "Nothing is charged by your action alone: hand the cart's checkout_url to the holder, who sees your identity and each line with your note, " +
  'and approves by paying; each line then becomes a funded order on your account. Follow it with GET /api/v1/cart.';

const cartUrl = (s: Services, token: string) => `${s.config.baseUrl}/carts/${token}`;

export function agentRoutes(s: Services): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/v1/agents/token',
      operationId: 'create_token',
      auth: 'none',
      summary: 'Invent a random API key (nothing is stored until you register it)',
      response: { 200: TokenAnswer },
      handler: () => createToken(),
    }),
    route<unknown, unknown, AgentRegister>({
      method: 'POST',
      path: '/api/v1/agents/register',
      operationId: 'register_agent',
      auth: 'none',
      summary: 'Register an agent under its own key: one key = one agent = one trading account',
      body: AgentRegister,
      response: { 201: RegisteredAnswer },
      responses: {
        409: { description: 'the key is already registered' },
      },
      handler: (c) => registerAgent(s, c),
      replay: (r: Registered, { body }) => registeredReply(s, body, r),
    }),
    route<unknown, unknown, Recall>({
      method: 'POST',
      path: '/api/v1/agents/recall',
      operationId: 'recall_agent',
      auth: 'none',
      summary: 'Check that a key id is registered here and get back its recall phrase',
      body: Recall,
      response: { 200: RecallAnswer },
      handler: (c) => recallAgent(s, c),
    }),
    route({
      method: 'GET',
      path: '/api/v1/agents/me',
      operationId: 'get_me',
      auth: 'key',
      summary: 'My agent: profile, account, holder connection, autonomous funding, carts',
      response: { 200: AgentMeAnswer },
      handler: (c) => getMe(s, c),
    }),
  ];
}

function createToken(): Reply {
  const token = inventKey();
  return json({ token, key_id: keyIdOf(token), recall_phrase_suggestion: recallSuggestion() });
}

async function registerAgent(
  s: Services,
  { body, idem }: PublicContext<unknown, unknown, AgentRegister>,
): Promise<Reply> {
  const { token: _secret, ...profile } = body;
  const r = await s.runtime.ask(
    agentRef(keyIdOf(body.token)),
    { kind: 'register', keyHash: keyHash(body.token), profile },
    { idem },
  );
  return registeredReply(s, body, r);
}

/** The 201 answer to a registration, from the request and the agent actor's reply (also for a replay). */
function registeredReply(s: Services, body: AgentRegister, r: Registered): Reply {
  const keyId = keyIdOf(body.token);
  const checkoutUrl = cartUrl(s, r.cart_token);
  return json(
    {
      agent_id: r.agent_id,
      name: body.name,
      key_id: keyId,
      account_id: r.account_id,
      trade_enabled: true,
      cart_note: CART_NOTE,
      cart: { id: r.cart_id, checkout_url: checkoutUrl, kind: r.cart_kind },
      keep: {
        note: `Store this note with your key. The service keeps only a hash of the key and will never show it; a lost key cannot be recovered.`,
        key: `the 80-character key you registered (it starts with ${keyId})`,
        key_id: keyId,
        recall_phrase: body.recall_phrase,
        purpose: body.purpose ?? null,
        service: s.config.baseUrl,
        checkout_url: checkoutUrl,
      },
    },
    201,
  );
}

async function recallAgent(
  s: Services,
  { body }: PublicContext<unknown, unknown, Recall>,
): Promise<Reply> {
  const keyId = body.key_id.slice(0, KEY_ID_LENGTH);
  const row = await read(s.runtime, 'agent.recall', { keyId });
  if (!row)
    return json({
      known: false,
      name: null,
      recall_phrase: null,
      connected_to_holder: false,
      carts_visible: 0,
    });
  const out: Record<string, unknown> = {
    known: true,
    name: row.name,
    recall_phrase: row.recall_phrase,
    connected_to_holder: row.connected,
    carts_visible: row.carts,
  };
  if (body.recall_phrase !== undefined)
    out.phrase_matches = body.recall_phrase === row.recall_phrase;
  return json(out);
}

async function getMe(s: Services, { principal }: AgentContext): Promise<Reply> {
  return json(await agentState(s, principal));
}

async function agentState(s: Services, p: AgentPrincipal) {
  // The authenticated agent exists: agents are never deleted.
  const a = (await read(s.runtime, 'agent.me', { agentId: p.agentId, at: s.clock.realNow() }))!;
  const carts = a.carts;
  const view = (c: CartView) => ({
    id: c.id,
    name: c.name,
    kind: c.kind,
    checkout_url: cartUrl(s, c.token),
  });
  const mine = carts.filter((c) => c.agent_id === a.id).map(view);
  const others = carts.filter((c) => c.agent_id !== a.id).map(view);
  return {
    key_id: a.key_id,
    agent_id: a.id,
    profile: {
      name: a.name,
      agent: a.identity,
      operator: a.operator,
      purpose: a.purpose,
      contact: a.contact,
      recall_phrase: a.recall_phrase,
    },
    trade_enabled: true,
    cart_note: CART_NOTE,
    account_id: a.account_id,
    balance: centsToNumber(a.balance_cents),
    paired: a.holder_id !== null,
    holder: { connected: a.holder_id !== null, since: a.paired_at },
    autonomous_funding: a.autonomous_funding,
    limits: a.limits,
    carts: { mine, visible: mine.length + others.length, others },
    notice:
      a.holder_id === null
        ? "No account holder is connected yet: hand your cart checkout_url or an order's purchase_url to a human, who connects by paying."
        : a.autonomous_funding
          ? 'Autonomous funding is on: pay_from_balance funds orders from your account balance at once.'
          : `Orders need your holder's payment on the purchase link; autonomous funding can be switched on by the holder after ${FUNDING_PROFITABLE_TRADES} settled trades in profit.`,
  };
}
