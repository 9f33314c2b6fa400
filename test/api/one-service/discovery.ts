// Discovery and market routes of the running service over HTTP on a real database.
import t from 'tap';
import { sharedWebService } from '../../helpers/web.js';
import { migrationsList } from '../../../orm/migrations/index.js';
import { asyncApiDocument } from '../../../src/events/asyncapi.js';
import { EVENT_TYPES } from '../../../src/schemas/index.js';

const svc = await sharedWebService();

t.test('manifest carries every top-level key of SPEC.md with its contents', async (t) => {
  const { status, body } = await svc.getJson('/api/v1/manifest');
  t.equal(status, 200);
  const keys = [
    'name',
    'domain',
    'base_url',
    'official_site',
    'api_base',
    'openapi',
    'asyncapi',
    'agents',
    'docs',
    'auth',
    'markets',
    'engine',
    'layers',
    'history',
    'events',
    'carts',
    'flow',
    'payments',
    'competitions',
    'legal',
    'notice',
    'schema',
  ];
  for (const k of keys) t.ok(k in body, `has ${k}`);
  t.equal(body.api_base, `${svc.config.baseUrl}/api/v1`);
  t.equal(body.openapi, `${svc.config.baseUrl}/api/openapi.json`);
  t.same(
    body.markets.map((m: any) => [m.id, m.label, m.interval_seconds]),
    [
      ['m15', 'Quarter-Hour Arena', 900],
      ['m45', 'Three-Quarter League', 2700],
      ['h2', 'Two-Hour Tournament', 7200],
      ['h10', 'Ten-Hour Campaign', 36000],
    ],
  );
  t.equal(body.engine.name, 'core_v1');
  t.type(body.engine.description, 'string');
  t.same(body.payments.methods, ['balance', 'card']);
  t.equal(body.payments.card.ready, true);
  t.equal(body.payments.crypto.ready, false);
  t.same(body.payments.monthly_fee, { amount: 15.0, currency: 'USD' });
  t.same(body.payments.payouts, {
    delay_days: 3.0,
    commission: 0.06,
    commission_pct: 6.0,
    minimum: 10.0,
    currency: 'USD',
  });
  t.type(body.payments.gold_coins, 'object');
  t.equal(body.agents.human_needed_to_register_and_read, false);
  t.equal(body.agents.human_needed_to_spend, true);
  t.match(body.agents.autonomous_funding, /3 settled trades/);
  t.match(body.legal.terms_version, /^\d{4}-\d{2}-\d{2}$/);
  // Every migration of the list ran, and the newest is reported.
  t.equal(body.schema.applied, migrationsList.length);
  t.equal(body.schema.last, migrationsList[migrationsList.length - 1].name);
  const [ran] = await svc.orm.em
    .fork()
    .execute(
      `select floor(extract(epoch from executed_at))::float8 as at from mikro_orm_migrations order by id desc limit 1`,
    );
  t.equal(
    body.schema.last_at,
    ran.at,
    "last_at is the unix time the migration ran (the migrator's record)",
  );
});

t.test('llms.txt and robots.txt are plain text', async (t) => {
  const llms = await svc.get('/llms.txt');
  t.match(llms.headers.get('content-type'), /^text\/plain/);
  const text = await llms.text();
  for (const s of [
    '/api/v1/manifest',
    '/api/openapi.json',
    '/api/docs',
    'purchase_url',
    '/agents/register',
  ])
    t.ok(text.includes(s), `mentions ${s}`);
  // How an agent proposes a cart and what its holder sees, followed step by step in test/web/cart.test.ts.
  for (const s of [
    'POST http',
    '/api/v1/cart/items',
    'checkout_url',
    'pending_pairing',
    'stale',
    '/api/v1/carts/{cart_id}/checkout',
    'execute grant',
    'autonomous funding',
    'own (paying buys',
  ]) {
    t.ok(text.includes(s), `explains carts: ${s}`);
  }
  const robots = await svc.get('/robots.txt');
  t.match(await robots.text(), /User-agent: \*/);
});

t.test('the carts are in the OpenAPI document and the protocol steps', async (t) => {
  const doc = (await svc.getJson('/api/openapi.json')).body;
  const routes: [string, string, boolean][] = [
    ['/api/v1/cart', 'get', false],
    ['/api/v1/cart/items', 'post', true],
    ['/api/v1/cart/items/{item_id}', 'delete', false],
    ['/api/v1/cart/link', 'post', false],
    ['/api/v1/carts', 'get', false],
    ['/api/v1/carts', 'post', true],
    ['/api/v1/carts/{cart_id}', 'get', false],
    ['/api/v1/carts/{cart_id}/items', 'post', true],
    ['/api/v1/carts/{cart_id}/items/{item_id}', 'put', true],
    ['/api/v1/carts/{cart_id}/items/{item_id}', 'delete', false],
    ['/api/v1/carts/{cart_id}/checkout', 'post', true],
    ['/api/v1/carts/{cart_id}/link', 'post', false],
  ];
  for (const [path, method, hasBody] of routes) {
    const op = doc.paths[path]?.[method];
    t.ok(op, `${method.toUpperCase()} ${path} is documented`);
    const ok = op.responses['200'] ?? op.responses['201'];
    t.ok(
      ok.content['application/json'].schema,
      `${method.toUpperCase()} ${path} declares its answer`,
    );
    t.equal(
      !!op.requestBody,
      hasBody,
      `${method.toUpperCase()} ${path} ${hasBody ? 'declares' : 'takes no'} request body`,
    );
  }
  t.equal(
    doc.paths['/api/v1/carts/{cart_id}/checkout'].post.requestBody.required,
    false,
    'the checkout body is optional',
  );
  const steps = (await svc.getJson('/api/v1/agents/protocol')).body.steps;
  t.ok(
    steps.some((s: any) => s.request.endsWith('/api/v1/cart/items') && s.body.note),
    'a step proposes a cart line with a note',
  );
  t.ok(
    steps.some((s: any) => s.request === 'checkout_url'),
    'a step hands checkout_url to the holder',
  );
  t.same(
    steps.map((s: any) => s.step),
    steps.map((_: unknown, i: number) => i + 1),
    'steps are numbered in order',
  );
});

t.test(
  "subscribe, don't poll: the manifest, /llms.txt and the protocol name the event routes",
  async (t) => {
    const base = svc.config.baseUrl;
    const api = `${base}/api/v1`;
    const m = (await svc.getJson('/api/v1/manifest')).body;
    t.match(m.events, {
      advice: /Subscribe, don't poll/,
      stream: `${api}/events/stream`,
      replay: `${api}/events`,
      market_stream: `${api}/markets/{market_id}/stream`,
      websocket: `${base.replace(/^http/, 'ws')}/api/v1/ws`,
      resume: /Last-Event-ID/,
      retention_days: 7,
      asyncapi: `${base}/api/asyncapi.json`,
      docs: `${base}/docs/events`,
      webhooks: `${api}/webhooks`,
    });
    t.same(m.events.types, EVENT_TYPES, 'every event type');
    t.equal(m.asyncapi, `${base}/api/asyncapi.json`);
    t.equal(m.docs.events, `${base}/docs/events`);
    t.ok(
      m.flow.some((s: string) => s.includes('/events/stream')),
      'the flow subscribes',
    );

    const llms = await (await svc.get('/llms.txt')).text();
    const events = /^## Events: subscribe, don't poll\n([\s\S]*?)\n## /m.exec(llms)?.[1] ?? '';
    t.ok(events, '/llms.txt has an events section');
    for (const s of [
      `curl -N -H 'accept: text/event-stream' -H "authorization: Bearer $KEY" ${api}/events/stream`,
      'Accept: text/event-stream',
      'Last-Event-ID',
      'position.settled',
      `GET ${api}/events?after=`,
      'kept 7 days',
      '410',
      `GET ${api}/markets/{market_id}/stream`,
      '/api/v1/ws',
      `POST ${api}/webhooks {url, types?}`,
      `GET ${api}/webhooks lists yours`,
      'webhook-id',
      `${base}/docs/events`,
      `${base}/api/asyncapi.json`,
    ]) {
      t.ok(events.includes(s), `events: ${s}`);
    }
    t.ok(llms.indexOf('## Events') < llms.indexOf('## Record ranges'), 'right after the flow');
    t.notMatch(llms, /poll(ing)? (GET )?\S*orders\/\{order_id\}/, 'no advice to poll an order');

    const proto = (await svc.getJson('/api/v1/agents/protocol')).body;
    const subscribe = proto.steps.find((s: any) => s.request === `GET ${api}/events/stream`);
    t.ok(subscribe, 'a step subscribes to the stream');
    t.match(subscribe.note, /Last-Event-ID/);
    t.ok(
      subscribe.note.includes(
        `curl -N -H 'accept: text/event-stream' -H "authorization: Bearer $KEY" ${api}/events/stream`,
      ),
      'with the command that follows it',
    );
    t.ok(
      proto.steps.some((s: any) => s.request.startsWith(`GET ${api}/events?after=`)),
      'a step replays what was missed',
    );
    t.notOk(
      proto.steps.some((s: any) =>
        /\/orders\/\{order_id\}$|\/positions\/\{position_id\}$/.test(s.request),
      ),
      'no step polls an order or a position',
    );
    t.ok(
      proto.rules.some((r: string) => r.startsWith("Subscribe, don't poll")),
      'a rule says so',
    );
  },
);

t.test('GET /api/asyncapi.json: the AsyncAPI 3.0 document of this service', async (t) => {
  const res = await svc.get('/api/asyncapi.json');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  const doc = await res.json();
  t.same(
    doc,
    JSON.parse(JSON.stringify(asyncApiDocument(svc.config.baseUrl))),
    'the document of the built schemas',
  );
  t.equal(doc.asyncapi, '3.0.0');
  t.equal(doc.servers.api.host, new URL(svc.config.baseUrl).host, "on this service's host");
  t.same(Object.keys(doc.channels.accountEvents.messages), EVENT_TYPES, 'a message per event type');
  const openapi = (await svc.getJson('/api/openapi.json')).body;
  t.notOk('/api/asyncapi.json' in openapi.paths, 'a document, not an API route');
  for (const p of ['/api/v1/events', '/api/v1/events/stream', '/api/v1/markets/{market_id}/stream'])
    t.ok(openapi.paths[p]?.get, `the OpenAPI has ${p}`);
});

t.test('catalog, payment methods and the agent protocol', async (t) => {
  const cat = (await svc.getJson('/api/v1/catalog')).body;
  t.ok(cat.families.length >= 20 && cat.families.length <= 40, `${cat.families.length} families`);
  for (const f of cat.families) {
    t.type(f.cluster, 'number');
    t.type(f.sku_family, 'string');
    t.ok(f.items.length > 0);
  }
  t.ok(cat.addons.length > 0);
  t.ok(cat.grades.length > 0);
  const pay = (await svc.getJson('/api/v1/payments/methods')).body;
  const byId = Object.fromEntries(pay.methods.map((m: any) => [m.id, m]));
  t.equal(byId.balance.ready, true);
  t.equal(byId.card.ready, true);
  t.equal(byId.crypto.ready, false);
  t.equal(pay.monthly_fee.amount, 15.0);
  t.equal(pay.payouts.minimum, 10.0);
  t.match(pay.terms_url, /\/terms$/);
  t.match(pay.privacy_url, /\/privacy$/);
  const proto = (await svc.getJson('/api/v1/agents/protocol')).body;
  t.type(proto.recommendation, 'string');
  t.ok(proto.rules.length > 0);
  t.type(proto.analysis, 'object');
  t.type(proto.consent, 'object');
  for (const s of proto.steps) {
    t.type(s.step, 'number');
    t.type(s.do, 'string');
    t.type(s.request, 'string');
    t.type(s.note, 'string');
  }
  t.ok(
    proto.steps.some((s: any) => s.body),
    'some steps carry a body',
  );
});

t.test('markets with live session fields; unknown market 404', async (t) => {
  const { body } = await svc.getJson('/api/v1/markets');
  t.equal(body.markets.length, 4);
  for (const m of body.markets) {
    const now = Date.now() / 1000;
    t.equal(m.current_tick, Math.floor(now / m.interval_seconds), `${m.id} tick follows the clock`);
    t.ok(m.tick_closes_at > now - 1 && m.tick_closes_at <= now + m.interval_seconds + 1);
    t.ok(m.seconds_to_close >= 0 && m.seconds_to_close <= m.interval_seconds);
    t.equal(m.settlement_horizon_ticks, 8);
    t.type(m.fees.fulfilment_per_unit, 'number');
    t.type(m.max_qty, 'number');
    t.equal(m.pricing.model.startsWith('core_v1'), true);
    t.equal(m.quotes_velocity, m.id === 'm15' || m.id === 'm45');
    t.ok(
      m.menu_size > 0 && m.quote.deals === m.menu_size,
      `${m.id} quote and menu_size of the current menu`,
    );
  }
  const one = await svc.getJson('/api/v1/markets/h2');
  t.equal(one.body.id, 'h2');
  const none = await svc.getJson('/api/v1/markets/x99');
  t.equal(none.status, 404);
  t.type(none.body.detail, 'string');
});

t.test('OpenAPI 3.1 from the route table, and offline interactive docs', async (t) => {
  const doc = (await svc.getJson('/api/openapi.json')).body;
  t.match(doc.openapi, /^3\.1\./);
  t.equal(doc.info.version, '1.0.0');
  const ops = Object.values(doc.paths).flatMap((p: any) => Object.values(p)) as any[];
  t.ok(ops.length >= 6, `${ops.length} operations`);
  const tags = doc.tags.map((x: any) => x.name);
  t.ok(
    ops.every((o) => o.tags.length === 1 && tags.includes(o.tags[0])),
    'every operation has one of the declared tags (what MCP ?tags= filters by)',
  );
  t.same(doc.paths['/api/v1/markets/{market_id}/history'].get.tags, ['record']);
  t.same(doc.paths['/api/v1/orders/{order_id}'].delete.tags, ['trading']);
  const market = doc.paths['/api/v1/markets/{market_id}'].get;
  t.same(
    market.parameters.map((p: any) => [p.name, p.in, p.required]),
    [['market_id', 'path', true]],
  );
  t.ok(market.responses['404'] && market.responses['422'], '404 and 422 declared');
  const html = await (await svc.get('/api/docs')).text();
  t.match(html, /\/api\/docs\/swagger-ui-bundle\.js/);
  t.notMatch(html, /https?:\/\/(cdn|unpkg)/, 'no CDN');
  const js = await svc.get('/api/docs/swagger-ui-bundle.js');
  t.equal(js.status, 200);
  t.match(js.headers.get('content-type'), /javascript/);
});

t.test('a service without history reports its (empty) history load as finished', async (t) => {
  const { body } = await svc.getJson('/api/v1/markets/m15/coverage');
  t.equal(body.history_load.sessions_total, 0);
  t.equal(body.history_load.complete, true);
  t.type(body.history_load.finished_at, 'number');
});

t.test('health, readiness and metrics', async (t) => {
  t.same((await svc.getJson('/healthz')).body, { status: 'ok' });
  const ready = await svc.getJson('/readyz');
  t.equal(ready.status, 200);
  t.equal(
    ready.body.node,
    `127.0.0.1:${svc.port}`,
    'the node: HOST:PORT as it listens, without SVC_NODE_NAME',
  );
  t.equal(ready.body.closes, true, 'the only process on its database runs the closes');
  const text = await (await svc.get('/metrics')).text();
  for (const name of [
    'http_requests_total',
    'http_request_duration_seconds',
    'actor_mailbox_depth',
    'actor_turn_seconds',
    'worker_utilization',
    'db_pool_connections',
    'session_closes_total',
    'session_close_seconds',
    'closes_held',
  ]) {
    t.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
  }
  t.match(
    text,
    /actor_turn_seconds_count\{actor="market",message="start",ok="true",shard="\d+"\} [1-9]/,
    'market turns observed (by the shard that ran them)',
  );
  t.match(
    text,
    /^http_requests_total\{route="\/api\/v1\/manifest",method="GET",status="200"\} [1-9]/m,
    'requests counted per route and status',
  );
  t.match(
    text,
    /^http_requests_total\{route="\/api\/v1\/markets\/\{market_id\}",method="GET",status="404"\} [1-9]/m,
    'errors counted',
  );
  const count = Number(
    /^http_request_duration_seconds_count\{route="\/api\/v1\/manifest",method="GET"\} (\d+)/m.exec(
      text,
    )?.[1],
  );
  const inf = Number(
    /^http_request_duration_seconds_bucket\{route="\/api\/v1\/manifest",method="GET",le="\+Inf"\} (\d+)/m.exec(
      text,
    )?.[1],
  );
  t.ok(count >= 1 && inf === count, 'latency histogram: +Inf bucket equals the count');
});
