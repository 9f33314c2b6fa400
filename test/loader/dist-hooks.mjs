// The resolve hook of register.mjs (runs on Node's loader thread, ahead of tap's TypeScript loader).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../../', import.meta.url).href;
const tests = `${root}test/`;
const compiled = ['src/', 'actors/', 'orm/'].map((dir) => `${root}${dir}`);

export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  if (parent?.startsWith(tests) && (specifier.startsWith('.') || specifier.startsWith('file:'))) {
    const url = new URL(specifier, parent).href;
    if (url.endsWith('.js') && compiled.some((dir) => url.startsWith(dir))) {
      const dist = `${root}dist/${url.slice(root.length)}`;
      if (!fs.existsSync(fileURLToPath(dist))) {
        throw new Error(`${fileURLToPath(dist)} does not exist: run \`npm run build\` first (tests load the compiled service; \`npm test\` builds it)`);
      }
      return { url: dist, format: 'module', shortCircuit: true };
    }
  }
  return next(specifier, context);
}
