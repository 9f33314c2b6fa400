// WebhooksActor (CONTRACT.md "Events" → Webhooks, ARCHITECTURE.md rule 9: pushes read the log).
// - "webhooks:<agent id>": `register` (at most MAX_WEBHOOKS_PER_AGENT live ones; the cursor starts
//   at the account's head, so a webhook gets the events after it was made) and `remove`.
// - "webhooks:deliver": one bounded pass, asked by the supervisor every second in every process:
//   enqueue from the log (queue.ts), claim due deliveries with FOR UPDATE SKIP LOCKED and commit,
//   send them at once outside any transaction (send.ts), record the results. A 2xx delivers; any
//   other answer, none, or a refused address is retried with doubling delays until 24 hours after
//   the event, then the delivery fails. Two processes never hold one delivery at once (the claim's
//   lease); a crash between sending and recording repeats it later with the same `webhook-id`.
import { randomBytes } from 'node:crypto';
import { ActorError, defineActor } from '../runtime/actor.js';
import { WebhookSchema } from '../../orm/entities/index.js';
import { instantDate, instantSql } from '../runtime/sql.js';
import {
  MAX_WEBHOOKS_PER_AGENT,
  type DeliverReport, type WebhookCreated, type WebhookRemoved, type WebhooksMessage, type WebhooksReplies,
} from './messages.js';
import { CLAIM_BATCH, claim, enqueue, failPending, record, retryDelaySeconds, sweepDeliveries, type Claimed, type Result } from './queue.js';
import { send, type Outcome } from './send.js';

/** Finished deliveries past their retention are looked for this often (service seconds). */
const SWEEP_EVERY_SECONDS = 600;

/** A secret in the Standard Webhooks format: `whsec_` and 32 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** `webhook-id`: the same for every attempt at one event (CONTRACT.md). */
export const messageId = (accountId: number, eventId: number) => `evt_${accountId}_${eventId}`;

type State = { lastSweep: number };

export const webhooksActor = defineActor<State, WebhooksMessage, WebhooksReplies>({
  kind: 'webhooks',
  activate: async () => ({ lastSweep: 0 }),
  handlers: {
    async register(_state, msg, ctx): Promise<WebhookCreated> {
      return ctx.em.transactional(async (em) => {
        // The agent's row lock serialises its registrations across processes: the bound holds.
        const [agent] = await em.execute<{ account_id: number }[]>('select account_id::float8 as account_id from agent where id = ? for update', [msg.agentId]);
        if (!agent) throw new ActorError(404, 'no such agent');
        if ((await em.count(WebhookSchema, { agent: msg.agentId, deletedAt: null })) >= MAX_WEBHOOKS_PER_AGENT) {
          throw new ActorError(409, `you have ${MAX_WEBHOOKS_PER_AGENT} webhooks, the most an agent can: delete one first`);
        }
        const [head] = await em.execute<{ last_id: number }[]>('select last_id::float8 as last_id from account_event_head where account_id = ?', [agent.account_id]);
        const secret = newSecret();
        const w = em.create(WebhookSchema, { agent: msg.agentId, account: agent.account_id, url: msg.url, types: msg.types, secret, lastEventId: head?.last_id ?? 0, createdAt: instantDate(ctx.at) });
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
      const { enqueued, more: backlog, live } = await enqueue(ctx.em, msg.at);
      const claimed = await claim(ctx.em, msg.at);
      const results = await Promise.all(claimed.map((c) => attempt(c, msg.at, msg.allowPrivate)));
      await record(ctx.em, msg.at, results);
      if (msg.at - state.lastSweep >= SWEEP_EVERY_SECONDS) {
        state.lastSweep = msg.at;
        await sweepDeliveries(ctx.em, msg.at);
      }
      const delivered = results.filter((r) => r.ok).length;
      const failed = results.filter((r) => !r.ok && r.next === null).length;
      return { enqueued, sent: claimed.length, delivered, failed, more: backlog || claimed.length >= CLAIM_BATCH, live };
    },
  },
});

/** One claimed delivery's attempt and its result (never throws). */
async function attempt(c: Claimed, at: number, allowPrivate: boolean): Promise<Result> {
  const base = { id: c.id, attempts: c.attempts };
  if (c.deleted) return { ...base, ok: false, code: null, error: 'the webhook was deleted', next: null };
  if (!c.event) return { ...base, ok: false, code: null, error: 'the event is no longer kept', next: null };
  let out: Outcome;
  try {
    out = await send({ url: c.url, secret: c.secret, msgId: messageId(c.account_id, c.event_id), body: JSON.stringify(c.event), at, allowPrivate });
  } catch (err) {
    out = { status: null, error: `not sent: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300) };
  }
  const ok = out.status !== null && out.status >= 200 && out.status < 300;
  const error = ok ? null : (out.error ?? `HTTP ${out.status}`);
  const next = at + retryDelaySeconds(c.attempts);
  return { ...base, ok, code: out.status, error, next: ok ? null : next < c.expires_at ? next : null };
}
