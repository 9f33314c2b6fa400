// One clock (ARCHITECTURE rule 7, CONTRACT.md "Running it"): every instant the service stores,
// serves or compares comes from the injected Clock (a turn's TurnContext.at, a message's `at`),
// passed to SQL as a parameter. Scans every .ts file of actors/, src/ and orm/ (the migrations
// aside: they are history, and migration 20 drops their `default now()`) and fails, naming file and
// line, on
//   (1) the database server's clock inside a string or template literal (SQL): now(),
//       current_timestamp, current_date, current_time, localtimestamp, localtime, clock_timestamp(),
//       statement_timestamp(), transaction_timestamp(), timeofday(), 'now' as a timestamp;
//   (2) MikroORM's sql.now() and a `defaultRaw` that names now();
//   (3) the process's own wall clock taken as an instant (`new Date()` with no argument).
// A line may be let through by a marker comment with its reason, `// database-clock: <reason>`; a
// marker on a line that breaks no rule fails (stale). There should be none.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { codeLines, ROOT, sourceFiles } from '../helpers/source-scan.js';

const MARKER = /\/\/\s*database-clock:\s*(\S.*)$/;
const SQL_CLOCK =
  /(?<![\w$.])(?:now\s*\(\s*\)|current_timestamp|current_date|current_time|localtimestamp|localtime|clock_timestamp\s*\(|statement_timestamp\s*\(|transaction_timestamp\s*\(|timeofday\s*\()|'now'(?:\s*::\s*timestamp)/i;
const CODE_RULES: [RegExp, string][] = [
  [/\bsql\.now\s*\(/, "MikroORM's sql.now(): the database's clock"],
  [
    /\bdefaultRaw\s*:\s*['"`][^'"`]*now\s*\(/i,
    'a column default of now(): the database fills in its own clock',
  ],
  [
    /\bnew Date\(\s*\)/,
    "the process's wall clock as an instant (new Date()): take it from the Clock",
  ],
];

type Finding = { file: string; line: number; text: string; what: string };

/** The contents of the string and template literals on a line (a template's `${...}` parts left out), for SQL. */
export function literals(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === '/' && line[i + 1] === '/') break; // a trailing comment
    if (c !== "'" && c !== '"' && c !== '`') {
      i++;
      continue;
    }
    let j = i + 1;
    let text = '';
    let depth = 0;
    for (; j < line.length; j++) {
      const d = line[j];
      if (d === '\\') {
        j++;
        continue;
      }
      if (c === '`' && d === '$' && line[j + 1] === '{') {
        depth++;
        j++;
      } else if (depth && d === '}') depth--;
      else if (!depth && d === c) break;
      else if (!depth) text += d;
    }
    out.push(text);
    i = j + 1;
  }
  return out;
}

/**
 * What one file does against the rules, and its markers that excuse nothing (stale). A template
 * literal spanning lines is scanned line by line: each line inside it is literal text.
 */
export function scan(file: string, source: string): { findings: Finding[]; stale: Finding[] } {
  const findings: Finding[] = [];
  const stale: Finding[] = [];
  let inTemplate = false;
  for (const { n, text } of codeLines(source)) {
    const marker = MARKER.exec(text);
    const code = marker ? text.slice(0, marker.index) : text;
    // Inside a multi-line template the line is SQL up to the closing backtick; after it, code again.
    const ticks = (code.replace(/\\`/g, '').match(/`/g) ?? []).length;
    const sqlParts = inTemplate
      ? [code.split('`')[0], ...literals(code.slice(code.indexOf('`') + 1 || code.length))]
      : literals(code);
    if (ticks % 2 === 1) inTemplate = !inTemplate;
    const broken: string[] = [];
    if (sqlParts.some((s) => SQL_CLOCK.test(s)))
      broken.push(
        "the database server's clock in SQL: pass the turn's instant (instantSql, TurnContext.at)",
      );
    for (const [re, what] of CODE_RULES) if (re.test(code)) broken.push(what);
    if (marker) {
      if (!broken.length)
        stale.push({
          file,
          line: n,
          text: text.trim(),
          what: 'a database-clock marker on a line that breaks no rule: remove it',
        });
      continue;
    }
    for (const what of broken) findings.push({ file, line: n, text: text.trim(), what });
  }
  return { findings, stale };
}

const show = (f: Finding) => `${f.file}:${f.line}: ${f.what}\n    ${f.text}`;

t.test(
  'the scanner finds what it must (so this test can fail), and lets the service clock through',
  async (t) => {
    // Built from pieces so that this file's own source does not hold the samples.
    const N = 'now' + '()';
    const bad = [
      `await em.execute(\`update orders set paid_at = ${N} where id = ?\`, [id]);`,
      `const cut = raw('${N} - make_interval(hours => ?)', [24]);`,
      '  `update market_session set closed_at = current_' + 'timestamp',
      `await em.nativeUpdate(A, { id }, { pairedAt: sql.${N} });`,
      `createdAt: { type: 'Date', defaultRaw: '${N}' },`,
      `const stamp = new Date${'()'};`,
      `"select clock_timestamp() as t"`,
      "`select 'now'::timestamptz`",
    ];
    const missed = bad.filter((line) => !scan('actors/x.ts', line).findings.length);
    t.same(missed, [], 'every forbidden sample is found');
    t.match(
      show(scan('actors/x.ts', bad[0]).findings[0]),
      /^actors\/x\.ts:1: the database server's clock in SQL/,
    );
    // Inside a template literal that spans lines, each line is SQL; after its closing backtick, code again.
    const multi = [
      'const rows = await em.execute(`select id',
      `    where created_at <= ${N} - interval '1 day'`,
      '    limit 10`, [id]);',
      'const x = now();',
    ].join('\n');
    t.same(
      scan('actors/x.ts', multi).findings.map((f) => f.line),
      [2],
    );
    const fine = [
      `const at = s.clock.realNow();`,
      `const now = () => s.clock.realNow();`,
      `return ask(cart, { kind: 'add', at: now() });`,
      `await em.execute(\`update orders set paid_at = \${instantSql()} where id = ?\`, [at, id]);`,
      `const t0 = Date.${N};`,
      `const d = new Date(at * 1000);`,
      `// the database's ${N} is never read`,
      `log.info('closed now');`,
      `const ms = performance.${N} - t0;`,
    ];
    t.same(
      fine.flatMap((line) => scan('actors/x.ts', line).findings.map(show)),
      [],
    );
    // A marker with its reason lets a line through; a marker on a harmless line is stale.
    const M = 'database' + '-clock';
    t.same(scan('actors/x.ts', `const q = 'select ${N}'; // ${M}: a reason`).findings, []);
    t.same(
      scan('actors/x.ts', `const at = 1; // ${M}: data`).stale.map((f) => f.line),
      [1],
    );
  },
);

t.test(
  "no service code reads the database server's clock or the process's wall clock as an instant",
  async (t) => {
    const files = ['actors', 'src', 'orm']
      .flatMap((dir) => sourceFiles(dir, ['.ts']))
      .filter((f) => !f.startsWith('orm/migrations/'));
    t.ok(files.length > 100, `${files.length} files scanned`);
    const results = files.map((f) => scan(f, readFileSync(path.join(ROOT, f), 'utf8')));
    const findings = results.flatMap((r) => r.findings);
    t.same(
      findings.map(show),
      [],
      `instants not from the service clock:\n${findings.map(show).join('\n')}`,
    );
    const stale = results.flatMap((r) => r.stale);
    t.same(stale.map(show), [], stale.map(show).join('\n'));
  },
);
