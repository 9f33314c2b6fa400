// The guide's "Money and time" (llms.txt, /docs/agents, the manifest's money_and_time):
// the fees it states are the engine's and the payment terms' own numbers, and under a time scale
// it says how long a session really lasts, the figure a client must plan with.
import t from 'tap';
import { MARKETS, MARKET_IDS } from '../../src/engine/index.js';
import { MONTHLY_FEE } from '../../src/payments/terms.js';
import { marketsSection, moneyAndTimeSection } from '../../src/docs/guide.js';
import { RoutePaths } from '../../src/docs/route-paths.js';

const at = new RoutePaths(
  'https://m.example.org',
  ['/api/v1/manifest', '/api/v1/account', '/api/v1/markets/{market_id}'].map((path) => ({
    method: 'GET',
    path,
  })),
);

t.test('the fees are stated by their definitions', async (t) => {
  const [fulfilment, monthly, holding] = moneyAndTimeSection(at).items;
  for (const id of MARKET_IDS) {
    t.match(
      fulfilment,
      `${id} ${(MARKETS[id].fees.fulfilment_per_unit_cents / 100).toFixed(2)}`,
      `${id}'s fulfilment fee`,
    );
    t.match(
      holding,
      `${id} ${(MARKETS[id].fees.holding_per_unit_session_cents / 100).toFixed(2)}`,
      `${id}'s holding fee`,
    );
  }
  t.match(monthly, `${MONTHLY_FEE.amount.toFixed(2)} USD, once per calendar month per holder`);
  t.match(monthly, /not inside total_amount/, 'it says the monthly fee is on top of the order');
  t.match(
    monthly,
    /A receipt's "fee" is this monthly fee, not the order's fee_amount/,
    'and which fee is which',
  );
});

/** The section's sentence about time (the one that starts "Time:"). */
const timeItem = (scale: number) =>
  moneyAndTimeSection(at, scale).items.find((i) => i.startsWith('Time:'))!;

t.test(
  'time: at scale 1 market time is real; at 300 a session lasts its interval / 300 real seconds',
  async (t) => {
    t.match(timeItem(1), /time_scale 1 \(market time is real time\)/);
    t.notMatch(
      marketsSection(1).items.join('\n'),
      /real time here/,
      'no conversion to state at scale 1',
    );
    t.match(timeItem(300), /a session lasts interval_seconds \/ 300 real seconds/);
    const m15 = marketsSection(300).items.find((i) => i.startsWith('m15'))!;
    t.match(
      m15,
      `a session every ${MARKETS.m15.interval_seconds} s of market time (${MARKETS.m15.interval_seconds / 300} s of real time here`,
      'm15: 900 s is 3 s here',
    );
  },
);
