// The service's Node.js flags (src/node-flags.ts) are the ones every start of it uses: `npm start`,
// ops/service.unit, the cluster's front ends and the bench's services; and this Node accepts them.
import t from 'tap';
import fs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { SERVICE_NODE_FLAGS } from '../../src/node-flags.js';

const flags = SERVICE_NODE_FLAGS.join(' ');

t.test('npm start and the systemd unit start the service with them', async (t) => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
  t.equal(pkg.scripts.start, `node ${flags} dist/src/main.js`);
  t.match(
    fs.readFileSync('ops/service.unit', 'utf8'),
    `\nExecStart=/usr/bin/node ${flags} dist/src/main.js\n`,
  );
});

/** The argument lists of `spawn(process.execPath, [...])` calls, brackets balanced, across lines. */
function spawnArguments(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/spawn\(\s*process\.execPath,\s*\[/g)) {
    const start = m.index + m[0].length;
    let depth = 1;
    let i = start;
    for (; i < text.length && depth > 0; i++)
      depth += text[i] === '[' ? 1 : text[i] === ']' ? -1 : 0;
    found.push(text.slice(start, i - 1));
  }
  return found;
}

t.test('the cluster and every bench that starts the service pass them', async (t) => {
  t.match(
    fs.readFileSync('src/cluster/main.ts', 'utf8'),
    'spawn(process.execPath, [...SERVICE_NODE_FLAGS, MAIN]',
  );
  const dirs = ['bench', 'bench/lib'];
  let spawns = 0;
  for (const dir of dirs) {
    for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.mjs'))) {
      const text = fs.readFileSync(`${dir}/${f}`, 'utf8');
      for (const args of spawnArguments(text)) {
        // A spawn of the service's main file (not of a peer, a fixed server or another bench).
        if (!/SERVICE_MAIN|'dist\/src\/main\.js'|,\s*main\s*$/.test(args)) continue;
        spawns++;
        t.match(
          args,
          '...SERVICE_NODE_FLAGS',
          `${dir}/${f}: ${args.replace(/\s+/g, ' ').slice(0, 80)}`,
        );
      }
    }
  }
  t.ok(spawns >= 6, `${spawns} service starts found in bench/`);
});

t.test('this Node accepts them', async (t) => {
  const r = spawnSync(process.execPath, [...SERVICE_NODE_FLAGS, '-e', 'process.exit(0)'], {
    timeout: 10_000,
  });
  t.equal(r.status, 0, r.stderr?.toString());
});
