// The embedded database: PGlite (PostgreSQL compiled to WASM) kept under DATA_DIR and served on a
// private loopback port by pglite-socket, so the main thread and every worker use the same
// PostgreSQL driver and SQL as on a real server. PGlite is single-connection; the socket server
// multiplexes client connections and keeps a transaction's statements on one connection.
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

/** Connections the socket server accepts: every worker's pool plus the main thread's. */
export const EMBEDDED_MAX_CONNECTIONS = 256;

export async function startEmbedded(dataDir: string): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create({ dataDir });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: EMBEDDED_MAX_CONNECTIONS });
  await server.start();
  const address = server.getServerConn(); // "127.0.0.1:PORT"
  return {
    url: `postgres://postgres@${address}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}
