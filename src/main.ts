// `npm start`: read settings, start the service, stop cleanly on SIGTERM/SIGINT (exit 0). A
// supervisor that cannot start (after its bounded retries) exits 1, so a process manager restarts
// the service instead of it answering /readyz 503 for ever.
import { ConfigError, loadConfig } from './config.js';
import { startService } from './service.js';
import type { BoundedBackoff } from './supervisor/backoff.js';

/** How long an exit waits for a clean stop before leaving anyway. */
const EXIT_GRACE_MS = 10_000;

function startRetry(env: NodeJS.ProcessEnv): BoundedBackoff {
  const int = (name: string, dflt: number, min: number, max: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(
        `${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`,
      );
    return n;
  };
  // Defaults: 5 attempts 1, 2, 4, 8 s apart, about a minute with the default ask timeout.
  const baseMs = int('SVC_START_RETRY_MS', 1000, 1, 60_000);
  return {
    attempts: int('SVC_START_ATTEMPTS', 5, 1, 100),
    baseMs,
    capMs: Math.max(baseMs, 60_000),
  };
}

async function main(): Promise<void> {
  let config;
  let retry;
  try {
    config = loadConfig();
    retry = startRetry(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const service = await startService(config, { startRetry: retry });
  const log = service.services.log;
  const stopThenExit = (stopping: Promise<unknown>, code: number) =>
    stopping.then(
      () => process.exit(code),
      (err) => {
        log.error({ err }, 'unclean shutdown');
        process.exit(1);
      },
    );
  service.ready.catch((err) => {
    log.fatal(
      { err, attempts: retry.attempts },
      'supervisor could not start; exiting so a process manager restarts the service',
    );
    // Bounded: a runtime that could not start its markets may not stop cleanly either.
    void stopThenExit(
      Promise.race([service.stop(), new Promise((r) => setTimeout(r, EXIT_GRACE_MS))]),
      1,
    );
  });
  const shutdown = (signal: string) => {
    log.info({ signal }, 'shutting down');
    void stopThenExit(service.stop(), 0);
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  // startService refuses settings the database cannot serve (the shard count) as configuration errors.
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
