// `npm run cluster -- [--nodes N] [--port P] [--replicas R]` (CONTRACT.md "Several front ends"): on
// this machine, a PostgreSQL primary (the embedded one under DATA_DIR, or DATABASE_URL's server),
// R streaming replicas of it, N service processes on free loopback ports and HAProxy in front on
// HOST:P. Prints `cluster ready: <url>` once /readyz answers 200 through the balancer, writes
// DATA_DIR/cluster.json, restarts nothing by itself, and on SIGINT or SIGTERM drains the nodes and
// stops everything it started. The nodes take this command's environment, each its own name.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { connectionBudget } from '../../orm/connections.js';
import {
  EmbeddedDatabaseError,
  freePort,
  startEmbedded,
  type EmbeddedDatabase,
} from '../../orm/embedded.js';
import { startReplica, type Replica } from '../../orm/replica.js';
import { haproxyConfig, NODE_DRAIN_MS } from './haproxy.js';
import { parseClusterArgs, UsageError, USAGE, type ClusterArgs } from './args.js';
import { SERVICE_NODE_FLAGS } from '../node-flags.js';

/** How long a node may take to answer /readyz 200 (its first start migrates and records history). */
const NODE_START_MS = 300_000;
/** How long the nodes may take to stop after SIGTERM (their drain, then their closes and pools) before SIGKILL. */
const NODE_STOP_MS = 30_000;
const READY_POLL_MS = 200;
/** Connections the primary keeps beyond the nodes' budgets (psql, pg_dump, the replicas' checks). */
const SPARE_CONNECTIONS = 10;

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const say = (line: string) => console.log(`cluster: ${line}`);

type Node = { name: string; port: number; child: ChildProcess; log: string; exited: boolean };

export type ClusterFile = {
  base_url: string;
  nodes: { name: string; pid: number; port: number }[];
  balancer: { pid: number; port: number; config: string };
  primary: { pid: number | null; port: number };
  replicas: { pid: number | null; port: number }[];
};

/** A child whose end is awaited (bounded) and which never outlives this process. */
function track(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

async function stopChild(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const ended = track(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  await ended;
  clearTimeout(timer);
}

async function readyAt(url: string, until: number, alive: () => boolean): Promise<boolean> {
  while (Date.now() < until && alive()) {
    const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return true;
    await new Promise((r) => setTimeout(r, READY_POLL_MS));
  }
  return false;
}

function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

class Cluster {
  private primary?: EmbeddedDatabase;
  private readonly replicas: Replica[] = [];
  private readonly nodes: Node[] = [];
  private balancer?: ChildProcess;
  private stopping = false;

  constructor(
    private readonly args: ClusterArgs,
    private readonly config: Config,
    private readonly dir: string,
  ) {}

  async start(): Promise<string> {
    const { args, config } = this;
    const databaseUrl = await this.startDatabase();
    const base = process.env.BASE_URL ? config.baseUrl : `http://${config.host}:${args.port}`;
    const logs = path.join(this.dir, 'logs');
    fs.mkdirSync(logs, { recursive: true });
    // The first node migrates and opens the markets; the others then start together.
    const names = Array.from({ length: args.nodes }, (_, i) => `node-${i + 1}`);
    await this.startNode(names[0], databaseUrl, base, logs);
    await Promise.all(names.slice(1).map((n) => this.startNode(n, databaseUrl, base, logs)));
    const cfgFile = await this.startBalancer(logs);
    this.writeClusterFile(base, cfgFile, databaseUrl);
    return base;
  }

  /** The primary (the embedded server, or DATABASE_URL's) and the embedded one's replicas: the primary's URL. */
  private async startDatabase(): Promise<string> {
    const { args, config } = this;
    if (config.databaseUrl) {
      say(
        'primary: the server of DATABASE_URL (no replicas: they are made of the embedded primary)',
      );
      return config.databaseUrl;
    }
    const maxConnections = args.nodes * connectionBudget(config.shards).total + SPARE_CONNECTIONS;
    this.primary = await startEmbedded(config.dataDir, { maxConnections });
    say(
      `primary: embedded PostgreSQL on 127.0.0.1:${this.primary.port} (${this.primary.clusterDir})`,
    );
    for (let i = 1; i <= args.replicas; i++) {
      const dir = path.join(path.dirname(this.primary.clusterDir), `replica-${i}`);
      const r = await startReplica(this.primary, dir, `replica-${i}`, { maxConnections });
      this.replicas.push(r);
      say(`replica-${i}: streaming from the primary on 127.0.0.1:${r.port} (${dir})`);
    }
    return this.primary.url;
  }

  /** HAProxy in front of the nodes, once it answers /readyz 200: its configuration file. */
  private async startBalancer(logs: string): Promise<string> {
    const { args, config } = this;
    const cfgFile = path.join(this.dir, 'haproxy.cfg');
    fs.writeFileSync(
      cfgFile,
      haproxyConfig({
        bind: { host: config.host, port: args.port },
        nodes: this.nodes.map((n) => ({ name: n.name, host: '127.0.0.1', port: n.port })),
        adminSocket: path.join(this.dir, 'haproxy.sock'),
      }),
    );
    const check = spawnSync('haproxy', ['-c', '-q', '-f', cfgFile], { encoding: 'utf8' });
    if (check.status !== 0)
      throw new Error(`HAProxy refused ${cfgFile}:\n${check.stdout}${check.stderr}`);
    const hlog = fs.openSync(path.join(logs, 'haproxy.log'), 'a');
    this.balancer = spawn('haproxy', ['-db', '-f', cfgFile], {
      stdio: ['ignore', hlog, hlog],
      detached: true,
    });
    fs.closeSync(hlog);
    this.balancer.once('exit', (code, signal) => {
      if (!this.stopping)
        say(
          `the balancer exited (${signal ?? `code ${code}`}): see ${path.join(logs, 'haproxy.log')}`,
        );
    });
    const local = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${args.port}`;
    if (!(await readyAt(local, Date.now() + 30_000, () => this.balancer!.exitCode === null))) {
      throw new Error(
        `the balancer did not answer /readyz 200 on ${local}: ${tail(path.join(logs, 'haproxy.log'))}`,
      );
    }
    return cfgFile;
  }

  /** DATA_DIR/cluster.json: the base URL and every process of the cluster with its port. */
  private writeClusterFile(base: string, cfgFile: string, databaseUrl: string): void {
    const file: ClusterFile = {
      base_url: base,
      nodes: this.nodes.map((n) => ({ name: n.name, pid: n.child.pid!, port: n.port })),
      balancer: { pid: this.balancer!.pid!, port: this.args.port, config: cfgFile },
      primary: {
        pid: this.primary ? serverPidOf(this.primary.clusterDir) : null,
        port: this.primary?.port ?? Number(new URL(databaseUrl).port || 5432),
      },
      replicas: this.replicas.map((r) => ({ pid: r.pid ?? null, port: r.port })),
    };
    fs.writeFileSync(
      path.join(this.config.dataDir, 'cluster.json'),
      `${JSON.stringify(file, null, 2)}\n`,
    );
  }

  private async startNode(
    name: string,
    databaseUrl: string,
    base: string,
    logs: string,
  ): Promise<void> {
    const port = await freePort();
    const log = path.join(logs, `${name}.log`);
    const fd = fs.openSync(log, 'a');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      BASE_URL: base,
      SVC_NODE_NAME: name,
      // The balancer is the only peer whose X-Forwarded-For names the client.
      SVC_TRUSTED_PROXIES: '127.0.0.1',
      SVC_DRAIN_MS: process.env.SVC_DRAIN_MS ?? String(NODE_DRAIN_MS),
      // The closed record may be read from the replicas (each node's shards spread over them).
      SVC_REPLICA_URLS: process.env.SVC_REPLICA_URLS || this.replicas.map((r) => r.url).join(','),
    };
    // Its own process group: a terminal's Ctrl-C reaches this command, which stops the nodes in order.
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, MAIN], {
      env,
      stdio: ['ignore', fd, fd],
      detached: true,
    });
    fs.closeSync(fd);
    const node: Node = { name, port, child, log, exited: false };
    this.nodes.push(node);
    child.once('exit', (code, signal) => {
      node.exited = true;
      if (!this.stopping)
        say(
          `${name} (pid ${child.pid}) exited (${signal ?? `code ${code}`}); not restarted: see ${log}`,
        );
    });
    if (
      !(await readyAt(`http://127.0.0.1:${port}`, Date.now() + NODE_START_MS, () => !node.exited))
    ) {
      throw new Error(`${name} did not become ready (see ${log}):\n${tail(log)}`);
    }
    say(`${name} ready on 127.0.0.1:${port} (pid ${child.pid})`);
  }

  /** The nodes drain (their /readyz 503 takes them out of the balancer), then everything stops, the database last. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.nodes.map((n) => stopChild(n.child, NODE_STOP_MS)));
    if (this.balancer) await stopChild(this.balancer, 5000);
    for (const r of this.replicas)
      await r.stop().catch((err) => say(`${r.name} did not stop: ${(err as Error).message}`));
    await this.primary?.stop();
  }

  /** On an exit without stop() (an uncaught error): no child outlives this process. */
  killAll(): void {
    for (const c of [...this.nodes.map((n) => n.child), this.balancer]) {
      if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    }
  }
}

function serverPidOf(clusterDir: string): number | null {
  try {
    return (
      Number(fs.readFileSync(path.join(clusterDir, 'postmaster.pid'), 'utf8').split('\n')[0]) ||
      null
    );
  } catch {
    return null;
  }
}

async function main(): Promise<void> {
  let args: ClusterArgs;
  let config: Config;
  try {
    args = parseClusterArgs(process.argv.slice(2), process.env);
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof UsageError && err.help) {
      console.log(USAGE);
      process.exit(0);
    }
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(`cluster: ${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    throw err;
  }
  if (spawnSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).status !== 0) {
    console.error(
      'cluster: HAProxy is not installed: apt-get install haproxy (Debian), then run this again',
    );
    process.exit(2);
  }
  const dir = path.join(config.dataDir, 'cluster');
  fs.mkdirSync(dir, { recursive: true });
  const cluster = new Cluster(args, config, dir);
  process.on('exit', () => cluster.killAll());
  let stopping: Promise<void> | undefined;
  const stop = (why: string, code: number) => {
    stopping ??= (async () => {
      say(`${why}: draining the nodes, then stopping everything`);
      await cluster
        .stop()
        .catch((err) => console.error(`cluster: an unclean stop: ${(err as Error).message}`));
      say('stopped');
      process.exit(code);
    })();
  };
  process.once('SIGINT', () => stop('SIGINT', 0));
  process.once('SIGTERM', () => stop('SIGTERM', 0));
  try {
    const url = await cluster.start();
    console.log(`cluster ready: ${url}`);
  } catch (err) {
    const usage = err instanceof EmbeddedDatabaseError || err instanceof ConfigError;
    console.error(`cluster: ${(err as Error).message}`);
    stop('start failed', usage ? 2 : 1);
  }
}

await main();
