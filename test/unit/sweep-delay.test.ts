// The supervisor's sweep for payouts and competitions waits for the earliest thing due, never past
// its cap, never negative: an idle node looks rarely, a due payout or window is looked at soon after.
import t from 'tap';
import fc from 'fast-check';
import { sweepDelayMs } from '../../src/supervisor/supervisor.js';

const CAP = 30_000;
const instant = fc.double({ min: 1.7e9, max: 1.9e9, noNaN: true });

t.test('nothing due: the cap', async (t) => {
  t.equal(sweepDelayMs(1.8e9, [], CAP), CAP);
  t.equal(sweepDelayMs(1.8e9, [null, null], CAP), CAP);
});

t.test('something due: just after the earliest, within [0, cap]', async (t) => {
  fc.assert(
    fc.property(instant, fc.array(fc.option(instant), { maxLength: 4 }), (now, dueAts) => {
      const ms = sweepDelayMs(now, dueAts, CAP);
      if (!(ms >= 0 && ms <= CAP && Number.isInteger(ms))) return false;
      const due = dueAts.filter((d): d is number => d !== null);
      if (!due.length) return ms === CAP;
      const earliest = Math.min(...due);
      // Never before the earliest is due unless capped; not later than a second after it.
      return (
        (ms === CAP || now + ms / 1000 >= earliest - 1e-6) &&
        ms <= Math.max(0, Math.ceil((earliest - now) * 1000) + 1000)
      );
    }),
  );
  t.pass('every draw within its bounds');
});

t.test('a payout due in 5 s and a window in 2 s: the window first', async (t) => {
  t.equal(sweepDelayMs(1000, [1005, 1002], CAP), 3000);
  t.equal(sweepDelayMs(1000, [999], CAP), 0, 'overdue: at once');
  t.equal(sweepDelayMs(1000, [5000], CAP), CAP, 'far off: the cap');
});
