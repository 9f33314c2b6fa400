// A crawler of the site for the quality tests: from a start page, every same-origin link, script,
// stylesheet and image is fetched (as a browser would ask: Accept text/html), breadth first. Pages of
// one shape (/explore/m15/tick/123 and /explore/m15/tick/124) are many: a few of each are enough.
import type { TestService } from './service.js';

export type Fetched = {
  url: string;
  status: number;
  type: string;
  headers: Headers;
  text: string;
  from: string;
};

/** The path with numbers and tokens generalised, and the query's keys (not values): one page kind. */
export function shapeOf(url: string): string {
  const u = new URL(url, 'http://x');
  const path = u.pathname
    .split('/')
    .map((seg) => (/^-?\d+(\.\d+)?$/.test(seg) ? ':n' : seg.length >= 24 ? ':token' : seg))
    .join('/');
  const keys = [...new Set(u.searchParams.keys())].sort().join('&');
  return keys ? `${path}?${keys}` : path;
}

const ATTR = /\b(?:href|src)="([^"]*)"/g;
const unescape = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&#x3D;/g, '=')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'");

/** Same-origin links of a page, as paths with their query. */
export function linksOf(html: string, base: string): string[] {
  const out: string[] = [];
  for (const m of html.matchAll(ATTR)) {
    const raw = unescape(m[1]);
    if (!raw || raw.startsWith('#') || /^(mailto|javascript|data):/i.test(raw)) continue;
    const u = new URL(raw, base);
    if (u.origin !== new URL(base).origin) continue;
    out.push(u.pathname + u.search);
  }
  return out;
}

export type CrawlOptions = {
  cookie?: string;
  /** Fetches in all (a bound: the crawl ends there). */
  limit?: number;
  /** Pages fetched per shape. */
  perShape?: number;
  /** Paths never fetched (logging out would end the crawl's session). */
  skip?: (path: string) => boolean;
};

export async function crawl(
  svc: TestService,
  starts: string[],
  o: CrawlOptions = {},
): Promise<Fetched[]> {
  const limit = o.limit ?? 600;
  const perShape = o.perShape ?? 3;
  const seen = new Set<string>();
  const shapes = new Map<string, number>();
  const queue: { path: string; from: string }[] = starts.map((path) => ({ path, from: '(start)' }));
  const out: Fetched[] = [];
  while (queue.length && out.length < limit) {
    const { path, from } = queue.shift()!;
    if (seen.has(path) || o.skip?.(path)) continue;
    seen.add(path);
    const shape = shapeOf(path);
    const n = shapes.get(shape) ?? 0;
    if (n >= perShape) continue;
    shapes.set(shape, n + 1);
    const res = await svc.get(path, {
      redirect: 'manual',
      headers: { accept: 'text/html,*/*;q=0.8', ...(o.cookie ? { cookie: o.cookie } : {}) },
    });
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    out.push({ url: path, status: res.status, type, headers: res.headers, text, from });
    const location = res.headers.get('location');
    if (location && res.status >= 300 && res.status < 400)
      queue.push({
        path: linksOf(`<a href="${location}">`, svc.config.baseUrl)[0] ?? path,
        from: path,
      });
    if (type.startsWith('text/html'))
      for (const link of linksOf(text, `${svc.config.baseUrl}${path}`))
        queue.push({ path: link, from: path });
  }
  return out;
}
