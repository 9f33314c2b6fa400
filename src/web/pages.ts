// Server-rendered pages: mustache templates from templates/, every page inside the shared layout.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Mustache from 'mustache';
import Type from 'typebox';
import { Media, route, type Reply, type Route } from '../http/route.js';
import { SETTLEMENT_HORIZON_SESSIONS } from '../rules.js';
import { TEST_CARDS } from '../payments/cards.js';
import { MONTHLY_FEE } from '../payments/terms.js';

const here = path.dirname(fileURLToPath(import.meta.url));
// src/http → project root, from both the sources and dist/src/http.
const root = here.includes(`${path.sep}dist${path.sep}`)
  ? path.resolve(here, '..', '..', '..')
  : path.resolve(here, '..', '..');
export const TEMPLATES_DIR = path.join(root, 'templates');
/** Styles and scripts of the pages: served files, since their CSP allows nothing inline. */
export const PUBLIC_DIR = path.join(root, 'public');

// HTML-escape what can break out of text or a quoted attribute; leave "/" alone so URLs stay legible.
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#x60;',
  '=': '&#x3D;',
};
Mustache.escape = (value: unknown) => String(value).replace(/[&<>"'`=]/g, (c) => ESCAPES[c]);

const cache = new Map<string, string>();
function template(name: string): string {
  let t = cache.get(name);
  if (t === undefined) {
    t = fs.readFileSync(path.join(TEMPLATES_DIR, `${name}.mustache`), 'utf8');
    Mustache.parse(t);
    cache.set(name, t);
  }
  return t;
}

/** Partials (`{{> name}}`) are templates of the same folder. */
const partial = (name: string) => template(name);

/** Rules the templates quote ({{rules.horizon_sessions}}), defined once in src/rules.ts and src/payments/cards.ts. */
const RULES_VIEW = {
  horizon_sessions: SETTLEMENT_HORIZON_SESSIONS,
  approved_test_card: TEST_CARDS.approved,
  monthly_fee: MONTHLY_FEE.amount.toFixed(2),
};

/** Renders template `name` alone (a fragment a page inserts with {{{ }}}, e.g. one kept in a cache). */
export function renderFragment(name: string, view: Record<string, unknown>): string {
  return Mustache.render(template(name), { rules: RULES_VIEW, ...view }, partial);
}

/** Renders `name` with `view` and wraps it in the layout. Mustache escapes every {{value}}. */
export function renderPage(
  name: string,
  view: Record<string, unknown> & { title: string },
  status = 200,
): Reply {
  const content = Mustache.render(template(name), { rules: RULES_VIEW, ...view }, partial);
  const body = Mustache.render(template('layout'), { ...view, content }, partial);
  // Sent as bytes: uWS writes a large JS string several times slower than a Buffer.
  return { status, body: Buffer.from(body), contentType: 'text/html; charset=utf-8' };
}

const ASSETS = {
  'site.css': 'text/css; charset=utf-8',
  'site.js': 'text/javascript; charset=utf-8',
  'api-docs.js': 'text/javascript; charset=utf-8',
  'countdown.js': 'text/javascript; charset=utf-8',
  'card-input.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
  'ops.js': 'text/javascript; charset=utf-8',
} as const;
type Asset = keyof typeof ASSETS;

/** GET /static/{asset}: the files of public/, read once. */
export function assetRoute(): Route {
  const files = new Map<Asset, Buffer>();
  return route({
    method: 'GET',
    path: '/static/{asset}',
    auth: 'none',
    summary: 'Styles and scripts of the pages',
    params: Type.Object({ asset: Type.Union(Object.keys(ASSETS).map((k) => Type.Literal(k))) }),
    response: {
      200: new Media(
        'the file',
        Object.fromEntries(Object.values(ASSETS).map((t) => [t, undefined])),
      ),
    },
    handler: ({ params }) => {
      const name = params.asset as Asset;
      let body = files.get(name);
      if (!body) files.set(name, (body = fs.readFileSync(path.join(PUBLIC_DIR, name))));
      return {
        body,
        contentType: ASSETS[name],
        headers: { 'cache-control': 'public, max-age=3600' },
      };
    },
  });
}

const HEADINGS: Record<number, string> = {
  400: 'That did not work',
  401: 'Please log in',
  403: 'Not allowed',
  404: 'Page not found',
  405: 'Not allowed here',
  409: 'That changed meanwhile',
  413: 'That upload is too large',
  422: 'That request could not be read',
  429: 'Too many requests',
  503: 'Busy right now',
};
/** What a browser is told to do next, by status (the error's own words come first). */
const NEXT: Record<number, string> = {
  403: 'If you followed a link or a form from another site, open this site yourself and try again from its own pages.',
  429: 'Wait a little (the answer says how long in its Retry-After header) and try again.',
  503: 'Try again in a moment.',
};

/** The page a browser gets for an error on the site (the status is kept; JSON stays for /api/). */
export function errorPage(status: number, message: string): Reply {
  const heading =
    HEADINGS[status] ?? (status >= 500 ? 'Something went wrong on our side' : 'That did not work');
  const words =
    status === 404 && message === 'Not Found'
      ? 'Nothing is at this address.'
      : status >= 500
        ? 'The error is logged; please try again.'
        : message;
  return renderPage(
    'error',
    {
      title: heading,
      heading,
      message: words,
      next:
        NEXT[status] ??
        (status >= 500 ? 'If it keeps happening, tell the operator what you were doing.' : ''),
      status,
    },
    status,
  );
}
