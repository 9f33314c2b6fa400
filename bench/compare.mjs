// One run, several builds: the same bench (bench/orders.mjs or bench/close.mjs) against each build
// of the service in turn, rounds interleaved (A B C, A B C, ...) so a machine that gets busier or
// quieter during the run weighs on every build alike; then each build's median against the first
// build's. This is how a change's cost is quoted "in the same run as its baseline" (e.g. whether
// the money kernel slows orders, or the event log's cost on orders and on the close).
//
//   npm run build && node bench/compare.mjs --bench orders --build before=../old/dist/src/main.js \
//       --build now=dist/src/main.js [--rounds 2] [-- <the bench's own options>]
//
// orders: the metric is orders/s (higher is better); close: the close_ms of each close that carried
// open positions (lower is better), and of the close that filled them. Writes
// bench/results/<iso-date>-compare.json (read by /ops/bench) and prints a table.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(BENCH_DIR, 'results');

const split = process.argv.indexOf('--');
const own = split < 0 ? process.argv.slice(2) : process.argv.slice(2, split);
const passed = split < 0 ? [] : process.argv.slice(split + 1);
const { values: opts } = parseArgs({
  args: own,
  options: {
    bench: { type: 'string' },
    build: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '2' },
  },
});

/** What each bench's result file is read for. */
const METRICS = {
  orders: {
    what: 'orders/s',
    better: 'higher',
    read: (r) => ({
      value: r.orders.orders_per_s,
      detail: { p99_ms: r.orders.latency_ms?.p99 ?? null },
    }),
  },
  close: {
    // Only the closes that advance the positions and fill nothing: when the orders were placed across
    // two sessions, the first close both fills some and advances others, and is not comparable.
    what: 'close ms (closes advancing the open positions, filling nothing; median of all rounds)',
    better: 'lower',
    read: (r) => {
      const advancing = r.closes
        .filter((c) => c.open_positions > 0 && c.paid_orders_filled_here === 0)
        .map((c) => c.close_ms);
      const filling = r.closes.filter((c) => c.paid_orders_filled_here > 0).map((c) => c.close_ms);
      return { value: median(advancing), detail: { advancing_ms: advancing, filling_ms: filling } };
    },
    /** The build's figure: the median of every such close of every round (two or more per round). */
    pooled: (runs) => median(runs.flatMap((r) => r.detail.advancing_ms)),
  },
};

function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const metric = METRICS[opts.bench];
const builds = (opts.build ?? []).map((b) => {
  const i = b.indexOf('=');
  return { label: b.slice(0, i), main: path.resolve(b.slice(i + 1)) };
});
if (!metric || builds.length < 2 || builds.some((b) => !b.label || !fs.existsSync(b.main))) {
  console.error(
    'usage: node bench/compare.mjs --bench orders|close --build LABEL=PATH/dist/src/main.js --build LABEL=PATH ... [--rounds N] [-- bench options]',
  );
  process.exit(2);
}
const rounds = Number(opts.rounds);

/** Runs the bench once against `main`; resolves with the result file it wrote. */
function runOnce(main) {
  const before = new Set(fs.readdirSync(RESULTS));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(BENCH_DIR, `${opts.bench}.mjs`), '--service', main, ...passed],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    child.on('error', reject);
    child.on('exit', (code) => {
      const made = fs
        .readdirSync(RESULTS)
        .filter((f) => !before.has(f) && f.endsWith(`-${opts.bench}.json`));
      if (code !== 0 || made.length !== 1)
        return reject(
          new Error(
            `${opts.bench}.mjs against ${main} exited ${code} with ${made.length} result file(s)`,
          ),
        );
      resolve(path.join(RESULTS, made[0]));
    });
  });
}

const runs = [];
for (let round = 1; round <= rounds; round++) {
  for (const b of builds) {
    console.error(`\n== round ${round}/${rounds}: ${b.label} (${b.main})`);
    const file = await runOnce(b.main);
    const read = metric.read(JSON.parse(fs.readFileSync(file, 'utf8')));
    runs.push({ round, build: b.label, file: path.relative(BENCH_DIR, file), ...read });
  }
}

const summary = builds.map((b) => {
  const mine = runs.filter((r) => r.build === b.label);
  return {
    build: b.label,
    main: b.main,
    median: metric.pooled ? metric.pooled(mine) : median(mine.map((r) => r.value)),
    values: mine.map((r) => r.value),
  };
});
const base = summary[0].median;
for (const s of summary)
  s.ratio_to_first = base && s.median !== null ? Math.round((s.median / base) * 1000) / 1000 : null;

const result = {
  scenario: 'compare',
  bench: opts.bench,
  date: new Date().toISOString(),
  machine: {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    node: process.version,
    loadavg_at_start: os.loadavg(),
  },
  metric: metric.what,
  better: metric.better,
  rounds,
  bench_options: passed,
  summary,
  runs,
};
const out = path.join(
  RESULTS,
  `${result.date.replace(/\..*$/, 'Z').replace(/:/g, '-')}-compare.json`,
);
fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`\n${metric.what} (${metric.better} is better), ${rounds} interleaved rounds:`);
for (const s of summary)
  console.log(
    `  ${s.build.padEnd(16)} ${String(s.median).padStart(10)}   ${s.ratio_to_first}x the first   runs: ${s.values.join(', ')}`,
  );
console.log(`written: ${path.relative(process.cwd(), out)}`);
