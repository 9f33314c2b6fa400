// uWebSockets.js, native or nothing. The package silently falls back to a slow pure-JS server when
// its binary does not load; we load the binary for this platform and ABI ourselves and stop
// start-up loudly if it is missing, so a deployment can never run degraded without noticing.
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as UWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

function loadNative(): typeof UWS {
  const pkgDir = path.dirname(require.resolve('uWebSockets.js/package.json'));
  const binary = path.join(
    pkgDir,
    'binaries',
    `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`,
  );
  try {
    return require(binary) as typeof UWS;
  } catch (err) {
    throw new Error(
      `uWebSockets.js native build did not load (${binary}): ${(err as Error).message}. ` +
        'Refusing to start on the slow JavaScript fallback; use Node.js 20 on linux/darwin x64/arm64.',
      { cause: err },
    );
  }
}

export const uws = loadNative();
export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
