// A fresh, empty database per test: a new database on the PostgreSQL server named by DATABASE_URL
// (dropped afterwards), or an embedded PGlite in a temporary folder when DATABASE_URL is unset.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbedded } from '../../orm/embedded.js';

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
 * A temporary folder holding an empty embedded database. PGlite's first start (initdb) takes
 * seconds, so one initialised template per machine is copied instead.
 */
export async function embeddedDataDir(t: Teardown): Promise<string> {
  const template = path.join(os.tmpdir(), `svc-pglite-template-${process.getuid?.() ?? 0}`);
  if (!fs.existsSync(template)) {
    const building = fs.mkdtempSync(`${template}-building-`);
    const emb = await startEmbedded(building);
    await emb.stop();
    try {
      fs.renameSync(building, template);
    } catch {
      fs.rmSync(building, { recursive: true, force: true }); // another test file won the race
    }
  }
  const dir = tempDir(t);
  fs.cpSync(template, dir, { recursive: true });
  return dir;
}

/** A database URL for the test's own empty database, removed at teardown. */
export async function freshDatabase(t: Teardown): Promise<string> {
  if (!usingPostgres) {
    const emb = await startEmbedded(await embeddedDataDir(t));
    t.teardown(() => emb.stop());
    return emb.url;
  }
  const admin = new URL(process.env.DATABASE_URL!);
  const name = `svc_t_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: admin.href });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
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
