// Webhooks (CONTRACT.md "Events" → Webhooks) on the real service and database, with a receiver in
// the test (node:http on 127.0.0.1, so SVC_WEBHOOK_ALLOW_PRIVATE=1): each delivery verifies with the
// Standard Webhooks library's own Webhook.verify and carries the event as GET /api/v1/events serves
// it; a 500 is retried (the clock the test drives moves past the backoff) with the same
// `webhook-id`; types filter; the deliveries list; another agent's webhook is a 404; private URLs
// are refused without the setting; two processes on one database deliver every event once.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { startClockedService } from '../helpers/clocked.js';
import { sharedDatabaseConfig, startTestService, type TestService } from '../helpers/service.js';
import {
  currentMenu,
  orderFirstDeal,
  registerAgent,
  send,
  type TestAgent,
} from '../helpers/agents.js';
import { registerHolder } from '../helpers/holders.js';
import { eventually } from '../helpers/wait.js';
import { receiver, swHeaders } from '../helpers/webhook-receiver.js';
import { metricValue } from '../helpers/metrics.js';
import { RETRY_WINDOW_SECONDS, retryDelaySeconds } from '../../actors/webhooks/queue.js';
import { instantSql } from '../../actors/runtime/sql.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(200); // receivers and retries

/** A market whose sessions are long: orders placed during a test stay on an open session. */
const MARKET = 'h10';
const ALLOW = { SVC_WEBHOOK_ALLOW_PRIVATE: '1' };

const order = (svc: TestService, agent: TestAgent) => orderFirstDeal(svc, agent, MARKET);

t.test(
  'signed deliveries, a retry after a 500, types, the deliveries list, other agents',
  async (t) => {
    // The clock starts at the machine's time: the receiver's Webhook.verify compares webhook-timestamp with it (5 minutes' tolerance).
    const c = await startClockedService(t, ALLOW, { startMs: Date.now() });
    const svc = c.svc;
    if (c.closesAtMs(MARKET) - c.now() < 120_000) await c.closeSession(MARKET);
    const agent = await registerAgent(svc);
    const other = await registerAgent(svc);
    const holder = await registerHolder(svc);
    // The first request to /all answers 500; everything else 204.
    const rx = await receiver(t, (hit, hits) =>
      hit.path === '/all' && hits.filter((h) => h.path === '/all').length === 1 ? 500 : 204,
    );

    // A webhook gets the events after it was made.
    const before = (await agent.get('/api/v1/events')).body.next_after;
    const all = await agent.post('/api/v1/webhooks', { url: `${rx.url}/all` });
    t.equal(all.status, 201, JSON.stringify(all.body));
    t.match(all.body, {
      id: Number,
      url: `${rx.url}/all`,
      types: null,
      secret: /^whsec_[A-Za-z0-9+/]+=*$/,
    });
    t.ok(
      Buffer.from(all.body.secret.slice(6), 'base64').length >= 24,
      'the secret is at least 24 random bytes',
    );
    const paid = await agent.post('/api/v1/webhooks', {
      url: `${rx.url}/paid`,
      types: ['order.paid'],
    });
    t.equal(paid.status, 201);
    t.same(paid.body.types, ['order.paid']);
    const listed = (await agent.get('/api/v1/webhooks')).body;
    const healthy = { consecutive_failures: 0, slowed_until: null, last_error: null };
    t.same(
      listed,
      {
        webhooks: [
          { id: all.body.id, url: `${rx.url}/all`, types: null, ...healthy },
          { id: paid.body.id, url: `${rx.url}/paid`, types: ['order.paid'], ...healthy },
        ],
      },
      'listed without secrets',
    );

    const placed = await order(svc, agent);
    const first = await eventually(() => rx.at('/all')[0], 'the first delivery');
    const verified = new Webhook(all.body.secret).verify(first.body, swHeaders(first)) as {
      id: number;
      type: string;
    };
    const events = (await agent.get(`/api/v1/events?after=${before}`)).body.events;
    t.equal(events.length, 1, 'one event since the webhooks were made');
    t.same(verified, events[0], 'the payload is the event as GET /api/v1/events serves it');
    t.equal(verified.type, 'order.created');
    t.equal(
      first.headers['webhook-id'],
      `evt_${agent.accountId}_${events[0].id}`,
      'webhook-id = evt_<account_id>_<event id>',
    );
    t.equal(first.headers['content-type'], 'application/json');
    t.match(first.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
    t.throws(
      () => new Webhook(paid.body.secret).verify(first.body, swHeaders(first)),
      'another secret does not verify',
    );
    t.throws(
      () =>
        new Webhook(all.body.secret).verify(
          first.body.replace('order.created', 'order.paid'),
          swHeaders(first),
        ),
      'a changed body does not verify',
    );

    const deliveriesOf = async (id: number) =>
      (await agent.get(`/api/v1/webhooks/${id}/deliveries`)).body.deliveries;
    const pending = await eventually(
      async () => (await deliveriesOf(all.body.id)).find((d: any) => d.last_status_code === 500),
      'the 500 recorded',
    );
    t.match(pending, {
      event_id: events[0].id,
      status: 'pending',
      attempts: 1,
      last_status_code: 500,
    });

    // Nothing more until the backoff has passed on the service clock; then the same message again.
    c.advanceBy(6_000);
    const second = await eventually(() => rx.at('/all')[1], 'the retry');
    t.equal(
      second.headers['webhook-id'],
      first.headers['webhook-id'],
      'the retry carries the same webhook-id',
    );
    t.same(
      new Webhook(all.body.secret).verify(second.body, swHeaders(second)),
      events[0],
      'the retry verifies and carries the same event',
    );
    t.not(
      second.headers['webhook-timestamp'],
      first.headers['webhook-timestamp'],
      'signed at its own time',
    );
    const delivered = await eventually(
      async () => (await deliveriesOf(all.body.id)).find((d: any) => d.status === 'delivered'),
      'delivered',
    );
    t.match(delivered, {
      id: pending.id,
      event_id: events[0].id,
      attempts: 2,
      last_status_code: 204,
    });
    const metrics = await (await svc.get('/metrics')).text();
    const attempts = (result: string) =>
      metricValue(metrics, `webhook_deliveries_total{result="${result}"}`);
    t.ok(attempts('retried') >= 1, 'webhook_deliveries_total counts the 500 as retried');
    t.ok(attempts('delivered') >= 1, 'and the 2xx as delivered');

    // Paying: order.paid with the payment's postings; /paid gets only order.paid.
    t.equal((await holder.pay(placed.purchase_url)).status, 200);
    const afterPay = (await agent.get(`/api/v1/events?after=${events[0].id}`)).body.events;
    const paidEvent = afterPay.find((e: any) => e.type === 'order.paid');
    t.ok(paidEvent);
    await eventually(() => rx.at('/all').length >= 2 + afterPay.length, 'every event at /all');
    const atPaid = await eventually(
      () => rx.at('/paid').length && rx.at('/paid'),
      'order.paid at /paid',
    );
    t.same(
      atPaid.map((h) => new Webhook(paid.body.secret).verify(h.body, swHeaders(h))),
      [paidEvent],
      '/paid got order.paid and nothing else',
    );
    const ids = rx
      .at('/all')
      .slice(2)
      .map((h) => h.headers['webhook-id'])
      .sort();
    t.same(
      ids,
      afterPay.map((e: any) => `evt_${agent.accountId}_${e.id}`).sort(),
      'every later event once at /all',
    );
    const list = await eventually(async () => {
      const d = await deliveriesOf(all.body.id);
      return d.length === 1 + afterPay.length && d.every((x: any) => x.status === 'delivered') && d;
    }, 'every delivery recorded');
    t.same(
      list.map((d: any) => d.event_id),
      [...afterPay.map((e: any) => e.id)].reverse().concat(events[0].id),
      'newest first',
    );

    await t.test(
      'a claim whose process died comes due again when its lease ends, with the same webhook-id',
      async (t) => {
        const hook = await agent.post('/api/v1/webhooks', { url: `${rx.url}/lease` });
        t.equal(hook.status, 201);
        // As a process leaves it that claimed the delivery of the first event and died before sending: one attempt counted, leased for 60 s.
        const at = c.now() / 1000;
        await svc.orm.em
          .fork()
          .execute(
            `insert into webhook_delivery (webhook_id, account_id, event_id, attempts, next_attempt_at, expires_at, created_at) values (?, ?, ?, 1, ?, ?, ${instantSql()})`,
            [hook.body.id, agent.accountId, events[0].id, at + 60, at + 86_400, at],
          );
        t.match(
          await svc.services.supervisor.deliverWebhooks(),
          { sent: 0 },
          'nothing is sent while the lease holds',
        );
        t.equal(rx.at('/lease').length, 0);
        c.advanceBy(61_000);
        const hit = await eventually(() => rx.at('/lease')[0], 'the delivery once the lease ended');
        t.equal(
          hit.headers['webhook-id'],
          first.headers['webhook-id'],
          'the same webhook-id as every delivery of that event',
        );
        t.same(new Webhook(hook.body.secret).verify(hit.body, swHeaders(hit)), events[0]);
        const d = await eventually(
          async () => (await deliveriesOf(hook.body.id)).find((x: any) => x.status === 'delivered'),
          'delivered',
        );
        t.match(d, { event_id: events[0].id, attempts: 2, last_status_code: 204 });
      },
    );

    await t.test('another agent sees none of them', async (t) => {
      t.same((await other.get('/api/v1/webhooks')).body, { webhooks: [] });
      t.equal((await other.get(`/api/v1/webhooks/${all.body.id}/deliveries`)).status, 404);
      const del = await send(svc, 'DELETE', `/api/v1/webhooks/${all.body.id}`, undefined, {
        authorization: `Bearer ${other.key}`,
      });
      t.equal(del.status, 404);
      t.match(del.body, { detail: String });
      t.equal(
        (await agent.get(`/api/v1/webhooks/${all.body.id}/deliveries`)).status,
        200,
        "still the owner's",
      );
      t.equal((await agent.get('/api/v1/webhooks/999999999/deliveries')).status, 404);
      t.equal((await send(svc, 'GET', '/api/v1/webhooks')).status, 401, 'a key is needed');
    });

    await t.test('deleting: nothing more is sent; its deliveries answer 404', async (t) => {
      const auth = { authorization: `Bearer ${agent.key}` };
      const del = await send(svc, 'DELETE', `/api/v1/webhooks/${paid.body.id}`, undefined, auth);
      t.same([del.status, del.body], [200, { id: paid.body.id, deleted: true }]);
      t.equal(
        (await send(svc, 'DELETE', `/api/v1/webhooks/${paid.body.id}`, undefined, auth)).status,
        404,
        'deleted once',
      );
      t.equal((await agent.get(`/api/v1/webhooks/${paid.body.id}/deliveries`)).status, 404);
      const ids = (await agent.get('/api/v1/webhooks')).body.webhooks.map((w: any) => w.id);
      t.ok(ids.includes(all.body.id) && !ids.includes(paid.body.id), 'no longer listed');
    });

    await t.test(
      'at most 10 webhooks per agent; Idempotency-Key answers the same webhook',
      async (t) => {
        const auth = { authorization: `Bearer ${other.key}` };
        const once = await send(
          svc,
          'POST',
          '/api/v1/webhooks',
          { url: `${rx.url}/k` },
          { ...auth, 'idempotency-key': 'wh-1' },
        );
        const again = await send(
          svc,
          'POST',
          '/api/v1/webhooks',
          { url: `${rx.url}/k` },
          { ...auth, 'idempotency-key': 'wh-1' },
        );
        t.equal(once.status, 201);
        t.same([again.status, again.body], [201, once.body], 'the same answer, secret included');
        t.equal(again.headers.get('idempotent-replayed'), 'true');
        for (let i = 2; i <= 10; i++)
          t.equal((await other.post('/api/v1/webhooks', { url: `${rx.url}/n${i}` })).status, 201);
        const over = await other.post('/api/v1/webhooks', { url: `${rx.url}/n11` });
        t.equal(over.status, 409);
        t.match(over.body.detail, /10 webhooks/);
      },
    );

    await t.test('strict bodies', async (t) => {
      const extra = await agent.post('/api/v1/webhooks', { url: `${rx.url}/x`, secret: 'mine' });
      t.equal(extra.status, 422);
      t.same(extra.body.detail[0].loc, ['body', 'secret']);
      t.equal(
        (await agent.post('/api/v1/webhooks', { url: `${rx.url}/x`, types: ['order.teleported'] }))
          .status,
        422,
      );
      t.equal(
        (await agent.post('/api/v1/webhooks', { url: `${rx.url}/x`, types: [] })).status,
        422,
      );
      for (const url of [
        'ftp://127.0.0.1/x',
        'not a url',
        '/relative',
        'http://user:pw@127.0.0.1/x',
      ]) {
        const r = await agent.post('/api/v1/webhooks', { url });
        t.equal(r.status, 422, url);
        t.same(r.body.detail[0].loc, ['body', 'url'], url);
      }
    });
  },
);

t.test(
  'a position event is delivered as GET /api/v1/events serves it, then and after later closes',
  async (t) => {
    // Position events are stored as figures and built when read (actors/events/position-events.ts):
    // the delivery builds its body through the same expression as REST. The clock moves a session at
    // a time, hours past the machine's, so the signature is checked by signing the body again at the
    // header's timestamp (Webhook.verify would refuse the timestamp as too old or too new).
    const c = await startClockedService(t, ALLOW);
    const svc = c.svc;
    const agent = await registerAgent(svc);
    const holder = await registerHolder(svc);
    const rx = await receiver(t);
    const hook = await agent.post('/api/v1/webhooks', {
      url: `${rx.url}/positions`,
      types: ['position.advanced', 'position.settled'],
    });
    t.equal(hook.status, 201);
    const placed = await order(svc, agent);
    t.equal((await holder.pay(placed.purchase_url)).status, 200);
    await c.closeSession(MARKET); // fills the order
    await c.closeSession(MARKET); // the position's first session
    const hit = await eventually(() => rx.at('/positions')[0], 'the position event delivered');
    const [event] = (await agent.get('/api/v1/events?types=position.advanced')).body.events;
    t.equal(event.type, 'position.advanced');
    const signedAt = new Date(Number(hit.headers['webhook-timestamp']) * 1000);
    t.equal(
      hit.headers['webhook-signature'],
      new Webhook(hook.body.secret).sign(hit.headers['webhook-id'], signedAt, hit.body),
      "signed with the webhook's secret",
    );
    t.same(JSON.parse(hit.body), event, 'the body is the event as GET /api/v1/events serves it');
    const position = (await agent.get(`/api/v1/positions/${event.data.id}`)).body;
    const { session: _session, ...served } = event.data;
    t.same(served, position, 'the position as GET serves it after that close');
    t.equal(position.order_id, placed.id, "the paid order's position");
    t.equal(event.data.ticks_done, 1, 'its first session');

    await c.closeSession(MARKET);
    await eventually(() => rx.at('/positions').length >= 2, 'the next position event delivered');
    t.same(
      JSON.parse(rx.at('/positions')[0].body).data,
      event.data,
      'the first delivery did not change with the later close',
    );
    const [again] = (await agent.get(`/api/v1/events?types=position.advanced&limit=1`)).body.events;
    t.same(again, event, 'and REST still serves it as it was');
    t.not(
      JSON.parse(rx.at('/positions')[1].body).data.ticks_done,
      event.data.ticks_done,
      'the later event is the later session',
    );
  },
);

t.test(
  'a receiver that keeps failing is retried with doubling delays for 24 hours from the event, then the delivery fails',
  async (t) => {
    const c = await startClockedService(t, ALLOW);
    const svc = c.svc;
    const agent = await registerAgent(svc);
    const rx = await receiver(t, () => 500);
    const hook = await agent.post('/api/v1/webhooks', { url: `${rx.url}/down` });
    t.equal(hook.status, 201);
    await order(svc, agent);
    const [event] = (await agent.get('/api/v1/events?types=order.created')).body.events;
    const delivery = async () =>
      (await agent.get(`/api/v1/webhooks/${hook.body.id}/deliveries`)).body.deliveries as any[];

    // The attempts the contract allows: the first at once (the clock stands still: at its time now),
    // each next one a doubling delay later (5 s to a 1 h cap), while it falls within 24 hours of the
    // event (its created_at is the database's time; the test's clock runs up to 15 minutes ahead).
    const planned = [c.now() / 1000];
    while (
      planned.at(-1)! + retryDelaySeconds(planned.length) <
      event.created_at + RETRY_WINDOW_SECONDS
    )
      planned.push(planned.at(-1)! + retryDelaySeconds(planned.length));
    t.ok(planned.length > 20, `${planned.length} attempts planned`);

    for (let k = 1; ; k++) {
      const d = await eventually(
        async () => (await delivery()).find((x) => x.attempts === k && x.last_status_code === 500),
        `attempt ${k} recorded`,
      );
      t.equal(rx.hits.length, k, `attempt ${k} reached the receiver once`);
      if (k === planned.length) {
        t.match(
          d,
          { event_id: event.id, status: 'failed', attempts: planned.length, last_status_code: 500 },
          'failed for good after the last attempt in the window',
        );
        break;
      }
      t.equal(d.status, 'pending', `attempt ${k} leaves it pending`);
      if (k > 40) throw new Error('more attempts than planned');
      // One second short of the backoff nothing is sent; at it, the next attempt.
      c.advanceTo((planned[k] - 1) * 1000);
      await svc.services.supervisor.deliverWebhooks();
      t.equal(rx.hits.length, k, `nothing before the backoff of attempt ${k}`);
      c.advanceTo(planned[k] * 1000);
      await svc.services.supervisor.deliverWebhooks();
      await eventually(() => rx.hits.length === k + 1, `attempt ${k + 1}`);
    }
    t.same(
      rx.hits.map((h) => Number(h.headers['webhook-timestamp'])),
      planned.map(Math.floor),
      'each attempt signed at its planned time',
    );
    t.same(
      new Set(rx.hits.map((h) => h.headers['webhook-id'])),
      new Set([`evt_${agent.accountId}_${event.id}`]),
      'every attempt with the same webhook-id',
    );
    // Past the window: nothing is ever sent again.
    c.advanceBy(2 * 3600_000);
    await svc.services.supervisor.deliverWebhooks();
    t.equal(rx.hits.length, planned.length, 'no attempt after the delivery failed');
  },
);

t.test(
  'private, loopback and link-local URLs are refused without SVC_WEBHOOK_ALLOW_PRIVATE',
  async (t) => {
    const svc = await startTestService(t);
    t.equal(svc.config.webhookAllowPrivate, false);
    const agent = await registerAgent(svc);
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'http://172.16.5.4/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://[fe80::1]/hook',
      'http://[fd00::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0/',
      'http://2130706433/',
      'http://localhost:9/hook',
      'http://localhost./hook',
      // IPv6 forms that embed a refused IPv4 address (five an outside probe can try).
      'http://[::127.0.0.1]/',
      'http://[64:ff9b::a9fe:a9fe]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[2002:a9fe:a9fe::]/',
      'http://[2002:7f00:1::]/',
    ]) {
      const r = await agent.post('/api/v1/webhooks', { url });
      t.equal(r.status, 422, url);
      t.same(r.body.detail?.[0]?.loc, ['body', 'url'], url);
      t.match(r.body.detail?.[0]?.msg, /private, loopback or link-local|does not resolve/, url);
    }
    t.same((await agent.get('/api/v1/webhooks')).body.webhooks, [], 'nothing registered');
    for (const url of [
      'https://93.184.215.14/hook',
      'https://[2606:4700:4700::1111]/hook',
      'https://[64:ff9b::808:808]/hook',
    ]) {
      t.equal(
        (await agent.post('/api/v1/webhooks', { url })).status,
        201,
        `a public address is taken: ${url}`,
      );
    }
  },
);

t.test('two processes on one database deliver every event once', async (t) => {
  const config = await sharedDatabaseConfig(t, ALLOW);
  const a = await startTestService(t, {}, {}, config);
  const b = await startTestService(t, {}, {}, { ...config });
  const agent = await registerAgent(a);
  const rx = await receiver(t);
  const before = (await agent.get('/api/v1/events')).body.next_after;
  const hook = await agent.post('/api/v1/webhooks', { url: `${rx.url}/both` });
  t.equal(hook.status, 201);
  const menu = await currentMenu(a, MARKET, 60);
  const N = 24;
  const placed = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      send(
        i % 2 ? a : b,
        'POST',
        '/api/v1/orders',
        { market: MARKET, offer_key: menu.deals[i % menu.deals.length].key, qty: 1 },
        { authorization: `Bearer ${agent.key}` },
      ),
    ),
  );
  t.same(
    placed.map((r) => r.status),
    Array(N).fill(201),
  );
  const deliveries = await eventually(async () => {
    const d = (await agent.get(`/api/v1/webhooks/${hook.body.id}/deliveries`)).body.deliveries;
    return d.length === N && d.every((x: any) => x.status === 'delivered') && d;
  }, 'every event delivered');
  t.ok(
    deliveries.every((d: any) => d.attempts === 1 && d.last_status_code === 204),
    'each delivery claimed once, answered 204',
  );
  const ids = rx.hits.map((h) => h.headers['webhook-id']);
  t.equal(ids.length, N, 'the receiver got one request per event');
  t.equal(new Set(ids).size, N, 'no event twice');
  t.same(
    new Set(ids),
    new Set(Array.from({ length: N }, (_, i) => `evt_${agent.accountId}_${before + i + 1}`)),
  );
  // Each process logs what its passes sent: the claims of both add up to one per event.
  const sentBy = (s: TestService) =>
    s.logs.reduce((n, l) => n + ((l.webhooks as { sent?: number } | undefined)?.sent ?? 0), 0);
  t.equal(sentBy(a) + sentBy(b), N, "the two processes' passes sent N requests in all");
  t.comment(`sent by the first process: ${sentBy(a)}, by the second: ${sentBy(b)}`);
});
