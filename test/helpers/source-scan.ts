// What the source-scanning tests share (layers.test: the architecture's layers; no-wall-clock.test:
// tests that depend on the machine's speed; comments-history.test: what comments may say): the
// project's files, their code lines and their comment lines.
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as TS from 'typescript';
import { ROOT } from './root.js';

export { ROOT };

/** Root-relative paths of the files under `dir` whose names end with one of `extensions` (no .d.ts), sorted. */
export function sourceFiles(dir: string, extensions: string[] = ['.ts']): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...sourceFiles(rel, extensions));
    else if (!e.name.endsWith('.d.ts') && extensions.some((x) => e.name.endsWith(x))) out.push(rel);
  }
  return out.sort();
}

/** Code lines with their numbers; whole-line comments dropped (a comment may describe what a rule forbids). */
export function codeLines(source: string): { n: number; text: string }[] {
  const out: { n: number; text: string }[] = [];
  let inBlock = false;
  source.split('\n').forEach((text, i) => {
    const s = text.trim();
    if (inBlock) {
      if (s.includes('*/')) inBlock = false;
      return;
    }
    if (s.startsWith('/*')) {
      inBlock = !s.includes('*/');
      return;
    }
    if (s.startsWith('//') || s.startsWith('*')) return;
    out.push({ n: i + 1, text });
  });
  return out;
}

/**
 * Every line of every comment (`//` and block comments, whole-line or after code), with its number.
 * Read with the TypeScript parser, so a `//` or `/*` inside a string, a template or a regular
 * expression is not a comment. The compiler is loaded on the first call only: the other scans do
 * not need it.
 */
export function commentLines(file: string, source: string): { n: number; text: string }[] {
  const ts = compiler();
  const kind = /\.(?:m?js|cjs)$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, false, kind);
  const starts = new Map<number, number>();
  // Trivia always starts where a token ends: at a node's or a list's full start or at its end.
  const visit = (at: number) => {
    for (const c of [
      ...(ts.getLeadingCommentRanges(source, at) ?? []),
      ...(ts.getTrailingCommentRanges(source, at) ?? []),
    ])
      starts.set(c.pos, c.end);
  };
  const walk = (node: TS.Node) => {
    visit(node.pos);
    visit(node.end);
    ts.forEachChild(node, walk, (nodes) => {
      visit(nodes.pos);
      visit(nodes.end);
      nodes.forEach(walk);
    });
  };
  walk(sf);
  visit(sf.endOfFileToken.pos);
  const out: { n: number; text: string }[] = [];
  for (const [pos, end] of [...starts].sort(([a], [b]) => a - b)) {
    const first = sf.getLineAndCharacterOfPosition(pos).line;
    source
      .slice(pos, end)
      .split('\n')
      .forEach((text, i) => out.push({ n: first + i + 1, text }));
  }
  return out;
}

let ts: typeof TS | undefined;
function compiler(): typeof TS {
  ts ??= createRequire(import.meta.url)('typescript') as typeof TS;
  return ts;
}
