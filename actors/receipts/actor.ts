// ReceiptsActor ("receipts:keys"): owns the receipts' signing keys (money/receipts.ts signs with
// them in the charging turn). Every start asks it to make the first key; an operator's rotation is
// one turn. The key's lock makes two processes' turns one.
import { defineActor } from '../runtime/actor.js';
import { makeKey } from '../money/receipts.js';
import type { KeyReady, ReceiptsMessage, ReceiptsReplies } from './messages.js';

export const receiptsActor = defineActor<Record<string, never>, ReceiptsMessage, ReceiptsReplies>({
  kind: 'receipts',
  activate: async () => ({}),
  handlers: {
    async ensureKey(_state, _msg, ctx): Promise<KeyReady> {
      return ctx.em.transactional((em) => makeKey(em, false, ctx.at));
    },
    async rotate(_state, _msg, ctx): Promise<KeyReady> {
      return ctx.em.transactional((em) => makeKey(em, true, ctx.at));
    },
  },
});
