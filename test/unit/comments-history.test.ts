// Comments say why, not when: no comment of the code names an issue by its number (the word
// "issue" or "issues" followed by a number, `#` and a number, a project's `name#` and a number, a
// PR or GH number). Such a reference sends the reader to a tracker for a reason the comment
// should give itself, in the present tense. Scans every comment (whole-line, after code, block
// comments) of the .ts, .mjs and .js files under src/, actors/, orm/, test/ and bench/, read with
// the TypeScript parser (source-scan.ts commentLines: a string or a regular expression is not a
// comment), and fails naming file and line. Strings (test names, messages, served text) are not
// comments and are not read.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { commentLines, ROOT, sourceFiles } from '../helpers/source-scan.js';

const DIRS = ['src', 'actors', 'orm', 'test', 'bench'];
const EXTENSIONS = ['.ts', '.mjs', '.js'];

/** References to an issue (or a pull request) by its number. */
const REFERENCES: RegExp[] = [
  /\bissues?\s*[-#]?\s*\d+/i,
  /\b(?:PR|GH)[\s-]?#?\d+/i,
  /(?:^|[\s([,;])#\d+\b/,
  /\b[a-z][\w.-]*(?:\/[\w.-]+)?#\d+\b/i,
];

type Finding = { file: string; line: number; text: string; reference: string };

const firstReference = (text: string) =>
  REFERENCES.map((re) => re.exec(text)?.[0].trim()).find((m) => m !== undefined);

/** A comment line without its markers (`//`, `/**`, ` * `, `*\/`), to join it to the next one. */
const bare = (text: string) =>
  text
    .replace(/^\s*(?:\/\/+|\/\*+|\*+(?!\/))\s?/, '')
    .replace(/\s*\*\/\s*$/, '')
    .trim();

/**
 * The comment lines of one file that name an issue by its number, also when the reference is cut
 * by a line break ("issue" at the end of one comment line, its number at the start of the next).
 */
export function scan(file: string, source: string): Finding[] {
  const lines = commentLines(file, source);
  const out: Finding[] = [];
  lines.forEach((l, i) => {
    const own = firstReference(l.text);
    if (own !== undefined) {
      out.push({ file, line: l.n, text: l.text.trim(), reference: own });
      return;
    }
    const next = lines[i + 1];
    if (!next || next.n !== l.n + 1 || firstReference(next.text) !== undefined) return;
    const joined = firstReference(`${bare(l.text)} ${bare(next.text)}`);
    if (joined !== undefined) out.push({ file, line: l.n, text: l.text.trim(), reference: joined });
  });
  return out;
}

const show = (f: Finding) => `${f.file}:${f.line}: names ${f.reference}\n    ${f.text}`;

t.test(
  'the scanner finds references in comments (so this test can fail), not in code',
  async (t) => {
    // Plain strings: this file is scanned too, and a string is not a comment.
    const bad = [
      '// the reason (issue 27)',
      "const x = 1; // issue 46's target",
      '/** Why (issues 12 and 14). */',
      '/*',
      ' * see bench/README.md "Issue 27"',
      ' */',
      '// fixed in #27',
      '// no pool counters (knex#1492)',
      '// the issue-4 shape',
      '// PR #12 moved it',
    ].join('\n');
    t.same(
      scan('src/x.ts', bad).map((f) => f.line),
      [1, 2, 3, 5, 7, 8, 9, 10],
      scan('src/x.ts', bad).map(show).join('\n'),
    );
    t.match(show(scan('src/x.ts', bad)[0]), /^src\/x\.ts:1: names issue 27\n/);
    const split = ['// a reason the issue', '// 27 gave', 'const y = 2;'].join('\n');
    t.same(
      scan('bench/x.mjs', split).map((f) => f.line),
      [1],
    );
    const fine = [
      "const s = '// issue 27';",
      'const tpl = `/* issue 41 */`;',
      'const re = /issue 9/;',
      "t.test('what issue 30 asks for', () => {});",
      '// one validation issue per field, at most 1000 rows, 70 lines, 15.00 USD',
      '// the &#39; entity, a #fff colour, page.html#top',
      '// issues of a 422 answer',
    ].join('\n');
    t.same(scan('test/unit/x.test.ts', fine).map(show), []);
  },
);

t.test('no comment names an issue by its number', async (t) => {
  const found = DIRS.flatMap((d) => sourceFiles(d, EXTENSIONS)).flatMap((f) =>
    scan(f, readFileSync(path.join(ROOT, f), 'utf8')),
  );
  t.same(
    found.map(show),
    [],
    `comments that name an issue by its number (give the reason instead):\n${found.map(show).join('\n')}`,
  );
});
