// Read tasks of the record's analytics: tape, book, stats (with the oracle), families, signals.
import { defineReads } from '../runtime/read.js';
import { familiesReads } from './analytics-families.js';
import { statsReads } from './analytics-stats.js';
import { tapeReads } from './analytics-tape.js';

export const analyticsReads = defineReads({ ...tapeReads, ...statsReads, ...familiesReads });
