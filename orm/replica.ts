// A streaming replica of the embedded primary (npm run cluster): PostgreSQL's own pg_basebackup
// copies the primary while it runs and writes the standby's settings (-R: standby.signal and
// primary_conninfo), through a physical replication slot it creates (-C), so the primary keeps
// every WAL segment the replica has not received yet. pg_basebackup rather than the low-level
// backup API by hand: it streams the WAL written during the copy (-X stream) and checks what it
// copied, which a hand-made copy would have to redo. It comes with Debian's postgresql-client (the
// embedded package ships only initdb, pg_ctl and postgres); the server binaries are the embedded ones.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import {
  EmbeddedDatabaseError,
  LOG_SETTINGS,
  START_TIMEOUT_S,
  STOP_TIMEOUT_S,
  binaries,
  freePort,
  giveTo,
  run,
  serverIdentity,
  serverLogTail,
  serverPid,
  type EmbeddedDatabase,
} from './embedded.js';

export type Replica = {
  name: string;
  url: string;
  port: number;
  dir: string;
  pid: number | undefined;
  stop: () => Promise<void>;
};

const HOST = '127.0.0.1';

/** Debian's pg_basebackup, or what to install. */
export function basebackupTool(): string {
  const found = spawnSync('sh', ['-c', 'command -v pg_basebackup'], { encoding: 'utf8' });
  const tool = found.status === 0 ? found.stdout.trim() : '';
  if (!tool) {
    throw new EmbeddedDatabaseError(
      'a replica is made with pg_basebackup, which is not installed: apt-get install postgresql-client (Debian), or run with --replicas 0',
    );
  }
  return tool;
}

/** The slot of replica `name` on the primary (slot names: lower-case letters, digits, underscores). */
const slotOf = (name: string) => `svc_${name.replace(/[^a-z0-9]/g, '_')}`;

/**
 * Starts replica `name` of `primary` in `dir` (made afresh with pg_basebackup unless a standby of it
 * is already there), on a free loopback port, and resolves once it accepts connections.
 */
export async function startReplica(
  primary: EmbeddedDatabase,
  dir: string,
  name: string,
  opts: { maxConnections: number },
): Promise<Replica> {
  const bin = await binaries();
  const who = serverIdentity('postgres');
  const password = fs.readFileSync(primary.passwordFile, 'utf8').trim();
  if (!fs.existsSync(path.join(dir, 'standby.signal')))
    await copyPrimary(primary, dir, name, password, who);
  const orphan = serverPid(dir);
  if (orphan !== undefined)
    await run(who, bin.pg_ctl, [
      'stop',
      '-D',
      dir,
      '-m',
      'fast',
      '-w',
      '-t',
      String(STOP_TIMEOUT_S),
    ]);
  fs.rmSync(path.join(dir, 'postmaster.pid'), { force: true });
  const port = await freePort();
  // A hot standby needs at least the primary's max_connections.
  const settings = [
    `listen_addresses=${HOST}`,
    `port=${port}`,
    "unix_socket_directories=''",
    `cluster_name=${name}`,
    `max_connections=${Math.max(100, opts.maxConnections)}`,
    'hot_standby=on',
    ...LOG_SETTINGS,
  ];
  const started = await run(who, bin.pg_ctl, [
    'start',
    '-D',
    dir,
    '-l',
    path.join(dir, 'startup.log'),
    '-w',
    '-t',
    String(START_TIMEOUT_S),
    '-o',
    settings.map((s) => `-c ${s}`).join(' '),
  ]);
  if (started.code !== 0)
    throw new EmbeddedDatabaseError(
      `replica ${name} did not start in ${dir}:\n${started.out.trim()}\n${serverLogTail(dir)}`,
    );
  const url = `postgres://postgres:${encodeURIComponent(password)}@${HOST}:${port}/postgres`;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const r = await run(who, bin.pg_ctl, [
        'stop',
        '-D',
        dir,
        '-m',
        'fast',
        '-w',
        '-t',
        String(STOP_TIMEOUT_S),
      ]);
      if (r.code !== 0 && serverPid(dir) !== undefined)
        throw new EmbeddedDatabaseError(`replica ${name} did not stop: ${r.out.trim()}`);
    })());
  return { name, url, port, dir, pid: serverPid(dir), stop };
}

/** A fresh copy of the primary in `dir`, streaming from a slot of its own (an old slot of that name is dropped first). */
async function copyPrimary(
  primary: EmbeddedDatabase,
  dir: string,
  name: string,
  password: string,
  who: ReturnType<typeof serverIdentity>,
): Promise<void> {
  const tool = basebackupTool();
  const slot = slotOf(name);
  const c = new pg.Client({ connectionString: primary.url });
  await c.connect();
  try {
    await c.query(
      'select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = $1',
      [slot],
    );
  } finally {
    await c.end();
  }
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  giveTo(who, dir);
  const r = await run(
    who,
    tool,
    [
      '-h',
      HOST,
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      dir,
      '-X',
      'stream',
      '-R',
      '-C',
      '-S',
      slot,
      '--no-password',
      '--checkpoint=fast',
    ],
    { PGPASSWORD: password },
  );
  if (r.code !== 0)
    throw new EmbeddedDatabaseError(
      `pg_basebackup could not copy the primary into ${dir}:\n${r.out.trim()}`,
    );
}
