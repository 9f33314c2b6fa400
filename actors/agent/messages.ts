// AgentActor's messages and replies ("agent:<key id>"), and the arguments and replies of the agent
// read tasks (reads.ts): what the front end may know of this actor kind.
import { actorRef } from '../runtime/protocol.js';

export type AgentProfile = {
  name: string;
  recall_phrase: string;
  agent?: Record<string, unknown> | null;
  operator?: Record<string, unknown> | null;
  purpose?: string | null;
  contact?: string | null;
};

export type AgentMessage =
  | { kind: 'register'; keyHash: string; profile: AgentProfile }
  /** Another cart of the agent's own (POST /carts), its holder's once connected. */
  | { kind: 'newCart'; name: string }
  /**
   * A holder makes an agent key on the console (POST /console/agents): the agent is the holder's from
   * the start, on a new trading account (`accountId` null) or on an account the holder owns that has
   * no agent yet.
   */
  | {
      kind: 'registerForHolder';
      keyHash: string;
      profile: AgentProfile;
      holderId: number;
      accountId: number | null;
    }
  /** The holder revokes the agent's key for good (POST /console/agents/{agent_id}/revoke). */
  | { kind: 'revoke'; holderId: number; agentId: number };

export type CartMade = { id: number; name: string; kind: 'trade'; token: string };

export type Registered = {
  agent_id: number;
  account_id: number;
  cart_id: number;
  cart_token: string;
  cart_kind: 'trade';
};

/** A revocation: `revoked` false when the key was revoked already (at `revoked_at`, unix seconds). */
export type KeyRevoked = {
  agent_id: number;
  revoked: boolean;
  revoked_at: number;
  withdrawn_order_ids: number[];
};

/** The reply to each message kind (actor.ts's handlers answer these). */
export type AgentReplies = {
  register: Registered;
  newCart: CartMade;
  registerForHolder: Registered;
  revoke: KeyRevoked;
};
/** The address of the agent whose API key has id `keyId`. */
export const agentRef = (keyId: string) => actorRef<AgentMessage, AgentReplies>('agent', keyId);

// Read tasks (reads.ts).

/** An agent found by its key id (the key authenticator's look-up on a cache miss). */
export type AgentKey = { id: number; account_id: number; key_hash: string; revoked: boolean };

/** NOTIFY channel of revoked keys: payload `<key id> <account id>` (or `*` after a lost connection). */
export const KEYS_CHANNEL = 'svc_keys';
/** The advisory lock a revocation takes exclusively and each order batch shared (agent/revocation.ts). */
export const REVOCATION_LOCK = 'agent-key-revocations';

/** What every request with a revoked key is answered (401), and a revoked key's registration (409). */
export const KEY_REVOKED =
  'this API key was revoked by its holder: it no longer works; ask your holder for a new key';
/** What POST /agents/recall tells about a key id. */
export type AgentRecall = {
  name: string;
  recall_phrase: string;
  connected: boolean;
  carts: number;
};
/** `agent_id` is null on a holder's own cart. */
export type CartView = {
  id: number;
  name: string;
  kind: string;
  token: string;
  agent_id: number | null;
};
/** An agent's own state (GET /agents/me): its row, its account's balance and the carts it sees. */
export type AgentState = {
  id: number;
  key_id: string;
  name: string;
  recall_phrase: string;
  identity: unknown;
  operator: unknown;
  purpose: string | null;
  contact: string | null;
  account_id: number;
  holder_id: number | null;
  paired_at: number | null;
  autonomous_funding: boolean;
  balance_cents: number;
  carts: CartView[];
  /** The holder's spending limits, and what the agent funded without the holder today (UTC, service clock; `at` of the read). */
  limits: SpendingLimits;
};
/** CONTRACT.md "Spending limits": USD or null (no limit), markets as ids or null, expires_at unix seconds or null. */
export type SpendingLimits = {
  max_order: number | null;
  max_day: number | null;
  max_week: number | null;
  markets: string[] | null;
  expires_at: number | null;
  spent_today: number;
  spent_week: number;
};
