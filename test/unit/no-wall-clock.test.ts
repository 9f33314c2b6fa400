// No test depends on the machine's speed (speed goals live in bench/). Scans every .ts and .mjs
// file under test/ and fails, naming file and line, on
//   (1) a clock read (Date.now(), performance.now(), process.hrtime) in arithmetic or a comparison
//       with it: a deadline (`Date.now() + 5000`), a duration (`performance.now() - t0`), a check
//       against the clock (`x < Date.now()`). A clock read as a data value (a unique e-mail, the
//       start of an injected clock, `Date.now() / 1000` as unix seconds) is fine;
//   (2) a sleep that lets real time pass: `setTimeout(resolve, 100)` with a literal delay, `sleep(100)`,
//       outside test/helpers/wait.ts (eventually(): polling without a deadline) and test/fixtures/.
// Instead: an injected clock (startTestService's realMs, clock-rig.ts), waiting on an event, a log
// line or a latch the test releases, or eventually(probe) from test/helpers/wait.ts.
// A line may be let through by a marker comment with its reason, `// wall-clock: <reason>`, only for a
// t.comment timing or a kill guard of a hung child; a marker on a line that breaks no rule fails (stale).
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { codeLines, ROOT, sourceFiles } from '../helpers/source-scan.js';

/** Where a sleep is the mechanism itself: the polling helper and the test-only actor's hold. */
const SLEEP_ALLOWED = [/^test\/helpers\/wait\.ts$/, /^test\/fixtures\//];
const MARKER = /\/\/\s*wall-clock:\s*(\S.*)$/;

const CLOCK = String.raw`(?:Date\.now\(\)|performance\.now\(\)|process\.hrtime(?:\.bigint)?\([^)]*\))`;
const RULES: [RegExp, string][] = [
  [
    new RegExp(String.raw`${CLOCK}\s*(?:[-+*]|[<>]=?|[!=]==?)`),
    'a clock read in arithmetic or a comparison (a deadline or a duration)',
  ],
  [
    new RegExp(String.raw`(?:[-+*]|<=?|(?<![=>])>=?|[!=]==?)\s*${CLOCK}`),
    'a clock read in arithmetic or a comparison (a deadline or a duration)',
  ],
  [
    /\bsetTimeout\(\s*[A-Za-z_$][\w$]*\s*,\s*\d[\d_]*\s*\)/,
    'a sleep of a literal delay (setTimeout(resolve, ms))',
  ],
  [
    /\bsetTimeout\(\s*\(\)\s*=>\s*[A-Za-z_$][\w$]*\(\s*\)\s*,\s*\d[\d_]*\s*\)/,
    'a sleep of a literal delay (setTimeout(() => resolve(), ms))',
  ],
  [
    /(?:^|[^\w$.])(?:sleep|delay|pause|wait)\(\s*\d[\d_]*\s*\)/,
    'a sleep of a literal delay (sleep(ms))',
  ],
  [
    /\bsetTimeout\(\s*\d[\d_]*\s*[,)]/,
    'a sleep of a literal delay (timers/promises setTimeout(ms))',
  ],
];

type Finding = { file: string; line: number; text: string; what: string };

/** What one file does against the rules, and its markers that excuse nothing (stale). */
export function scan(file: string, source: string): { findings: Finding[]; stale: Finding[] } {
  const findings: Finding[] = [];
  const stale: Finding[] = [];
  const sleepsAllowed = SLEEP_ALLOWED.some((re) => re.test(file));
  for (const { n, text } of codeLines(source)) {
    const marker = MARKER.exec(text);
    const code = marker ? text.slice(0, marker.index) : text;
    const broken = RULES.filter(
      ([re, what]) => re.test(code) && !(sleepsAllowed && what.startsWith('a sleep')),
    );
    if (marker) {
      if (!broken.length)
        stale.push({
          file,
          line: n,
          text: text.trim(),
          what: `a wall-clock marker on a line that breaks no rule: remove it`,
        });
      continue;
    }
    const seen = new Set<string>();
    for (const [, what] of broken) {
      if (seen.has(what)) continue;
      seen.add(what);
      findings.push({ file, line: n, text: text.trim(), what });
    }
  }
  return { findings, stale };
}

const show = (f: Finding) => `${f.file}:${f.line}: ${f.what}\n    ${f.text}`;

t.test(
  'the scanner finds what it must (so this test can fail), and lets data values through',
  async (t) => {
    // Built from pieces so that this file's own source does not hold the samples.
    const D = 'Date' + '.now()';
    const P = 'performance' + '.now()';
    const H = 'process' + '.hrtime';
    const bad = [
      `const deadline = ${D} + 5000;`,
      `while (${D} < deadline) await poll();`,
      `const ms = ${P} - t0;`,
      `t.ok(end - ${D} > 0);`,
      `const d = ${H}.bigint() - t0;`,
      `await new Promise((r) => ${'setTimeout'}(r, 100));`,
      `await ${'sleep'}(250);`,
      `await new Promise((resolve) => ${'setTimeout'}(() => resolve(), 1_000));`,
      `if (${D} >= closesAt * 1000) break;`,
    ].join('\n');
    const found = scan('test/api/x.test.ts', bad).findings;
    t.same(
      found.map((f) => f.line),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
      found.map(show).join('\n'),
    );
    t.match(
      show(found[0]),
      /^test\/api\/x\.test\.ts:1: a clock read in arithmetic or a comparison/,
    );
    const fine = [
      `const email = \`h\${${D}}@example.org\`;`,
      `let nowMs = ${D};`,
      `const svc = await start({ realMs: () => ${D} });`,
      `const at = ${D} / 1000;`,
      `const closes = Math.floor(${D} / 36_000_000) * 36_000;`,
      `const timer = ${'setTimeout'}(() => ctl.abort(), patienceMs);`,
      `const guard = ${'setTimeout'}(() => child.kill('SIGKILL'), 60_000);`,
      `await ${'sleep'}(msg.ms);`,
      `// a comment may say ${D} + 5000 or ${'sleep'}(100)`,
      `/* nor here: ${D} - t0 */`,
    ].join('\n');
    t.same(scan('test/api/x.test.ts', fine).findings.map(show), []);
    // The polling helper and the fixtures may sleep; nobody may use the clock as a deadline there either.
    t.same(
      scan(
        'test/helpers/wait.ts',
        `const pause = (ms) => new Promise((r) => ${'setTimeout'}(r, 20));`,
      ).findings,
      [],
    );
    t.same(scan('test/fixtures/a.mjs', `await ${'sleep'}(5);`).findings, []);
    t.same(
      scan('test/fixtures/a.mjs', `const end = ${D} + 5;`).findings.map((f) => f.line),
      [1],
    );
    // A marker with its reason lets a line through; a marker on a harmless line is stale.
    const marked = scan(
      'test/api/x.test.ts',
      `t.comment(\`in \${${D} - t0} ms\`); // ${'wall-clock'}: a t.comment timing`,
    );
    t.same([marked.findings, marked.stale], [[], []]);
    t.same(
      scan('test/api/x.test.ts', `const at = ${D}; // ${'wall-clock'}: data`).stale.map(
        (f) => f.line,
      ),
      [1],
    );
  },
);

t.test('no test under test/ depends on the wall clock', async (t) => {
  const results = sourceFiles('test', ['.ts', '.mjs']).map((f) =>
    scan(f, readFileSync(path.join(ROOT, f), 'utf8')),
  );
  const findings = results.flatMap((r) => r.findings);
  t.same(
    findings.map(show),
    [],
    `tests that depend on the wall clock:\n${findings.map(show).join('\n')}`,
  );
  const stale = results.flatMap((r) => r.stale);
  t.same(stale.map(show), [], stale.map(show).join('\n'));
  const marked = sourceFiles('test', ['.ts', '.mjs']).flatMap((f) =>
    codeLines(readFileSync(path.join(ROOT, f), 'utf8'))
      .filter((l) => MARKER.test(l.text))
      .map((l) => `${f}:${l.n}`),
  );
  t.comment(`wall-clock markers (${marked.length}): ${marked.join(', ')}`);
});
