// `npm start`: read settings, start the service, stop cleanly on SIGTERM/SIGINT (exit 0).
import { ConfigError, loadConfig } from './config.js';
import { startService } from './service.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  const service = await startService(config);
  const shutdown = (signal: string) => {
    service.services.log.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (err) => {
        service.services.log.error({ err }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
