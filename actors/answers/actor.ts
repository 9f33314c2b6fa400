// AnswersActor ("answers:sweep"): owns retention: stored Idempotency-Key answers (forgotten after
// CONTRACT.md's 24 hours) and the event log (7 days). Both are written by the turns that have the
// effects (runtime/idempotency.ts, events/log.ts); this actor only forgets, in bounded batches.
import { defineActor } from '../runtime/actor.js';
import { SWEEP_BATCH, sweepAnswers } from '../runtime/idempotency.js';
import { EVENT_SWEEP_BATCH, sweepEvents } from '../events/reads.js';
import type { AnswersMessage, AnswersReplies, Swept } from './messages.js';

/** Batches one sweep turn deletes at most (the next sweep takes the rest). */
const MAX_BATCHES = 20;

export const answersActor = defineActor<Record<string, never>, AnswersMessage, AnswersReplies>({
  kind: 'answers',
  activate: async () => ({}),
  handlers: {
    async sweep(_state, msg, ctx): Promise<Swept> {
      let deleted = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const n = await sweepAnswers(ctx.em, msg.at);
        deleted += n;
        if (n < SWEEP_BATCH) break;
      }
      let events = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const n = await sweepEvents(ctx.em, msg.at, EVENT_SWEEP_BATCH);
        events += n;
        if (n < EVENT_SWEEP_BATCH) break;
      }
      return { deleted, events };
    },
  },
});
