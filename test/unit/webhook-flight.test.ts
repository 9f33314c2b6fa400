// The webhook attempts in flight (actors/webhooks/flight.ts): bounded, counted per endpoint and per
// account for the claim's caps (a slowed endpoint's cap is one), and a pass waits for the first
// attempt to end, never for the slowest. Attempts are promises the test settles by hand.
import t from 'tap';
import { InFlight } from '../../actors/webhooks/flight.js';
import {
  ACCOUNT_IN_FLIGHT,
  ENDPOINT_IN_FLIGHT,
  type Claimed,
  type Result,
} from '../../actors/webhooks/queue.js';

const claimed = (id: number, webhook: number, account: number, failing = false) =>
  ({ id, webhook_id: webhook, account_id: account, failing }) as Claimed;
const result = (id: number): Result => ({
  id,
  attempts: 1,
  ok: true,
  code: 204,
  error: null,
  next: null,
  endpoint: 1,
});

/** An attempt the test ends when it likes. */
function latch(id: number) {
  let end!: () => void;
  const attempt = new Promise<Result>((resolve) => (end = () => resolve(result(id))));
  return { attempt, end };
}

t.test('places, counts and caps', async (t) => {
  const f = new InFlight(20);
  const held = Array.from({ length: ACCOUNT_IN_FLIGHT }, (_, i) => latch(i + 1));
  // One account: ENDPOINT_IN_FLIGHT on endpoint 10, the rest on endpoint 11; one slowed endpoint (12) of another account.
  held.forEach((h, i) => f.start(claimed(i + 1, i < ENDPOINT_IN_FLIGHT ? 10 : 11, 100), h.attempt));
  const slow = latch(99);
  f.start(claimed(99, 12, 200, true), slow.attempt);
  t.equal(f.size, ACCOUNT_IN_FLIGHT + 1);
  t.equal(f.free, 20 - ACCOUNT_IN_FLIGHT - 1);
  const busy = f.busy();
  t.same(busy.fullAccounts, [100], 'the account at its cap');
  const onEleven = ACCOUNT_IN_FLIGHT - ENDPOINT_IN_FLIGHT;
  t.same(
    busy.fullWebhooks.sort(),
    [10, ...(onEleven >= ENDPOINT_IN_FLIGHT ? [11] : []), 12],
    'the endpoints at their cap, a slowed one at one',
  );
  t.same(
    busy.accounts.find((a) => a.id === 200),
    { id: 200, n: 1 },
  );

  // A pass waits for the first to end, not for all.
  const waiting = f.settled(60_000);
  held[3].end();
  await waiting;
  t.same(
    f.take().map((r) => r.id),
    [4],
    'the one that ended, once',
  );
  t.same(f.take(), []);
  t.equal(f.size, ACCOUNT_IN_FLIGHT);
  t.same(f.busy().fullAccounts, [], 'a place of the account is free again');
  f.restore([result(4)]);
  t.same(
    f.take().map((r) => r.id),
    [4],
    'a result put back is taken again',
  );

  // Nothing in flight, or a result waiting: no wait at all.
  held.forEach((h) => h.end());
  slow.end();
  await f.settled(60_000);
  t.equal(f.take().length, ACCOUNT_IN_FLIGHT, 'every other result');
  t.equal(f.size, 0);
  await f.settled(60_000);
  t.pass('an empty set does not wait');
});
