// The per-key rate limit (src/http/rate-limit.ts): whatever the sequence of requests and clock steps
// (fast-check), a key is never allowed more than its quota in one window, every allowed request is
// counted in the headers (r + used = q), t is the seconds left in the key's window, and the keys
// counted stay within their bound.
import t from 'tap';
import fc from 'fast-check';
import { KeyRateLimit, RATE_LIMIT_POLICY, rateLimitedDetail } from '../../src/http/rate-limit.js';

t.test('never more than the quota in a window; the headers say what is left and when', async () => {
  const step = fc.oneof(
    fc.record({ key: fc.constantFrom('a', 'b', 'c') }),
    fc.record({ wait: fc.integer({ min: 0, max: 40 }) }),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 30 }),
      fc.array(step, { maxLength: 80 }),
      (quota, windowSeconds, steps) => {
        let now = 1_000;
        const limit = new KeyRateLimit({ quota, windowSeconds }, () => now);
        // The model: each key's window (its first request's instant) and what it used in it.
        const model = new Map<string, { start: number; used: number }>();
        for (const s of steps) {
          if ('wait' in s) {
            now += s.wait;
            continue;
          }
          let w = model.get(s.key);
          if (!w || now >= w.start + windowSeconds) model.set(s.key, (w = { start: now, used: 0 }));
          const c = limit.take(s.key);
          if (c.allowed !== w.used < quota)
            throw new Error(
              `${s.key}: ${c.allowed ? 'allowed' : 'refused'} with ${w.used} of ${quota} used`,
            );
          if (c.allowed) w.used++;
          const left = w.start + windowSeconds - now;
          const expected = `"${RATE_LIMIT_POLICY}";r=${quota - w.used};t=${left}`;
          if (c.headers.ratelimit !== expected || c.retryAfter !== left)
            throw new Error(`${c.headers.ratelimit} (retry ${c.retryAfter}), expected ${expected}`);
          if (
            c.headers['ratelimit-policy'] !== `"${RATE_LIMIT_POLICY}";q=${quota};w=${windowSeconds}`
          )
            throw new Error(c.headers['ratelimit-policy']);
        }
      },
    ),
  );
});

t.test('the keys counted are bounded: expired windows go first, then the oldest', async (t) => {
  let now = 0;
  const limit = new KeyRateLimit({ quota: 2, windowSeconds: 10 }, () => now, 3);
  for (const k of ['a', 'b', 'c']) limit.take(k);
  limit.take('a');
  t.equal(limit.size, 3);
  t.equal(limit.take('a').allowed, false, 'a used its 2');
  limit.take('d');
  t.equal(limit.size, 3, 'the oldest key made room');
  t.equal(limit.take('a').allowed, true, 'and starts afresh');
  now = 10;
  for (const k of ['e', 'f']) limit.take(k);
  t.ok(limit.size <= 3, `${limit.size} keys`);
  t.throws(() => new KeyRateLimit({ quota: 0, windowSeconds: 60 }, () => 0));
  t.match(
    rateLimitedDetail({ quota: 600, windowSeconds: 60 }, 41),
    /600 requests per 60 s.*retry after 41 s/,
  );
});
