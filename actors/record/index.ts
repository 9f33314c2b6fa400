// Every read task over the public record; workers register these by name.
import { analyticsReads } from './analytics.js';
import { fragmentReads } from './fragments.js';
import { historyReads } from './history.js';
import { projectionReads } from './projection.js';
import { tradesReads } from './trades.js';

export const readTasks = {
  ...historyReads,
  ...tradesReads,
  ...analyticsReads,
  ...projectionReads,
  ...fragmentReads,
};
