// The `key` authenticator: `Authorization: Bearer <key>` or `X-API-Token: <key>`, checked against the
// stored sha256. Agents are never deleted and a key never changes owner, so a verified key is
// remembered in a bounded map and the hot path (agents polling their orders) skips the database;
// a miss is a read task on the pool (actors/agent/reads.ts). A key its holder revoked is a 401 for
// good: the revocation's NOTIFY makes every process forget what it remembered of the key
// (`heardRevocation`) and end the key's streams.
import { read } from '../../../actors/runtime/client.js';
import type { Services } from '../services.js';
import { HttpError, type RequestInfo } from '../route.js';
import { isKey, keyFromHeaders, keyHash, keyIdOf, sameHash } from '../../auth/api-keys.js';
import { KEY_REVOKED } from '../../../actors/agent/messages.js';

import type { AgentPrincipal } from '../principal.js';
export type { AgentPrincipal } from '../principal.js';

/** Verified keys remembered; the oldest is forgotten beyond this (insertion order of a Map). */
const REMEMBERED = 100_000;

const UNAUTHORIZED = { 'www-authenticate': 'Bearer' };

type Known = Map<string, { hash: string; principal: AgentPrincipal; revoked: boolean }>;
type Authenticator = { authenticate: (req: RequestInfo) => Promise<AgentPrincipal>; known: Known };

/** One authenticator per service (its map of verified keys is the process's one): the key routes', the WebSocket's and MCP's. */
const authenticators = new WeakMap<Services, Authenticator>();

export function keyAuthenticator(s: Services): (req: RequestInfo) => Promise<AgentPrincipal> {
  let a = authenticators.get(s);
  if (!a) authenticators.set(s, (a = newKeyAuthenticator(s)));
  return a.authenticate;
}

/**
 * A revocation heard (KEYS_CHANNEL's payload `<key id> <account id>`, or `*`: some may have been
 * missed): the key is forgotten (`*`: every key), so the next request reads it again, and its
 * account's streams end (one key, one agent, one account).
 */
export function heardRevocation(s: Services, payload: string): void {
  const known = authenticators.get(s)?.known;
  if (payload === '*') return known?.clear();
  const [keyId, accountId] = payload.split(' ');
  known?.delete(keyId);
  const id = Number(accountId);
  if (Number.isSafeInteger(id)) s.events.endAccount(id, 'revoked');
}

function newKeyAuthenticator(s: Services): Authenticator {
  const known: Known = new Map();
  const authenticate = async (req: RequestInfo): Promise<AgentPrincipal> => {
    const key = keyFromHeaders(req.headers);
    if (!key)
      throw new HttpError(
        401,
        'an API key is required: send Authorization: Bearer <key> or X-API-Token: <key>',
        UNAUTHORIZED,
      );
    if (!isKey(key))
      throw new HttpError(
        401,
        'invalid API key: a key is 80 characters of A-Z, a-z and 0-9',
        UNAUTHORIZED,
      );
    const hash = keyHash(key);
    const keyId = keyIdOf(key);
    let hit = known.get(keyId);
    if (!hit) {
      const row = await read(s.runtime, 'agent.byKeyId', { keyId });
      if (!row)
        throw new HttpError(
          401,
          'unknown API key: register it first with POST /api/v1/agents/register',
          UNAUTHORIZED,
        );
      hit = {
        hash: row.key_hash,
        principal: { agentId: row.id, accountId: row.account_id, keyId },
        revoked: row.revoked,
      };
      if (known.size >= REMEMBERED) known.delete(known.keys().next().value!);
      known.set(keyId, hit);
    }
    if (!sameHash(hit.hash, hash)) throw new HttpError(401, 'wrong API key', UNAUTHORIZED);
    if (hit.revoked) throw new HttpError(401, KEY_REVOKED, UNAUTHORIZED);
    return hit.principal;
  };
  return { authenticate, known };
}
