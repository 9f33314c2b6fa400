// The human docs: /docs (the index), /docs/{slug} (agents, developers, protocol; competitions has
// its own route), /terms and /privacy. Every page is generated from the sources the machines read:
// the guide behind /llms.txt, the manifest, the agent protocol and the OpenAPI document of the
// finished route table, so the documents cannot disagree.
import Type, { type Static } from 'typebox';
import { holderOf } from '../../http/authenticators/holder-session.js';
import { renderPage } from '../../web/pages.js';
import {
  HttpError,
  htmlPage,
  route,
  type PublicContext,
  type Reply,
  type RequestInfo,
  type Route,
} from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { openApiDocument } from '../../api/openapi.js';
import type { discoveryTexts } from '../discovery-texts.js';
import { manifest } from '../manifest.js';
import { agentProtocol } from '../protocol.js';
import { guideSections, rulesSection } from '../guide.js';
import { COVERAGE_PATH, RECORD_RANGES, SPAN_REFUSAL, capWords } from '../record-ranges.js';
import { shellText, type Example } from '../examples.js';
import {
  idempotentOperations,
  referenceByTag,
  statusesDeclared,
  type OpenApiDoc,
} from '../api-reference.js';
import { DOC_PAGES, RENDERED_SLUGS, richText, sectionView, type RenderedSlug } from '../docs.js';
import { privacy, terms, type LegalDoc } from '../legal.js';
import { clientUsage } from '../client-usage.js';
import {
  ASYNCAPI_PATH,
  EVENT_RETENTION_DAYS,
  SUBSCRIBE_NOT_POLL,
  VERIFY_SNIPPET,
  WEBHOOK_RETRY_HOURS,
  eventTypeRows,
  webhookRoutes,
  wsAddress,
} from '../events.js';
import { KEY_PLACEHOLDER } from '../examples.js';
import { KEEPALIVE_MS } from '../../events/hub.js';
import { WS_CLOSE_CODES } from '../../events/asyncapi.js';
import { SETTLEMENT_HORIZON_SESSIONS } from '../../rules.js';

const SlugParams = Type.Object({
  slug: Type.String({ minLength: 1, maxLength: 100, description: 'the page' }),
});
type SlugParams = Static<typeof SlugParams>;

const exampleView = (e: Example) => ({
  id: e.id,
  title: e.title,
  intro: e.intro,
  text: shellText(e),
});

/** Path patterns of the GET routes anyone may open (a docs link is made only to those). */
function openableBy(routes: Route[]): (path: string) => boolean {
  const patterns = routes
    .filter((r) => r.method === 'GET' && r.auth === 'none')
    .map(
      (r) =>
        new RegExp(
          `^${r.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
        ),
    );
  return (path) => patterns.some((p) => p.test(path));
}

/** `texts` answers the discovery texts of the finished route table (their addresses checked against it). */
export function webDocsRoutes(s: Services, routes: Route[], texts: Texts): Route[] {
  let views: DocsViews | undefined;
  // Built on first use: the OpenAPI document needs the finished route table. Constant afterwards.
  const d: DocsDeps = { s, routes, views: () => (views ??= docsViews(s, routes, texts())) };

  return [
    route({
      method: 'GET',
      path: '/docs',
      auth: 'none',
      summary: 'The docs: an index of the pages',
      response: { 200: htmlPage('the docs index') },
      handler: (c) => getDocsIndex(s, c),
    }),
    route<SlugParams>({
      method: 'GET',
      path: '/docs/{slug}',
      auth: 'none',
      summary: 'A docs page: agents, developers or protocol',
      params: SlugParams,
      response: { 200: htmlPage('the docs page') },
      responses: { 404: { description: 'no such page' } },
      handler: (c) => getDocsPage(d, c),
    }),
    route({
      method: 'GET',
      path: '/terms',
      auth: 'none',
      summary: 'Terms of use',
      response: { 200: htmlPage('the terms') },
      handler: (c) => getTerms(d, c),
    }),
    route({
      method: 'GET',
      path: '/privacy',
      auth: 'none',
      summary: 'Privacy notice',
      response: { 200: htmlPage('the privacy notice') },
      handler: (c) => getPrivacy(d, c),
    }),
  ];
}

type Texts = () => ReturnType<typeof discoveryTexts>;
type DocsViews = Record<RenderedSlug, Record<string, unknown>>;
/** What the pages are made from: the service, the finished route table and the rendered pages' views (built once). */
type DocsDeps = { s: Services; routes: Route[]; views: () => DocsViews };

async function getDocsIndex(s: Services, { req }: PublicContext): Promise<Reply> {
  return renderPage('docs-index', {
    title: 'Docs',
    holder: await holderOf(s, req),
    pages: DOC_PAGES,
    docs_nav: nav(''),
  });
}

function getDocsPage(d: DocsDeps, { req, params }: PublicContext<SlugParams>): Promise<Reply> {
  const slug = RENDERED_SLUGS.find((x) => x === params.slug);
  if (!slug) throw new HttpError(404, `no docs page ${params.slug}; the pages are listed at /docs`);
  return renderedPage(d, req, slug);
}

async function renderedPage(d: DocsDeps, req: RequestInfo, slug: RenderedSlug): Promise<Reply> {
  const v = d.views()[slug] as { title: string };
  return renderPage(`docs-${slug}`, {
    ...v,
    holder: await holderOf(d.s, req),
    docs_nav: nav(slug),
  });
}

function getTerms(d: DocsDeps, { req }: PublicContext): Promise<Reply> {
  return legalPage(d, req, terms(d.s.config.baseUrl));
}

function getPrivacy(d: DocsDeps, { req }: PublicContext): Promise<Reply> {
  return legalPage(d, req, privacy(d.s.config.baseUrl));
}

async function legalPage({ s, routes }: DocsDeps, req: RequestInfo, doc: LegalDoc): Promise<Reply> {
  const base = s.config.baseUrl;
  const openable = openableBy(routes);
  return renderPage('docs-legal', {
    title: doc.title,
    holder: await holderOf(s, req),
    doc,
    intro: richText(doc.intro, base, openable),
    sections: doc.sections.map((x) => sectionView(x, base, openable)),
  });
}

/** The views of the rendered pages (agents, developers, events, protocol). */
function docsViews(s: Services, routes: Route[], t: ReturnType<Texts>): DocsViews {
  const base = s.config.baseUrl;
  const openable = openableBy(routes);
  const rich = (text: string) => richText(text, base, openable);
  const doc = openApiDocument(routes, base) as OpenApiDoc;
  const { at, examples } = t;
  return {
    agents: {
      title: 'For agents',
      description: 'From registration to a cart, as curl commands that run against this service.',
      examples: examples.agents.map(exampleView),
      sections: guideSections(at, s.config.timeScale, s.config.rateLimit)
        .filter((x) => x.id !== 'docs')
        .map((x) => sectionView(x, base, openable)),
      llms_txt: '/llms.txt',
    },
    developers: developersView(s, doc, t, rich),
    events: eventsView(
      at,
      rich,
      Object.fromEntries(
        examples.events.map((e) => [e.id.replace(/-example$/, ''), exampleView(e)]),
      ),
    ),
    protocol: protocolView(at, rich),
  } satisfies DocsViews;
}

/** /docs/developers: every route by tag, authentication, errors, record ranges, idempotency, the client. */
function developersView(
  s: Services,
  doc: OpenApiDoc,
  { at, examples }: ReturnType<Texts>,
  rich: (t: string) => string,
) {
  const base = s.config.baseUrl;
  const api = `${base}/api/v1`;
  const m = manifest(at, s.schema, s.config.timeScale, s.config.rateLimit);
  const dev = Object.fromEntries(
    examples.developers.map((e) => [e.id.replace(/-example$/, ''), exampleView(e)]),
  );
  return {
    title: 'For developers',
    description:
      'Every route of the API with its parameters and defaults, authentication, errors, limits and retries.',
    api_base: api,
    auth: {
      ...m.auth,
      headers: m.auth.headers.map((name, i) => ({ name, or: i > 0 })),
      key_required: m.auth.key_required.join(', '),
      public: m.auth.public.join(', '),
    },
    errors: {
      rule: rich(rulesSection().items.find((i) => i.startsWith('Errors'))!),
      statuses: statusesDeclared(doc),
    },
    ranges: RECORD_RANGES.map((r) => ({
      path: `${api}${r.path}`,
      required: r.required,
      caps: capWords(r),
      note: r.note,
    })),
    coverage: rich(`GET ${api}${COVERAGE_PATH}`),
    refusal: SPAN_REFUSAL,
    idempotency: idempotentOperations(doc),
    ex: dev,
    tags: referenceByTag(doc),
    usage: clientUsage(base),
  };
}

/** /docs/protocol: the agent protocol's steps, their requests linked. */
function protocolView(at: ReturnType<Texts>['at'], rich: (t: string) => string) {
  const proto = agentProtocol(at);
  return {
    title: 'The agent protocol',
    description: 'The working protocol of an agent, step by step.',
    data_url: '/api/v1/agents/protocol',
    recommendation: proto.recommendation,
    rules: proto.rules,
    steps: proto.steps.map((st) => ({
      ...st,
      request_html: rich(st.request),
      body_json: 'body' in st && st.body ? JSON.stringify(st.body, null, 2) : null,
    })),
    analysis: { ...proto.analysis, endpoints: proto.analysis.endpoints.map(rich) },
    consent: proto.consent,
  };
}

/** An example object as the page shows it, on one line. */
function pretty(v: unknown): string {
  return JSON.stringify(v);
}

/** /docs/events: the table of types from the schemas, the transports, resuming, retention, webhooks. */
function eventsView(
  at: ReturnType<typeof discoveryTexts>['at'],
  rich: (t: string) => string,
  ex: Record<string, unknown>,
) {
  const hooks = webhookRoutes(at);
  const types = eventTypeRows(at);
  const event = {
    id: 42,
    type: 'order.filled',
    created_at: 1764126000,
    data: { id: 7, status: 'filled', position_id: 3, '...': '...' },
  };
  return {
    title: 'Events',
    description:
      "Subscribe, don't poll: every event type, resuming without missing one, the stream, the WebSocket and signed webhooks.",
    advice: SUBSCRIBE_NOT_POLL,
    types,
    type_count: types.length,
    horizon: SETTLEMENT_HORIZON_SESSIONS,
    retention_days: EVENT_RETENTION_DAYS,
    keepalive_s: KEEPALIVE_MS / 1000,
    retry_hours: WEBHOOK_RETRY_HOURS,
    asyncapi: at.path(ASYNCAPI_PATH),
    stream: rich(at.req('GET', '/events/stream')),
    replay: rich(at.req('GET', '/events')),
    market: rich(at.req('GET', '/markets/{market_id}/stream')),
    orders: rich(at.req('GET', '/orders')),
    positions: rich(at.req('GET', '/positions')),
    ex,
    ws: {
      address: wsAddress(at),
      auth: pretty({ op: 'auth', key: KEY_PLACEHOLDER }),
      subscribe: pretty({ op: 'subscribe', channels: ['account', 'market:m15'], after: 41 }),
      account: pretty({ channel: 'account', event }),
      market: pretty({
        channel: 'market:m15',
        event: {
          type: 'session.closed',
          market: 'm15',
          tick: 1960140,
          next_tick: 1960141,
          tick_closes_at: 1764127800,
        },
      }),
      close: WS_CLOSE_CODES.map(([code, why]) => ({ code, why })),
    },
    hooks: hooks && { register: rich(hooks.register), list: rich(hooks.list) },
    delivery: [
      'POST https://receiver.example.org/hooks/market HTTP/1.1',
      'content-type: application/json',
      'webhook-id: evt_12_42',
      'webhook-timestamp: 1764126000',
      'webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
      '',
      pretty(event),
    ].join('\n'),
    verify: VERIFY_SNIPPET,
  };
}

/** The docs' own navigation, the current page marked. */
const nav = (current: string) =>
  [
    { slug: '', title: 'Docs' },
    ...DOC_PAGES.map((p) => ({ slug: p.slug, title: p.title.split(':')[0] })),
  ].map((p) => ({
    href: p.slug ? `/docs/${p.slug}` : '/docs',
    title: p.title,
    current: p.slug === current,
  }));
