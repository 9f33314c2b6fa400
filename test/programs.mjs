#!/usr/bin/env node
// `npm test`'s first step: the programs the tests run beside Node. A missing one is installed from
// Debian when this runs as root with apt-get; otherwise the run stops at once, in one line naming
// the packages, rather than failing tests one by one minutes later.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Each program the tests run, the Debian package that brings it, and who needs it. */
export const PROGRAMS = [
  { program: 'chromium', pkg: 'chromium', for: 'the browser tests (test/web)' },
  { program: 'haproxy', pkg: 'haproxy', for: 'the cluster tests' },
  { program: 'pg_basebackup', pkg: 'postgresql-client', for: 'the replica tests' },
  { program: 'faketime', pkg: 'faketime', for: 'the moved date (test/run.mjs)' },
];

/** Bounds of the install: apt waits this long for another apt to let go of its lock. */
const APT_LOCK_WAIT_S = 600;

/** Whether `name` is an executable file in one of PATH's folders. */
export function onPath(name, pathVar = process.env.PATH ?? '') {
  return pathVar
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        fs.accessSync(path.join(dir, name), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/**
 * What to do about the programs missing: nothing, install their packages, or stop with a line
 * naming them. Pure: `found` says whether a program is there, `root` and `apt` describe the machine.
 */
export function plan({ found, root, apt }) {
  const missing = PROGRAMS.filter((p) => !found(p.program));
  const packages = [...new Set(missing.map((p) => p.pkg))];
  if (packages.length === 0) return { action: 'none', packages };
  if (root && apt) return { action: 'install', packages };
  const why = missing.map((p) => `${p.program} for ${p.for}`).join(', ');
  return {
    action: 'stop',
    packages,
    line: `npm test needs Debian's ${packages.join(' ')} (${why}): run \`apt-get install -y ${packages.join(' ')}\` as root, or npm test as root to have it installed`,
  };
}

function apt(args) {
  const run = spawnSync('apt-get', ['-o', `DPkg::Lock::Timeout=${APT_LOCK_WAIT_S}`, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return run.status === 0;
}

function main() {
  const machine = () => ({
    found: (p) => onPath(p),
    root: process.getuid?.() === 0,
    apt: onPath('apt-get'),
  });
  const first = plan(machine());
  if (first.action === 'none') return 0;
  if (first.action === 'stop') {
    console.error(first.line);
    return 1;
  }
  console.log(`installing from Debian for the tests: ${first.packages.join(' ')}`);
  const installed = apt(['update', '-q']) && apt(['install', '-y', '-q', ...first.packages]);
  const after = plan({ ...machine(), root: false });
  if (installed && after.action === 'none') return 0;
  console.error(after.line ?? `apt-get could not install ${first.packages.join(' ')}`);
  return 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(main());
