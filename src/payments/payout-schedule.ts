// When a payout requested now is paid (SPEC.md item 10: 3 days after the request). The delay is
// service time, like every interval of the service, while `pay_at` is stored and served in real unix
// seconds, like `closes_at` and `tick_closes_at` (CONTRACT.md "Running it"), so the supervisor
// compares it with the real clock. One conversion, here.
import type { Clock } from '../supervisor/clock.js';
import { PAYOUTS } from './terms.js';

const DAY_SECONDS = 86_400;

/** Real unix seconds at which a payout requested now falls due: PAYOUTS.delay_days of service time from now. */
export function payoutPayAt(clock: Clock): number {
  return clock.toReal(clock.serviceNow() + PAYOUTS.delay_days * DAY_SECONDS);
}
