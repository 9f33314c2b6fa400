// Every route of the service's own table, driven over HTTP with requests drawn from the route's
// own TypeBox schemas (valid, boundary and hostile values; wrong content types; garbage path
// segments; bodies nested 5000 deep), with and without a valid agent key or holder cookie.
// CONTRACT.md "Errors": no request, however malformed, gets a 5xx, and every error body has
// SPEC.md's shape. Also: a 5000-deep body to every POST route is a 422 or 413, never a crash.
import t from 'tap';
import fc from 'fast-check';
import { MARKET_IDS } from '../../../src/engine/markets.js';
import { routeTable } from '../../../src/http/route-table.js';
import type { Route } from '../../../src/http/route.js';
import { registerAgent } from '../../helpers/agents.js';
import { registerHolder } from '../../helpers/holders.js';
import { arbOf, hostileString, objectOf, spell } from '../../helpers/schema-arb.js';
import { sharedWebService } from '../../helpers/web.js';

const svc = await sharedWebService();
const agent = await registerAgent(svc);
const holder = await registerHolder(svc);
const routes = routeTable(svc.services);
const HINTS = {
  market_id: [...MARKET_IDS],
  market: [...MARKET_IDS],
  email: [holder.email],
  password: ['correct horse battery'],
};
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

/** Percent-encodes, also strings with lone surrogates (which encodeURIComponent refuses). */
function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s
      .split(/(\p{Cs})/u)
      .map((p) => (/\p{Cs}/u.test(p) ? '%ED%A0%80' : encodeURIComponent(p)))
      .join('');
  }
}

/** URL pieces stay under the front end's header limit: huge values belong to bodies. */
const urlPiece = (v: unknown) => enc(spell(v).slice(0, 1500));

const garbageSegment = fc.oneof(
  fc.webSegment(),
  fc.constantFrom(
    '%00',
    '%ZZ',
    '%',
    '..',
    '%2e%2e',
    '%ED%A0%80',
    '%F0%9F',
    '-1',
    '0',
    '1e3',
    '99999999999999999999999',
    'null',
    '%20',
    'x'.repeat(1500),
  ),
);

type Sent = { path: string; init: RequestInit; authorized: boolean; bodyKind: string };

const BODY_KINDS = [
  'json',
  'json',
  'json',
  'json',
  'form',
  'deep',
  'text',
  'xml',
  'multipart',
  'none',
  'broken',
] as const;

function requestOf(r: Route): fc.Arbitrary<Sent> {
  const names = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const props: Record<string, any> = r.params?.properties ?? {};
  const segs = fc.tuple(
    ...names.map((n) =>
      fc.oneof(
        {
          arbitrary: arbOf(props[n] ?? { type: 'string' }, { hints: HINTS }, n).map(urlPiece),
          weight: 4,
        },
        { arbitrary: garbageSegment, weight: 1 },
      ),
    ),
  );
  const query = r.query
    ? objectOf(r.query, { hints: HINTS }).map((q) => {
        const u = new URLSearchParams();
        for (const [k, v] of Object.entries(q))
          for (const x of Array.isArray(v) ? v : [v]) u.append(k, spell(x).slice(0, 500));
        return u.toString();
      })
    : fc.oneof(fc.constant(''), fc.webQueryParameters());
  const body = r.body ? objectOrAny(r.body) : fc.constant(undefined);
  return fc
    .record({
      segs,
      query,
      body,
      kind: fc.constantFrom(...BODY_KINDS),
      auth: fc.boolean(),
      badAuth: fc.constantFrom('Bearer nope', `Bearer ${'A'.repeat(80)}`, 'Basic Zm9vOmJhcg==', ''),
      json: fc.nat(4),
    })
    .map(({ segs, query, body, kind, auth, badAuth, json }) => {
      let path = r.path;
      names.forEach((n, i) => (path = path.replace(`{${n}}`, segs[i])));
      if (query) path += `?${query}`;
      const headers: Record<string, string> = {};
      // Web routes answer JSON clients with {detail}; browsers get pages (checked for status only).
      if (json > 0) headers.accept = 'application/json';
      if (auth) {
        headers.authorization = `Bearer ${agent.key}`;
        // The holder's session serves every route but the one that would end it.
        headers.cookie = r.path === '/logout' ? 'holder_session=gone' : holder.cookie;
      } else if (badAuth) headers.authorization = badAuth;
      const init: RequestInit = { method: r.method, headers, redirect: 'manual' };
      if (r.method === 'POST' || r.method === 'PUT')
        Object.assign(init, encodeBody(kind, body, headers));
      return {
        path,
        init,
        authorized: auth || r.auth === 'none',
        bodyKind: r.method === 'GET' ? 'none' : kind,
      };
    });
}

const objectOrAny = (s: any) =>
  s.type === 'object' ? objectOf(s, { hints: HINTS }) : arbOf(s, { hints: HINTS });

function encodeBody(
  kind: string,
  body: unknown,
  headers: Record<string, string>,
): { body?: string } {
  switch (kind) {
    case 'json':
      headers['content-type'] = 'application/json';
      return { body: JSON.stringify(body) ?? 'null' };
    case 'form': {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const fields = body && typeof body === 'object' ? Object.entries(body) : [['x', body]];
      return { body: fields.map(([k, v]) => `${enc(String(k))}=${urlPiece(v)}`).join('&') };
    }
    case 'deep':
      headers['content-type'] = 'application/json';
      return { body: deep(5000) };
    case 'text':
      headers['content-type'] = 'text/plain';
      return { body: JSON.stringify(body) ?? '' };
    case 'xml':
      headers['content-type'] = 'application/xml';
      return { body: '<?xml version="1.0"?><order><qty>1</qty></order>' };
    case 'multipart':
      headers['content-type'] = 'multipart/form-data; boundary=XyZ';
      return {
        body: '--XyZ\r\nContent-Disposition: form-data; name="qty"\r\n\r\n1\r\n--XyZ--\r\n',
      };
    case 'broken':
      headers['content-type'] = 'application/json';
      return { body: '{"a": [1, 2' };
    default:
      return {};
  }
}

const LOCS = new Set(['body', 'query', 'path']);

/** What is wrong with an error answer's shape (SPEC.md "Errors"), or undefined. */
function shapeProblem(status: number, body: any): string | undefined {
  if (typeof body !== 'object' || body === null || !('detail' in body)) return 'no detail';
  const extra = Object.keys(body).filter((k) => k !== 'detail');
  if (extra.length) return `extra keys ${extra}`;
  if (typeof body.detail === 'string') return undefined;
  if (status !== 422 || !Array.isArray(body.detail) || body.detail.length === 0)
    return 'detail is neither a string nor a 422 list';
  for (const d of body.detail) {
    if (
      !Array.isArray(d.loc) ||
      !LOCS.has(d.loc[0]) ||
      !d.loc.every((p: unknown) => typeof p === 'string' || typeof p === 'number')
    )
      return `bad loc ${JSON.stringify(d.loc)}`;
    if (typeof d.msg !== 'string' || typeof d.type !== 'string') return 'msg or type not a string';
  }
  return undefined;
}

const API_JSON = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

async function check(r: Route, s: Sent): Promise<string | undefined> {
  let res: Response;
  try {
    res = await svc.get(s.path, s.init);
  } catch (err) {
    return `no answer: ${(err as Error).message}`;
  }
  const text = await res.text();
  const where = `${r.method} ${s.path.slice(0, 200)} [${s.bodyKind}] → ${res.status}: ${text.slice(0, 300)}`;
  if (res.status >= 500) return `5xx: ${where}`;
  // A status the route declares has its own body (POST /mcp's JSON-RPC errors), held by the response checks.
  if (
    res.status >= 400 &&
    !(res.status in r.response) &&
    /application\/json/.test(res.headers.get('content-type') ?? '')
  ) {
    const problem = shapeProblem(res.status, JSON.parse(text));
    if (problem) return `${problem}: ${where}`;
  }
  // A route whose body may be left out takes an empty request of any type.
  const leftOut = r.optionalBody && !s.init.body;
  const wrongType =
    r.body &&
    !leftOut &&
    r.path.startsWith('/api/') &&
    !API_JSON.test((s.init.headers as Record<string, string>)['content-type'] ?? '');
  if (wrongType && s.authorized && reaches(r.path, s.path) && res.status !== 415)
    return `expected 415: ${where}`;
  return undefined;
}

/**
 * Whether a sent path reaches the route it was made for: an empty segment or a dot segment ('..',
 * '%2e%2e', resolved by the client) sends it elsewhere, if anywhere.
 */
function reaches(pattern: string, sent: string): boolean {
  const path = sent.split('?')[0];
  if (/\/(\.|%2e){1,2}(?=\/|$)/i.test(path)) return false;
  const re = new RegExp(
    `^${pattern.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`,
  );
  return re.test(path);
}

t.test('every route: no 5xx, errors shaped as SPEC.md says', async (t) => {
  for (const r of routes) {
    await fc.assert(
      fc.asyncProperty(requestOf(r), async (s) => {
        const problem = await check(r, s);
        if (problem) throw new Error(problem);
      }),
      { numRuns: r.method === 'GET' ? 20 : 40 },
    );
  }
  t.pass(`${routes.length} routes`); // tap reports the subtest's time
  t.equal((await svc.get('/healthz')).status, 200, 'still up');
  t.same(
    svc.logs.filter((l) => /unhandled error|answer failed|not serialisable/.test(String(l.msg))),
    [],
    'no unhandled errors logged',
  );
});

t.test('a 5000-deep body to every POST route is a 422 or 413', async (t) => {
  const posts = routes.filter((r) => r.method === 'POST' || r.method === 'PUT');
  t.ok(posts.length >= 5);
  const sample = (s: any, n: string) =>
    n === 'token' ? 'x' : s?.type === 'integer' ? '1' : ((HINTS as any)[n]?.[0] ?? 'x');
  for (const r of posts) {
    const path = r.path.replace(/\{([^}]+)\}/g, (_, n) => sample(r.params?.properties?.[n], n));
    for (const nested of [
      deep(5000),
      `{"name":${deep(5000)}}`,
      `{"operator":{"name":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`,
    ]) {
      const res = await svc.get(path, {
        method: r.method,
        redirect: 'manual',
        body: nested,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${agent.key}`,
          cookie: holder.cookie,
        },
      });
      const body = await res.json().catch(() => null);
      if (r.body) {
        t.ok(res.status === 422 || res.status === 413, `${r.method} ${path} → ${res.status}`);
        if (res.status === 422) t.same(body?.detail?.[0]?.loc, ['body']);
      } else t.ok(res.status < 500, `${r.method} ${path} (takes no body) → ${res.status}`);
    }
  }
  t.equal((await svc.get('/healthz')).status, 200, 'still up');
});

t.test('hostile strings in every declared body field are a 422 at that field', async (t) => {
  for (const r of routes.filter((x) => x.body && (x.body as any).type === 'object')) {
    const path = r.path.replace(/\{[^}]+\}/g, '1');
    for (const [key, ps] of Object.entries<any>((r.body as any).properties)) {
      if (!(ps.type === 'string' || ps.anyOf?.some((b: any) => b.type === 'string'))) continue;
      const value = fc.sample(
        hostileString.filter((s) => /\u0000|\p{Cs}/u.test(s)),
        1,
      )[0];
      const res = await svc.get(path, {
        method: r.method,
        redirect: 'manual',
        body: JSON.stringify({ [key]: value }),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `Bearer ${agent.key}`,
          cookie: holder.cookie,
        },
      });
      const body = await res.json();
      t.equal(res.status, 422, `${r.path} ${key}`);
      t.match(
        body.detail.find((d: any) => d.loc[1] === key),
        { loc: ['body', key], type: 'string_invalid_characters' },
        `${r.path} ${key}`,
      );
    }
  }
});
