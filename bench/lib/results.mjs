// A bench run's result file: bench/results/<iso-date>-<scenario>.json, which /ops/bench reads
// (src/ops/bench.ts names each scenario's figures), headed by when, which commit and which machine.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(BENCH_DIR, '..');

/** When, which commit, which machine: the head of every result. */
export function runFacts(title, started) {
  return {
    scenario: title,
    started: started.toISOString(),
    finished: new Date().toISOString(),
    commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim(),
    machine: {
      nproc: os.availableParallelism(),
      total_mem_mb: Math.round(os.totalmem() / 2 ** 20),
      node: process.version,
      loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    },
  };
}

/** Writes `result` as the run of `scenario` started at `started`; returns the file's path. */
export function writeResult(scenario, started, result) {
  const stamp = started
    .toISOString()
    .replace(/:/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const file = path.join(BENCH_DIR, 'results', `${stamp}-${scenario}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  return file;
}

/** Runs a bench's `main`, then its `cleanup` whatever happened; exits 1 on an error. */
export function runBench(main, cleanup) {
  main()
    .then(() => cleanup())
    .catch(async (err) => {
      console.error(err);
      await cleanup();
      process.exit(1);
    });
}
