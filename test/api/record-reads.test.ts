// The tests that only read the recorded day, run in one process on one shared service
// (sharedRecordedService): a service start and a process instead of one per module. Each module in
// record-reads/ holds one resource's tests (its top-level subtests join this file's); none writes
// what another reads. A module can be run alone with --grep on its subtests' names.
import t from 'tap';

const MODULES = [
  'book',
  'dataset',
  'families',
  'history',
  'projection',
  'stats',
  'tape',
  'web-assets',
];

// One after another: each module's subtests are queued as it is evaluated.
for (const name of MODULES) {
  await import(`./record-reads/${name}.js`);
}
