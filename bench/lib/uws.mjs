// uWebSockets.js for the bench's bare peers (bench/fixed-server.mjs, bench/ws-peer.mjs): the native
// binary of the package the service uses, loaded exactly as src/http/uws.ts does (never the slow
// JavaScript fallback the package would otherwise pick silently).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

export function loadUws() {
  const pkgDir = path.dirname(require.resolve('uWebSockets.js/package.json'));
  const binary = path.join(
    pkgDir,
    'binaries',
    `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`,
  );
  try {
    return require(binary);
  } catch (err) {
    throw new Error(`uWebSockets.js native build did not load (${binary}): ${err.message}`, {
      cause: err,
    });
  }
}

/** Exits the peer once on SIGTERM, SIGINT or when its stdin closes (the parent bench went away), after `stop`. */
export function exitWithParent(stop) {
  let stopping = false;
  const once = () => {
    if (stopping) return;
    stopping = true;
    try {
      stop();
    } finally {
      // Open connections would keep the loop alive: leave promptly.
      setTimeout(() => process.exit(0), 100).unref();
      process.exitCode = 0;
    }
  };
  process.once('SIGTERM', once);
  process.once('SIGINT', once);
  process.stdin.on('end', once);
  process.stdin.on('error', once);
  process.stdin.resume();
}
