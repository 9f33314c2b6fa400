// Where the time goes in a V8 CPU profile (node --cpu-prof, e.g. `node bench/record.mjs --cpu-prof DIR`):
// self time per function and per file, as shares of the profile's samples.
//
//   node bench/profile-top.mjs FILE.cpuprofile [--top 25]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
});
if (!positionals.length) {
  console.error('usage: node bench/profile-top.mjs FILE.cpuprofile [--top 25]');
  process.exit(2);
}
const top = Number(values.top);
for (const file of positionals) {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8'));
  const total = prof.samples.length;
  const byFn = new Map();
  const byFile = new Map();
  for (const n of prof.nodes) {
    if (!n.hitCount) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const where = url ? `${path.basename(url)}:${lineNumber + 1}` : '(native)';
    const fn = `${functionName || '(anonymous)'} ${where}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + n.hitCount);
    const f = url
      ? url
          .replace(/^file:\/\//, '')
          .replace(/.*\/node_modules\//, 'node_modules/')
          .replace(/.*\/dist\//, 'dist/')
      : functionName;
    byFile.set(f, (byFile.get(f) ?? 0) + n.hitCount);
  }
  const pct = (x) => `${((100 * x) / total).toFixed(1).padStart(5)} %`;
  const seconds = (prof.endTime - prof.startTime) / 1e6;
  console.log(`\n${file}: ${total} samples over ${seconds.toFixed(1)} s`);
  console.log('-- self time by function');
  for (const [k, v] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${pct(v)}  ${k}`);
  console.log('-- self time by file');
  for (const [k, v] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, Math.min(top, 15)))
    console.log(`${pct(v)}  ${k}`);
}
