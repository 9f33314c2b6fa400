// Read tasks of the record: projection of a deal (projection-deal.ts), ticker and pulse (pulse.ts).
import { defineReads } from '../runtime/read.js';
import { dealProjectionReads } from './projection-deal.js';
import { pulseReads } from './pulse.js';

export const projectionReads = defineReads({ ...dealProjectionReads, ...pulseReads });
