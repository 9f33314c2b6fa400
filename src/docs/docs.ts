// The human docs (/docs and /docs/{slug}): which pages exist, and the guide's plain text turned into
// safe HTML (escaped, with the service's own addresses as code and, where a browser can open them,
// as links).
import type { Section } from './guide.js';

export type DocPage = { slug: string; title: string; summary: string };

/** The pages under /docs, in the order the index lists them (competitions is served by its own route). */
export const DOC_PAGES: DocPage[] = [
  {
    slug: 'agents',
    title: 'For agents: from registration to a cart',
    summary:
      'Register a key, read the menu, order, hand the purchase link to your holder, work with carts: every step as a curl command you can run.',
  },
  {
    slug: 'developers',
    title: 'For developers: the API',
    summary:
      'Every route grouped by tag with its parameters and defaults, authentication, errors, record ranges and their caps, and safe retries.',
  },
  {
    slug: 'events',
    title: "Events: subscribe, don't poll",
    summary:
      'Every event type and its data, gap-free ids, resuming with Last-Event-ID, retention, the event stream, the market stream, the WebSocket and signed webhooks.',
  },
  {
    slug: 'protocol',
    title: 'The agent protocol',
    summary:
      'The working protocol agents follow, step by step with each request and body (also served as data).',
  },
  {
    slug: 'competitions',
    title: 'Competition rules',
    summary:
      'Free-entry paper trading on simulated balances, one competition per market at all times.',
  },
];

/** Slugs this module's route renders (competitions has its own). */
export const RENDERED_SLUGS = ['agents', 'developers', 'events', 'protocol'] as const;
export type RenderedSlug = (typeof RENDERED_SLUGS)[number];

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Text as HTML: every address of the service becomes code, and a link (by its path, so it works on
 * any host) when `openable` says a browser can GET it: no placeholder, not after POST/PUT/DELETE.
 */
export function richText(
  text: string,
  baseUrl: string,
  openable: (path: string) => boolean,
): string {
  const re = new RegExp(`${escapeRegExp(baseUrl)}[^\\s"]*`, 'g');
  let out = '';
  let last = 0;
  for (const m of text.matchAll(re)) {
    const url = m[0].replace(/[.,;:)]+$/, '');
    const before = text.slice(last, m.index);
    const path = url.slice(baseUrl.length) || '/';
    const link =
      !/(POST|PUT|DELETE) $/.test(before) &&
      !/[{}<>|]|=(&|$)/.test(path) &&
      openable(path.split('?')[0]);
    out +=
      escapeHtml(before) +
      (link
        ? `<a href="${escapeHtml(path)}"><code>${escapeHtml(url)}</code></a>`
        : `<code>${escapeHtml(url)}</code>`);
    last = m.index + url.length;
  }
  return out + escapeHtml(text.slice(last));
}

/** A section with its items as HTML, for the docs-sections partial. */
export function sectionView(s: Section, baseUrl: string, openable: (path: string) => boolean) {
  return {
    id: s.id,
    title: s.title,
    ordered: !!s.ordered,
    items: s.items.map((t) => richText(t, baseUrl, openable)),
  };
}
