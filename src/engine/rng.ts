// Keyed, counter-free randomness for the engine. A stream is named by (seed, ...keys) — e.g.
// (seed, 'm15', tick, 'deal', index) — so any draw can be recomputed on its own, in any order,
// on any machine: no generator state is carried from one session to the next.
//
// The key hashing and the generator (xoshiro128**) use 32-bit integer arithmetic only (Math.imul,
// shifts), which is exact everywhere. Continuous transforms (log, exp, cos, sqrt) go through V8's
// fdlibm ports, which give the same bits on every platform for a given Node major version.

export type Key = string | number;

const GOLDEN = 0x9e3779b9;
const TWO32 = 4294967296;

/** lowbias32 (C. Wellons): a strong 32-bit finaliser. */
export function mix32(x: number): number {
  x >>>= 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

function absorb(h: number, v: number): number {
  return mix32((h ^ mix32(v + GOLDEN)) + 0x632be5ab);
}

function absorbKey(h: number, k: Key): number {
  if (typeof k === 'number') {
    if (!Number.isSafeInteger(k)) throw new RangeError(`rng key must be a safe integer, got ${k}`);
    // Tag 1 = number; low and high words so ticks past 2^32 still hash apart.
    h = absorb(h, 1);
    h = absorb(h, k >>> 0);
    return absorb(h, Math.floor(k / TWO32) >>> 0);
  }
  return absorb(absorb(h, 2), stringDigest(k));
}

// Stream names and market ids repeat millions of times in a backfill: digest each once.
const DIGESTS = new Map<string, number>();

function stringDigest(k: string): number {
  const hit = DIGESTS.get(k);
  if (hit !== undefined) return hit;
  let h = 0x9b05688c;
  for (let i = 0; i < k.length; i++) h = absorb(h, k.charCodeAt(i));
  h = absorb(h, k.length);
  if (DIGESTS.size < 4096) DIGESTS.set(k, h);
  return h;
}

/** 32-bit hash of a key list (lane chooses an independent hash family). */
export function hashKeys(keys: readonly Key[], lane = 0): number {
  let h = mix32(0x243f6a88 + lane * 0x85a308d3);
  for (const k of keys) h = absorbKey(h, k);
  return h;
}

/** Short lowercase hex tag of a key list (used in deal keys). */
export function hexTag(keys: readonly Key[], chars = 6): string {
  return hashKeys(keys, 7).toString(16).padStart(8, '0').slice(0, chars);
}

const LOG_FACT = (() => {
  const t = new Float64Array(256);
  for (let i = 2; i < 256; i++) t[i] = t[i - 1] + Math.log(i);
  return t;
})();

export function logFactorial(k: number): number {
  if (k < 256) return LOG_FACT[k];
  const x = k + 1; // Stirling series for lgamma(k+1)
  return (x - 0.5) * Math.log(x) - x + 0.9189385332046728 + 1 / (12 * x) - 1 / (360 * x * x * x);
}

/** xoshiro128** seeded from two hash lanes of the key list via splitmix32. */
export class Stream {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare = NaN;

  constructor(h1: number, h2: number) {
    let s = h1 ^ mix32(h2);
    const next = () => {
      s = (s + GOLDEN) | 0;
      return mix32(s ^ h2);
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  u32(): number {
    const r = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return r;
  }

  /** Uniform in the open interval (0, 1). */
  uniform(): number {
    return (this.u32() + 0.5) / TWO32;
  }

  /** Integer uniform in lo..hi inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.uniform() * (hi - lo + 1));
  }

  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.uniform();
  }

  bernoulli(p: number): boolean {
    return this.uniform() < p;
  }

  /** Standard normal (Box–Muller; the second value of a pair is kept for the next call). */
  normal(): number {
    if (!Number.isNaN(this.spare)) {
      const z = this.spare;
      this.spare = NaN;
      return z;
    }
    const r = Math.sqrt(-2 * Math.log(this.uniform()));
    const th = 2 * Math.PI * this.uniform();
    this.spare = r * Math.sin(th);
    return r * Math.cos(th);
  }

  /** Gamma(shape, scale 1): Marsaglia–Tsang, boosted for shape < 1. */
  gamma(shape: number): number {
    if (shape < 1) return this.gamma(shape + 1) * Math.pow(this.uniform(), 1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.uniform();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  /** Poisson: multiplication method below 10, PTRS (Hörmann 1993) above. */
  poisson(lambda: number): number {
    if (!(lambda > 0)) return 0;
    if (lambda < 10) {
      const limit = Math.exp(-lambda);
      let k = 0;
      let p = this.uniform();
      while (p > limit) {
        k++;
        p *= this.uniform();
      }
      return k;
    }
    const slam = Math.sqrt(lambda);
    const loglam = Math.log(lambda);
    const b = 0.931 + 2.53 * slam;
    const a = -0.059 + 0.02483 * b;
    const invAlpha = 1.1239 + 1.1328 / (b - 3.4);
    const vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      const u = this.uniform() - 0.5;
      const v = this.uniform();
      const us = 0.5 - Math.abs(u);
      const k = Math.floor(((2 * a) / us + b) * u + lambda + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (
        Math.log(v) + Math.log(invAlpha) - Math.log(a / (us * us) + b) <=
        -lambda + k * loglam - logFactorial(k)
      ) {
        return k;
      }
    }
  }

  /** Overdispersed count: Poisson–gamma (negative binomial) with the given mean and size r;
   *  variance = mean + mean^2 / r. */
  negBinomial(mean: number, size: number): number {
    if (!(mean > 0)) return 0;
    return this.poisson((this.gamma(size) * mean) / size);
  }

  /** Index drawn with probability proportional to weights. */
  weighted(cumulative: Float64Array): number {
    const x = this.uniform() * cumulative[cumulative.length - 1];
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** The stream named by (seed, ...keys). */
export function keyedStream(seed: number, ...keys: Key[]): Stream {
  const all = [seed, ...keys];
  return new Stream(hashKeys(all, 0), hashKeys(all, 1));
}
