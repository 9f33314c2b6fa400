// Who may open the operators' pages (CONTRACT.md "Operators"): anyone when the service is served on
// loopback only (both HOST and BASE_URL's host are loopback: a reverse proxy in front makes the
// service public, and BASE_URL then names the proxy). Otherwise: no SVC_OPS_TOKEN, the pages do not
// exist (404); with one, the token as `Authorization: Bearer` or the cookie the /ops/login form sets,
// compared in constant time over hashes; 401 without it.
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Config } from '../config.js';
import { HttpError, type RequestInfo } from '../http/route.js';
import type { OpsAccess, OpsPrincipal } from '../http/principal.js';

export const OPS_COOKIE = 'ops_session';

/** A host name or address that only this machine reaches: `localhost`, 127.0.0.0/8, ::1 (brackets allowed). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) {
    // The URL parser writes an IPv6 address in its one short form: ::1, ::ffff:7f00:1 for 127.0.0.1.
    const short = new URL(`http://[${h}]/`).hostname.slice(1, -1);
    return short === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(short);
  }
  return false;
}

export type { OpsAccess } from '../http/principal.js';

/** How /ops is reached under this configuration. */
export function opsAccess(config: Pick<Config, 'host' | 'baseUrl' | 'opsToken'>): OpsAccess {
  if (isLoopbackHost(config.host) && isLoopbackHost(new URL(config.baseUrl).hostname))
    return 'open';
  return config.opsToken === undefined ? 'hidden' : 'token';
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time equality of two strings of any lengths: their SHA-256 digests are compared. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

/** What the login cookie holds: derived from the token (never the token itself), so changing the token ends every session. */
export function cookieValue(token: string): string {
  return createHash('sha256').update(`ops-session\n${token}`, 'utf8').digest('base64url');
}

/** `Set-Cookie` of a successful /ops/login: HttpOnly, SameSite=Strict, for /ops only, Secure over https. */
export function opsCookie(config: Pick<Config, 'baseUrl' | 'opsToken'>): string {
  return stringifySetCookie(OPS_COOKIE, cookieValue(config.opsToken ?? ''), {
    httpOnly: true,
    sameSite: 'strict',
    path: '/ops',
    secure: config.baseUrl.startsWith('https:'),
    maxAge: 12 * 3600,
  });
}

/** Whether a request carries the ops token (Bearer) or the login cookie. */
export function carriesToken(req: RequestInfo, token: string): boolean {
  const auth = req.headers['authorization'] ?? '';
  const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
  if (m && sameSecret(m[1], token)) return true;
  const cookies = req.headers['cookie'];
  const value = cookies ? parseCookie(cookies)[OPS_COOKIE] : undefined;
  return value !== undefined && sameSecret(value, cookieValue(token));
}

/** 404 where the pages do not exist (no token off loopback). */
export function opsExistOr404(config: Pick<Config, 'host' | 'baseUrl' | 'opsToken'>): OpsAccess {
  const access = opsAccess(config);
  if (access === 'hidden') throw new HttpError(404, 'Not Found');
  return access;
}

/** The `ops` authenticator of the route table: open on loopback, else 404 without a token configured, 401 without it. */
export function opsAuthenticator(
  config: Pick<Config, 'host' | 'baseUrl' | 'opsToken'>,
): (req: RequestInfo) => Promise<OpsPrincipal> {
  return async (req) => {
    const access = opsExistOr404(config);
    if (access === 'open' || carriesToken(req, config.opsToken!)) return { via: access };
    throw new HttpError(
      401,
      'the ops token is required: send it as Authorization: Bearer, or log in at /ops/login',
      { 'www-authenticate': 'Bearer realm="ops"' },
    );
  };
}

/**
 * Wrong tokens at /ops/login per address: at most `limit` in `windowS` seconds, then 429 with
 * Retry-After until the window ends. Bounded: at most `maxAddresses` addresses are remembered (the
 * oldest window is forgotten first). `nowS`: monotonic seconds.
 */
export class LoginThrottle {
  private readonly tries = new Map<string, { count: number; until: number }>();

  constructor(
    private readonly nowS: () => number,
    readonly limit = 10,
    readonly windowS = 60,
    private readonly maxAddresses = 10_000,
  ) {}

  /** Seconds to wait before `address` may try again, or 0. */
  waitOf(address: string): number {
    const t = this.tries.get(address);
    if (!t) return 0;
    const now = this.nowS();
    if (now >= t.until) {
      this.tries.delete(address);
      return 0;
    }
    return t.count >= this.limit ? Math.ceil(t.until - now) : 0;
  }

  failed(address: string): void {
    const now = this.nowS();
    const t = this.tries.get(address);
    if (t && now < t.until) {
      t.count++;
      return;
    }
    this.tries.delete(address);
    if (this.tries.size >= this.maxAddresses) this.tries.delete(this.tries.keys().next().value!);
    this.tries.set(address, { count: 1, until: now + this.windowS });
  }
}
