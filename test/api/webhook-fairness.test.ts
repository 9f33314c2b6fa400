// Fair webhook delivery (CONTRACT.md "Events" → Webhooks): one agent's slow or dead
// receivers never delay another agent's deliveries by more than 10 s, and a retry is sent when it
// falls due (within 10 s of its time). Receivers that never answer hold their requests for the
// whole test (SVC_WEBHOOK_TIMEOUT_MS=30000), so what arrives arrives beside them, not after them;
// they hold no more than the caps per endpoint and per agent; deliveries left waiting show as a
// backlog (a warning, a metric). An endpoint that keeps failing is slowed (one attempt at a time,
// doubling waits) and its agent sees it on the webhook, until its first 2xx.
// The clock the test drives decides when a retry is due; what the service promises in real time
// (the hanging requests, the 10 s) is waited for in a bounded number of polls (wait.ts `within`).
import t from 'tap';
import { startClockedService } from '../helpers/clocked.js';
import { orderFirstDeal, registerAgent } from '../helpers/agents.js';
import { within } from '../helpers/wait.js';
import { receiver } from '../helpers/webhook-receiver.js';
import { metricValue } from '../helpers/metrics.js';
import {
  ACCOUNT_IN_FLIGHT,
  ENDPOINT_IN_FLIGHT,
  SLOW_AFTER_FAILURES,
  endpointDelaySeconds,
  retryDelaySeconds,
} from '../../actors/webhooks/queue.js';
import { WEBHOOK_BACKLOG_WARN_SECONDS } from '../../src/supervisor/supervisor.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(200); // receivers that hang, and two service starts

/** A market whose sessions are long: orders placed during a test stay on an open session. */
const MARKET = 'h10';
const ENV = { SVC_WEBHOOK_ALLOW_PRIVATE: '1', SVC_WEBHOOK_TIMEOUT_MS: '30000' };
/** 10 s of real time or more, in polls of 50 ms (CONTRACT.md's bound). */
const TEN_SECONDS = 200;
/** The flood: agents, webhooks each (the most an agent may have), events each. */
const HOGS = 4;
const HOOKS = 10;
const EVENTS = 10;

t.test(
  "one agent's hanging receivers delay neither another agent's deliveries nor its retries past 10 s",
  async (t) => {
    const c = await startClockedService(t, ENV);
    const svc = c.svc;
    const victimHits = () => rx.at('/victim');
    // /hang/... never answers; /victim answers its first request 500, then 204.
    const rx = await receiver(t, (hit) =>
      hit.path.startsWith('/hang/')
        ? 'hang'
        : hit.path === '/victim' && victimHits().length === 1
          ? 500
          : 204,
    );

    // The victim's first delivery fails before the flood: its retry falls due during it.
    const victim = await registerAgent(svc);
    const hook = await victim.post('/api/v1/webhooks', { url: `${rx.url}/victim` });
    t.equal(hook.status, 201);
    await orderFirstDeal(svc, victim, MARKET);
    const first = await within(TEN_SECONDS, () => victimHits()[0], "the victim's first attempt");
    await within(
      TEN_SECONDS,
      async () =>
        (await victim.get(`/api/v1/webhooks/${hook.body.id}/deliveries`)).body.deliveries.find(
          (d: any) => d.last_status_code === 500,
        ),
      'the 500 recorded',
    );
    const retryAt = c.now() + retryDelaySeconds(1) * 1000; // the clock stood still since that attempt

    // The flood: HOGS agents with HOOKS webhooks each to receivers that never answer, EVENTS events each.
    const hogs = await Promise.all(Array.from({ length: HOGS }, () => registerAgent(svc)));
    const hookIds: number[] = [];
    for (const [i, hog] of hogs.entries()) {
      for (let k = 0; k < HOOKS; k++) {
        const r = await hog.post('/api/v1/webhooks', { url: `${rx.url}/hang/${i}/${k}` });
        t.equal(r.status, 201);
        hookIds.push(r.body.id);
      }
    }
    for (const hog of hogs) for (let k = 0; k < EVENTS; k++) await orderFirstDeal(svc, hog, MARKET);
    // Queued: the last webhook has a delivery of each of its agent's events (the last event made, so every earlier one is queued too).
    const last = hogs.at(-1)!;
    await within(
      TEN_SECONDS,
      async () =>
        (await last.get(`/api/v1/webhooks/${hookIds.at(-1)}/deliveries`)).body.deliveries.length ===
        EVENTS,
      'the flood queued',
    );
    await within(TEN_SECONDS, () => rx.held() > 0, 'the hanging receivers holding requests');
    t.comment(`${rx.held()} requests held by the hanging receivers`);
    const floodAt = c.now();

    await t.test("another agent's new event is delivered within 10 s", async (t) => {
      const before = victimHits().length;
      await orderFirstDeal(svc, victim, MARKET);
      await within(TEN_SECONDS, () => victimHits().length > before, "the victim's new event");
      t.ok(rx.held() > 0, `delivered while the hanging receivers still hold ${rx.held()} requests`);
    });

    await t.test("another agent's retry is sent within 10 s of its time", async (t) => {
      c.advanceTo(retryAt);
      const retry = await within(
        TEN_SECONDS,
        () =>
          victimHits()
            .slice(1)
            .find((h) => h.headers['webhook-id'] === first.headers['webhook-id']),
        'the retry',
      );
      t.equal(
        retry.headers['webhook-timestamp'],
        String(Math.floor(retryAt / 1000)),
        'signed at its time',
      );
      t.ok(rx.held() > 0, `sent while the hanging receivers still hold ${rx.held()} requests`);
    });

    await t.test(
      'the hanging receivers hold no more than the caps per endpoint and per agent',
      async (t) => {
        t.ok(
          rx.held() <= HOGS * ACCOUNT_IN_FLIGHT,
          `${rx.held()} held, at most ${ACCOUNT_IN_FLIGHT} per agent`,
        );
        t.ok(
          rx.mostHeldAtOnePath() <= ENDPOINT_IN_FLIGHT,
          `at most ${ENDPOINT_IN_FLIGHT} at once per endpoint (${rx.mostHeldAtOnePath()})`,
        );
        t.equal(
          rx.hits.filter((h) => h.path.startsWith('/hang/')).length,
          rx.held(),
          'nothing more was sent to them: their places are full',
        );
      },
    );

    await t.test(
      'deliveries left waiting past 10 s are a backlog: a warning and a metric',
      async (t) => {
        c.advanceTo(floodAt + WEBHOOK_BACKLOG_WARN_SECONDS * 1000 + 1000);
        const warned = await within(
          TEN_SECONDS,
          () =>
            svc.logs.find((l) => l.level === 40 && /^webhook delivery backlog/.test(String(l.msg))),
          'the backlog warning',
        );
        t.match(warned, { webhookBacklog: { due: Number, oldestSeconds: Number } });
        const waiting = HOGS * HOOKS * EVENTS - rx.held();
        t.equal(
          (warned.webhookBacklog as { due: number }).due,
          waiting,
          `the ${waiting} hog deliveries not sent`,
        );
        t.ok(
          (warned.webhookBacklog as { oldestSeconds: number }).oldestSeconds >=
            WEBHOOK_BACKLOG_WARN_SECONDS,
        );
        const metrics = await (await svc.get('/metrics')).text();
        t.equal(
          metricValue(metrics, 'webhook_backlog_deliveries'),
          waiting,
          'webhook_backlog_deliveries',
        );
        t.ok(
          metricValue(metrics, 'webhook_backlog_oldest_seconds') >= WEBHOOK_BACKLOG_WARN_SECONDS,
          'webhook_backlog_oldest_seconds',
        );
        t.equal(
          metricValue(metrics, 'webhook_attempts_in_flight'),
          rx.held(),
          'webhook_attempts_in_flight',
        );
      },
    );
  },
);

t.test(
  'an endpoint that keeps failing is slowed, one attempt at a time, and its agent sees it on the webhook',
  async (t) => {
    const c = await startClockedService(t, { SVC_WEBHOOK_ALLOW_PRIVATE: '1' });
    const svc = c.svc;
    let down = true;
    const rx = await receiver(t, () => (down ? 503 : 204));
    const agent = await registerAgent(svc);
    const hook = await agent.post('/api/v1/webhooks', { url: `${rx.url}/down` });
    t.equal(hook.status, 201);
    for (let k = 0; k < EVENTS; k++) await orderFirstDeal(svc, agent, MARKET);
    const answer = async () =>
      (await agent.get(`/api/v1/webhooks/${hook.body.id}/deliveries`)).body as {
        webhook: any;
        deliveries: any[];
      };

    // The webhook says it is slowed, and every attempt made has reached the receiver and been recorded (none in flight).
    const slowed = await within(
      TEN_SECONDS,
      async () => {
        const a = await answer();
        const tried = a.deliveries.filter((d) => d.attempts > 0);
        return (
          a.webhook.slowed_until !== null &&
          tried.length === rx.hits.length &&
          tried.every((d) => d.last_status_code === 503) &&
          a
        );
      },
      'the endpoint slowed',
    );
    const at = c.now() / 1000;
    t.ok(
      slowed.webhook.consecutive_failures >= SLOW_AFTER_FAILURES,
      `${slowed.webhook.consecutive_failures} failures in a row`,
    );
    t.equal(
      slowed.webhook.slowed_until,
      at + endpointDelaySeconds(slowed.webhook.consecutive_failures),
      'slowed for the delay of that many failures',
    );
    t.equal(slowed.webhook.last_error, 'HTTP 503');
    t.ok(
      rx.hits.length < EVENTS,
      `${rx.hits.length} of ${EVENTS} deliveries tried before it was slowed`,
    );
    t.ok(
      slowed.deliveries.every(
        (d) => d.status === 'pending' && d.next_attempt_at >= slowed.webhook.slowed_until,
      ),
      'every delivery waits for the endpoint',
    );
    t.same(
      (await agent.get('/api/v1/webhooks')).body.webhooks.map((w: any) => w.slowed_until),
      [slowed.webhook.slowed_until],
      'GET /webhooks says so too',
    );

    const tried = rx.hits.length;
    for (let i = 0; i < 3; i++) await svc.services.supervisor.deliverWebhooks();
    t.equal(rx.hits.length, tried, 'nothing is sent before slowed_until');

    // At slowed_until one attempt; it fails too: slowed again, for the next delay.
    c.advanceTo(slowed.webhook.slowed_until * 1000);
    const again = await within(
      TEN_SECONDS,
      async () => {
        const a = await answer();
        return a.webhook.consecutive_failures > slowed.webhook.consecutive_failures && a;
      },
      'the next attempt recorded',
    );
    t.equal(rx.hits.length, tried + 1, 'one attempt at a time');
    t.equal(again.webhook.consecutive_failures, slowed.webhook.consecutive_failures + 1);
    t.equal(
      again.webhook.slowed_until,
      slowed.webhook.slowed_until + endpointDelaySeconds(again.webhook.consecutive_failures),
      'the wait doubled',
    );

    // The receiver answers again: from the next attempt on, every delivery is made and the webhook is healthy.
    down = false;
    c.advanceTo(Math.max(...again.deliveries.map((d) => d.next_attempt_at)) * 1000);
    const healed = await within(
      TEN_SECONDS,
      async () => {
        const a = await answer();
        return a.deliveries.every((d) => d.status === 'delivered') && a;
      },
      'every delivery made',
    );
    t.same(
      healed.webhook,
      {
        id: hook.body.id,
        url: hook.body.url,
        types: null,
        consecutive_failures: 0,
        slowed_until: null,
        last_error: null,
      },
      'healthy again',
    );
    t.ok(healed.deliveries.every((d) => d.next_attempt_at === null && d.last_status_code === 204));
  },
);
