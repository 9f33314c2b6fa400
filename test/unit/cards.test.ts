// Demo cards (CONTRACT.md "Test cards"): approved, declined (402) and mistyped (400) cards; spaces
// ignored; expiry through the end of its month; Luhn as a property.
import t from 'tap';
import fc from 'fast-check';
import {
  DECLINED_DETAIL,
  cardBrand,
  checkCard,
  luhnValid,
  parseExpiry,
} from '../../src/payments/cards.js';

const NOW = new Date('2026-11-22T12:00:00Z');
const card = (number: string, exp = '12/30', cvc = '123') => checkCard({ number, exp, cvc }, NOW);

/** Appends the Luhn check digit to a string of digits. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

t.test('the test cards of the contract', async (t) => {
  t.same(card('4242 4242 4242 4242'), {
    ok: true,
    card: { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030 },
  });
  t.same(card('4000 0000 0000 0002'), { ok: false, status: 402, detail: DECLINED_DETAIL });
  t.match(
    DECLINED_DETAIL,
    /^card declined: .*4242 4242 4242 4242/,
    'the decline names the approved test card',
  );
  t.same(
    card('4000000000000002', '01/20', 'x'),
    { ok: false, status: 402, detail: DECLINED_DETAIL },
    'declined whatever the expiry',
  );
  const other = card('5555 5555 5555 4444', '1/27', '999');
  t.same(other, {
    ok: true,
    card: { brand: 'mastercard', last4: '4444', expMonth: 1, expYear: 2027 },
  });
});

t.test('mistyped cards answer 400 with a clear detail', async (t) => {
  const cases: [string, string, string, RegExp][] = [
    ['4242 4242 4242 4241', '12/30', '123', /not valid/],
    ['', '12/30', '123', /enter a card number/],
    ['4242-4242-4242-4242', '12/30', '123', /12 to 19 digits/],
    ['4242', '12/30', '123', /12 to 19 digits/],
    ['4242 4242 4242 4242', '10/26', '123', /expired/],
    ['4242 4242 4242 4242', '13/30', '123', /MM\/YY/],
    ['4242 4242 4242 4242', '1230', '123', /MM\/YY/],
    ['4242 4242 4242 4242', '', '123', /MM\/YY/],
    ['4242 4242 4242 4242', '12/30', '12', /cvc/],
    ['4242 4242 4242 4242', '12/30', 'abc', /cvc/],
  ];
  for (const [number, exp, cvc, detail] of cases) {
    const r = checkCard({ number, exp, cvc }, NOW);
    t.equal(r.ok, false, `${number} ${exp} ${cvc}`);
    if (!r.ok) {
      t.equal(r.status, 400);
      t.match(r.detail, detail);
    }
  }
});

t.test('a card is good through the last day of its expiry month', async (t) => {
  t.equal(card('4242424242424242', '11/26').ok, true, 'this month');
  t.equal(card('4242424242424242', '11/2026').ok, true, 'four-digit year');
  t.equal(card('4242424242424242', '10/26').ok, false, 'last month');
  t.equal(
    checkCard(
      { number: '4242424242424242', exp: '11/26', cvc: '123' },
      new Date('2026-12-01T00:00:00Z'),
    ).ok,
    false,
    'the day after',
  );
  t.same(parseExpiry(' 07 / 29 '), { month: 7, year: 2029 });
  t.equal(parseExpiry('00/29'), null);
});

t.test('brands by prefix', async (t) => {
  t.equal(cardBrand('4111111111111111'), 'visa');
  t.equal(cardBrand('2221000000000009'), 'mastercard');
  t.equal(cardBrand('378282246310005'), 'amex');
  t.equal(cardBrand('6011111111111117'), 'discover');
  t.equal(cardBrand('3530111333300000'), 'card');
});

t.test(
  'property: a number with its check digit is approved; any one-digit change is refused',
  async () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[1-9]\d{11,17}$/),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (body, pos, delta) => {
          const number = withCheckDigit(body);
          if (number === '4000000000000002') return;
          const ok = card(number.replace(/(\d{4})/g, '$1 '));
          if (!ok.ok || ok.card.last4 !== number.slice(-4))
            throw new Error(`${number} refused: ${JSON.stringify(ok)}`);
          // Changing one digit always breaks the Luhn sum (it detects every single-digit error).
          const i = pos % number.length;
          const changed =
            number.slice(0, i) + ((Number(number[i]) + delta) % 10) + number.slice(i + 1);
          const bad = card(changed);
          if (bad.ok || bad.status !== 400) throw new Error(`${changed} accepted`);
        },
      ),
    );
  },
);
