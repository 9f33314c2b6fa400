// ARCHITECTURE.md rule 10, held against the sources: a holder is charged by one function. Only the
// money kernel (actors/money/charge.ts) writes a card charge, a monthly fee posting or a fee row,
// or decides the month's fee; every real-money path calls it. Scans the sources, so a second
// definition fails here with its file and line.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { codeLines, ROOT, sourceFiles } from '../helpers/source-scan.js';

const KERNEL = 'actors/money/charge.ts';

/** What only the kernel may write. */
const KERNEL_ONLY: [RegExp, string][] = [
  [/\bkind:\s*'card_charge'/, 'writes a card_charge posting'],
  [/\bkind:\s*'monthly_fee'/, 'writes a monthly_fee posting'],
  [/insert\s+into\s+monthly_fee\b/i, 'inserts a monthly fee row'],
  // Its amount is declared in src/payments/fee.ts (the fee's rule: test/unit/fee.test.ts); using it elsewhere is deciding the fee.
  [/\bMONTHLY_FEE_CENTS\b/, "decides the month's fee"],
];

/** The real-money paths and the kernel entry each must call. */
const PATHS: { file: string; calls: RegExp; what: string }[] = [
  {
    file: 'actors/account/actor.ts',
    calls: /\bchargeHolder\(/,
    what: "the purchase link's pay turn",
  },
  {
    file: 'actors/cart/checkout.ts',
    calls: /\bchargeHolder\(/,
    what: 'cart and execute checkouts',
  },
  { file: 'actors/holder/coins.ts', calls: /\bchargeHolder\(/, what: 'coin packs' },
  { file: 'actors/exchange/actor.ts', calls: /\bchargeHolder\(/, what: 'USD exchange purchases' },
  { file: 'actors/account/holder-money.ts', calls: /\bchargeHolder\(/, what: 'top-ups' },
  {
    file: 'actors/account/order-batch.ts',
    calls: /\bchargeBatch\(/,
    what: "the order batch's pay_from_balance",
  },
];

type Finding = { file: string; line: number; what: string; text: string };

/** The fee's rule (its amount, month and decision): it declares and uses the amount, and writes nothing. */
const FEE_RULE = 'src/payments/fee.ts';

export function kernelCrossings(file: string, source: string): Finding[] {
  if (file === KERNEL) return [];
  if (file === FEE_RULE)
    return kernelCrossings('', source)
      .filter((f) => f.what !== "decides the month's fee")
      .map((f) => ({ ...f, file }));
  const out: Finding[] = [];
  for (const { n, text } of codeLines(source)) {
    for (const [re, what] of KERNEL_ONLY)
      if (re.test(text)) out.push({ file, line: n, what, text: text.trim() });
  }
  return out;
}

const show = (f: Finding) => `${f.file}:${f.line}: ${f.what} outside ${KERNEL}\n    ${f.text}`;

t.test('the scanner finds a second charge (so this test can fail)', async (t) => {
  const bad = [
    "entries.push({ account_id: desk, kind: 'card_charge', amount_cents: cents, ref });",
    "if (fee) entries.push({ account_id: desk, kind: 'monthly_fee', amount_cents: -fee, ref });",
    "await em.execute('insert into monthly_fee (holder_id, month) values (?, ?)', [h, m]);",
    'const fee = charged ? 0 : MONTHLY_FEE_CENTS;',
  ].join('\n');
  t.same(
    kernelCrossings('actors/exchange/actor.ts', bad).map((f) => f.line),
    [1, 2, 3, 4],
  );
  t.same(kernelCrossings(KERNEL, bad), [], 'the kernel itself may');
  const reads = [
    "case 'card_charge': return `Card charged for ${r.ref}`;",
    "// kind: 'monthly_fee' in a comment",
    'select created_at from monthly_fee where holder_id = ?',
  ].join('\n');
  t.same(
    kernelCrossings('actors/holder/timeline.ts', reads),
    [],
    'reading postings and fee rows is not charging',
  );
});

t.test(
  'only the money kernel writes a card charge, a fee posting or a fee row, or decides the fee',
  async (t) => {
    const found = ['actors', 'src']
      .flatMap((dir) => sourceFiles(dir))
      .flatMap((f) => kernelCrossings(f, readFileSync(path.join(ROOT, f), 'utf8')));
    t.same(found.map(show), [], found.map(show).join('\n'));
  },
);

t.test('every real-money path charges through the kernel', async (t) => {
  for (const p of PATHS) {
    const code = codeLines(readFileSync(path.join(ROOT, p.file), 'utf8'))
      .map((l) => l.text)
      .join('\n');
    t.match(code, p.calls, `${p.what} (${p.file}) calls the kernel`);
  }
});
