// Throttles of the holder's login and web registration, after rate-limiter-flexible's "Login endpoint
// protection" example: consecutive failed logins per (e-mail, client address) pair, which block that
// pair only, and failed logins per client address per day, which block that address for everyone;
// registrations per address. A stranger who guesses a holder's password from elsewhere slows only
// themselves: the holder still logs in from their own address. The counters live in PostgreSQL
// (table rate_limit) so every process on one database shares them, each counted by one atomic
// upsert on the turn's instant (ARCHITECTURE rule 7: the service's clock, never the machine's:
// rate-limiter-flexible, used before, read Date.now()). Agent registration is not throttled: fleets
// register many keys at once.
import { isIPv4, isIPv6 } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ActorError } from '../runtime/actor.js';

/** The limits, in one place: at most `points` per `seconds` (a window from the first count). */
export const HOLDER_LIMITS = {
  /**
   * Consecutive failed logins of one e-mail (registered or not) from one client address: beyond it
   * that pair is refused, the right password too; a successful login clears the pair's count.
   */
  loginFailsPerEmailAndAddress: { points: 10, seconds: 15 * 60 },
  /** Failed logins from one client address in a day, whatever the e-mail: beyond it the address is refused. */
  loginFailsPerAddressPerDay: { points: 100, seconds: 24 * 60 * 60 },
  /** Registration attempts from one client address. */
  registerPerAddress: { points: 20, seconds: 60 * 60 },
} as const;

export const RATE_LIMIT_TABLE = 'rate_limit';

type Name = keyof typeof HOLDER_LIMITS;

/** `at`: the turn's instant, real unix seconds from the service's Clock. */
export type HolderThrottle = {
  /** Refuses (429) while the address, or this e-mail from this address, has used up its failed logins. */
  checkLogin(email: string, address: string, at: number): Promise<void>;
  loginFailed(email: string, address: string, at: number): Promise<void>;
  /** Clears the consecutive failures of this e-mail from this address (not the address's day). */
  loginSucceeded(email: string, address: string): Promise<void>;
  /** Counts a registration attempt; refuses (429) beyond the address's bound. */
  register(address: string, at: number): Promise<void>;
};

/**
 * The counting key of a client address: IPv4 as is (also when IPv4-mapped), IPv6 by its /64, which
 * one subscriber usually holds whole.
 */
export function addressKey(address: string): string {
  const a = address.trim().toLowerCase();
  if (isIPv4(a)) return a;
  if (!isIPv6(a)) return a || 'unknown';
  const groups = expandIPv6(a);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The 8 groups of an IPv6 address ("::" expanded, a dotted IPv4 tail converted). */
function expandIPv6(a: string): number[] {
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  const hex = v4
    ? `${a.slice(0, v4.index)}${((+v4[1] << 8) | +v4[2]).toString(16)}:${((+v4[3] << 8) | +v4[4]).toString(16)}`
    : a;
  const [head, tail] = hex.split('::');
  const groups = (s?: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  if (tail === undefined) return groups(head);
  const h = groups(head);
  const t = groups(tail);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/** The pair's counting key: the address key has no space, so the first space ends it. */
const pairKey = (email: string, address: string) => `${addressKey(address)} ${email}`;

const later = (seconds: number) =>
  seconds <= 60
    ? 'a minute'
    : seconds <= 2 * 60 * 60
      ? `${Math.ceil(seconds / 60)} minutes`
      : `${Math.ceil(seconds / 3600)} hours`;

function tooMany(what: string, msBeforeNext: number): ActorError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ActorError(429, `${what}; try again in ${later(seconds)}`, seconds);
}

/** A counter in its window: `points` counted since the window began, which ends at `expire` (unix ms). */
type Count = { points: number; expire: number };

/**
 * Counts one against `key` at `atMs`: a window of `seconds` starts at the first count and a count
 * after its end starts a new one (one statement: concurrent counts of one key from any process add up).
 */
async function countOne(
  em: EntityManager,
  key: string,
  seconds: number,
  atMs: number,
): Promise<Count> {
  const [row] = await em.execute<Count[]>(
    `insert into rate_limit as r (key, points, expire) values (?, 1, ?)
     on conflict (key) do update set
       points = case when r.expire is null or r.expire <= ? then 1 else r.points + 1 end,
       expire = case when r.expire is null or r.expire <= ? then excluded.expire else r.expire end
     returning r.points, r.expire::float8 as expire`,
    [key, atMs + seconds * 1000, atMs, atMs],
  );
  return row;
}

/** The count of `key` in its window at `atMs`; none once the window has ended. */
async function countOf(em: EntityManager, key: string, atMs: number): Promise<Count | undefined> {
  const [row] = await em.execute<Count[]>(
    'select points, expire::float8 as expire from rate_limit where key = ? and expire > ?',
    [key, atMs],
  );
  return row;
}

/** Ended windows, a bounded batch at a time: the table keeps only live counts. */
async function sweepEnded(em: EntityManager, atMs: number): Promise<void> {
  await em.execute(
    'delete from rate_limit where key in (select key from rate_limit where expire <= ? limit ?)',
    [atMs, SWEEP_BATCH],
  );
}
const SWEEP_BATCH = 1000;
/** A worker sweeps ended windows at most this often (service time), on a failed login or a registration. */
const SWEEP_EVERY_MS = 5 * 60_000;

/**
 * Counters on the turn's EntityManager outside any transaction: a count must outlive the turn's
 * refused answer, and commits at once.
 */
export function holderThrottle(em: EntityManager): HolderThrottle {
  const key = (name: Name, k: string) => `${name}:${k}`;
  const usedUp = (c: Count | undefined, name: Name) =>
    c !== undefined && c.points >= HOLDER_LIMITS[name].points;
  const count = async (name: Name, k: string, at: number) => {
    const atMs = Math.round(at * 1000);
    if (atMs - lastSweepMs >= SWEEP_EVERY_MS || atMs < lastSweepMs) {
      lastSweepMs = atMs;
      await sweepEnded(em, atMs);
    }
    return countOne(em, key(name, k), HOLDER_LIMITS[name].seconds, atMs);
  };

  return {
    async checkLogin(email, address, at) {
      const atMs = Math.round(at * 1000);
      const [a, p] = await Promise.all([
        countOf(em, key('loginFailsPerAddressPerDay', addressKey(address)), atMs),
        countOf(em, key('loginFailsPerEmailAndAddress', pairKey(email, address)), atMs),
      ]);
      if (usedUp(a, 'loginFailsPerAddressPerDay'))
        throw tooMany('too many failed logins from your address', a!.expire - atMs);
      if (usedUp(p, 'loginFailsPerEmailAndAddress'))
        throw tooMany(
          'too many failed logins for this account from your address',
          p!.expire - atMs,
        );
    },
    async loginFailed(email, address, at) {
      await count('loginFailsPerEmailAndAddress', pairKey(email, address), at);
      await count('loginFailsPerAddressPerDay', addressKey(address), at);
    },
    async loginSucceeded(email, address) {
      await em.execute('delete from rate_limit where key = ?', [
        key('loginFailsPerEmailAndAddress', pairKey(email, address)),
      ]);
    },
    async register(address, at) {
      const c = await count('registerPerAddress', addressKey(address), at);
      // The bound's own attempt passes; the one after it is refused (and still counted).
      if (c.points > HOLDER_LIMITS.registerPerAddress.points)
        throw tooMany('too many registrations from your address', c.expire - Math.round(at * 1000));
    },
  };
}

/** When this worker last swept ended windows (service time, unix ms). */
let lastSweepMs = Number.NEGATIVE_INFINITY;
