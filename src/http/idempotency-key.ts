// Retries and idempotency at the front end (CONTRACT.md): reads a state-changing request's
// `Idempotency-Key`, scopes it to the caller and the route, and answers a repeat from the stored
// answer (`Idempotent-Replayed: true`), a repeat with another body with 400, and a repeat while the
// first is still running with 409. The answer itself is stored by the turn that has the effect, in
// the effect's transaction (actors/runtime/idempotency.ts): this module only asks.
import { createHash } from 'node:crypto';
import {
  ActorError,
  REUSED_KEY,
  type IdemTicket,
  type StoredAnswer,
} from '../../actors/runtime/client.js';
import { HttpError, json, type Auth, type Context, type Reply, type AnyRoute } from './route.js';
import type { Principals } from './principal.js';
import { parseJson } from './validation.js';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** CONTRACT.md: 1..255 printable ASCII characters (0x21..0x7E: no space, no control, nothing beyond ASCII). */
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** What the front end needs of the runtime: the in-process busy set and the stored answers. */
export type AnswerStore = {
  keyBusy(k: string): boolean;
  holdKey(k: string): () => void;
  find(scope: string, key: string): Promise<StoredAnswer | undefined>;
};

/** The caller part of a scope: the agent's key, the holder, or nobody (registration). */
function callerOf(p: Principals[Auth]): string {
  if (p && 'agentId' in p) return `agent:${p.agentId}`;
  if (p && 'holderId' in p) return `holder:${p.holderId}`;
  return 'none';
}

/** The request's ticket, or undefined without the header; a malformed key is a 400. */
export function ticketOf(
  headers: Record<string, string>,
  method: string,
  path: string,
  principal: Principals[Auth],
  body: Buffer | null,
): IdemTicket | undefined {
  const key = headers[IDEMPOTENCY_HEADER];
  if (key === undefined) return undefined;
  if (!KEY_RE.test(key))
    throw new HttpError(
      400,
      'Idempotency-Key must be 1 to 255 printable ASCII characters (0x21..0x7E)',
    );
  const hash = createHash('sha256')
    .update(comparableBody(body ?? Buffer.alloc(0), headers['content-type'] ?? ''))
    .digest('base64url');
  return { scope: `${callerOf(principal)} ${method} ${path}`, key, hash };
}

const BOUNDARY_RE = /^multipart\/form-data\b.*;\s*boundary="?([^";]+)"?/i;
const JSON_RE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The bytes that make two requests "the same body". A JSON body is the value it parses to (CONTRACT.md
 * "Strict requests": key order and whitespace do not make another request), written back with sorted
 * keys. A multipart body carries a boundary the client draws at random for every send (browsers,
 * curl, fetch's FormData): it is replaced by a fixed one, so a retried upload with its key is the
 * same request. Everything else is compared byte for byte.
 */
export function comparableBody(body: Buffer, contentType: string): Buffer | string {
  if (JSON_RE.test(contentType) && body.length) {
    const parsed = parseJson(body.toString('utf8'));
    return 'value' in parsed ? canonicalJson(parsed.value) : body;
  }
  const boundary = BOUNDARY_RE.exec(contentType)?.[1];
  if (!boundary) return body;
  // latin1 maps bytes 1:1, so the split cannot corrupt binary parts.
  return body.toString('latin1').split(`--${boundary}`).join('--boundary');
}

/** JSON text with every object's keys sorted (the value was parsed under MAX_JSON_DEPTH: recursion is bounded). */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

const replayed = (reply: Reply): Reply => ({
  ...reply,
  headers: { ...reply.headers, [REPLAYED_HEADER]: 'true' },
});

/**
 * Runs a state-changing route once per key: a stored answer is answered again (rendered by the
 * route's `replay`), otherwise the handler runs with `ctx.idem` for its effectful turn to store.
 */
export async function answerOnce(
  route: AnyRoute,
  ctx: Context,
  ticket: IdemTicket,
  store: AnswerStore,
): Promise<Reply> {
  const busy = `${ticket.scope}\n${ticket.key}`;
  if (store.keyBusy(busy)) {
    throw new HttpError(
      409,
      'a request with this Idempotency-Key is still in progress: retry with the same key once it has finished',
      { 'retry-after': '1' },
    );
  }
  const release = store.holdKey(busy);
  try {
    const stored = await store.find(ticket.scope, ticket.key);
    if (stored) {
      if (stored.hash !== ticket.hash) throw new HttpError(400, REUSED_KEY);
      if (stored.status >= 400) return replayed({ status: stored.status, json: stored.reply });
      return replayed(
        route.replay ? await route.replay(stored.reply, ctx) : json(stored.reply, stored.status),
      );
    }
    try {
      const reply = await route.handler({ ...ctx, idem: ticket });
      return ticket.replayed ? replayed(reply) : reply;
    } catch (err) {
      // A refusal the turn found stored (another process answered this key first).
      if (ticket.replayed && err instanceof ActorError && err.status < 500)
        return replayed({ status: err.status, json: err.body });
      throw err;
    }
  } finally {
    release();
  }
}
