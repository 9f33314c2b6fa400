// The environment of a child process the tests start (the service's `node dist/src/main.js`, the
// CLI): the test process's own, without what tap adds to every process (NODE_OPTIONS' loader
// hooks, coverage) so the child runs as in production and does not pay for tap's loading.
const TEST_RUNNER_ONLY = ['NODE_OPTIONS', 'NODE_V8_COVERAGE'];

/** process.env without tap's additions and without `drop` (settings the child must not inherit), then `set`. */
export function productionEnv(
  set: Record<string, string> = {},
  drop: string[] = [],
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !TEST_RUNNER_ONLY.includes(k) && !drop.includes(k)) env[k] = v;
  return Object.assign(env, set);
}
