// The human docs (/docs, /docs/{slug}, /terms, /privacy): every page answers valid HTML with a
// title, unknown pages are 404, the links work, every curl example runs against this service as
// written, and the pages agree with what machines read (OpenAPI, the agent protocol, the manifest,
// /llms.txt), including the record routes' span caps.
import t from 'tap';
import { HtmlValidate } from 'html-validate';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send } from '../helpers/agents.js';
import { commandsOf, run } from '../helpers/shell-curl.js';
import { AxeBuilder } from '@axe-core/playwright';
import { launchChromium } from '../helpers/browser.js';
import { RECORD_RANGES, COVERAGE_PATH } from '../../src/docs/record-ranges.js';
import { DOC_PAGES } from '../../src/docs/docs.js';
import { TEST_CARDS } from '../../src/payments/cards.js';
import { EVENT_TYPES } from '../../src/schemas/index.js';
import { EVENT_WHEN } from '../../src/docs/events.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(210); // Chromium over the docs pages

// A still clock: no session closes while the examples run, so a deal key read stays valid.
const T0 = Date.now();
const svc = await startTestService(t, {}, { realMs: () => T0 });
const base = svc.config.baseUrl;
const PAGES = ['/docs', ...DOC_PAGES.map((p) => `/docs/${p.slug}`), '/terms', '/privacy'];
const html = async (path: string) => {
  const r = await svc.get(path, { headers: { accept: 'text/html' } });
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
};
const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
  '&#x60;': '`',
  '&#x3D;': '=',
};
const decode = (s: string) => s.replace(/&(amp|lt|gt|quot|#39|#x60|#x3D);/g, (e) => ENTITIES[e]);
/** The shell examples of a page, as a reader would copy them. */
const examplesOf = (page: string) =>
  [
    ...page.matchAll(
      /<pre class="example"[^>]*><code class="language-sh">([\s\S]*?)<\/code><\/pre>/g,
    ),
  ].map((m) => decode(m[1]));

t.test('every docs page is valid HTML with a title; the docs link every page', async (t) => {
  const validator = new HtmlValidate({ extends: ['html-validate:standard'] });
  for (const path of PAGES) {
    const p = await html(path);
    t.equal(p.status, 200, path);
    t.match(p.type, /^text\/html/, path);
    t.match(p.text, /<title>[^<]+ · Agent Market-Access Service<\/title>/, `${path} has a title`);
    const report = await validator.validateString(p.text);
    t.same(
      report.results.flatMap((r) =>
        r.messages.map((m) => `${m.ruleId} ${m.line}:${m.column} ${m.message}`),
      ),
      [],
      `${path} is valid HTML`,
    );
  }
  const index = (await html('/docs')).text;
  for (const p of DOC_PAGES) t.match(index, `href="/docs/${p.slug}"`, `/docs links ${p.slug}`);
  t.match(index, 'href="/docs/competitions"', 'the competitions rules stay linked');
  const manifest = (await svc.getJson('/api/v1/manifest')).body;
  for (const url of [
    ...Object.values(manifest.docs),
    manifest.legal.terms,
    manifest.legal.privacy,
    manifest.competitions.docs,
  ] as string[]) {
    t.equal((await html(new URL(url).pathname)).status, 200, `the manifest's ${url} answers`);
  }
});

t.test('an unknown page is 404: an HTML error page for browsers, JSON for clients', async (t) => {
  const page = await html('/docs/nonesuch');
  t.equal(page.status, 404);
  t.match(page.type, /^text\/html/);
  t.match(page.text, /<h1>Page not found<\/h1>/);
  t.match(page.text, 'href="/docs"', 'the error page leads back to the docs');
  const api = await svc.getJson('/docs/nonesuch');
  t.equal(api.status, 404);
  t.match(api.body.detail, /no docs page nonesuch/);
});

t.test("terms and privacy carry the version date of the manifest's legal block", async (t) => {
  const { terms_version } = (await svc.getJson('/api/v1/manifest')).body.legal;
  t.match(terms_version, /^\d{4}-\d{2}-\d{2}$/);
  for (const path of ['/terms', '/privacy']) {
    t.match(
      (await html(path)).text,
      `<time datetime="${terms_version}">${terms_version}</time>`,
      path,
    );
  }
});

t.test('every link on the docs pages opens, every in-page anchor exists', async (t) => {
  const seen = new Set<string>();
  for (const path of PAGES) {
    const whole = (await html(path)).text;
    // The page's own content (the layout's navigation is the site's, tested with its pages).
    const page = whole.slice(whole.indexOf('<main'), whole.indexOf('</main>'));
    const ids = new Set([...whole.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
    for (const [, raw] of page.matchAll(/href="([^"]+)"/g)) {
      const href = decode(raw);
      if (href.startsWith('#')) {
        t.ok(ids.has(href.slice(1)), `${path}: anchor ${href}`);
        continue;
      }
      t.ok(href.startsWith('/'), `${path}: ${href} is a path of this site`);
      if (seen.has(href)) continue;
      seen.add(href);
      const r = await svc.get(href, { headers: { accept: 'text/html' }, redirect: 'manual' });
      await r.arrayBuffer();
      t.ok(r.status < 400, `${path}: ${href} answers ${r.status}`);
    }
  }
});

t.test('every curl example runs against the service as written', async (t) => {
  const agent = await registerAgent(svc);
  // Addresses the service hands out (purchase_url) carry its configured base: both reach the test service.
  const fetcher = (url: string, init: RequestInit) => {
    if (!url.startsWith(svc.url) && !url.startsWith(base))
      throw new Error(`${url} is not this service`);
    const u = new URL(url);
    return svc.get(u.pathname + u.search, init);
  };
  let count = 0;
  for (const slug of ['agents', 'developers', 'events']) {
    const blocks = examplesOf((await html(`/docs/${slug}`)).text);
    t.ok(blocks.length >= (slug === 'events' ? 2 : 4), `/docs/${slug} has examples`);
    const env: Record<string, string> = { KEY: agent.key };
    t.match(blocks[0], `B=${base}/api/v1`, 'the first example sets the API base of this service');
    for (const block of blocks) {
      for (const { command, expected } of commandsOf(block.replaceAll(base, svc.url))) {
        const r = await run(command, expected, env, fetcher);
        if (r.status === 0) continue;
        count++;
        if (expected) t.equal(r.status, expected, `${command}: ${r.body.slice(0, 200)}`);
        else
          t.ok(
            r.status >= 200 && r.status < 300,
            `${command} answers ${r.status}: ${r.body.slice(0, 200)}`,
          );
      }
    }
    t.ok(env.B, 'the examples set B');
  }
  t.ok(count >= 20, `${count} requests ran`);
});

t.test(
  'the agents walk-through covers register, menu, order, purchase link and carts',
  async (t) => {
    const text = examplesOf((await html('/docs/agents')).text).join('\n');
    for (const s of [
      '/agents/token',
      '/agents/register',
      '/markets/h2/deals',
      '/orders',
      'purchase_url',
      '"$URL"',
      '/cart/items',
      '"$B/cart"',
      '"$B/carts"',
      '/checkout',
    ]) {
      t.ok(text.includes(s), `walks through ${s}`);
    }
  },
);

t.test(
  '/docs/agents follows the order on the event stream: its events, a resume after an id, the replay',
  async (t) => {
    const fetcher = (url: string, init: RequestInit) => {
      const u = new URL(url.replace(base, svc.url));
      return svc.get(u.pathname + u.search, init);
    };
    const blocks = examplesOf((await html('/docs/agents')).text);
    const env: Record<string, string> = {};
    const ran = [];
    for (const block of blocks) {
      for (const { command, expected } of commandsOf(block.replaceAll(base, svc.url)))
        ran.push(await run(command, expected, env, fetcher));
    }
    const streamed = ran.filter((r) => /curl -s -N "\$B\/events\/stream[?"]/.test(r.command));
    t.equal(streamed.length, 3, 'the walk-through streams three ways');
    // Again after another order (event 2).
    const again = await send(
      svc,
      'POST',
      '/api/v1/orders',
      { market: 'h2', offer_key: env.DEAL, qty: 1 },
      { authorization: `Bearer ${env.KEY}` },
    );
    t.equal(again.status, 201, 'another order');
    const upTo2 = (body: string) => /^id: 2$/m.test(body);
    const [all, settled, resumed] = [
      await run(streamed[0].command, null, env, fetcher, upTo2),
      await run(streamed[1].command, null, env, fetcher),
      await run(streamed[2].command, null, env, fetcher, upTo2),
    ];
    t.equal(all.status, 200);
    t.match(all.body, /^retry: \d+/, 'an event stream');
    const first = /^id: 1\nevent: order\.created\ndata: (.*)$/m.exec(all.body);
    t.ok(first, 'the order just placed is its first event');
    t.match(
      JSON.parse(first?.[1] ?? '{}'),
      { id: 1, type: 'order.created', data: { status: 'awaiting_payment' } },
      'data: the event JSON',
    );
    t.equal(settled.status, 200, 'waiting for a settlement');
    t.notMatch(settled.body, /event:/, 'nothing settled yet');
    t.match(resumed.body, /^id: 2$/m, 'Last-Event-ID 1: the events after it');
    t.notMatch(
      resumed.body,
      /^id: 1$/m,
      'Last-Event-ID 1: not the first event again (it would have come before 2)',
    );
    const replay = ran.find((r) => r.command.includes('"$B/events?after=0'))!;
    t.equal(
      JSON.parse(replay.body).events[0].type,
      'order.created',
      'the replay starts at the first event',
    );
    const page = decode((await html('/docs/agents')).text);
    t.notMatch(
      page,
      /follow it with <code>GET \/api\/v1\/orders\/\{order_id\}/,
      'no advice to poll the order',
    );
    t.match(page, 'href="/docs/events"', '/docs/agents links the events page');
  },
);

t.test(
  '/docs/events: every type from the schemas, ids, resume, retention, the streams, the WebSocket and webhooks',
  async (t) => {
    const raw = (await html('/docs/events')).text;
    const page = decode(raw);
    const text = decode(raw.replace(/<[^>]+>/g, ''));
    for (const type of EVENT_TYPES) {
      const row = new RegExp(
        `<tr id="type-${type.replace('.', '\\.')}"><td><code>${type.replace('.', '\\.')}</code></td><td>([^<]+)</td><td>([^<]+)</td></tr>`,
      ).exec(page);
      t.ok(row, `${type} has its row`);
      t.equal(row?.[1], EVENT_WHEN[type], `${type}: when`);
    }
    t.match(page, `The ${EVENT_TYPES.length} event types`);
    t.match(
      page,
      /order as GET \/orders\/\{order_id\} serves it/,
      "an order event's data is the order as GET serves it",
    );
    t.match(page, /\{cart_id, holder \{connected, since\}\}/, 'small objects list their fields');
    for (const s of [
      'gap-free',
      'Last-Event-ID',
      '?after=',
      'kept 7 days',
      '410',
      `GET ${base}/api/v1/events/stream`,
      `GET ${base}/api/v1/markets/{market_id}/stream`,
      'session.closed',
      `${base.replace(/^http/, 'ws')}/api/v1/ws`,
      '"op":"subscribe"',
      '"channel":"account"',
      '"channel":"market:m15"',
      `POST ${base}/api/v1/webhooks with {"url", "types"?: [...]}`,
      `GET ${base}/api/v1/webhooks lists yours`,
      'webhook-id: evt_',
      'webhook-timestamp',
      'webhook-signature: v1,',
      'standardwebhooks',
      'hook.verify(rawBody, headers)',
      '24 hours',
      'deduplicate by webhook-id',
      'SVC_WEBHOOK_ALLOW_PRIVATE=1',
    ]) {
      t.ok(text.includes(s), `explains ${s}`);
    }
    t.match(raw, 'href="/api/asyncapi.json"', 'links the AsyncAPI document');
    t.match((await html('/docs')).text, 'href="/docs/events"', '/docs links it');
    t.match(
      (await html('/docs')).text,
      'href="/api/asyncapi.json"',
      '/docs names the AsyncAPI document',
    );
  },
);

t.test(
  '/docs/developers lists every OpenAPI operation with its query defaults, and the record caps',
  async (t) => {
    const page = decode((await html('/docs/developers')).text);
    const doc = (await svc.getJson('/api/openapi.json')).body;
    let ops = 0;
    for (const [path, methods] of Object.entries(doc.paths) as [string, Record<string, any>][]) {
      for (const [method, op] of Object.entries(methods)) {
        ops++;
        t.ok(page.includes(`id="${op.operationId}"`), `${method} ${path} has its entry`);
        t.ok(
          page.includes(`${method.toUpperCase()}</span> ${path}</code>`),
          `${method.toUpperCase()} ${path} is listed`,
        );
        t.ok(page.includes(op.summary), `${path}: its summary`);
        for (const p of op.parameters ?? []) {
          if (p.in === 'query' && 'default' in p.schema)
            t.ok(
              page.includes(`<code>${JSON.stringify(p.schema.default)}</code>`),
              `${path}?${p.name} default shown`,
            );
        }
      }
    }
    t.ok(ops > 40, `${ops} operations`);
    for (const tag of ['markets', 'record', 'trading', 'events'])
      t.ok(page.includes(`Tag <code>${tag}</code>`), `grouped by the OpenAPI tag: ${tag}`);
    for (const s of [
      'Authorization: Bearer',
      'X-API-Token',
      '{"detail": ...}',
      'Idempotency-Key',
      `${base}/api/v1${COVERAGE_PATH}`,
    ])
      t.ok(page.includes(s), `explains ${s}`);

    // Every route that takes from_tick/to_tick is in the ranges table, with the cap it enforces.
    const ranged = Object.entries(doc.paths)
      .filter(([, m]: [string, any]) =>
        ['from_tick', 'to_tick'].every((n) =>
          (m.get?.parameters ?? []).some((p: any) => p.name === n),
        ),
      )
      .map(([path]) => path.replace('/api/v1', ''));
    t.same(
      ranged.sort(),
      RECORD_RANGES.map((r) => r.path).sort(),
      'the ranges table names every ranged route',
    );
    for (const r of RECORD_RANGES) {
      t.ok(page.includes(`GET ${base}/api/v1${r.path}`), `${r.path} in the ranges table`);
      const path = r.path.replace('{market_id}', 'h2').replace('{cluster}', '0');
      for (const { cap, when } of r.caps) {
        t.ok(page.includes(String(cap)), `${r.path}: ${cap}`);
        const extra = when ? `&${when.split(' ')[0]}` : '';
        const ok = await svc.get(`/api/v1${path}?from_tick=100&to_tick=${100 + cap - 1}${extra}`);
        await ok.arrayBuffer();
        t.equal(ok.status, 200, `${r.path}${extra}: ${cap} sessions pass`);
        const over = await send(
          svc,
          'GET',
          `/api/v1${path}?from_tick=100&to_tick=${100 + cap}${extra}`,
        );
        t.equal(over.status, 422, `${r.path}${extra}: ${cap + 1} sessions are refused`);
        t.same(over.body.detail[0].loc, ['query', 'to_tick']);
        t.equal(
          over.body.detail[0].ctx.max_span,
          cap,
          `${r.path}${extra}: the documented cap is the enforced one`,
        );
      }
    }
  },
);

t.test("/docs/protocol renders the protocol's steps with their requests and bodies", async (t) => {
  const page = decode((await html('/docs/protocol')).text);
  const proto = (await svc.getJson('/api/v1/agents/protocol')).body;
  t.ok(page.includes(proto.recommendation));
  for (const s of proto.steps) {
    t.ok(page.includes(`id="step-${s.step}"`), `step ${s.step}`);
    t.ok(page.includes(s.do), `step ${s.step}: ${s.do}`);
    t.ok(page.replace(/<[^>]+>/g, '').includes(s.request), `step ${s.step}: ${s.request}`);
    if (s.body) t.ok(page.includes(JSON.stringify(s.body, null, 2)), `step ${s.step}: its body`);
  }
  for (const r of proto.rules) t.ok(page.includes(r), r);
});

t.test(
  '/llms.txt says which record routes need a range, their caps, the coverage, the test cards and carts',
  async (t) => {
    const llms = await (await svc.get('/llms.txt')).text();
    for (const r of RECORD_RANGES) {
      const line = llms.split('\n').find((l) => l.includes(`GET ${base}/api/v1${r.path}:`));
      t.ok(line, `${r.path} has its line`);
      for (const { cap } of r.caps) t.match(line, String(cap), `${r.path}: cap ${cap}`);
      if (r.required) t.match(line, 'from_tick and to_tick required');
    }
    t.ok(
      llms.includes(`GET ${base}/api/v1/markets/{market_id}/coverage`),
      'points to the coverage',
    );
    t.ok(llms.includes(`GET ${base}/api/v1/payments/methods`), 'points to the test cards');
    for (const n of Object.values(TEST_CARDS)) t.ok(llms.includes(n), `quotes test card ${n}`);
    for (const s of [
      '## Carts',
      `GET ${base}/api/v1/cart `,
      '/api/v1/cart/items',
      'checkout_url',
      'pending_pairing',
      'write grant',
      'execute grant',
    ])
      t.ok(llms.includes(s), `carts: ${s}`);
    // The loop's first call on a deal is its quote: the Flow names it before any order or cart line.
    const flow = llms.slice(
      llms.indexOf('## Flow'),
      llms.indexOf('\n## ', llms.indexOf('## Flow') + 1),
    );
    const quoted = flow.indexOf(`POST ${base}/api/v1/orders/quote`);
    t.ok(quoted > 0, 'the flow quotes a deal');
    t.ok(quoted < flow.indexOf(`POST ${base}/api/v1/cart/items`), 'before proposing it');
    t.ok(quoted < flow.indexOf(`POST ${base}/api/v1/orders `), 'and before ordering it');
    t.match(llms, /revoke your key for good.*401/, 'a revoked key is told');
    // The agents page renders the same guide.
    const agents = decode((await html('/docs/agents')).text).replace(/<[^>]+>/g, '');
    for (const r of RECORD_RANGES) {
      const line = llms.split('\n').find((l) => l.includes(`GET ${base}/api/v1${r.path}:`))!;
      t.ok(agents.includes(line.slice(2)), `/docs/agents repeats: ${line.slice(2, 60)}`);
    }
  },
);

t.test(
  'phones: the pages fit 375 px, code blocks scroll in their own box; no CSP or accessibility violation',
  async (t) => {
    const browser = await launchChromium(t);
    const context = await browser.newContext({
      baseURL: svc.url,
      viewport: { width: 375, height: 800 },
    });
    const page = await context.newPage();
    const csp: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    for (const path of PAGES) {
      await page.goto(path);
      const axe = await new AxeBuilder({ page }).analyze();
      t.same(
        axe.violations.map(
          (v) =>
            `${v.id}: ${v.nodes
              .map((n) => n.target.join(' '))
              .slice(0, 3)
              .join(', ')}`,
        ),
        [],
        `${path}: accessible`,
      );
      const m = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        pre: [...document.querySelectorAll('pre')].map((p) => getComputedStyle(p).overflowX),
      }));
      t.ok(m.page <= 375, `${path}: the page is ${m.page} px wide`);
      t.ok(
        m.pre.every((o) => o === 'auto'),
        `${path}: code blocks scroll`,
      );
    }
    t.same(csp, [], 'no CSP violation');
  },
);
