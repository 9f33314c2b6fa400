// Demo card payments (CONTRACT.md "Test cards"): a pure check of what the holder typed. Nothing here
// talks to a bank; the only "bank answer" is the one test number that is always declined. What a
// stored card keeps is exactly StoredCard: brand, last 4 digits and expiry.

export type StoredCard = { brand: string; last4: string; expMonth: number; expYear: number };
/** `cvc` absent: a form that has none (SPEC.md's top-up is number, exp and holder), so none is checked. */
export type CardInput = { number: string; exp: string; cvc?: string };
export type CardCheck =
  { ok: true; card: StoredCard } | { ok: false; status: 400 | 402; detail: string };

/** CONTRACT.md "Test cards": the demo bank approves the first and always declines the second. */
export const TEST_CARDS = {
  approved: '4242 4242 4242 4242',
  declined: '4000 0000 0000 0002',
} as const;

/** The test number the demo bank always declines, as typed without spaces. */
export const DECLINED_NUMBER = TEST_CARDS.declined.replace(/ /g, '');

/** The 402 detail of a declined card: the bank's answer, and the card that is approved. */
export const DECLINED_DETAIL = `card declined: this test number is always declined; pay with the approved test card ${TEST_CARDS.approved}`;

/** Luhn (mod 10) check over a string of digits. */
export function luhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Every brand a card can have (cardBrand). */
export const CARD_BRANDS = ['visa', 'mastercard', 'amex', 'discover', 'card'] as const;
export type CardBrand = (typeof CARD_BRANDS)[number];

/** Brand by the issuer prefix; any other Luhn-valid number is an approved generic "card". */
export function cardBrand(digits: string): CardBrand {
  const two = Number(digits.slice(0, 2));
  const four = Number(digits.slice(0, 4));
  if (digits.startsWith('4')) return 'visa';
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'mastercard';
  if (two === 34 || two === 37) return 'amex';
  if (digits.startsWith('6011') || two === 65) return 'discover';
  return 'card';
}

/** `MM/YY` (also `MM/YYYY`, spaces around the slash allowed) → month and four-digit year. */
export function parseExpiry(exp: string): { month: number; year: number } | null {
  const m = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(exp);
  if (!m) return null;
  const month = Number(m[1]);
  const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

/** A card is good through the last day of its expiry month (UTC). */
export function expired(month: number, year: number, now: Date): boolean {
  const y = now.getUTCFullYear();
  return year < y || (year === y && month < now.getUTCMonth() + 1);
}

const refuse = (status: 400 | 402, detail: string): CardCheck => ({ ok: false, status, detail });

/**
 * Checks a typed card. The number is judged first (format, Luhn, the declined test number): the
 * decline is the bank's answer to that number whatever the expiry; then expiry and cvc (when the form has one).
 */
export function checkCard(input: CardInput, now: Date): CardCheck {
  const digits = input.number.replace(/ /g, '');
  if (!digits) return refuse(400, 'enter a card number');
  if (!/^\d{12,19}$/.test(digits)) return refuse(400, 'a card number is 12 to 19 digits');
  if (!luhnValid(digits))
    return refuse(400, 'card number is not valid (check digit mismatch): check for a typo');
  if (digits === DECLINED_NUMBER) return refuse(402, DECLINED_DETAIL);
  const exp = parseExpiry(input.exp);
  if (!exp) return refuse(400, 'expiry must be MM/YY, for example 12/30');
  if (expired(exp.month, exp.year, now))
    return refuse(400, 'card expired: its expiry date has passed');
  if (input.cvc !== undefined && !/^\d{3}$/.test(input.cvc.trim()))
    return refuse(400, 'cvc must be 3 digits');
  return {
    ok: true,
    card: {
      brand: cardBrand(digits),
      last4: digits.slice(-4),
      expMonth: exp.month,
      expYear: exp.year,
    },
  };
}
