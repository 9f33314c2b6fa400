// What the source-scanning tests share (layers.test: the architecture's layers; no-wall-clock.test:
// tests that depend on the machine's speed): the project's files and their code lines.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

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
