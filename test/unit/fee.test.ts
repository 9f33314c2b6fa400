// The month's participation fee is decided in one module (src/payments/fee.ts): whether a
// checkout carries it, its amount, and what the holder pays. Held two ways:
// - as properties: for any goods total and fee state, what the pages show the holder (holder_pays,
//   the pay forms' one total) is what the ledger then charges, by card or balance, through a
//   purchase (chargeEntries) or the order batch (batchFeeDue + chargeBatch); a second copy of the
//   rule that drifted (a page adding the fee its own way, the batch deciding it its own way) fails;
// - against the sources: the fee's amount, month and key are named nowhere else.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import {
  MONTHLY_FEE,
  MONTHLY_FEE_CENTS,
  feeDue,
  feeKey,
  feeMonth,
  feeMonthAt,
  holderPays,
  holderPaysCents,
} from '../../src/payments/fee.js';
import { MONTHLY_FEE as SERVED_TERMS } from '../../src/payments/terms.js';
import { batchFeeDue, chargeBatch, chargeEntries } from '../../actors/money/charge.js';
import { centsToNumber, numberToCents } from '../../src/engine/index.js';
import { usd } from '../../src/web/answers.js';
import { ROOT } from '../helpers/root.js';

const prop = (p: fc.IProperty<any>) => fc.assert(p, { numRuns: 500 });
const goodsArb = fc.integer({ min: 1, max: 10_000_000_00 });
const sum = (xs: { amount_cents: number }[]) => xs.reduce((s, e) => s + e.amount_cents, 0);

t.test('the amount: one declaration, served as the terms say', async (t) => {
  t.equal(MONTHLY_FEE.amount, centsToNumber(MONTHLY_FEE_CENTS));
  t.equal(SERVED_TERMS, MONTHLY_FEE, "the payment terms serve the fee module's amount");
  t.equal(feeDue(false), MONTHLY_FEE_CENTS, "due: the month's fee");
  t.equal(feeDue(true), 0, 'charged: nothing');
});

t.test(
  'what the page says the holder pays is what the ledger charges, for any goods and fee state',
  async () => {
    prop(
      fc.property(
        goodsArb,
        fc.boolean(),
        fc.constantFrom('card' as const, 'balance' as const),
        (goods, charged, method) => {
          const pays = holderPays(goods, charged);
          const cents = holderPaysCents(goods, charged);
          // The page's figure (pay_total / pay_amount, holder_pays.total) in cents, and as shown.
          const pageCents = numberToCents(pays.total);
          if (pageCents !== cents.total || usd(pays.total) !== (cents.total / 100).toFixed(2))
            return false;
          if (numberToCents(pays.goods) + numberToCents(pays.participation_fee) !== pageCents)
            return false;
          // A purchase (purchase link, cart): the kernel's entries with the fee it decides.
          const entries = chargeEntries(
            7,
            [{ ref: 'order:1', cents: goods }],
            feeDue(charged),
            method,
            'order:1',
          );
          const ledgerCents =
            method === 'card'
              ? sum(entries.filter((e) => e.kind === 'card_charge'))
              : -sum(entries);
          if (ledgerCents !== pageCents) return false;
          if (-sum(entries.filter((e) => e.kind === 'monthly_fee')) !== cents.fee) return false;
          return true;
        },
      ),
    );
  },
);

t.test('the order batch decides the fee as the pages do, month by month', async (t) => {
  const atArb = fc.integer({ min: Date.UTC(2020, 0, 1) / 1000, max: Date.UTC(2040, 0, 1) / 1000 });
  prop(
    fc.property(
      goodsArb,
      fc.boolean(),
      fc.integer({ min: 1, max: 1e9 }),
      atArb,
      (goods, charged, holder, at) => {
        const chargedFees = new Set(charged ? [feeKey(holder, at)] : []);
        const fee = batchFeeDue(chargedFees, holder, at);
        const booked = -sum(
          chargeBatch([{ accountId: 3, orderId: 9, totalCents: goods, feeCents: fee }]),
        );
        return (
          fee === holderPaysCents(goods, charged).fee &&
          booked === numberToCents(holderPays(goods, charged).total)
        );
      },
    ),
  );
  t.equal(feeMonthAt(Date.UTC(2026, 10, 30, 23, 59, 59) / 1000), '2026-11');
  t.equal(feeMonthAt(Date.UTC(2026, 11, 1) / 1000), '2026-12', 'a new month owes the fee again');
  t.equal(
    feeKey(42, Date.UTC(2026, 11, 1) / 1000),
    `42/${feeMonth(new Date(Date.UTC(2026, 11, 1)))}`,
  );
});

// --- named in one module ----------------------------------------------------------------------

const root = ROOT;
const FEE_MODULE = 'src/payments/fee.ts';
/** The kernel charges the amount (the fee row it inserts, its postconditions): it may name it. */
const KERNEL = 'actors/money/charge.ts';
const sources = ['src', 'actors'].flatMap((dir) =>
  fs
    .readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(root, path.join(e.parentPath, e.name))),
);
const code = (file: string) =>
  fs
    .readFileSync(path.join(root, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[\s;])\/\/.*$/gm, '$1');
const hits = (re: RegExp, except: string[]) =>
  sources
    .filter((f) => !except.includes(f))
    .flatMap((f) => (code(f).match(re) ?? []).map((m) => `${f}: ${m}`));

t.test('the scanner finds a restated rule (so the test below can fail)', async (t) => {
  const bad =
    "const pay = total + (feeDue ? fee : 0); const m = feeMonth(new Date(at * 1000)); const k = `${h}/${feeMonth(d)}`; json_agg(holder_id || '/' || month)";
  t.ok(/\bfeeMonth\(/.test(bad) && /'\/'\s*\|\|\s*month/.test(bad));
});

t.test("the month's fee is named in one module", async (t) => {
  t.same(
    hits(/\bMONTHLY_FEE_CENTS\b/g, [FEE_MODULE, KERNEL]),
    [],
    'the amount in cents: src/payments/fee.ts (charged by the kernel)',
  );
  t.same(hits(/\bMONTHLY_FEE\s*=/g, [FEE_MODULE]), [], "the served amount is the fee module's");
  t.same(hits(/\bfeeMonth\(/g, [FEE_MODULE]), [], 'the fee month of an instant is feeMonthAt');
  t.same(
    hits(/'\/'\s*\|\|\s*month|\/\$\{\s*feeMonth/g, [FEE_MODULE]),
    [],
    'the key of a charged fee is feeKey / feeKeySql',
  );
  t.same(hits(/'participation_fee'/g, [FEE_MODULE]), [], 'holder_pays in SQL is holderPaysSql');
  // The schemas describe the field (src/schemas/, the generated client); a receipt names the fee its payment carried.
  const described = sources.filter(
    (f) => f.startsWith('src/schemas/') || f.startsWith('src/client/'),
  );
  t.same(
    hits(/participation_fee:/g, [FEE_MODULE, 'actors/money/receipts.ts', ...described]),
    [],
    'holder_pays is built by holderPays',
  );
});
