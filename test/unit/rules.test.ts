// One definition per rule: src/rules.ts's rules as properties, and the served texts built
// from them (no copy of the number left in a source file a text could drift in).
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import {
  FUNDING_PROFITABLE_TRADES,
  SETTLEMENT_HORIZON_SESSIONS,
  dealNotOnMenu,
  menuUrl,
  orderAmounts,
} from '../../src/rules.js';
import { feeMonth } from '../../src/payments/fee.js';
import { MARKETS, MARKET_IDS, costBasisCents } from '../../src/engine/index.js';
import { manifest, llmsTxt } from '../../src/docs/manifest.js';
import { agentProtocol } from '../../src/docs/protocol.js';
import { RoutePaths } from '../../src/docs/route-paths.js';
import { orderInstructions } from '../../actors/account/order-reply.js';
import { DECLINED_DETAIL, TEST_CARDS, checkCard } from '../../src/payments/cards.js';
import { paymentMethods } from '../../src/docs/payments.js';
import { ROOT } from '../helpers/root.js';

const prop = (p: fc.IProperty<any>) => fc.assert(p, { numRuns: 500 });

/** A UTC instant near a month boundary (± 15 hours covers every time zone's midnight). */
const nearBoundary = fc
  .record({
    y: fc.integer({ min: 1970, max: 2200 }),
    m: fc.integer({ min: 0, max: 11 }),
    offset: fc.integer({ min: -15 * 3600_000, max: 15 * 3600_000 }),
  })
  .map(({ y, m, offset }) => new Date(Date.UTC(y, m, 1) + offset));
const anyDate = fc.date({
  min: new Date('1970-01-01T00:00:00Z'),
  max: new Date('9999-12-31T23:59:59.999Z'),
  noInvalidDate: true,
});

t.test(
  'feeMonth is the UTC YYYY-MM of the instant, at month and year boundaries too',
  async (t) => {
    prop(
      fc.property(
        fc.oneof(anyDate, nearBoundary),
        (d) => feeMonth(d) === d.toISOString().slice(0, 7),
      ),
    );
    t.equal(feeMonth(new Date('2026-12-31T23:59:59.999Z')), '2026-12');
    t.equal(feeMonth(new Date('2027-01-01T00:00:00.000Z')), '2027-01');
    t.equal(
      feeMonth(new Date('2027-01-01T00:00:00.000+14:00')),
      '2026-12',
      'New Year in Kiritimati is still December in UTC',
    );
    t.throws(() => feeMonth(new Date(Number.NaN)), RangeError);
  },
);

t.test("feeMonth does not depend on the process's time zone", async (t) => {
  const saved = process.env.TZ;
  t.teardown(() => (saved === undefined ? delete process.env.TZ : (process.env.TZ = saved)));
  const dates = fc.sample(nearBoundary, 200);
  process.env.TZ = 'UTC';
  const inUtc = dates.map(feeMonth);
  for (const tz of ['Pacific/Kiritimati', 'America/Adak', 'Asia/Kolkata', 'Europe/Berlin']) {
    process.env.TZ = tz;
    t.same(dates.map(feeMonth), inUtc, tz);
  }
  // The check can fail: in Kiritimati (UTC+14) local months differ from UTC months near a boundary.
  process.env.TZ = 'Pacific/Kiritimati';
  t.ok(
    dates.some((d) => d.getMonth() !== d.getUTCMonth()),
    'local and UTC months differ for some sampled instant',
  );
});

const cents = fc.integer({ min: 0, max: 10_000_000 });
const qtys = fc.integer({ min: 0, max: 1000 });

t.test(
  'orderAmounts: gross = qty x cost, fee = qty x fee, total = gross + fee, the cost basis of the engine',
  async (t) => {
    prop(
      fc.property(qtys, cents, fc.integer({ min: 0, max: 1000 }), (q, c, f) => {
        const a = orderAmounts(q, c, f);
        return (
          a.grossCents === q * c &&
          a.feeAmountCents === q * f &&
          a.totalCents === a.grossCents + a.feeAmountCents &&
          a.totalCents ===
            costBasisCents({
              qty: q,
              unitCostCents: c,
              feeCents: f,
              listPriceCents: 1,
              holdingCents: 0,
            })
        );
      }),
    );
    // Additive in qty: two orders cost what one of their sum does.
    prop(
      fc.property(qtys, qtys, cents, cents, (q1, q2, c, f) => {
        const [a, b, s] = [
          orderAmounts(q1, c, f),
          orderAmounts(q2, c, f),
          orderAmounts(q1 + q2, c, f),
        ];
        return (
          s.totalCents === a.totalCents + b.totalCents &&
          s.grossCents === a.grossCents + b.grossCents
        );
      }),
    );
    // Integer cents only: a fraction, a negative or an unsafe total is refused, never rounded.
    for (const bad of [
      [1.5, 100, 10],
      [1, -1, 0],
      [1, 100, 0.5],
      [2, Number.MAX_SAFE_INTEGER, 0],
    ]) {
      t.throws(() => orderAmounts(bad[0], bad[1], bad[2]), RangeError, JSON.stringify(bad));
    }
  },
);

t.test('the settlement horizon is the engine market definition, in every market', async (t) => {
  for (const m of MARKET_IDS)
    t.equal(MARKETS[m].settlement_horizon_ticks, SETTLEMENT_HORIZON_SESSIONS, m);
});

t.test('served texts quote the rules', async (t) => {
  const base = 'https://svc.example';
  // Any path passes here: test/api/discovery-drift.test.ts checks the named routes against the table.
  const at = new (class extends RoutePaths {
    override has() {
      return true;
    }
  })(base, []);
  const m = manifest(at, { applied: 0, last: null, last_at: null });
  t.match(m.agents.autonomous_funding, `after ${FUNDING_PROFITABLE_TRADES} settled trades`);
  t.match(m.layers.trading, `over ${SETTLEMENT_HORIZON_SESSIONS} sessions`);
  const llms = llmsTxt(at);
  t.match(llms, `over ${SETTLEMENT_HORIZON_SESSIONS} sessions`);
  t.match(llms, `after ${FUNDING_PROFITABLE_TRADES} settled trades`);
  t.match(llms, `${base}/api/v1/payments/methods`, '/llms.txt points to the test cards');
  t.ok(
    agentProtocol(at).rules.some((r) =>
      r.includes(`after ${FUNDING_PROFITABLE_TRADES} settled trades`),
    ),
  );
  t.match(
    orderInstructions({ id: 7, status: 'awaiting_payment', payment_source: null }),
    `over ${SETTLEMENT_HORIZON_SESSIONS} sessions`,
  );
  t.equal(
    dealNotOnMenu(base, 'h2', 'k', 'is gone'),
    `deal "k" is gone; deal keys are valid only during the session that published them: the current menu is ${menuUrl(base, 'h2')}`,
  );
  t.equal(menuUrl(base, 'h2'), `${base}/api/v1/markets/h2/deals`);
});

t.test(
  'the declined test card names the approved one, from the one definition of the test cards',
  async (t) => {
    const declined = checkCard(
      { number: TEST_CARDS.declined, exp: '12/39', cvc: '123' },
      new Date(),
    );
    t.same(declined, { ok: false, status: 402, detail: DECLINED_DETAIL });
    t.match(DECLINED_DETAIL, /^card declined/);
    t.match(DECLINED_DETAIL, TEST_CARDS.approved);
    t.same(
      checkCard({ number: TEST_CARDS.approved, exp: '12/39', cvc: '123' }, new Date()).ok,
      true,
    );
    const listed = paymentMethods('https://svc.example').methods.find((x) => x.id === 'card') as {
      test_cards: { number: string }[];
    };
    t.same(
      listed.test_cards.map((c) => c.number),
      [TEST_CARDS.approved, TEST_CARDS.declined],
    );
  },
);

// --- no second copy of a rule in the sources --------------------------------------------------

const root = ROOT;
function files(dir: string, ext: RegExp): string[] {
  return fs
    .readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && ext.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}
const sources = [
  ...files('src', /\.ts$/),
  ...files('actors', /\.ts$/),
  ...files('templates', /\.mustache$/),
];
/** Source text without comments (a comment may explain a rule with its number; a served text may not copy it). */
const code = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[\s;])\/\/.*$/gm, '$1');
const hits = (re: RegExp, except: string[] = []) =>
  sources
    .filter((f) => !except.some((e) => f.endsWith(e)))
    .flatMap((f) => (code(f).match(re) ?? []).map((m) => `${path.relative(root, f)}: ${m}`));

t.test('no literal copy of a rule in src/, actors/ or templates/', async (t) => {
  t.same(
    hits(/\b\d+ settled trades\b/g),
    [],
    'the funding threshold is quoted from FUNDING_PROFITABLE_TRADES',
  );
  t.same(
    hits(
      /\b\d+[- ]sessions? (?:as a position|and settle|after its fill|then settles|horizon)\b|\bover \d+ sessions\b|\(\d+ sessions\)/g,
    ),
    [],
    'the horizon is quoted from SETTLEMENT_HORIZON_SESSIONS',
  );
  t.same(
    hits(/'23505'/g, ['actors/runtime/sql.ts']),
    [],
    'the unique-violation code is actors/runtime/sql.ts UNIQUE_VIOLATION',
  );
  t.same(
    hits(/=\s*\(\w+(?::[^)]*)?\)\s*=>\s*JSON\.stringify\(\w+\)/g),
    [],
    'JSON parameters are runtime/sql.ts jsonParam',
  );
  t.same(
    hits(/`\{\$\{\w+\.join\(','\)\}\}`/g, ['actors/runtime/sql.ts']),
    [],
    'array parameters are runtime/sql.ts intArrayParam',
  );
  t.same(
    hits(/Math\.round\(\w+\)\s*\/\s*100\b/g, ['src/engine/money.ts']),
    [],
    'cents to a served amount is centsToNumber',
  );
  t.same(
    hits(/'YYYY-MM'/g),
    [],
    "the fee month is feeMonth of the service clock, never the database's clock",
  );
  t.same(
    hits(/4242 4242 4242 4242|4000 0000 0000 0002/g, ['src/payments/cards.ts']),
    [],
    'test card numbers are TEST_CARDS',
  );
  t.same(hits(/\bqty \* \(/g), [], 'order amounts are orderAmounts');
});
