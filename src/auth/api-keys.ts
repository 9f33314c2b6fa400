// API keys (SPEC.md "Authentication"): the caller brings 80 characters of [A-Za-z0-9]; the first 20
// are the public key id. Only a sha256 of the whole key is stored: keys are random, so a slow
// password hash would add nothing but latency to every authenticated request.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

export const KEY_LENGTH = 80;
export const KEY_ID_LENGTH = 20;
export const KEY_PATTERN = '^[A-Za-z0-9]{80}$';
const KEY_RE = new RegExp(KEY_PATTERN);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export const isKey = (s: string): boolean => KEY_RE.test(s);
export const keyIdOf = (key: string): string => key.slice(0, KEY_ID_LENGTH);
export const keyHash = (key: string): string => createHash('sha256').update(key).digest('hex');

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/** A fresh key from the cryptographic source (POST /agents/token); nothing is stored. */
export function inventKey(): string {
  let key = '';
  for (let i = 0; i < KEY_LENGTH; i++) key += ALPHABET[randomInt(ALPHABET.length)];
  return key;
}

const WORDS = [
  'amber',
  'birch',
  'cobalt',
  'delta',
  'ember',
  'fjord',
  'granite',
  'harbor',
  'indigo',
  'juniper',
  'kestrel',
  'lantern',
  'meadow',
  'nimbus',
  'orchid',
  'pepper',
  'quartz',
  'raven',
  'saffron',
  'tundra',
  'umber',
  'velvet',
  'willow',
  'zephyr',
];

/** Four random words: easy to store beside the key, and to check on /agents/recall. */
export function recallSuggestion(): string {
  return Array.from({ length: 4 }, () => WORDS[randomInt(WORDS.length)]).join('-');
}

/** The credential of a request: `Authorization: Bearer <key>` or `X-API-Token: <key>`. */
export function keyFromHeaders(headers: Record<string, string>): string | null {
  const auth = headers['authorization'];
  if (auth) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1] : null;
  }
  return headers['x-api-token']?.trim() || null;
}
