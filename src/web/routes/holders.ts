// The holder's account on the web (SPEC.md "Web routes", "Authentication" item 8): register, log in,
// log out. Password checks and hashing are turns of the holder's actor (worker thread); the route
// sets or clears the session cookie and answers as CONTRACT.md "Web form posts" says.
import Type, { type Static } from 'typebox';
import { holderRef, type HolderSession } from '../../../actors/holder/messages.js';
import { sessionTokenHash } from '../../auth/sessions.js';
import {
  holderOf,
  sessionCookie,
  sessionToken,
  type HolderPrincipal,
} from '../../http/authenticators/holder-session.js';
import { renderPage } from '../pages.js';
import {
  HttpError,
  htmlPage,
  route,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import { LoggedOutForm, SignedInForm } from '../../schemas/index.js';
import { crossSite } from '../../http/server.js';
import type { Services } from '../../http/services.js';
import { field, webAction, formReply, invalidForm, safeNext, type Problem } from '../answers.js';
import { LoginForm, Next, RegisterForm, WORDS, signIn, type FormName } from '../sign-in.js';

const NextQuery = Type.Object({ next: Next });
type NextQuery = Static<typeof NextQuery>;

const TITLES: Record<FormName, string> = { login: 'Log in', register: 'Register' };

/** The login or register form: the values typed so far (never the password) and a message. */
function formPage(
  name: FormName,
  holder: HolderPrincipal | null,
  values: { next?: unknown; email?: string; display_name?: string },
  p?: Problem,
): Reply {
  const next = safeNext(values.next);
  const page = renderPage(
    name,
    {
      title: TITLES[name],
      holder,
      next,
      next_q: encodeURIComponent(next),
      form_email: values.email ?? '',
      form_display_name: values.display_name ?? '',
      error: p?.message,
    },
    p?.status ?? 200,
  );
  return p?.retryAfter
    ? { ...page, headers: { ...page.headers, 'retry-after': String(p.retryAfter) } }
    : page;
}

export function webHolderRoutes(s: Services): Route[] {
  return [
    formRoute(s, 'register'),
    route<unknown, unknown, RegisterForm>({
      method: 'POST',
      path: '/register',
      auth: 'none',
      summary: 'Open a holder account and log in',
      body: RegisterForm,
      response: { 200: SignedInForm },
      responses: { 303: { description: 'browsers: sent on to the next page' } },
      onInvalid: refill(s, 'register'),
      handler: (c) => register(s, c),
      replay: (stored, c) => resumed(s, stored, c),
    }),

    formRoute(s, 'login'),
    route<unknown, unknown, LoginForm>({
      method: 'POST',
      path: '/login',
      auth: 'none',
      summary: 'Log in with e-mail and password',
      body: LoginForm,
      response: { 200: SignedInForm },
      responses: { 303: { description: 'browsers: sent on to the next page' } },
      onInvalid: refill(s, 'login'),
      handler: (c) => logIn(s, c),
      replay: (stored, c) => resumed(s, stored, c),
    }),

    route({
      method: 'GET',
      path: '/logout',
      auth: 'none',
      summary: 'End the holder session',
      response: { 200: LoggedOutForm },
      responses: { 303: { description: 'browsers: sent on to the next page' } },
      handler: (c) => logOut(s, c),
    }),
  ];
}

function formRoute(s: Services, name: FormName): Route {
  return route<unknown, NextQuery>({
    method: 'GET',
    path: `/${name}`,
    auth: 'none',
    summary: `${TITLES[name]} form`,
    query: NextQuery,
    response: { 200: htmlPage('the form') },
    handler: (c) => showForm(s, name, c),
  });
}

/** A browser whose form fails validation gets the form again with what it typed. */
function refill(s: Services, name: FormName) {
  return invalidForm(WORDS, async (req, p, raw) =>
    formPage(
      name,
      await holderOf(s, req),
      {
        next: field(raw.body, 'next') || undefined,
        email: field(raw.body, 'email'),
        display_name: field(raw.body, 'display_name'),
      },
      p,
    ),
  );
}

async function showForm(
  s: Services,
  name: FormName,
  { req, query }: PublicContext<unknown, NextQuery>,
): Promise<Reply> {
  return formPage(name, await holderOf(s, req), { next: query.next });
}

async function register(
  s: Services,
  { req, body, idem }: PublicContext<unknown, unknown, RegisterForm>,
): Promise<Reply> {
  return webAction(
    req,
    async () => answered(s, req, await signIn(s, req, 'register', body, idem), body.next),
    async (p) => formPage('register', await holderOf(s, req), body, p),
    WORDS,
  );
}

async function logIn(
  s: Services,
  { req, body, idem }: PublicContext<unknown, unknown, LoginForm>,
): Promise<Reply> {
  return webAction(
    req,
    async () => answered(s, req, await signIn(s, req, 'login', body, idem), body.next),
    async (p) => formPage('login', await holderOf(s, req), body, p),
  );
}

async function logOut(s: Services, { req }: PublicContext): Promise<Reply> {
  // A GET (SPEC.md) that changes state: refused cross-site like the form posts, so another site cannot log a holder out.
  if (crossSite(req.headers, new URL(s.config.baseUrl).origin))
    throw new HttpError(403, 'cross-site request refused');
  const token = sessionToken(req);
  const holder = token ? await holderOf(s, req) : null;
  if (token && holder)
    await s.runtime.ask(holderRef(holder.email), {
      kind: 'logout',
      tokenHash: sessionTokenHash(token),
    });
  return formReply(req, '/', {}, { 'set-cookie': sessionCookie(s, null) });
}

function signedIn(s: Services, req: RequestInfo, session: HolderSession, next: string): Reply {
  return formReply(
    req,
    next,
    {
      holder_id: session.holder_id,
      email: session.email,
      display_name: session.display_name,
      next: safeNext(next),
    },
    { 'set-cookie': sessionCookie(s, session.token) },
  );
}

/**
 * A replayed register or login (same key, same body: the password too) answers the same and, as
 * the stored answer holds no session token, signs in with a new session of that holder.
 */
async function resumed(
  s: Services,
  stored: Omit<HolderSession, 'token'>,
  { req, body }: { req: RequestInfo; body: { next: string } },
): Promise<Reply> {
  return signedIn(
    s,
    req,
    await s.runtime.ask(holderRef(stored.email), { kind: 'resume', holderId: stored.holder_id }),
    body.next,
  );
}

/** The holder actor found this key answered already (a twin request): its stored answer has no token. */
function answered(
  s: Services,
  req: RequestInfo,
  session: HolderSession,
  next: string,
): Reply | Promise<Reply> {
  return session.token
    ? signedIn(s, req, session, next)
    : resumed(s, session, { req, body: { next } });
}
