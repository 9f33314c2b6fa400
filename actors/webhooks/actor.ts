// WebhooksActor (CONTRACT.md "Events" → Webhooks, ARCHITECTURE.md rule 9: pushes read the log).
// - "webhooks:<agent id>": `register` (at most MAX_WEBHOOKS_PER_AGENT live ones; the cursor starts
//   at the account's head, so a webhook gets the events after it was made) and `remove`.
// - "webhooks:deliver": one delivery pass, asked by the supervisor in every process, again at once
//   while attempts are in flight: record the attempts that ended since the last pass, enqueue from
//   the log (queue.ts), claim due deliveries into this process's free places (flight.ts: at most
//   IN_FLIGHT_MAX in flight, ACCOUNT_IN_FLIGHT per agent's account, ENDPOINT_IN_FLIGHT per
//   endpoint; a place goes first to the account with the fewest in flight) with FOR UPDATE SKIP
//   LOCKED and commit, start them outside any transaction (send.ts), then wait at most `waitMs` for
//   one to end and record what ended. A pass never waits for its slowest attempt, so one agent's
//   dead receivers hold a few places and never the others' deliveries. A 2xx delivers; any other
//   answer, none, or a refused address is retried with doubling delays until 24 hours after the
//   event, then the delivery fails; an endpoint failing SLOW_AFTER_FAILURES times in a row is
//   slowed (nothing before its slowed_until, then one attempt at a time), which its agent sees on
//   the webhook. Two processes never hold one delivery at once (the claim's lease); a crash between
//   sending and recording repeats it later with the same `webhook-id`.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ActorError, defineActor } from '../runtime/actor.js';
import { WebhookSchema } from '../../orm/entities/index.js';
import { instantDate, instantSql } from '../runtime/sql.js';
import {
  MAX_WEBHOOKS_PER_AGENT,
  type DeliverReport,
  type WebhookCreated,
  type WebhookRemoved,
  type WebhooksMessage,
  type WebhooksReplies,
} from './messages.js';
import {
  backlog,
  claim,
  enqueue,
  expireDeliveries,
  failPending,
  record,
  retryDelaySeconds,
  sweepDeliveries,
  type Claimed,
  type Result,
} from './queue.js';
import { InFlight } from './flight.js';
import { send, type Outcome } from './send.js';

/** Finished deliveries past their retention are looked for this often (service seconds). */
const SWEEP_EVERY_SECONDS = 600;

/** A secret in the Standard Webhooks format: `whsec_` and 32 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** `webhook-id`: the same for every attempt at one event (CONTRACT.md). */
export const messageId = (accountId: number, eventId: number) => `evt_${accountId}_${eventId}`;

/** The backlog is measured at most this often (service seconds). */
const BACKLOG_EVERY_SECONDS = 1;

/** This worker's attempts in flight (flight.ts says why it is not the activation's). */
const inFlight = new InFlight();

type State = { lastSweep: number; backlogAt: number; backlog: DeliverReport['backlog'] };

export const webhooksActor = defineActor<State, WebhooksMessage, WebhooksReplies>({
  kind: 'webhooks',
  activate: async () => ({
    lastSweep: 0,
    backlogAt: Number.NEGATIVE_INFINITY,
    backlog: { due: 0, oldestSeconds: 0 },
  }),
  handlers: {
    async register(_state, msg, ctx): Promise<WebhookCreated> {
      return ctx.em.transactional(async (em) => {
        // The agent's row lock serialises its registrations across processes: the bound holds.
        const [agent] = await em.execute<{ account_id: number }[]>(
          'select account_id::float8 as account_id from agent where id = ? for update',
          [msg.agentId],
        );
        if (!agent) throw new ActorError(404, 'no such agent');
        if (
          (await em.count(WebhookSchema, { agent: msg.agentId, deletedAt: null })) >=
          MAX_WEBHOOKS_PER_AGENT
        ) {
          throw new ActorError(
            409,
            `you have ${MAX_WEBHOOKS_PER_AGENT} webhooks, the most an agent can: delete one first`,
          );
        }
        const [head] = await em.execute<{ last_id: number }[]>(
          'select last_id::float8 as last_id from account_event_head where account_id = ?',
          [agent.account_id],
        );
        const secret = newSecret();
        const w = em.create(WebhookSchema, {
          agent: msg.agentId,
          account: agent.account_id,
          url: msg.url,
          types: msg.types,
          secret,
          lastEventId: head?.last_id ?? 0,
          createdAt: instantDate(ctx.at),
        });
        await em.flush();
        return { id: w.id, url: msg.url, types: msg.types, secret };
      });
    },

    async remove(_state, msg, ctx): Promise<WebhookRemoved> {
      return ctx.em.transactional(async (em) => {
        const rows = await em.execute<{ id: number }[]>(
          `update webhook set deleted_at = ${instantSql()} where id = ? and agent_id = ? and deleted_at is null returning id::float8 as id`,
          [ctx.at, msg.webhookId, msg.agentId],
        );
        if (!rows.length) throw new ActorError(404, `no webhook ${msg.webhookId} of yours`);
        await failPending(em, msg.webhookId, 'the webhook was deleted');
        return { id: msg.webhookId, deleted: true };
      });
    },

    async deliver(state, msg, ctx): Promise<DeliverReport> {
      const { at } = msg;
      const ended = inFlight.take();
      await recordEnded(ctx.em, at, ended);
      const { enqueued, more: enqueueMore, live } = await enqueue(ctx.em, at);
      const places = inFlight.free;
      const claimed = await claim(ctx.em, at, places, inFlight.busy());
      for (const c of claimed) inFlight.start(c, attempt(c, at, msg));
      const more = enqueueMore || (places > 0 && claimed.length >= places);
      let expired = 0;
      if (at - state.lastSweep >= SWEEP_EVERY_SECONDS) {
        state.lastSweep = at;
        expired = await expireDeliveries(ctx.em, at, inFlight.ids());
        await sweepDeliveries(ctx.em, at);
      }
      if (at - state.backlogAt >= BACKLOG_EVERY_SECONDS) {
        state.backlogAt = at;
        state.backlog = await backlog(ctx.em, at);
      }
      // Wait for the first attempt to end (not the slowest), unless more is due at once.
      if (!more) await inFlight.settled(msg.waitMs);
      const late = inFlight.take();
      await recordEnded(ctx.em, at, late);
      const results = [...ended, ...late];
      const delivered = results.filter((r) => r.ok).length;
      const failed = results.filter((r) => !r.ok && r.next === null).length;
      return {
        enqueued,
        sent: claimed.length,
        delivered,
        retried: results.length - delivered - failed,
        failed: failed + expired,
        inFlight: inFlight.size,
        more,
        live,
        backlog: state.backlog,
      };
    },
  },
});

/** Records the results of attempts that ended; if that fails they wait for the next pass again (not lost until their lease ends). */
async function recordEnded(em: EntityManager, at: number, results: Result[]): Promise<void> {
  try {
    await record(em, at, results);
  } catch (err) {
    inFlight.restore(results);
    throw err;
  }
}

/** One claimed delivery's attempt and its result (never throws). */
async function attempt(
  c: Claimed,
  at: number,
  opts: { allowPrivate: boolean; timeoutMs: number },
): Promise<Result> {
  const base = { id: c.id, attempts: c.attempts };
  const none = (error: string): Result => ({
    ...base,
    ok: false,
    code: null,
    error,
    next: null,
    endpoint: null,
  });
  if (c.deleted) return none('the webhook was deleted');
  if (!c.event) return none('the event is no longer kept');
  if (at >= c.expires_at) return none('no 2xx answer within 24 hours of the event');
  let out: Outcome;
  try {
    const body = JSON.stringify(c.event);
    out = await send({
      url: c.url,
      secret: c.secret,
      msgId: messageId(c.account_id, c.event_id),
      body,
      at,
      allowPrivate: opts.allowPrivate,
      timeoutMs: opts.timeoutMs,
    });
  } catch (err) {
    out = {
      status: null,
      error: `not sent: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300),
    };
  }
  const ok = out.status !== null && out.status >= 200 && out.status < 300;
  const error = ok ? null : (out.error ?? `HTTP ${out.status}`);
  const next = at + retryDelaySeconds(c.attempts);
  return {
    ...base,
    ok,
    code: out.status,
    error,
    next: ok ? null : next < c.expires_at ? next : null,
    endpoint: c.webhook_id,
  };
}
