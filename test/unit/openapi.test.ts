import t from 'tap';
import Type from 'typebox';
import { buildOpenApi, checkOperationIds } from '../../src/api/openapi.js';
import { htmlPage, json, media, route, text } from '../../src/http/route.js';

const handler = () => json({});
const Market = Type.Object({ id: Type.String(), name: Type.String() }, { description: 'a market' });
const Ok = Type.Object({ ok: Type.Boolean() }, { description: 'done' });

const routes = [
  route({
    method: 'GET',
    path: '/api/v1/markets',
    operationId: 'get_markets',
    auth: 'none',
    summary: 'List markets',
    handler,
    query: Type.Object({
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 5000, default: 2000, description: 'Page size' }),
      ),
      q: Type.Optional(Type.String()),
      side: Type.Union([Type.Literal('buy'), Type.Literal('sell')]),
    }),
    response: { 200: Type.Array(Market, { description: 'Markets' }) },
  }),
  route({
    method: 'GET',
    path: '/api/v1/markets/{market_id}',
    operationId: 'get_markets_market_id',
    auth: 'key',
    summary: 'One market',
    handler,
    params: Type.Object({ market_id: Type.String({ description: 'Market id', minLength: 3 }) }),
    response: { 200: Market },
    responses: { 404: { description: 'Unknown market' } },
  }),
  route({
    method: 'POST',
    path: '/api/v1/agents',
    operationId: 'post_agents',
    auth: 'none',
    summary: 'Register',
    handler,
    body: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 120 }),
      purpose: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    }),
    response: { 201: Ok },
    responses: { 409: { description: 'Already registered' } },
  }),
  route({
    method: 'POST',
    path: '/api/v1/orders/{order_id}/cancel',
    operationId: 'post_orders_order_id_cancel',
    auth: 'key',
    summary: 'Cancel',
    handler,
    response: { 200: Ok },
    responses: { 403: { description: 'Not allowed' } },
  }),
  route({
    method: 'GET',
    path: '/api/v1/manifest',
    operationId: 'get_manifest',
    auth: 'none',
    summary: 'Manifest',
    response: { 200: Ok },
    handler,
  }),
  route({
    method: 'GET',
    path: '/api/openapi.json',
    operationId: 'get_openapi_json',
    auth: 'none',
    summary: 'This document',
    api: false,
    response: { 200: Ok },
    handler,
  }),
  route({
    method: 'GET',
    path: '/robots.txt',
    operationId: 'get_robots_txt',
    auth: 'none',
    summary: 'Robots',
    response: { 200: media('text/plain', 'rules') },
    handler: () => text(''),
  }),
  route({
    method: 'GET',
    path: '/healthz',
    operationId: 'get_healthz',
    auth: 'none',
    summary: 'Health',
    api: true,
    response: { 200: htmlPage('a page') },
    handler,
  }),
];

const doc: any = buildOpenApi(routes, {
  title: 'Market Access',
  version: '1.0.0',
  description: 'desc',
  serverUrl: 'http://localhost:8080',
});
const ops = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item));

t.test('document header', async (t) => {
  t.equal(doc.openapi, '3.1.0');
  t.same(doc.info, { title: 'Market Access', version: '1.0.0', description: 'desc' });
  t.same(doc.servers, [{ url: 'http://localhost:8080' }]);
  t.same(doc.components.securitySchemes, {
    bearer: { type: 'http', scheme: 'bearer' },
    apiToken: { type: 'apiKey', in: 'header', name: 'X-API-Token' },
  });
  // Every error answer has the one Problem body: a sentence, or the issues of a 422.
  t.same(doc.components.schemas.Problem.required, ['detail']);
  t.same(doc.components.schemas.Problem.properties.detail.anyOf[0], { type: 'string' });
  t.same(doc.components.schemas.Problem.properties.detail.anyOf[1].items, {
    $ref: '#/components/schemas/ValidationIssue',
  });
  t.same(doc.components.schemas.ValidationIssue.required, ['loc', 'msg', 'type']);
  t.equal(doc.components.schemas.ValidationIssue.additionalProperties, false);
});

t.test('route selection', async (t) => {
  t.same(Object.keys(doc.paths).sort(), [
    '/api/v1/agents',
    '/api/v1/manifest',
    '/api/v1/markets',
    '/api/v1/markets/{market_id}',
    '/api/v1/orders/{order_id}/cancel',
    '/healthz',
  ]);
});

t.test(
  'every operation: one tag by its path, unique operationId, summary, responses',
  async (t) => {
    t.equal(ops.length, 6);
    t.same(
      ops.map((op: any) => op.tags),
      [['markets'], ['markets'], ['agents'], ['trading'], ['discovery'], ['service']].slice(
        0,
        ops.length,
      ),
    );
    for (const op of ops) {
      t.type(op.summary, 'string');
      t.match(op.operationId, /^[a-z0-9_]+$/);
      t.ok(op.responses && Object.keys(op.responses).length);
    }
    t.equal(new Set(ops.map((o) => o.operationId)).size, ops.length);
    t.equal(
      doc.paths['/api/v1/markets/{market_id}'].get.operationId,
      'get_markets_market_id',
      'the declared operationId',
    );
    t.same(doc.paths['/api/v1/manifest'].get.responses, {
      200: {
        description: 'done',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['ok'],
              properties: { ok: { type: 'boolean' } },
              description: 'done',
            },
          },
        },
      },
    });
    t.notOk(doc.paths['/api/v1/manifest'].get.parameters);
    t.same(doc.paths['/api/v1/manifest'].get.security, [], 'public: security []');
  },
);

t.test('operationIds: declared on every listed route, snake_case, unique', async (t) => {
  const info = { title: 't', version: '1', serverUrl: '/' };
  const ok = (path: string, operationId?: string) =>
    route({
      method: 'GET',
      path,
      operationId,
      auth: 'none',
      summary: 's',
      response: { 200: Ok },
      handler,
    });
  t.throws(() => buildOpenApi([ok('/api/a')], info), /GET \/api\/a has no operationId/);
  t.throws(
    () => checkOperationIds([ok('/api/a', 'get_a'), ok('/api/b', 'get_a')]),
    /get_a is declared twice/,
  );
  t.throws(() => checkOperationIds([ok('/api/a', 'getA')]), /not snake_case/);
  t.throws(() => checkOperationIds([ok('/api/a', 'a')]), /not snake_case/);
  t.doesNotThrow(
    () => checkOperationIds([ok('/robots.txt'), ok('/api/a', 'get_a')]),
    'a route outside the document needs none',
  );
});

t.test('query and path parameters', async (t) => {
  const list = doc.paths['/api/v1/markets'].get;
  t.same(
    list.parameters.map((p: any) => [p.name, p.in, p.required]),
    [
      ['limit', 'query', false],
      ['q', 'query', false],
      ['side', 'query', true],
    ],
  );
  t.same(list.parameters[0], {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Page size',
    schema: { type: 'integer', minimum: 1, maximum: 5000, default: 2000, description: 'Page size' },
  });
  t.same(list.parameters[2].schema, {
    anyOf: [
      { type: 'string', const: 'buy' },
      { type: 'string', const: 'sell' },
    ],
  });
  t.same(list.responses['422'].content['application/json'].schema, {
    $ref: '#/components/schemas/Problem',
  });
  t.same(list.responses['200'].content['application/json'].schema.type, 'array');
  t.equal(list.responses['200'].description, 'Markets');

  const one = doc.paths['/api/v1/markets/{market_id}'].get;
  t.same(one.parameters, [
    {
      name: 'market_id',
      in: 'path',
      required: true,
      description: 'Market id',
      schema: { type: 'string', description: 'Market id', minLength: 3 },
    },
  ]);

  // A path placeholder without a params schema is still declared, as OpenAPI requires.
  const cancel = doc.paths['/api/v1/orders/{order_id}/cancel'].post;
  t.same(cancel.parameters, [
    { name: 'order_id', in: 'path', required: true, schema: { type: 'string' } },
  ]);
});

t.test('request body', async (t) => {
  const reg = doc.paths['/api/v1/agents'].post;
  t.equal(reg.requestBody.required, true);
  t.same(reg.requestBody.content['application/json'].schema.required, ['name']);
  t.same(reg.requestBody.content['application/json'].schema.properties.purpose, {
    anyOf: [{ type: 'string', maxLength: 500 }, { type: 'null' }],
  });
  t.same(Object.keys(reg.responses).sort(), ['201', '409', '422']);
  t.same(reg.responses['409'].content['application/json'].schema, {
    $ref: '#/components/schemas/Problem',
  });
  t.same(reg.responses['201'].content['application/json'].schema.properties, {
    ok: { type: 'boolean' },
  });
  t.same(reg.security, []);
});

t.test('error answers', async (t) => {
  const one = doc.paths['/api/v1/markets/{market_id}'].get;
  t.same(Object.keys(one.responses).sort(), ['200', '401', '404', '422']);
  t.same(one.responses['401'].content['application/json'].schema, {
    $ref: '#/components/schemas/Problem',
  });
  t.same(one.responses['404'], {
    description: 'Unknown market',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Problem' } } },
  });
  t.same(one.security, [{ bearer: [] }, { apiToken: [] }]);

  const cancel = doc.paths['/api/v1/orders/{order_id}/cancel'].post;
  t.same(
    Object.keys(cancel.responses).sort(),
    ['200', '401', '403'],
    'the declared 200 next to a declared 403; no 422 without inputs',
  );

  for (const r of routes.filter((r) => doc.paths[r.path])) {
    const op = doc.paths[r.path][r.method.toLowerCase()];
    t.equal(
      !!op.responses['422'],
      !!(r.params || r.query || r.body),
      `${op.operationId}: 422 iff inputs`,
    );
    t.equal(!!op.responses['401'], r.auth === 'key', `${op.operationId}: 401 iff key auth`);
  }
  t.notOk(doc.paths['/api/v1/manifest'].get.responses['422']);
  t.notOk(doc.paths['/api/v1/manifest'].get.responses['401']);
});

t.test('plain JSON: round-trips unchanged, no TypeBox markers', async (t) => {
  const text = JSON.stringify(doc);
  t.same(JSON.parse(text), doc);
  t.notMatch(text, /~kind|~optional/);
  // Markers made enumerable elsewhere, and function defaults, are stripped as well.
  const leaky: any = Type.Object({ a: Type.String() });
  leaky.properties.a['~kind'] = 'String';
  leaky.properties.a.default = () => 'x';
  const d: any = buildOpenApi(
    [
      route({
        method: 'POST',
        path: '/api/x',
        operationId: 'post_x',
        auth: 'none',
        summary: 's',
        body: leaky,
        response: { 200: Ok },
        handler,
      }),
    ],
    { title: 't', version: '1', serverUrl: '/' },
  );
  t.same(d.paths['/api/x'].post.requestBody.content['application/json'].schema, {
    type: 'object',
    required: ['a'],
    properties: { a: { type: 'string' } },
  });
  t.same(JSON.parse(JSON.stringify(d)), d);
});

t.test(
  'routes that store their answer document the Idempotency-Key header and its 400 and 409',
  async (t) => {
    const d: any = buildOpenApi(
      [
        route({
          method: 'POST',
          path: '/api/once',
          operationId: 'post_once',
          auth: 'none',
          summary: 'once',
          response: { 201: Ok },
          handler,
          replay: (r) => json(r, 201),
        }),
        route({
          method: 'POST',
          path: '/api/plain',
          operationId: 'post_plain',
          auth: 'none',
          summary: 'plain',
          response: { 200: Ok },
          handler,
        }),
      ],
      { title: 't', version: '1', serverUrl: '/' },
    );
    const once = d.paths['/api/once'].post;
    t.match(once.parameters, [{ name: 'Idempotency-Key', in: 'header', required: false }]);
    t.ok(once.responses['400'] && once.responses['409']);
    t.notOk(d.paths['/api/plain'].post.parameters, 'no key where nothing is stored');
  },
);

t.test('answers: media types, named schemas as components', async (t) => {
  const robots = buildOpenApi(
    [
      route({
        method: 'GET',
        path: '/api/r',
        operationId: 'get_r',
        auth: 'none',
        summary: 'r',
        response: { 200: media('text/csv', 'a frame') },
        handler: () => text(''),
      }),
    ],
    { title: 't', version: '1', serverUrl: '/' },
  ) as any;
  t.same(robots.paths['/api/r'].get.responses['200'], {
    description: 'a frame',
    content: { 'text/csv': {} },
  });

  const Item = Type.Object({ id: Type.Integer() }, { description: 'an item' });
  const Page = Type.Object({ items: Type.Array(Item), first: Item }, { description: 'a page' });
  const d: any = buildOpenApi(
    [
      route({
        method: 'GET',
        path: '/api/items',
        operationId: 'get_items',
        auth: 'none',
        summary: 'items',
        response: { 200: Page },
        handler,
      }),
    ],
    { title: 't', version: '1', serverUrl: '/' },
    { Item, Problem: Type.Object({ detail: Type.String() }) },
  );
  const schema = d.paths['/api/items'].get.responses['200'].content['application/json'].schema;
  t.same(schema.properties.items.items, { $ref: '#/components/schemas/Item' });
  t.same(schema.properties.first, { $ref: '#/components/schemas/Item' });
  t.same(d.components.schemas.Item, {
    type: 'object',
    required: ['id'],
    properties: { id: { type: 'integer' } },
    description: 'an item',
  });
  t.notOk(d.components.schemas.Problem, 'a named schema nothing refers to is left out');
});
