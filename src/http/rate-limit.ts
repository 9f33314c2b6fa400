// The per-key rate limit (CONTRACT.md "Rate-limit headers"): every answer of an API route that takes
// an agent's key counts against that key's quota of requests per window, and carries the policy and
// what is left as draft-ietf-httpapi-ratelimit-headers defines them (RateLimit-Policy, RateLimit);
// past the quota, 429 with Retry-After until the window ends. A fixed window per key, opened by its
// first request, counted in this process: behind a balancer each front end counts its own share.
// The instant is the service's Clock (ARCHITECTURE rule 7).

/** The policy's name in the headers, the manifest and llms.txt. */
export const RATE_LIMIT_POLICY = 'per-key';
/** Keys counted at once; beyond it the expired windows are swept, then the oldest dropped (a bound, not a policy). */
export const RATE_LIMIT_MAX_KEYS = 100_000;

export type RateLimitPolicy = { quota: number; windowSeconds: number };
/** SVC_RATE_LIMIT's default: a busy agent reads and orders well within 10 requests a second. */
export const DEFAULT_RATE_LIMIT: RateLimitPolicy = { quota: 600, windowSeconds: 60 };
/** One request counted: whether it is allowed, and the headers its answer carries. */
export type Counted = { allowed: boolean; retryAfter: number; headers: Record<string, string> };

export class KeyRateLimit {
  private readonly windows = new Map<string, { endsAt: number; used: number }>();

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly now: () => number,
    private readonly maxKeys = RATE_LIMIT_MAX_KEYS,
  ) {
    if (!(policy.quota >= 1 && policy.windowSeconds >= 1))
      throw new RangeError(
        `a rate limit needs a quota and a window, got ${JSON.stringify(policy)}`,
      );
  }

  /** Counts one request of `key` now. */
  take(key: string): Counted {
    const at = this.now();
    let w = this.windows.get(key);
    if (!w || w.endsAt <= at) {
      if (!w) this.makeRoom(at);
      w = { endsAt: at + this.policy.windowSeconds, used: 0 };
      this.windows.set(key, w);
    }
    const allowed = w.used < this.policy.quota;
    if (allowed) w.used++;
    const reset = Math.max(1, Math.ceil(w.endsAt - at));
    return {
      allowed,
      retryAfter: reset,
      headers: {
        'ratelimit-policy': `"${RATE_LIMIT_POLICY}";q=${this.policy.quota};w=${this.policy.windowSeconds}`,
        ratelimit: `"${RATE_LIMIT_POLICY}";r=${this.policy.quota - w.used};t=${reset}`,
      },
    };
  }

  /** Keys being counted (the metrics, a test of the bound). */
  get size(): number {
    return this.windows.size;
  }

  private makeRoom(at: number): void {
    if (this.windows.size < this.maxKeys) return;
    for (const [k, w] of this.windows) if (w.endsAt <= at) this.windows.delete(k);
    // Still full: the oldest counted key starts afresh (insertion order is age).
    while (this.windows.size >= this.maxKeys) {
      const oldest = this.windows.keys().next().value as string;
      this.windows.delete(oldest);
    }
  }
}

/** The 429's sentence: the quota, and when the window ends. */
export const rateLimitedDetail = (p: RateLimitPolicy, retryAfter: number) =>
  `rate limit: this key's ${p.quota} requests per ${p.windowSeconds} s are used up; retry after ${retryAfter} s (RateLimit and Retry-After say when)`;
