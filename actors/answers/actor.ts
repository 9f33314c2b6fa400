// AnswersActor ("answers:sweep"): owns the retention of stored Idempotency-Key answers. The answers
// themselves are written by the turns that have the effects (runtime/idempotency.ts); this actor
// only forgets them after CONTRACT.md's 24 hours, in bounded batches.
import { defineActor } from '../runtime/actor.js';
import { SWEEP_BATCH, sweepAnswers } from '../runtime/idempotency.js';
import type { AnswersMessage, Swept } from './messages.js';


/** Batches one sweep turn deletes at most (the next sweep takes the rest). */
const MAX_BATCHES = 20;

export const answersActor = defineActor<Record<string, never>, AnswersMessage>({
  kind: 'answers',
  activate: async () => ({}),
  handlers: {
    async sweep(_state, _msg, ctx): Promise<Swept> {
      let deleted = 0;
      for (let i = 0; i < MAX_BATCHES; i++) {
        const n = await sweepAnswers(ctx.em);
        deleted += n;
        if (n < SWEEP_BATCH) break;
      }
      return { deleted };
    },
  },
});
