// npm test's first step (test/programs.mjs): the programs beside Node installed from Debian as
// root, or the run stopped at once with one line naming the packages.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { PROGRAMS, plan } from '../programs.mjs';

const allPackages = [...new Set(PROGRAMS.map((p) => p.pkg))];

t.test('nothing to do when every program is there', async (t) => {
  t.same(plan({ found: () => true, root: false, apt: false }), { action: 'none', packages: [] });
});

t.test(
  'as root with apt-get: the missing programs’ packages are installed, once each',
  async (t) => {
    const found = (p: string) => p !== 'haproxy' && p !== 'chromium';
    t.same(plan({ found, root: true, apt: true }), {
      action: 'install',
      packages: ['chromium', 'haproxy'],
    });
  },
);

t.test('not root, or no apt-get: one line naming every package to install', async (t) => {
  for (const machine of [
    { root: false, apt: true },
    { root: true, apt: false },
  ]) {
    const p = plan({ found: () => false, ...machine });
    t.equal(p.action, 'stop');
    t.same(p.packages, allPackages);
    t.notMatch(p.line, /\n/);
    t.match(p.line, `apt-get install -y ${allPackages.join(' ')}`);
  }
});

t.test('the script stops at once, exit 1, for a user who cannot install', async (t) => {
  const asRoot = process.getuid?.() === 0;
  // Through env -i: a bare environment, and a command tap's process hooks do not wrap.
  const script = path.resolve('test/programs.mjs');
  const run = spawnSync('/usr/bin/env', ['-i', 'PATH=/nonexistent', process.execPath, script], {
    cwd: os.tmpdir(),
    encoding: 'utf8',
    timeout: 10_000,
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  t.equal(run.status, 1);
  t.equal(run.stdout, '');
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, run.stderr);
  for (const pkg of allPackages) t.match(lines[0], pkg);
});
