// The resolve hook of register.mjs (runs on Node's loader thread, ahead of the TypeScript hooks).
// A test's import of '../../src/x.js' (or actors/, orm/) loads the compiled dist/src/x.js, as the
// workers and `npm start` do: those .js files exist only in dist/.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../../', import.meta.url).href;
const tests = `${root}test/`;
const compiled = ['src/', 'actors/', 'orm/'].map((dir) => `${root}${dir}`);

export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  const fromTests =
    parent?.startsWith(tests) && (specifier.startsWith('.') || specifier.startsWith('file:'));
  if (fromTests) {
    const url = new URL(specifier, parent);
    const href = url.href.slice(0, url.href.length - url.search.length - url.hash.length);
    if (href.endsWith('.js') && compiled.some((dir) => href.startsWith(dir))) {
      const dist = `${root}dist/${href.slice(root.length)}`;
      if (!fs.existsSync(fileURLToPath(dist))) {
        throw new Error(
          `${fileURLToPath(dist)} does not exist: run \`npm run build\` first (tests load the compiled service; \`npm test\` builds it)`,
        );
      }
      return { url: `${dist}${url.search}${url.hash}`, format: 'module', shortCircuit: true };
    }
  }
  return next(specifier, context);
}
