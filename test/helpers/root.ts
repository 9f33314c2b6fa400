import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: the first folder up from here with a package.json (from test/ or dist/test/). */
function findRoot(dir: string): string {
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('no package.json above the tests');
    dir = up;
  }
}

export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
