// One delivery attempt (CONTRACT.md "Events" → Webhooks): a POST of the event JSON signed as the
// Standard Webhooks specification says, with its own library (`standardwebhooks`: `webhook-id`,
// `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`), to the address checked just
// before (src/net/webhook-address.ts; the connection goes to that address, not to a second look-up),
// within a time-out, reading at most a few KB of the answer. Redirects are not followed (a 3xx is
// a failed attempt). Runs outside any database transaction.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { SEND_TIMEOUT_MS } from './messages.js';
import {
  checkWebhookUrl,
  type ResolvedAddress,
  type Resolver,
  systemResolver,
} from '../../src/net/webhook-address.js';

/** Bytes of an answer read at most; the rest is dropped with the connection. */
export const ANSWER_BYTES_READ = 4096;

export type Attempt = {
  url: string;
  secret: string;
  /** `evt_<account_id>_<event id>`: the same on every attempt, so receivers deduplicate. */
  msgId: string;
  /** The event JSON, exactly as signed and sent. */
  body: string;
  /** Real unix seconds (the service clock): `webhook-timestamp`. */
  at: number;
  allowPrivate: boolean;
  /** How long the attempt may take (default SEND_TIMEOUT_MS). */
  timeoutMs?: number;
};

/** An attempt's outcome: the answer's status (null: none), or why there was none. */
export type Outcome = { status: number | null; error: string | null };

/** The headers of one attempt: content type and the Standard Webhooks three, signed by the library. */
export function signedHeaders(
  secret: string,
  msgId: string,
  at: number,
  body: string,
): Record<string, string> {
  const seconds = Math.floor(at);
  return {
    'content-type': 'application/json',
    'user-agent': 'agent-market-webhooks/1',
    'webhook-id': msgId,
    'webhook-timestamp': String(seconds),
    'webhook-signature': new Webhook(secret).sign(msgId, new Date(seconds * 1000), body),
  };
}

/** A lookup that answers the checked address whatever is asked: the connection cannot land elsewhere. */
function pinned(a: ResolvedAddress): LookupFunction {
  return ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: a.address, family: a.family }]);
    else cb(null, a.address, a.family);
  }) as unknown as LookupFunction;
}

/** Sends one attempt; never throws (a refusal, a time-out or a connection error is an outcome). */
export async function send(a: Attempt, resolve: Resolver = systemResolver): Promise<Outcome> {
  const verdict = await checkWebhookUrl(a.url, a.allowPrivate, resolve);
  if (!verdict.ok) return { status: null, error: `not sent: ${verdict.refused}` };
  const url = verdict.url;
  const headers = {
    ...signedHeaders(a.secret, a.msgId, a.at, a.body),
    'content-length': String(Buffer.byteLength(a.body)),
  };
  const mod = url.protocol === 'https:' ? https : http;
  const timeoutMs = a.timeoutMs ?? SEND_TIMEOUT_MS;
  return new Promise<Outcome>((resolveOutcome) => {
    let done = false;
    const finish = (o: Outcome) => {
      if (done) return;
      done = true;
      req.destroy();
      resolveOutcome(o);
    };
    const req = mod.request(
      url,
      {
        method: 'POST',
        headers,
        agent: false,
        signal: AbortSignal.timeout(timeoutMs),
        ...(verdict.address ? { lookup: pinned(verdict.address) } : {}),
      },
      (res) => {
        const status = res.statusCode ?? null;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= ANSWER_BYTES_READ) finish({ status, error: null });
        });
        res.on('end', () => finish({ status, error: null }));
        res.on('error', () => finish({ status, error: null }));
      },
    );
    req.on('error', (err: Error & { code?: string }) => {
      const timedOut =
        err.name === 'AbortError' || err.name === 'TimeoutError' || err.code === 'ABORT_ERR';
      finish({
        status: null,
        error: timedOut
          ? `no answer within ${timeoutMs} ms`
          : `${err.code ?? err.name}: ${err.message}`.slice(0, 300),
      });
    });
    req.end(a.body);
  });
}
