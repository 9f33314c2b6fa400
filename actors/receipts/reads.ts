// The receipts' public keys (GET /.well-known/jwks.json).
import { defineReads } from '../runtime/read.js';
import { jwks } from '../money/receipts.js';

export const receiptReads = defineReads({
  'receipts.jwks': async ({ em }, _a: Record<string, never>) => jwks(em),
});
