// The holder's side for tests: a service whose BASE_URL is its real address (form posts from a
// browser carry that origin, and the cross-site check compares with it), and form posts as a
// browser (303s not followed) or as a JSON client.
import net from 'node:net';
import type { StartOptions } from '../../src/service.js';
import {
  sharedService,
  startRecordedService,
  startTestService,
  type TestService,
} from './service.js';

type T = Parameters<typeof startTestService>[0];

/** A port free right now (the service binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function startWebService(
  t: T,
  env: Record<string, string> = {},
  opts: StartOptions = {},
): Promise<TestService> {
  const port = await freePort();
  return startTestService(
    t,
    { PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, ...env },
    opts,
  );
}

/** The web service (startWebService, default settings) shared by the modules of one test process. */
export const sharedWebService = () => sharedService('web', (t) => startWebService(t));

export type WebAnswer = {
  status: number;
  body: any;
  text: string;
  headers: Headers;
  location: string | null;
  setCookie: string | null;
};

export type WebCall = { cookie?: string | null; json?: boolean; headers?: Record<string, string> };

async function answer(res: Response): Promise<WebAnswer> {
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return {
    status: res.status,
    body,
    text,
    headers: res.headers,
    location: res.headers.get('location'),
    setCookie: res.headers.get('set-cookie'),
  };
}

function headersOf(c: WebCall): Record<string, string> {
  return {
    ...(c.json ? { accept: 'application/json' } : { accept: 'text/html' }),
    ...(c.cookie ? { cookie: c.cookie } : {}),
    ...c.headers,
  };
}

/** A urlencoded form post; redirects are returned, not followed. */
export async function postForm(
  svc: TestService,
  path: string,
  fields: Record<string, string | number>,
  c: WebCall = {},
): Promise<WebAnswer> {
  const body = new URLSearchParams(
    Object.entries(fields).map(([k, v]) => [k, String(v)]),
  ).toString();
  return answer(
    await svc.get(path, {
      method: 'POST',
      redirect: 'manual',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headersOf(c) },
    }),
  );
}

export async function getPage(svc: TestService, path: string, c: WebCall = {}): Promise<WebAnswer> {
  return answer(await svc.get(path, { redirect: 'manual', headers: headersOf(c) }));
}

/** `holder_session=<token>` from a Set-Cookie header, ready to send back. */
export function sessionCookieOf(a: WebAnswer): string {
  const m = /^(holder_session=[^;]*)/.exec(a.setCookie ?? '');
  if (!m) throw new Error(`no session cookie in ${JSON.stringify(a.setCookie)}`);
  return m[1];
}

/** Registers a holder as a JSON client and returns its cookie. */
export async function registerHolder(
  svc: TestService,
  email: string,
  password = 'correct horse 1',
): Promise<{ cookie: string; holderId: number }> {
  const r = await postForm(
    svc,
    '/register',
    { email, password, display_name: email.split('@')[0] },
    { json: true },
  );
  if (r.status !== 200) throw new Error(`register: ${r.status} ${r.text}`);
  return { cookie: sessionCookieOf(r), holderId: r.body.holder_id };
}

/** The recorded site (startRecordedSite, its clock frozen) shared by the modules of one test process. */
export const sharedRecordedSite = () => sharedService('recorded site', (t) => startRecordedSite(t));

/**
 * A service at its real address on a day of recorded history, with the clock frozen (no session
 * closes while a test reads the pages) unless `opts.realMs` moves it (withClock): the site's pages
 * all have closed and settled sessions to show.
 */
export async function startRecordedSite(t: T, opts: StartOptions = {}): Promise<TestService> {
  const port = await freePort();
  return startRecordedService(
    t,
    { PORT: String(port), BASE_URL: `http://127.0.0.1:${port}` },
    opts,
  );
}
