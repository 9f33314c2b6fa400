// Where a test run's time went: one record per test process (test/loader/register.mjs writes it at
// exit: the file, its wall and CPU time, and the phases the helpers timed: databases, service
// starts, browsers...), one per run (test/run.mjs). `node test/timings.mjs FILE.jsonl [N]` prints
// the summary of the records in FILE (.ci/run: its run), with the N slowest files (default 10).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The records the test processes of one pass left in `dir`, labelled with the pass. */
export function readRecords(dir, pass) {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .flatMap((f) => {
      try {
        return [{ pass, ...JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) }];
      } catch {
        return []; // a process killed while writing: its file is missing from the figures
      }
    });
}

const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
const clock = (ms) => `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;

/** Phases as "service start 4.1 s ×2, database 0.3 s ×2", largest first. */
export function phaseList(phases = {}) {
  return Object.entries(phases)
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(([name, p]) => `${name} ${s(p.ms)} ×${p.n}`)
    .join(', ');
}

/** The run totals and the `n` slowest files, as printed at the end of a run. */
export function summary(records, n = 10) {
  const files = records.filter((r) => !r.run);
  const runs = records.filter((r) => r.run);
  const lines = [
    '',
    `== test time: ${runs.map((r) => `${r.pass} ${clock(r.wallMs)}`).join(', ')}; total ${clock(runs.reduce((a, r) => a + r.wallMs, 0))}`,
  ];
  const totals = {};
  for (const f of files)
    for (const [name, p] of Object.entries(f.phases ?? {})) {
      const t = (totals[name] ??= { ms: 0, n: 0 });
      t.ms += p.ms;
      t.n += p.n;
    }
  lines.push(
    `   ${files.length} test files, ${s(files.reduce((a, f) => a + f.wallMs, 0))} of file time, ${s(files.reduce((a, f) => a + f.cpuMs, 0))} of their CPU; in helpers: ${phaseList(totals) || 'none timed'}`,
  );
  lines.push(`   the ${Math.min(n, files.length)} slowest files:`);
  for (const f of [...files].sort((a, b) => b.wallMs - a.wallMs).slice(0, n)) {
    const phases = phaseList(f.phases);
    lines.push(
      `   ${s(f.wallMs).padStart(8)}  ${f.pass.padEnd(10)} ${f.file}  (CPU ${s(f.cpuMs)}${phases ? `; ${phases}` : ''})`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, n] = process.argv.slice(2);
  const records = fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  console.log(records.length ? summary(records, Number(n ?? 10)) : `no test timings in ${file}`);
}
