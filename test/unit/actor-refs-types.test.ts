// The compile-time checks of typed actor references (test/types/actor-refs.check.ts) are part of
// `npm run build`. This shows that they can fail: a mark `@ts-expect-error` over a line that
// compiles is itself an error (TS2578), which fails the build, and every marked line is an error of
// its own without its mark.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/source-scan.js';

const CHECKS = path.join(ROOT, 'test', 'types', 'actor-refs.check.ts');
const MARK = '// @ts-expect-error';

const config = ts.getParsedCommandLineOfConfigFile(
  path.join(ROOT, 'tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
)!;
const options: ts.CompilerOptions = {
  ...config.options,
  noEmit: true,
  incremental: false,
  tsBuildInfoFile: undefined,
};

let previous: ts.Program | undefined;
/** The errors of the checks file when it reads `text`: line (1-based) and code. */
function errorsOf(text: string): { line: number; code: number; message: string }[] {
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  host.readFile = (f) => (path.resolve(f) === CHECKS ? text : readFile(f));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, v, onError, create) =>
    path.resolve(f) === CHECKS
      ? ts.createSourceFile(f, text, v)
      : getSourceFile(f, v, onError, create);
  const program = ts.createProgram({ rootNames: [CHECKS], options, host, oldProgram: previous });
  previous = program;
  const file = program.getSourceFile(CHECKS)!;
  return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map(
    (d) => ({
      line: file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1,
      code: d.code,
      message: ts.flattenDiagnosticMessageText(d.messageText, '\n'),
    }),
  );
}

const source = readFileSync(CHECKS, 'utf8');
const lines = source.split('\n');
const marked = lines.flatMap((l, i) => (l.trim().startsWith(MARK) ? [i + 1] : []));

t.test(
  'the checks compile, and a mark over a line that compiles is the one error (TS2578: the build fails)',
  async (t) => {
    t.ok(marked.length >= 10, `${marked.length} expected errors marked`);
    const at = lines.findIndex((l) => l.includes('const due = '));
    t.ok(at > 0, 'the checks ask the payouts actor');
    const fine = [...lines.slice(0, at), `  ${MARK} this line compiles`, ...lines.slice(at)].join(
      '\n',
    );
    const errors = errorsOf(fine);
    t.same(
      errors.map((e) => [e.line, e.code]),
      [[at + 1, 2578]],
      errors.map((e) => `${e.line}: ${e.message}`).join('\n'),
    );
  },
);

t.test('each marked line is an error without its mark', async (t) => {
  const unmarked = lines
    .map((l) => (l.trim().startsWith(MARK) ? l.replace(MARK, '// (expected error)') : l))
    .join('\n');
  const errors = errorsOf(unmarked);
  for (const m of marked)
    t.ok(
      errors.some((e) => e.line === m + 1),
      `line ${m + 1} is an error: ${lines[m]}`,
    );
  t.same(
    errors.filter((e) => !marked.includes(e.line - 1)),
    [],
    'and nothing else is',
  );
});
