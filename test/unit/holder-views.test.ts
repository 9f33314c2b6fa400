// The holder pages' view helpers (issue 29): the console's plain words, its balance history, the
// open positions' value and the waiting list; the checkout's one total and its redirects; the
// risk box's colour, headline and the chart's range.
import t from 'tap';
import { LEDGER_WORDS, EVENT_WORDS, balanceHistory, openValue, refWords, waitingView, wordsOf } from '../../src/http/console-view.js';
import { cardOf, cartDonePath, donePath, paidCardView, payTotal } from '../../src/http/checkout-view.js';
import { chartRange, lossHeadline, recordClass } from '../../src/http/deal-facts.js';
import { TIMELINE_KINDS } from '../../src/schemas/index.js';
import { LEDGER_KINDS } from '../../orm/entities/trading.js';

t.test('every ledger kind and timeline event has words; refs read as words', async (t) => {
  for (const k of LEDGER_KINDS) t.ok(LEDGER_WORDS[k] && !LEDGER_WORDS[k].includes('_'), `ledger ${k}: ${LEDGER_WORDS[k]}`);
  for (const k of TIMELINE_KINDS) t.ok(EVENT_WORDS[k] && !EVENT_WORDS[k].includes('_'), `event ${k}: ${EVENT_WORDS[k]}`);
  t.equal(wordsOf(LEDGER_WORDS, 'new_kind_later'), 'new kind later', 'an unknown kind still without underscores');
  t.equal(refWords('order:17'), 'order 17');
  t.equal(refWords('topup:visa-4242'), 'top-up visa-4242');
  t.equal(refWords('Card charged for order:3 on account 2'), 'Card charged for order 3 on account 2');
  t.equal(refWords(null), '');
});

t.test('balance history: each account\'s latest balance summed; the result leaves money moved in and out aside', async (t) => {
  const at = 1_800_000_000;
  const h = balanceHistory([
    // newest first, as the ledger serves it; one instant's entries in the order of their ids
    { id: 3, created_at: at, account_id: 2, kind: 'monthly_fee', amount: -15, balance_after: 0 },
    { id: 2, created_at: at, account_id: 2, kind: 'order_debit', amount: -10, balance_after: 15 },
    { id: 1, created_at: at, account_id: 2, kind: 'card_charge', amount: 25, balance_after: 25 },
    { id: 0, created_at: at - 60, account_id: 1, kind: 'topup', amount: 50, balance_after: 50 },
  ]);
  t.same(h.map((p) => p.balance), [50, 75, 65, 50]);
  t.same(h.map((p) => p.result), [0, 0, -10, -25]);
});

t.test('open positions: at cost, unsold units at resale price, P&L so far, in cents', async (t) => {
  t.same(openValue([
    { qty_left: 2, list_price: 10.1, cost_basis: 25.55, pnl_so_far: -3.3 },
    { qty_left: 0, list_price: 7, cost_basis: 14.45, pnl_so_far: 1.1 },
  ]), { count: 2, cost: '40.00', resale: '20.20', pnl: '-2.20', pnl_neg: true });
});

t.test('waiting for you: open orders and carts with lines to pay, soonest first; closed ones left out', async (t) => {
  const now = 1000;
  const orders = [
    { id: 1, deal_title: 'A', market: 'h2', qty: 1, total_amount: 5, closes_at: 2000, purchase_url: 'http://x/checkout/aaa' },
    { id: 2, deal_title: 'B', market: 'm15', qty: 2, total_amount: 6, closes_at: 900, purchase_url: 'http://x/checkout/bbb' },
  ];
  const carts = [{
    name: 'Scout\'s cart', checkout_url: 'http://x/carts/ccc',
    items: [
      { status: 'in_cart', stale: false, closes_at: 1500, total: 3.5 },
      { status: 'ordered', stale: false, closes_at: 1200, total: 9 },
      { status: 'in_cart', stale: true, closes_at: 800, total: 1 },
    ],
  }] as any;
  const w = waitingView(orders, carts, now);
  t.same(w.map((i) => i.href), ['/carts/ccc', '/checkout/aaa']);
  t.same(w.map((i) => i.amount), ['3.50', '5.00']);
  t.match(w[0].countdown, /^closes in 500 s/);
});

t.test('checkout: one total in cents; the redirects name the card, never the number', async (t) => {
  t.equal(payTotal(12.28, true, 15), '27.28');
  t.equal(payTotal(0.1, true, 0.2), '0.30', 'no floating-point drift');
  t.equal(payTotal(12.28, false, 15), '12.28');
  t.same(cardOf({ method: 'new_card', card_id: null, number: '4242 4242 4242 4242' }), { last4: '4242', save: false });
  t.same(cardOf({ method: 'new_card', card_id: null, number: '4242 4242 4242 4242', save_card: 'on' }), { last4: '4242', save: true });
  t.same(cardOf({ method: 'card', card_id: 7, number: '' }), { cardId: 7 });
  t.equal(cardOf({ method: 'balance', card_id: null, number: '' }), null);
  t.equal(donePath('tok', { last4: '4242' }), '/checkout/tok/done?card=4242');
  t.equal(donePath('tok', null), '/checkout/tok/done');
  t.equal(donePath('tok', { last4: '4242', save: true }), '/checkout/tok/done?card=4242&saved=1', 'what the holder asked: the page checks it');
  t.equal(cartDonePath('tok', [3], { last4: '4444', save: true }, false), '/carts/tok/done?orders=3&card=4444&saved=1');
  t.equal(cartDonePath('tok', [3, 4], { cardId: 9 }, true), '/carts/tok/done?orders=3,4&card_id=9&fee=1');
});

t.test('the confirmation says a card is stored only when the holder\'s stored cards hold it', async (t) => {
  const visa = { id: 5, brand: 'visa', last4: '4242', exp_month: 3, exp_year: 2031 };
  t.match(paidCardView({ card: '4242', saved: '1' }, [visa]), { card: 'visa •••• 4242', card_kept: 'visa •••• 4242, 03/31', card_not_kept: false });
  t.match(paidCardView({ card: '4242' }, [visa]), { card: '•••• 4242', card_kept: null, card_not_kept: true }, 'not asked: not said to be stored');
  t.match(paidCardView({ card: '1111', saved: '1' }, [visa]), { card: '•••• 1111', card_kept: null, card_not_kept: true }, 'asked, but not among them');
  t.match(paidCardView({ card_id: 5 }, [visa]), { card: 'visa •••• 4242', card_was_stored: true, card_not_kept: false });
  t.match(paidCardView({}, [visa]), { card: null, card_kept: null, card_not_kept: false, card_was_stored: false }, 'the balance paid');
});

t.test('risk: the box\'s colour comes from the record, never a gain; the headline says what can be lost; the chart runs a little past the quantity', async (t) => {
  t.equal(recordClass(undefined), 'unknown', 'no record of the family');
  t.equal(recordClass({ settled: 0, downside_rate: null, mean_pnl: null }), 'unknown', 'no settled trade');
  t.equal(recordClass({ settled: 10, downside_rate: 0, mean_pnl: 12 }), 'mixed', 'every settled trade gained: still not a promise');
  t.equal(recordClass({ settled: 10, downside_rate: 0.2, mean_pnl: 3 }), 'mixed');
  t.equal(recordClass({ settled: 10, downside_rate: 0.5, mean_pnl: 3 }), 'loss', 'half hit by a downside');
  t.equal(recordClass({ settled: 10, downside_rate: 0.1, mean_pnl: -0.5 }), 'loss', 'a losing mean');
  t.equal(lossHeadline(103.62, 2, 0.02), 'You pay 103.62 USD for 2 units and can lose all of it, plus a holding fee of 0.02 USD a unit for each session a unit stays unsold; units still unsold at the end become your goods.');
  t.equal(chartRange(3, 34), 7, 'an order of 3: up to 7 of 34');
  t.equal(chartRange(10, 34), 20);
  t.equal(chartRange(3, 4), 4, 'never past the deal\'s maximum');
});
