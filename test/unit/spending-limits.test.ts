// The spending limits' decision (actors/money/limits.ts), by property (fast-check): an ISO week
// starts on the Monday 00:00 UTC at or before the instant; an order is refused exactly when some
// limit fails, naming the first that fails with its figures (spent + remaining = the limit while
// within it); expires_at refuses from its instant on.
import t from 'tap';
import fc from 'fast-check';
import {
  NO_LIMITS,
  dayStart,
  limitChecks,
  limitRefusal,
  weekStart,
  type Limits,
} from '../../actors/money/limits.js';

const instant = fc.integer({ min: 0, max: 4_102_444_800 });

t.test('weekStart: the Monday 00:00 UTC of the instant’s ISO week', async () => {
  fc.assert(
    fc.property(instant, (at) => {
      const w = weekStart(at);
      const d = new Date(w * 1000);
      if (d.getUTCDay() !== 1 || w % 86_400 !== 0) throw new Error(`${w} is not a Monday 00:00`);
      if (!(w <= at && at < w + 7 * 86_400)) throw new Error(`${at} outside the week from ${w}`);
      if (dayStart(at) < w) throw new Error('the day starts before its week');
    }),
  );
});

const cents = fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: null });
const limitsArb: fc.Arbitrary<Limits> = fc.record({
  maxOrderCents: cents,
  maxDayCents: cents,
  maxWeekCents: cents,
  markets: fc.option(fc.subarray(['m15', 'h2', 'h10', 'd1'], { minLength: 1 }), { nil: null }),
  expiresAt: fc.option(instant, { nil: null }),
});

t.test('refused exactly when a limit fails, naming the first with its figures', async () => {
  fc.assert(
    fc.property(
      limitsArb,
      fc.integer({ min: 0, max: 50_000 }),
      fc.integer({ min: 0, max: 50_000 }),
      fc.constantFrom('m15', 'h2', 'h10', 'd1'),
      fc.integer({ min: 1, max: 60_000 }),
      instant,
      (l, day, extra, market, total, at) => {
        const spent = { dayCents: day, weekCents: day + extra };
        const checks = limitChecks(l, spent, market, total, at);
        const refusal = limitRefusal(l, spent, market, total, at);
        const failed = checks.find((c) => !c.ok);
        if (!!failed !== !!refusal) throw new Error('a refusal without a failed limit, or none');
        if (failed && refusal && refusal.facts.limit !== failed.limit)
          throw new Error(`refused for ${refusal.facts.limit}, first failed ${failed.limit}`);
        for (const c of checks) {
          if (
            (c.limit === 'max_day' || c.limit === 'max_week') &&
            c.spent! <= (c.limit_value as number)
          ) {
            const sum = Math.round((c.spent! + c.remaining!) * 100);
            if (sum !== Math.round((c.limit_value as number) * 100))
              throw new Error(
                `${c.limit}: spent + remaining = ${sum / 100}, limit ${c.limit_value}`,
              );
          }
          if (c.limit === 'expires_at' && c.ok !== at < (c.limit_value as number))
            throw new Error('expires_at refuses from its instant on');
        }
      },
    ),
  );
  t.same(
    limitChecks(NO_LIMITS, { dayCents: 5, weekCents: 5 }, 'm15', 100, 0),
    [],
    'no limit set, nothing checked',
  );
});
