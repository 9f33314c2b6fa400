// The AsyncAPI 3.0 document (/api/asyncapi.json) against the structure the 3.0.0
// specification requires. No AsyncAPI parser or the specification's JSON Schema is among the
// dependencies, so this checks what they would: the required fields, channels with addresses
// (their {parameters} declared) and messages, operations whose action is send or receive and whose
// channel and messages are $refs into that channel, components' keys, every $ref resolving; then the
// payload schemas as JSON Schema (ajv, draft-07 keywords only, as the AsyncAPI Schema format is):
// real frames pass, wrong ones fail. The payloads are the event schemas the routes serve.
import t from 'tap';
import Ajv from 'ajv';
import { asyncApiDocument } from '../../src/events/asyncapi.js';
import { EVENT_TYPES } from '../../src/schemas/index.js';
import { MARKET_IDS } from '../../src/engine/index.js';

type Json = any;
const BASE = 'https://market.example.org';
const doc: Json = JSON.parse(JSON.stringify(asyncApiDocument(BASE)));

/** The value a local `$ref` ('#/a/b~1c') points at, or undefined. */
function resolve(root: Json, ref: string): Json {
  if (!ref.startsWith('#/')) return undefined;
  let v = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object' || !(key in v)) return undefined;
    v = v[key];
  }
  return v;
}

/** Every `$ref` in the document, with where it sits. */
function refs(v: Json, at = '#'): { at: string; ref: string }[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => refs(x, `${at}/${i}`));
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) =>
    k === '$ref' && typeof x === 'string' ? [{ at, ref: x }] : refs(x, `${at}/${k}`),
  );
}

const COMPONENT_KEY = /^[a-zA-Z0-9.\-_]+$/;
const TOP_LEVEL = new Set([
  'asyncapi',
  'id',
  'info',
  'servers',
  'defaultContentType',
  'channels',
  'operations',
  'components',
]);
const isRef = (v: Json) =>
  v && typeof v === 'object' && typeof v.$ref === 'string' && Object.keys(v).length === 1;

/** What the 3.0.0 structure requires, as a list of what is wrong (empty: none). */
function problems(d: Json): string[] {
  const out: string[] = [];
  const need = (ok: unknown, what: string) => {
    if (!ok) out.push(what);
  };
  need(d.asyncapi === '3.0.0', 'asyncapi is "3.0.0"');
  for (const k of Object.keys(d))
    need(TOP_LEVEL.has(k) || k.startsWith('x-'), `no unknown top-level field ${k}`);
  need(
    typeof d.info?.title === 'string' && typeof d.info?.version === 'string',
    'info has title and version',
  );
  for (const [name, s] of Object.entries<Json>(d.servers ?? {})) {
    need(
      typeof s.host === 'string' && typeof s.protocol === 'string',
      `server ${name} has host and protocol`,
    );
    for (const v of String(s.host).matchAll(/\{([^}]+)\}/g))
      need(s.variables?.[v[1]], `server ${name} declares {${v[1]}}`);
  }
  for (const [name, c] of Object.entries<Json>(d.channels ?? {})) {
    need(
      c.address === null || typeof c.address === 'string',
      `channel ${name} has an address (or null)`,
    );
    const params = [...String(c.address ?? '').matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const p of params) need(c.parameters?.[p], `channel ${name} declares {${p}}`);
    for (const p of Object.keys(c.parameters ?? {}))
      need(params.includes(p), `channel ${name}: parameter ${p} is in its address`);
    for (const p of Object.values<Json>(c.parameters ?? {}))
      need(
        !('schema' in p),
        `channel ${name}: 3.0 parameters take enum/default/description, not schema`,
      );
    need(Object.keys(c.messages ?? {}).length > 0, `channel ${name} has messages`);
    for (const [key, m] of Object.entries<Json>(c.messages ?? {})) {
      need(COMPONENT_KEY.test(key), `channel ${name}: message key ${key}`);
      need(
        isRef(m) && m.$ref.startsWith('#/components/messages/') && resolve(d, m.$ref),
        `channel ${name}: message ${key} refers to a component message`,
      );
    }
    for (const s of c.servers ?? [])
      need(
        isRef(s) && s.$ref.startsWith('#/servers/') && resolve(d, s.$ref),
        `channel ${name}: its servers are $refs to servers`,
      );
  }
  need(Object.keys(d.operations ?? {}).length > 0, 'there are operations');
  for (const [name, o] of Object.entries<Json>(d.operations ?? {})) {
    need(
      o.action === 'send' || o.action === 'receive',
      `operation ${name}: action send or receive`,
    );
    need(
      isRef(o.channel) && o.channel.$ref.startsWith('#/channels/') && resolve(d, o.channel.$ref),
      `operation ${name}: channel is a $ref to a channel`,
    );
    need(
      Array.isArray(o.messages) && o.messages.length > 0,
      `operation ${name} names its messages`,
    );
    for (const m of o.messages ?? []) {
      need(
        isRef(m) && m.$ref.startsWith(`${o.channel?.$ref}/messages/`) && resolve(d, m.$ref),
        `operation ${name}: ${m.$ref} is a message of its channel`,
      );
    }
    if (o.reply) {
      need(
        isRef(o.reply.channel) &&
          o.reply.channel.$ref.startsWith('#/channels/') &&
          resolve(d, o.reply.channel.$ref),
        `operation ${name}: its reply's channel is a $ref to a channel`,
      );
      for (const m of o.reply.messages ?? []) {
        need(
          isRef(m) && m.$ref.startsWith(`${o.reply.channel?.$ref}/messages/`) && resolve(d, m.$ref),
          `operation ${name}: reply ${m.$ref} is a message of the reply's channel`,
        );
      }
    }
  }
  for (const [kind, entries] of Object.entries<Json>(d.components ?? {})) {
    for (const key of Object.keys(entries))
      need(COMPONENT_KEY.test(key), `components.${kind}: key ${key}`);
  }
  for (const [key, m] of Object.entries<Json>(d.components?.messages ?? {})) {
    need(
      m.payload && (isRef(m.payload) ? resolve(d, m.payload.$ref) : typeof m.payload === 'object'),
      `message ${key} has a payload`,
    );
    if (m.headers)
      need(
        (isRef(m.headers) ? resolve(d, m.headers.$ref) : m.headers).type === 'object',
        `message ${key}: headers is an object schema`,
      );
  }
  for (const r of refs(d)) need(resolve(d, r.ref) !== undefined, `${r.at}: ${r.ref} resolves`);
  return out;
}

t.test(
  'the document has the structure AsyncAPI 3.0.0 requires, and every $ref resolves',
  async (t) => {
    t.same(problems(doc), []);
    t.ok(refs(doc).length > 50, `${refs(doc).length} $refs checked`);
    t.same(
      Object.keys(doc.components.schemas).filter((k) => !doc.components.schemas[k]),
      [],
      'no empty schema',
    );
    // The checker finds what it is for.
    const broken = JSON.parse(JSON.stringify(doc));
    broken.operations.sendWebhook.action = 'publish';
    broken.operations.receiveAuth.messages = [
      { $ref: '#/channels/wsAccount/messages/accountFrame' },
    ];
    broken.operations.receivePing.reply.messages = [
      { $ref: '#/channels/wsAccount/messages/accountFrame' },
    ];
    broken.channels.wsMarket.parameters = {};
    broken.components.messages['order.paid'].payload = { $ref: '#/components/schemas/Nope' };
    const found = problems(broken).join('\n');
    for (const what of [
      'sendWebhook: action send or receive',
      "receivePing: reply #/channels/wsAccount/messages/accountFrame is a message of the reply's channel",
      'receiveAuth: #/channels/wsAccount/messages/accountFrame is a message of its channel',
      'wsMarket declares {market_id}',
      '#/components/schemas/Nope resolves',
    ]) {
      t.ok(found.includes(what), `a broken document is caught: ${what}`);
    }
  },
);

t.test(
  'channels: the account stream, the market stream, the WebSocket channels and webhook deliveries',
  async (t) => {
    const c = doc.channels;
    t.equal(c.accountEvents.address, '/events/stream');
    t.same(Object.keys(c.accountEvents.messages), EVENT_TYPES, 'one message per event type');
    t.equal(c.marketSessions.address, '/markets/{market_id}/stream');
    t.same(c.marketSessions.parameters.market_id.enum, MARKET_IDS);
    t.same(Object.keys(c.marketSessions.messages), ['session.closed']);
    t.equal(c.wsAccount.address, 'account');
    t.equal(c.wsMarket.address, 'market:{market_id}');
    t.same(
      Object.keys(c.wsConnection.messages),
      [
        'auth',
        'subscribe',
        'unsubscribe',
        'ping',
        'authenticated',
        'subscribed',
        'unsubscribed',
        'pong',
        'error',
      ],
      "the client's ops and the service's answers",
    );
    t.same(
      doc.operations.receiveSubscribe.reply.messages.map((m: Json) => m.$ref.split('/').pop()),
      ['subscribed', 'error'],
      'a subscribe is answered subscribed or error',
    );
    t.match(c.wsConnection.description, /4429 too slow to read/, 'the close codes');
    t.equal(c.webhookDeliveries.address, null, 'a delivery goes to the URL you registered');
    t.same(doc.servers.api, {
      host: 'market.example.org',
      protocol: 'https',
      pathname: '/api/v1',
      description: doc.servers.api.description,
    });
    t.same([doc.servers.websocket.protocol, doc.servers.websocket.pathname], ['wss', '/api/v1/ws']);
    t.equal((asyncApiDocument('http://127.0.0.1:8080') as Json).servers.websocket.protocol, 'ws');

    const ops = doc.operations;
    const action = (channel: string) =>
      Object.values<Json>(ops)
        .filter((o) => o.channel.$ref === `#/channels/${channel}`)
        .map((o) => o.action);
    t.same(action('accountEvents'), ['send'], "the service sends the account's events");
    t.same(
      action('wsConnection'),
      ['receive', 'receive', 'receive', 'receive'],
      'and receives auth, subscribe, unsubscribe and ping',
    );
    t.same(action('webhookDeliveries'), ['send']);
    t.same(ops.sendAccountEvents.messages.length, EVENT_TYPES.length);
    t.same(ops.sendAccountEvents.bindings.http.method, 'GET');
    t.same(
      ops.sendAccountEvents.security.map((s: Json) => s.$ref),
      ['#/components/securitySchemes/bearer', '#/components/securitySchemes/apiToken'],
      'the stream takes the key',
    );
    t.notOk(ops.sendMarketSessions.security, 'the market stream is public');
    const hook = doc.components.messages.webhookDelivery;
    t.same(resolve(doc, hook.headers.$ref).required, [
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]);
    t.equal(hook.payload.$ref, '#/components/schemas/Event');
  },
);

t.test(
  'payloads are JSON Schema (draft-07 keywords) that real frames pass and wrong ones fail',
  async (t) => {
    const schemas = JSON.stringify(doc.components.schemas);
    for (const k of [
      'prefixItems',
      '$defs',
      'dependentRequired',
      'dependentSchemas',
      'unevaluatedProperties',
      'unevaluatedItems',
      '$dynamicRef',
    ]) {
      t.notOk(schemas.includes(`"${k}"`), `no ${k} (not in the AsyncAPI Schema format)`);
    }
    const ajv = new Ajv({ strict: false, allErrors: true });
    ajv.addSchema({ $id: 'asyncapi', components: { schemas: doc.components.schemas } });
    const check = (name: string, v: unknown) =>
      ajv.getSchema(`asyncapi#/components/schemas/${name}`)!(v);
    const payload = (message: string) =>
      doc.components.messages[message].payload.$ref.split('/').pop();

    for (const type of EVENT_TYPES) {
      const s = doc.components.schemas[payload(type)];
      t.equal(s.properties.type.const, type, `${type}: its payload is that type's event`);
      t.same(s.required, ['id', 'type', 'created_at', 'data'], `${type}: an event`);
    }
    const funding = {
      id: 3,
      type: 'funding.changed',
      created_at: 1764126000.5,
      data: { agent_id: 9, autonomous_funding: true },
    };
    t.ok(check(payload('funding.changed'), funding), 'a funding.changed event');
    t.ok(check('Event', funding), 'is an Event');
    t.notOk(
      check(payload('funding.changed'), { ...funding, type: 'grant.changed' }),
      'another type is not',
    );
    t.notOk(
      check('Event', { ...funding, data: { agent_id: 9 } }),
      'a data without its fields is not an Event',
    );
    t.ok(
      check('AccountFrame', { channel: 'account', event: funding }),
      'a WebSocket account frame',
    );
    t.notOk(check('AccountFrame', { channel: 'market:m15', event: funding }));
    const closed = { market: 'm15', tick: 1960140, next_tick: 1960141, tick_closes_at: 1764127800 };
    t.ok(check(payload('session.closed'), closed), 'a session.closed');
    t.ok(
      check('MarketFrame', { channel: 'market:m15', event: { type: 'session.closed', ...closed } }),
      'a WebSocket market frame',
    );
    t.notOk(
      check('MarketFrame', { channel: 'market:x99', event: { type: 'session.closed', ...closed } }),
      'of a market that exists',
    );
    t.ok(check('AuthCommand', { op: 'auth', key: 'k'.repeat(80) }));
    t.ok(
      check('SubscribeCommand', { op: 'subscribe', channels: ['account', 'market:h2'], after: 41 }),
    );
    t.ok(
      check('SubscribeCommand', {
        op: 'subscribe',
        channels: ['account'],
        after: 0,
        types: ['position.settled'],
      }),
      'with types',
    );
    t.notOk(
      check('SubscribeCommand', {
        op: 'subscribe',
        channels: ['account'],
        types: ['order.shipped'],
      }),
      'an unknown type',
    );
    t.notOk(
      check('SubscribeCommand', { op: 'subscribe', channels: ['orders'] }),
      'an unknown channel',
    );
    t.ok(
      check('WsError', {
        op: 'error',
        status: 422,
        detail: '"after" applies to the account channel',
      }),
    );
    t.ok(check('Subscribed', { op: 'subscribed', channels: ['account'], after: 41 }));
    t.ok(
      check('WebhookHeaders', {
        'webhook-id': 'evt_12_42',
        'webhook-timestamp': '1764126000',
        'webhook-signature': 'v1,abc=',
      }),
    );
    t.notOk(
      check('WebhookHeaders', {
        'webhook-id': 'msg_1',
        'webhook-timestamp': '1764126000',
        'webhook-signature': 'v1,abc=',
      }),
    );
  },
);
