// The `holder` authenticator: the web session cookie set by /register and /login. The cookie holds a
// random token; the database holds only its sha256 (a leaked table opens no sessions). A GET page
// without a session redirects to the login form (and back afterwards); anything else answers 401.
import { parseCookie, stringifySetCookie } from 'cookie';
import type { Services } from '../services.js';
import { HttpError, type RequestInfo } from '../route.js';
import { read } from '../../../actors/runtime/client.js';
import { sessionTokenHash } from '../../auth/sessions.js';
import { SESSION_DAYS } from '../../rules.js';

import type { HolderPrincipal } from '../principal.js';
export type { HolderPrincipal } from '../principal.js';

export const SESSION_COOKIE = 'holder_session';
/** 32 random bytes in base64url: anything else is not ours and costs no query. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** The session token a request carries, if it looks like one. */
export function sessionToken(req: RequestInfo): string | null {
  const header = req.headers['cookie'];
  if (!header) return null;
  const token = parseCookie(header)[SESSION_COOKIE];
  return token && TOKEN_RE.test(token) ? token : null;
}

/** `Set-Cookie` for a new session (or, with null, one that clears it). Secure when served over https. */
export function sessionCookie(s: Services, token: string | null): string {
  return stringifySetCookie(SESSION_COOKIE, token ?? '', {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: s.config.baseUrl.startsWith('https:'),
    maxAge: token ? SESSION_DAYS * 86_400 : 0,
  });
}

/** The logged-in holder of a request, or null (pages where logging in is optional). */
export async function holderOf(s: Services, req: RequestInfo): Promise<HolderPrincipal | null> {
  const token = sessionToken(req);
  if (!token) return null;
  const row = await read(s.runtime, 'holder.session', { tokenHash: sessionTokenHash(token) });
  return row ? { holderId: row.id, email: row.email, displayName: row.display_name } : null;
}

/** Where the login form sends the holder back to: the page they asked for, query included. */
export function loginRedirect(pathAndQuery: string): string {
  return `/login?next=${encodeURIComponent(pathAndQuery)}`;
}

export function holderAuthenticator(s: Services): (req: RequestInfo) => Promise<HolderPrincipal> {
  return async (req) => {
    const holder = await holderOf(s, req);
    if (holder) return holder;
    if (req.method === 'GET')
      throw new HttpError(303, 'login required', {
        location: loginRedirect(req.url + (req.query ? `?${req.query}` : '')),
      });
    throw new HttpError(401, 'log in first');
  };
}
