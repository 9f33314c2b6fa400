// Settings of CONTRACT.md "Running it", read once from the environment and validated:
// a bad value stops start-up with a message instead of surfacing later as a 5xx.
import { DEFAULT_RATE_LIMIT, type RateLimitPolicy } from './http/rate-limit.js';
import os from 'node:os';
import path from 'node:path';
import { SEND_TIMEOUT_MAX_MS, SEND_TIMEOUT_MS } from '../actors/webhooks/messages.js';
import { parseTrustedProxies, type TrustedProxies } from './http/client-address.js';

export type Config = {
  port: number;
  host: string;
  baseUrl: string;
  databaseUrl: string | undefined;
  dataDir: string;
  timeScale: number;
  backfillDays: number;
  seed: number;
  oracle: boolean;
  logLevel: string;
  shards: number;
  /** Milliseconds an actor may take to answer before the caller gets 503. */
  askTimeoutMs: number;
  /** Largest request body accepted, in bytes (413 above). */
  bodyLimitBytes: number;
  /** Pending messages per shard before new ones are refused with 503 + Retry-After. */
  mailboxLimit: number;
  /** Missed sessions replayed one by one after downtime, per market; older ones are skipped. */
  catchupLimit: number;
  /** Bytes of settled sessions' record kept in memory (0: off, every record answer read whole). */
  recordCacheBytes: number;
  /** Old-generation heap of each shard worker, in MB (SVC_WORKER_HEAP_MB). */
  workerHeapMb: number;
  /** Bearer token of /ops when it is not served on loopback only (SVC_OPS_TOKEN); undefined: unset. */
  opsToken: string | undefined;
  /** Webhooks may point at private, loopback and link-local addresses (SVC_WEBHOOK_ALLOW_PRIVATE=1: tests, a closed network). */
  webhookAllowPrivate: boolean;
  /** This process's name when several serve one database (SVC_NODE_NAME); undefined: HOST:PORT as it listens. */
  nodeName: string | undefined;
  /** Peers whose X-Forwarded-For names the client (SVC_TRUSTED_PROXIES: a balancer); none by default. */
  trustedProxies: TrustedProxies;
  /** How long one webhook delivery attempt may take before it counts as no answer (SVC_WEBHOOK_TIMEOUT_MS). */
  webhookTimeoutMs: number;
  /** How long a stopping process answers /readyz 503 before it stops serving (SVC_DRAIN_MS: a balancer's health checks take it out meanwhile). */
  drainMs: number;
  /** Streaming replicas that may serve the closed record on a cache miss (SVC_REPLICA_URLS); none by default. */
  replicaUrls: string[];
  /** The per-key rate limit of the API (SVC_RATE_LIMIT requests a minute; CONTRACT.md "Rate-limit headers"). */
  rateLimit: RateLimitPolicy;
};

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(
      `${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

function num(env: NodeJS.ProcessEnv, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be a number in ${min}..${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** SVC_OPS_TOKEN: unset or empty is no token; a value is what an HTTP header and a form can carry. */
/** SVC_NODE_NAME: printable, short (it names the process in /readyz, /ops, the logs). */
function nodeName(env: NodeJS.ProcessEnv): string | undefined {
  const v = env.SVC_NODE_NAME;
  if (v === undefined || v === '') return undefined;
  if (!/^[\x21-\x7e]{1,64}$/.test(v))
    throw new ConfigError(
      `SVC_NODE_NAME must be 1..64 printable characters without spaces, got ${JSON.stringify(v.slice(0, 80))}`,
    );
  return v;
}

function trustedProxies(env: NodeJS.ProcessEnv): TrustedProxies {
  try {
    return parseTrustedProxies(env.SVC_TRUSTED_PROXIES);
  } catch (err) {
    throw new ConfigError(
      `SVC_TRUSTED_PROXIES: ${(err as Error).message} (comma-separated addresses or networks, e.g. 127.0.0.1,10.0.0.0/8)`,
    );
  }
}

/** SVC_REPLICA_URLS: comma-separated postgres:// URLs of streaming replicas of DATABASE_URL's server. */
function replicaUrls(env: NodeJS.ProcessEnv): string[] {
  const raw = env.SVC_REPLICA_URLS;
  if (raw === undefined || raw.trim() === '') return [];
  const urls = raw
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  if (urls.length > 8)
    throw new ConfigError(`SVC_REPLICA_URLS names ${urls.length} replicas; at most 8`);
  for (const u of urls) {
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      throw new ConfigError(
        `SVC_REPLICA_URLS: ${JSON.stringify(u.slice(0, 80))} is not a URL (comma-separated postgres://user@host:port/db)`,
      );
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
      throw new ConfigError(
        `SVC_REPLICA_URLS: ${url.protocol} is not postgres: (comma-separated postgres://user@host:port/db)`,
      );
  }
  return urls;
}

function opsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.SVC_OPS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{1,512}$/.test(raw))
    throw new ConfigError(
      'SVC_OPS_TOKEN must be 1 to 512 printable ASCII characters without spaces',
    );
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int(env, 'PORT', 8080, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const baseUrl = (env.BASE_URL || `http://${host}:${port}`).replace(/\/+$/, '');
  try {
    new URL(baseUrl);
  } catch {
    throw new ConfigError(`BASE_URL must be an absolute URL, got ${JSON.stringify(baseUrl)}`);
  }
  const oracle = env.SVC_ORACLE ?? '0';
  if (oracle !== '0' && oracle !== '1')
    throw new ConfigError(`SVC_ORACLE must be 0 or 1, got ${JSON.stringify(oracle)}`);
  const allowPrivate = env.SVC_WEBHOOK_ALLOW_PRIVATE || '0';
  if (allowPrivate !== '0' && allowPrivate !== '1')
    throw new ConfigError(
      `SVC_WEBHOOK_ALLOW_PRIVATE must be 0 or 1, got ${JSON.stringify(allowPrivate)}`,
    );
  return {
    port,
    host,
    baseUrl,
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    timeScale: num(env, 'SVC_TIME_SCALE', 1, 1e-3, 1e6),
    backfillDays: int(env, 'SVC_BACKFILL_DAYS', 30, 0, 3650),
    seed: int(env, 'SVC_SEED', 1, 0, 2 ** 31 - 1),
    oracle: oracle === '1',
    logLevel: env.LOG_LEVEL || 'info',
    shards: int(env, 'SVC_SHARDS', os.availableParallelism(), 1, 64),
    askTimeoutMs: int(env, 'SVC_ASK_TIMEOUT_MS', 10_000, 10, 600_000),
    bodyLimitBytes: int(env, 'SVC_BODY_LIMIT', 1024 * 1024, 1024, 64 * 1024 * 1024),
    mailboxLimit: int(env, 'SVC_MAILBOX_LIMIT', 10_000, 1, 10_000_000),
    catchupLimit: int(env, 'SVC_CATCHUP_LIMIT', 5_000, 1, 1_000_000),
    recordCacheBytes: int(env, 'SVC_RECORD_CACHE_MB', 64, 0, 65_536) * 1024 * 1024,
    workerHeapMb: int(env, 'SVC_WORKER_HEAP_MB', 256, 64, 16_384),
    opsToken: opsToken(env),
    webhookAllowPrivate: allowPrivate === '1',
    trustedProxies: trustedProxies(env),
    nodeName: nodeName(env),
    webhookTimeoutMs: int(env, 'SVC_WEBHOOK_TIMEOUT_MS', SEND_TIMEOUT_MS, 100, SEND_TIMEOUT_MAX_MS),
    drainMs: int(env, 'SVC_DRAIN_MS', 0, 0, 60_000),
    replicaUrls: replicaUrls(env),
    rateLimit: {
      quota: int(env, 'SVC_RATE_LIMIT', DEFAULT_RATE_LIMIT.quota, 1, 100_000_000),
      windowSeconds: DEFAULT_RATE_LIMIT.windowSeconds,
    },
  };
}
