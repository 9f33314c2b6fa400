// The tests that need a service of their own settings and nothing more, run in one process on one
// shared web service (sharedWebService): a service start and a process instead of one per module.
// Each module in one-service/ holds one area's tests (its top-level subtests join this file's),
// with agents and holders of its own; the route fuzzer goes last. Run one module's with --grep on
// its subtests' names.
import { runModules } from '../helpers/service.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(240); // eleven modules; the route fuzzer draws many requests for every route

await runModules(new URL('./one-service/', import.meta.url), [
  'agents',
  'bounds',
  'cart-link',
  'discovery',
  'error-pages',
  'hardening',
  'holders',
  'openapi-lint',
  'site-pages',
  'stream-limits',
  'route-fuzz',
]);
