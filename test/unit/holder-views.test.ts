// The holder pages' view helpers: the console's plain words, its balance history, the
// open positions' value and the waiting list; the checkout's one total and its redirects; the
// risk box's colour, headline and the chart's range.
import t from 'tap';
import fc from 'fast-check';
import {
  FIGURES,
  LEDGER_WORDS,
  EVENT_WORDS,
  balanceChart,
  openView,
  refWords,
  waitingView,
  wordsOf,
} from '../../src/web/console-view.js';
import { MOVED_KINDS } from '../../actors/holder/messages.js';
import { cardOf, cartDonePath, donePath, paidCardView } from '../../src/web/checkout-view.js';
import { holderPays } from '../../src/payments/fee.js';
import {
  chartRange,
  lossHeadline,
  recordClass,
  riskWords,
  similarWords,
} from '../../src/web/deal-facts.js';
import { TIMELINE_KINDS } from '../../src/schemas/index.js';
import { LEDGER_KINDS } from '../../orm/entities/trading.js';

t.test('every ledger kind and timeline event has words; refs read as words', async (t) => {
  for (const k of LEDGER_KINDS)
    t.ok(LEDGER_WORDS[k] && !LEDGER_WORDS[k].includes('_'), `ledger ${k}: ${LEDGER_WORDS[k]}`);
  for (const k of TIMELINE_KINDS)
    t.ok(EVENT_WORDS[k] && !EVENT_WORDS[k].includes('_'), `event ${k}: ${EVENT_WORDS[k]}`);
  t.equal(
    wordsOf(LEDGER_WORDS, 'new_kind_later'),
    'new kind later',
    'an unknown kind still without underscores',
  );
  t.equal(refWords('order:17'), 'order 17');
  t.equal(refWords('topup:visa-4242'), 'top-up visa-4242');
  t.equal(
    refWords('Card charged for order:3 on account 2'),
    'Card charged for order 3 on account 2',
  );
  t.equal(refWords(null), '');
});

t.test(
  "the balance chart: the window's points in USD from cents, oldest left; its caption says what came before it",
  async (t) => {
    const at = 1_800_000_000;
    const history = [
      { id: 7, at, balance_cents: 5000, result_cents: -1500 },
      { id: 9, at: at + 60, balance_cents: 3990, result_cents: -2510 },
    ];
    const chart = balanceChart({
      history,
      ledger: { entries: 9, balance_cents: 3990, result_cents: -2510 },
    })!;
    t.match(
      chart,
      'total balance from 50.00 to 39.90',
      'the balance runs from the first point to the last',
    );
    t.match(
      chart,
      'trading result from -15.00 to -25.10',
      'the result starts from every entry before the window',
    );
    t.match(
      chart,
      'The last 2 of your 9 ledger entries, oldest left: the lines go on from the 7 entries before them.',
    );
    t.match(
      balanceChart({ history, ledger: { entries: 2, balance_cents: 3990, result_cents: -2510 } })!,
      'Your 2 ledger entries, oldest left.',
    );
    t.equal(
      balanceChart({
        history: history.slice(1),
        ledger: { entries: 9, balance_cents: 3990, result_cents: -2510 },
      }),
      null,
      'one point: no chart',
    );
  },
);

t.test(
  'the chart ends at the totals and starts at its first point, for any window (property)',
  async () => {
    const cents = fc.integer({ min: -1e10, max: 1e10 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(cents, cents), { minLength: 2, maxLength: 50 }),
        fc.nat(1000),
        (pts, before) => {
          const history = pts.map(([b, r], i) => ({
            id: i + 1,
            at: 1_800_000_000 + i,
            balance_cents: b,
            result_cents: r,
          }));
          const last = history.at(-1)!;
          const chart = balanceChart({
            history,
            ledger: {
              entries: pts.length + before,
              balance_cents: last.balance_cents,
              result_cents: last.result_cents,
            },
          })!;
          const usd = (c: number) => (c / 100).toFixed(2);
          return (
            chart.includes(
              `total balance from ${usd(history[0].balance_cents)} to ${usd(last.balance_cents)} `,
            ) &&
            chart.includes(
              `trading result from ${usd(history[0].result_cents)} to ${usd(last.result_cents)} `,
            ) &&
            chart.includes(
              before
                ? `The last ${pts.length} of your ${pts.length + before} ledger entries`
                : `Your ${pts.length} ledger entries`,
            )
          );
        },
      ),
    );
  },
);

t.test(
  'open positions: the totals in cents as USD (at cost, unsold units at resale price, P&L so far)',
  async (t) => {
    t.same(
      openView({ count: 101, cost_cents: 4_000_00, resale_cents: 20_20, pnl_so_far_cents: -2_20 }),
      { count: 101, cost: '4000.00', resale: '20.20', pnl: '-2.20', pnl_neg: true },
    );
    t.same(openView({ count: 0, cost_cents: 0, resale_cents: 0, pnl_so_far_cents: 0 }), {
      count: 0,
      cost: '0.00',
      resale: '0.00',
      pnl: '0.00',
      pnl_neg: false,
    });
  },
);

t.test(
  'waiting for you: open orders and carts with lines to pay, soonest first; closed ones left out',
  async (t) => {
    const now = 1000;
    const orders = [
      {
        id: 1,
        deal_title: 'A',
        market: 'h2',
        qty: 1,
        total_amount: 5,
        closes_at: 2000,
        purchase_url: 'http://x/checkout/aaa',
      },
      {
        id: 2,
        deal_title: 'B',
        market: 'm15',
        qty: 2,
        total_amount: 6,
        closes_at: 900,
        purchase_url: 'http://x/checkout/bbb',
      },
    ];
    const carts = [
      {
        name: "Scout's cart",
        checkout_url: 'http://x/carts/ccc',
        items: [
          { status: 'in_cart', stale: false, closes_at: 1500, total: 3.5 },
          { status: 'ordered', stale: false, closes_at: 1200, total: 9 },
          { status: 'in_cart', stale: true, closes_at: 800, total: 1 },
        ],
      },
    ] as any;
    const w = waitingView(orders, carts, now);
    t.same(
      w.map((i) => i.href),
      ['/carts/ccc', '/checkout/aaa'],
    );
    t.same(
      w.map((i) => i.amount),
      ['3.50', '5.00'],
    );
    t.match(w[0].countdown, /^closes in 500 s/);
  },
);

t.test(
  'checkout: one total in cents (src/payments/fee.ts holderPays); the redirects name the card, never the number',
  async (t) => {
    t.equal(holderPays(1228, false).total, 27.28);
    t.equal(holderPays(10, false).total, 15.1, 'no floating-point drift');
    t.equal(holderPays(1228, true).total, 12.28);
    t.same(cardOf({ method: 'new_card', card_id: null, number: '4242 4242 4242 4242' }), {
      last4: '4242',
      save: false,
    });
    t.same(
      cardOf({ method: 'new_card', card_id: null, number: '4242 4242 4242 4242', save_card: 'on' }),
      { last4: '4242', save: true },
    );
    t.same(cardOf({ method: 'card', card_id: 7, number: '' }), { cardId: 7 });
    t.equal(cardOf({ method: 'balance', card_id: null, number: '' }), null);
    t.equal(donePath('tok', { last4: '4242' }), '/checkout/tok/done?card=4242');
    t.equal(donePath('tok', null), '/checkout/tok/done');
    t.equal(
      donePath('tok', { last4: '4242', save: true }),
      '/checkout/tok/done?card=4242&saved=1',
      'what the holder asked: the page checks it',
    );
    t.equal(
      cartDonePath('tok', [3], { last4: '4444', save: true }, false),
      '/carts/tok/done?orders=3&card=4444&saved=1',
    );
    t.equal(
      cartDonePath('tok', [3, 4], { cardId: 9 }, true),
      '/carts/tok/done?orders=3,4&card_id=9&fee=1',
    );
  },
);

t.test(
  "the confirmation says a card is stored only when the holder's stored cards hold it",
  async (t) => {
    const visa = { id: 5, brand: 'visa', last4: '4242', exp_month: 3, exp_year: 2031 };
    t.match(paidCardView({ card: '4242', saved: '1' }, [visa]), {
      card: 'visa •••• 4242',
      card_kept: 'visa •••• 4242, 03/31',
      card_not_kept: false,
    });
    t.match(
      paidCardView({ card: '4242' }, [visa]),
      { card: '•••• 4242', card_kept: null, card_not_kept: true },
      'not asked: not said to be stored',
    );
    t.match(
      paidCardView({ card: '1111', saved: '1' }, [visa]),
      { card: '•••• 1111', card_kept: null, card_not_kept: true },
      'asked, but not among them',
    );
    t.match(paidCardView({ card_id: 5 }, [visa]), {
      card: 'visa •••• 4242',
      card_was_stored: true,
      card_not_kept: false,
    });
    t.match(
      paidCardView({}, [visa]),
      { card: null, card_kept: null, card_not_kept: false, card_was_stored: false },
      'the balance paid',
    );
  },
);

t.test(
  "risk: the box's colour comes from the record, never a gain; the headline says what can be lost; the chart runs a little past the quantity",
  async (t) => {
    t.equal(recordClass(undefined), 'unknown', 'no record of the family');
    const similar = (
      settled: number,
      lost: number,
      downside_events: number,
      median: number | null,
    ) => ({
      settled,
      lost,
      downside_events,
      median_pnl_per_unit: median,
      worst_pnl_per_unit: median,
    });
    t.equal(recordClass(similar(0, 0, 0, null)), 'unknown', 'no settled deal');
    t.equal(
      recordClass(similar(10, 0, 0, 12)),
      'mixed',
      'every settled deal gained: still not a promise',
    );
    t.equal(recordClass(similar(10, 4, 2, 3)), 'mixed');
    t.equal(recordClass(similar(10, 5, 0, 3)), 'loss', 'half lost money');
    t.equal(recordClass(similar(10, 1, 5, 3)), 'loss', 'half hit by a downside');
    t.equal(recordClass(similar(10, 4, 1, -0.5)), 'loss', 'a losing median');
    t.equal(
      lossHeadline(103.62, 2, 0.02),
      'You pay 103.62 USD for 2 units and can lose all of it, plus a holding fee of 0.02 USD a unit for each session a unit stays unsold and, if a downside event hits the deal, a settlement surcharge when its position settles; units still unsold at the end become your goods.',
    );
    t.equal(chartRange(3, 34), 7, 'an order of 3: up to 7 of 34');
    t.equal(chartRange(10, 34), 20);
    t.equal(chartRange(3, 4), 4, "never past the deal's maximum");
  },
);

t.test(
  'how similar deals ended, and the calibration, in words; the low scenario never called a gain',
  async (t) => {
    const none = {
      settled: 0,
      lost: 0,
      downside_events: 0,
      median_pnl_per_unit: null,
      worst_pnl_per_unit: null,
    };
    t.same(
      similarWords('skincare-sets', 48, none, { settled: 0, below_low: 0, below_low_rate: null }),
      {
        ended:
          'the record has no settled deal of skincare-sets in the last 48 sessions, so nothing says how such a deal ends.',
        calibration: "Nor does it say how often results fell below this projection's low scenario.",
      },
    );
    const some = {
      settled: 10,
      lost: 7,
      downside_events: 2,
      median_pnl_per_unit: -0.4,
      worst_pnl_per_unit: -9.1,
    };
    t.same(
      similarWords('skincare-sets', 48, some, { settled: 10, below_low: 7, below_low_rate: 0.7 }),
      {
        ended:
          'of the 10 settled deals of skincare-sets in the last 48 sessions, 7 lost money; per unit bought, the median result was -0.40 USD and the worst -9.10 USD.',
        calibration:
          'On the record, 7 of 10 similar settled deals ended below the low scenario this projection would have given them when they were bought.',
      },
    );
    t.match(
      similarWords(
        'x',
        8,
        { ...some, settled: 1, lost: 0 },
        { settled: 1, below_low: 0, below_low_rate: 0 },
      ).ended,
      /^of the 1 settled deal of x/,
    );
    const risk = riskWords(60, 80, 95, { settled: 10, below_low: 7, below_low_rate: 0.7 });
    t.equal(
      risk,
      'The naive projection puts this order at 60.00 USD in its low scenario, 80.00 USD on its projected path and 95.00 USD in its high scenario; on the record, 7 of 10 similar settled deals ended below the low scenario it would have given them: the low scenario is no floor.',
    );
    t.notMatch(risk, /\b(makes|gain|profit|earn)/i, 'no gain promised');
    t.match(
      riskWords(1, 2, 3, { settled: 0, below_low: 0, below_low_rate: null }),
      /the record has no settled similar deal to check its low scenario against\.$/,
    );
    t.match(
      riskWords(1, 2, 3, { settled: 4, below_low: 0, below_low_rate: 0 }),
      /0 of 4 similar settled deals ended below .*, which promises nothing for this one\.$/,
    );
  },
);

t.test(
  "the overview's figures: one name and a definition each; the trading result names the money moved in and out it leaves aside",
  async (t) => {
    for (const f of Object.values(FIGURES))
      t.ok(f.name && f.says.length > 40, `${f.name} is defined where shown`);
    t.equal(
      new Set(Object.values(FIGURES).map((f) => f.name)).size,
      Object.keys(FIGURES).length,
      'one name per quantity',
    );
    for (const k of MOVED_KINDS)
      t.match(FIGURES.result.says, LEDGER_WORDS[k].toLowerCase(), `it names ${k}`);
  },
);
