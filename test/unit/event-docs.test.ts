// What /docs/events promises holds: its webhook verification snippet, run as shown with the
// `standardwebhooks` library, accepts a delivery signed with the secret, drops a repeat of the same
// webhook-id and refuses a tampered body; the retention it quotes is the one the log is swept by.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import {
  EVENT_RETENTION_DAYS,
  VERIFY_SNIPPET,
  eventsSection,
  manifestEvents,
  webhookRoutes,
} from '../../src/docs/events.js';
import { RoutePaths } from '../../src/docs/route-paths.js';
import { EVENT_RETENTION_DAYS as SWEPT_AFTER_DAYS } from '../../actors/events/reads.js';

t.test(
  'the verification snippet verifies, deduplicates by webhook-id and refuses a forgery',
  async (t) => {
    const secret = `whsec_${Buffer.from('a secret of thirty-two bytes....').toString('base64')}`;
    const [imports, ...rest] = VERIFY_SNIPPET.split('\n');
    t.equal(
      imports,
      "import { Webhook } from 'standardwebhooks';",
      'the snippet imports the library',
    );
    const logged: unknown[][] = [];
    const receive = new Function(
      'Webhook',
      'process',
      'console',
      `${rest.join('\n')}\nreturn receive;`,
    )(
      Webhook,
      { env: { WEBHOOK_SECRET: secret } },
      { log: (...a: unknown[]) => logged.push(a) },
    ) as (body: string, headers: Record<string, string>) => void;

    const body = JSON.stringify({
      id: 42,
      type: 'order.filled',
      created_at: 1764126000,
      data: { id: 7 },
    });
    const id = 'evt_12_42';
    const now = new Date();
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, now, body),
    };
    receive(body, headers);
    t.same(logged, [[42, 'order.filled', { id: 7 }]], 'a signed delivery is handled');
    receive(body, headers);
    t.equal(logged.length, 1, 'the same webhook-id again is a repeat: handled once');
    t.throws(
      () => receive(body.replace('"id":7', '"id":8'), { ...headers, 'webhook-id': 'evt_12_43' }),
      /signature/i,
      'a tampered body is refused',
    );
  },
);

t.test('the retention the docs quote is the one the log keeps', async (t) => {
  t.equal(EVENT_RETENTION_DAYS, SWEPT_AFTER_DAYS);
});

t.test(
  'webhooks are named through the route table once it serves them, and only then',
  async (t) => {
    const routes = [
      '/api/v1/events',
      '/api/v1/events/stream',
      '/api/v1/events/wait',
      '/api/v1/orders',
      '/api/v1/positions',
      '/api/v1/markets/{market_id}/stream',
      '/docs/{slug}',
      '/api/asyncapi.json',
    ]
      .concat('/api/v1/ws')
      .map((path) => ({ method: 'GET', path }));
    const without = new RoutePaths('https://m.example.org', routes);
    t.equal(webhookRoutes(without), null);
    const plain = eventsSection(without).items.join('\n');
    t.notMatch(plain, /\/webhooks/, 'no webhook path named while no route serves one');
    t.match(plain, 'does not serve the webhook routes yet');
    t.notOk('webhooks' in manifestEvents(without));

    const withHooks = new RoutePaths('https://m.example.org', [
      ...routes,
      { method: 'POST', path: '/api/v1/webhooks' },
      { method: 'GET', path: '/api/v1/webhooks' },
    ]);
    t.same(webhookRoutes(withHooks), {
      register: 'POST https://m.example.org/api/v1/webhooks',
      list: 'GET https://m.example.org/api/v1/webhooks',
    });
    const named = eventsSection(withHooks).items.join('\n');
    t.match(named, 'POST https://m.example.org/api/v1/webhooks {url, types?}');
    t.notMatch(
      named,
      /\/webhooks\/\{/,
      "a webhook's own routes (by id) are left to the API reference",
    );
    t.equal(manifestEvents(withHooks).webhooks, 'https://m.example.org/api/v1/webhooks');
    t.equal(manifestEvents(withHooks).websocket, 'wss://m.example.org/api/v1/ws');
  },
);
