// The hooks that run the tests' own TypeScript (test files and helpers; the service loads compiled,
// from dist/, through dist-hooks.mjs). Each file is transpiled once per content, not once per test
// process: the JavaScript is kept in CACHE under a hash of the file's path and text, and
// test/run.mjs fills it for every file before tap starts (`transpileAll`). tap's own TypeScript
// plugin (ts-node) is off (package.json "tap".plugin): it loaded the compiler and transpiled every
// file again in each of the ~150 test processes, ~1.3 s of CPU each.
// Transpiling only (no type check), as ts-node did under tap; the types are checked by `tsc`.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const tests = pathToFileURL(path.join(root, 'test')).href + '/';
export const CACHE = path.join(root, 'node_modules', '.cache', 'svc-test-ts');

let ts;
async function compiler() {
  ts ??= (await import('typescript')).default;
  return ts;
}

const keyOf = (file, text) =>
  crypto.createHash('sha256').update(file).update('\0').update(text).digest('hex').slice(0, 32);

/** The JavaScript of one test file, from the cache or transpiled (and cached) now. */
export async function transpiled(file) {
  const text = fs.readFileSync(file, 'utf8');
  const cached = path.join(CACHE, `${keyOf(file, text)}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  const t = await compiler();
  const out = t.transpileModule(text, {
    fileName: file,
    compilerOptions: {
      module: t.ModuleKind.ESNext,
      target: t.ScriptTarget.ES2022,
      inlineSourceMap: true,
      inlineSources: true,
      esModuleInterop: true,
    },
  }).outputText;
  fs.mkdirSync(CACHE, { recursive: true });
  const partial = `${cached}.${process.pid}`; // written whole, then renamed: a reader never sees half a file
  fs.writeFileSync(partial, out);
  fs.renameSync(partial, cached);
  return out;
}

/** Fills the cache for every .ts file under test/ (test/run.mjs, once per run). */
export async function transpileAll() {
  const files = fs
    .readdirSync(path.join(root, 'test'), { recursive: true })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  for (const f of files) await transpiled(path.join(root, 'test', f));
  return files.length;
}

// A test's import of './x.js' names the TypeScript file x.ts beside it (NodeNext's convention).
export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  if (parent?.startsWith(tests) && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const url = new URL(specifier, parent);
    if (url.href.startsWith(tests) && !fs.existsSync(url)) {
      const ts = new URL(url.href.replace(/\.js$/, '.ts'));
      if (fs.existsSync(ts)) return { url: ts.href, format: 'module', shortCircuit: true };
    }
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.startsWith(tests) && url.endsWith('.ts')) {
    return { format: 'module', source: await transpiled(fileURLToPath(url)), shortCircuit: true };
  }
  return next(url, context);
}
