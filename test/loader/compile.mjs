// The tests' TypeScript compiled once per content into dist/test/, beside the compiled service
// (dist/src, dist/actors, dist/orm), so a test's import of '../../src/x.js' is the compiled
// dist/src/x.js by plain resolution: test processes run without module hooks (a hook is a round
// trip to Node's loader thread for every module the service loads). Transpiling only (no type
// check), as tap's TypeScript plugin did; `npm run lint` reads the tests' types. The other files
// under test/ (fixtures, .mjs helpers) are copied beside them, and what no source names is removed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const source = path.join(root, 'test');
export const COMPILED = path.join(root, 'dist', 'test');
/** What each compiled file was made from: its source's hash, so an unchanged file is not redone. */
const STAMPS = path.join(COMPILED, '.sources.json');
/** Compiled by tsc itself (tsconfig.json includes them), not here. */
const TSC_OWN = 'types';

const hash = (text) => crypto.createHash('sha256').update(text).digest('hex').slice(0, 32);

/** The compiled path of a test source path (relative to the root): test/a/x.test.ts → dist/test/a/x.test.js. */
export function compiledPath(file) {
  return path.join('dist', file.replace(/\.ts$/, '.js'));
}

/** The source path of a compiled one, for names in reports: dist/test/a/x.test.js → test/a/x.test.ts. */
export function sourcePath(file) {
  return file.startsWith(`dist${path.sep}test${path.sep}`)
    ? file.slice('dist/'.length).replace(/\.js$/, '.ts')
    : file;
}

function sources() {
  return fs
    .readdirSync(source, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(source, path.join(e.parentPath, e.name)))
    .filter((f) => !f.startsWith(`${TSC_OWN}${path.sep}`) && !f.endsWith('.md'));
}

async function transpile(file, text) {
  const ts = (await import('typescript')).default;
  return ts.transpileModule(text, {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      inlineSourceMap: true,
      inlineSources: true,
      esModuleInterop: true,
    },
  }).outputText;
}

/** Brings dist/test up to date with test/; returns how many files it wrote. */
export async function compileTests() {
  let stamps = {};
  try {
    stamps = JSON.parse(fs.readFileSync(STAMPS, 'utf8'));
  } catch {
    // first run, or a build that removed it: everything is written
  }
  const next = {};
  let written = 0;
  for (const f of sources()) {
    const text = fs.readFileSync(path.join(source, f));
    const out = f.endsWith('.ts') && !f.endsWith('.d.ts') ? f.replace(/\.ts$/, '.js') : f;
    const key = hash(text);
    next[out] = key;
    const target = path.join(COMPILED, out);
    if (stamps[out] === key && fs.existsSync(target)) continue;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const body = out === f ? text : await transpile(path.join(source, f), String(text));
    fs.writeFileSync(target, body);
    written++;
  }
  for (const out of Object.keys(stamps)) {
    if (!(out in next)) fs.rmSync(path.join(COMPILED, out), { force: true });
  }
  fs.mkdirSync(COMPILED, { recursive: true });
  fs.writeFileSync(STAMPS, JSON.stringify(next));
  return written;
}
