// The tests that only read the recorded day, run in one process on one shared service
// (sharedRecordedService): a service start and a process instead of one per module. Each module in
// record-reads/ holds one resource's tests (its top-level subtests join this file's); none writes
// what another reads. Run one module's with --grep on its subtests' names.
import { runModules } from '../helpers/service.js';

await runModules(new URL('./record-reads/', import.meta.url), [
  'book',
  'dataset',
  'families',
  'history',
  'projection',
  'stats',
  'tape',
  'web-assets',
]);
