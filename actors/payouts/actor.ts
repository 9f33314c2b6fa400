// PayoutsActor ("payouts:due"): owns the moment a scheduled payout is paid. The money left the
// account when the payout was scheduled (actors/account/holder-money.ts); here a due payout only
// becomes `paid`, exactly once: the statement flips rows it finds `scheduled`, under their row locks,
// so two supervisors (two processes) or a replay after a restart never pay one twice.
import { PayoutSchema } from '../../orm/entities/index.js';
import { defineActor } from '../runtime/actor.js';
import { instantSql } from '../runtime/sql.js';
import type { PaidOut, PayoutsMessage, PayoutsReplies } from './messages.js';

/** Payouts one turn pays at most (the next sweep takes the rest). */
export const PAYOUT_BATCH = 1000;

export const payoutsActor = defineActor<Record<string, never>, PayoutsMessage, PayoutsReplies>({
  kind: 'payouts',
  activate: async () => ({}),
  handlers: {
    async payDue(_state, msg, ctx): Promise<PaidOut> {
      const rows = await ctx.em.execute<{ id: number }[]>(
        `update payout set status = 'paid', paid_at = ${instantSql()}
          where id in (select id from payout where status = 'scheduled' and pay_at <= ? order by pay_at, id limit ? for update skip locked)
            and status = 'scheduled'
         returning id::float8 as id`,
        [msg.at, msg.at, PAYOUT_BATCH],
      );
      const next = await ctx.em.findOne(
        PayoutSchema,
        { status: 'scheduled' },
        { orderBy: { payAt: 'asc' }, fields: ['payAt'] },
      );
      return { paid: rows.map((r) => r.id).sort((a, b) => a - b), nextAt: next?.payAt ?? null };
    },
  },
});
