// A fresh database per test: a new database on the PostgreSQL server named by DATABASE_URL, or on
// an embedded server of the test process's own when DATABASE_URL is unset (dropped afterwards).
// Under test/run.mjs (npm test) it is a copy of the run's migrated template (SVC_TEST_TEMPLATE);
// a file run by tap alone gets an empty one, which the service migrates at its start.
// A service started without DATABASE_URL starts its own embedded server in a temporary DATA_DIR.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import tap from 'tap';
import { serverPid, startEmbedded } from '../../orm/embedded.js';
import { migrate, openOrm, type Orm } from '../../orm/database.js';
import { timed } from './timing.js';
import { eventually } from './wait.js';

type Teardown = { teardown: (fn: () => unknown) => void };

export const usingPostgres = Boolean(process.env.DATABASE_URL);

// Every ledger posting in a test also asserts balance = Σ ledger for the accounts it touched
// (actors/account/ledger.ts LEDGER_CHECKS); workers inherit the environment.
process.env.SVC_LEDGER_CHECKS ??= '1';
// Every reply is checked against its route's declared schema (src/http/server.ts): a mismatch is a 500.
process.env.SVC_RESPONSE_CHECKS ??= '1';

export function tempDir(t: Teardown, prefix = 'svc-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * A temporary DATA_DIR for a service on the embedded database (the server is initialised in it at
 * the service's first start). Open to the server's user, which a root process runs it as. At
 * teardown a server a killed service left running there is stopped before the folder goes.
 */
export async function embeddedDataDir(t: Teardown): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  fs.chmodSync(dir, 0o711);
  t.teardown(async () => {
    await stopLeftServer(path.join(dir, 'postgres'));
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** The pid of the server running on `clusterDir`, if any (the service's own definition). */
export const leftServer = serverPid;

/** Stops (SIGINT: fast shutdown) a server left running on `clusterDir` and waits for it to go. */
export async function stopLeftServer(clusterDir: string): Promise<void> {
  const pid = leftServer(clusterDir);
  if (pid === undefined) return;
  process.kill(pid, 'SIGINT');
  await eventually(
    () => leftServer(clusterDir) !== pid,
    `the server left on ${clusterDir} to stop`,
    100,
  );
}

let shared: Promise<string> | undefined;

/**
 * The admin URL of this test process's own embedded server, started on first use and stopped when
 * the process's tests end: the files that create databases of their own share it as they share the
 * machine's PostgreSQL under DATABASE_URL.
 */
function sharedEmbedded(): Promise<string> {
  return (shared ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-pg-'));
    fs.chmodSync(dir, 0o711);
    const emb = await startEmbedded(dir, { maxConnections: 300 });
    tap.teardown(async () => {
      await emb.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return emb.url;
  })());
}

/**
 * The ORM on a fresh, migrated database (freshDatabase), closed at teardown: for tests of the data
 * layer that need no service. Its URL too, for connections of the test's own.
 */
export async function migratedOrm(t: Teardown, poolMax = 2): Promise<{ url: string; orm: Orm }> {
  const url = await freshDatabase(t);
  const orm = await openOrm(url, poolMax);
  t.teardown(() => orm.close());
  await migrate(orm);
  return { url, orm };
}

/** The migrated database test/run.mjs made for this run, which fresh databases copy. */
const TEMPLATE = process.env.SVC_TEST_TEMPLATE;

/**
 * A database URL for the test's own database, removed at teardown: a copy of `template`, by default
 * the run's migrated one (under npm test; without it, an empty database the service migrates).
 */
export async function freshDatabase(t: Teardown, template = TEMPLATE): Promise<string> {
  if (template !== undefined && !/^[a-z0-9_]+$/.test(template))
    throw new Error(`not a database name: ${template}`);
  const admin = new URL(usingPostgres ? process.env.DATABASE_URL! : await sharedEmbedded());
  const name = `svc_t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  await timed('database', async () => {
    const client = new pg.Client({ connectionString: admin.href });
    await client.connect();
    try {
      await client.query(
        template ? `create database ${name} template ${template}` : `create database ${name}`,
      );
    } finally {
      await client.end();
    }
  });
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: admin.href });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  });
  const url = new URL(admin.href);
  url.pathname = `/${name}`;
  return url.href;
}
