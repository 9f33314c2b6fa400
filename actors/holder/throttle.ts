// Throttles of the holder's login and web registration, after rate-limiter-flexible's "Login endpoint
// protection" example: consecutive failed logins per (e-mail, client address) pair, which block that
// pair only, and failed logins per client address per day, which block that address for everyone;
// registrations per address. A stranger who guesses a holder's password from elsewhere slows only
// themselves: the holder still logs in from their own address. The counters live in PostgreSQL
// (table rate_limit, created by a migration) so every process on one database shares them;
// rate-limiter-flexible does the atomic upserts. Agent registration is not throttled: fleets
// register many keys at once.
import { isIPv4, isIPv6 } from 'node:net';
import type { Knex } from '@mikro-orm/postgresql';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
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

export type HolderThrottle = {
  /** Refuses (429) while the address, or this e-mail from this address, has used up its failed logins. */
  checkLogin(email: string, address: string): Promise<void>;
  loginFailed(email: string, address: string): Promise<void>;
  /** Clears the consecutive failures of this e-mail from this address (not the address's day). */
  loginSucceeded(email: string, address: string): Promise<void>;
  /** Counts a registration attempt; refuses (429) beyond the address's bound. */
  register(address: string): Promise<void>;
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
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The 8 groups of an IPv6 address ("::" expanded, a dotted IPv4 tail converted). */
function expandIPv6(a: string): number[] {
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  const hex = v4 ? `${a.slice(0, v4.index)}${((+v4[1] << 8) | +v4[2]).toString(16)}:${((+v4[3] << 8) | +v4[4]).toString(16)}` : a;
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
  seconds <= 60 ? 'a minute' : seconds <= 2 * 60 * 60 ? `${Math.ceil(seconds / 60)} minutes` : `${Math.ceil(seconds / 3600)} hours`;

function tooMany(what: string, msBeforeNext: number): ActorError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ActorError(429, `${what}; try again in ${later(seconds)}`, seconds);
}

/**
 * Counters on the worker's own pool (`db`, the ORM's knex). A count must outlive the turn's refused
 * answer, so the holder's turns count outside their transaction, never holding a connection while
 * they wait for the counter's.
 */
export function createHolderThrottle(db: Knex): HolderThrottle {
  const make = (name: Name) =>
    new RateLimiterPostgres({
      storeClient: db, storeType: 'knex', tableName: RATE_LIMIT_TABLE, tableCreated: true, keyPrefix: name,
      points: HOLDER_LIMITS[name].points, duration: HOLDER_LIMITS[name].seconds,
      // One limiter sweeps the shared table's expired rows (every 5 minutes); the others need not.
      clearExpiredByTimeout: name === 'loginFailsPerEmailAndAddress',
    });
  const byPair = make('loginFailsPerEmailAndAddress');
  const byAddress = make('loginFailsPerAddressPerDay');
  const registrations = make('registerPerAddress');
  const usedUp = (res: RateLimiterRes | null, name: Name) => res !== null && res.consumedPoints >= HOLDER_LIMITS[name].points;

  return {
    async checkLogin(email, address) {
      const [a, p] = await Promise.all([byAddress.get(addressKey(address)), byPair.get(pairKey(email, address))]);
      if (usedUp(a, 'loginFailsPerAddressPerDay')) throw tooMany('too many failed logins from your address', a!.msBeforeNext);
      if (usedUp(p, 'loginFailsPerEmailAndAddress')) throw tooMany('too many failed logins for this account from your address', p!.msBeforeNext);
    },
    async loginFailed(email, address) {
      await Promise.all([byPair.penalty(pairKey(email, address)), byAddress.penalty(addressKey(address))]);
    },
    async loginSucceeded(email, address) {
      await byPair.delete(pairKey(email, address));
    },
    async register(address) {
      try {
        await registrations.consume(addressKey(address));
      } catch (err) {
        if (err instanceof RateLimiterRes) throw tooMany('too many registrations from your address', err.msBeforeNext);
        throw err;
      }
    },
  };
}

const throttles = new WeakMap<Knex, HolderThrottle>();

/** This worker's throttle on its pool, made on first use. */
export function throttleFor(db: Knex): HolderThrottle {
  let throttle = throttles.get(db);
  if (!throttle) throttles.set(db, (throttle = createHolderThrottle(db)));
  return throttle;
}
