// Holder passwords: scrypt (memory-hard, in node:crypto) with a random salt per password, stored as
// `scrypt$N$r$p$saltB64$hashB64` so the cost can be raised later without breaking stored hashes.
// Both functions are async: scrypt runs on libuv's pool, and callers run them in an actor's worker
// thread, never on the front end's event loop.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const COST = { N: 16384, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 64;
/** Bounds on parameters read back from storage: a corrupted row must not become a huge computation. */
const MAX = { N: 1 << 20, r: 32, p: 16, keyBytes: 256 } as const;

function derive(
  password: string,
  salt: Buffer,
  keyBytes: number,
  o: { N: number; r: number; p: number },
): Promise<Buffer> {
  // scrypt needs 128 * N * r bytes; leave headroom over Node's 32 MiB default for raised costs.
  const opts: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 256 * o.N * o.r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keyBytes, opts, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join(
    '$',
  );
}

type Parsed = { N: number; r: number; p: number; salt: Buffer; key: Buffer };

function parse(encoded: string): Parsed | null {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const key = Buffer.from(parts[5], 'base64');
  const powerOfTwo = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0;
  if (
    !powerOfTwo ||
    N > MAX.N ||
    !Number.isInteger(r) ||
    r < 1 ||
    r > MAX.r ||
    !Number.isInteger(p) ||
    p < 1 ||
    p > MAX.p
  )
    return null;
  if (!salt.length || !key.length || key.length > MAX.keyBytes) return null;
  return { N, r, p, salt, key };
}

/** True when `password` matches `encoded`; false for a wrong password and for anything unreadable. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const h = parse(encoded);
  if (!h) return false;
  const key = await derive(password, h.salt, h.key.length, h);
  return timingSafeEqual(key, h.key);
}

/**
 * A valid hash of no one's password: verifying against it when the e-mail is unknown costs as much
 * as a real check, so response time does not tell which e-mails are registered.
 */
export const DECOY_HASH =
  'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$' + Buffer.alloc(KEY_BYTES).toString('base64');
