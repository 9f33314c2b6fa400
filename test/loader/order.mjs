// Loaded into the tap runner's own process by test/run.mjs (not into the test processes). Two
// changes to @tapjs/run as it loads, each failing the runner's start if tap's code no longer has
// what it replaces (a tap update then shows here, instead of the run quietly going back):
// 1. Order (list.js): tap runs its files in name order, which put the slowest ones (test/web/ comes
//    last) at the end of the run, where one of the two jobs finished alone for up to a minute. The
//    files named in SVC_TEST_FIRST (a JSON array of paths, slowest first) go first, in that order,
//    the others after them in name order as before.
// 2. No process-info hook in the test processes (test-argv.js): tap starts every test process with
//    --import=@tapjs/processinfo, which records each loaded module and looks up its source map, for
//    coverage (off here: "disable-coverage") and `tap --changed` (not used). It cost ~0.45 s of each
//    process that loads the service (measured: 2.24 s -> 1.79 s for a file importing src/service.js),
//    ~1 minute of a run's file time.
import { register } from 'node:module';

register(
  new URL(
    `data:text/javascript,${encodeURIComponent(`
const SORT = ": (a, b) => a.localeCompare(b, 'en'));";
const PI = "    // ensure this always comes last in the list\\n    pi,\\n";
export async function load(url, context, next) {
  const out = await next(url, context);
  if (url.endsWith('/@tapjs/run/dist/esm/list.js')) {
    const src = String(out.source);
    if (!src.includes(SORT)) throw new Error('test/loader/order.mjs: the sort of the test files was not found in ' + url);
    const first = "const __first = JSON.parse(process.env.SVC_TEST_FIRST ?? '[]');\\n" +
      "const __rank = (f) => { const i = __first.indexOf(f); return i < 0 ? __first.length : i; };\\n";
    return { ...out, source: first + src.replace(SORT, ": (a, b) => __rank(a) - __rank(b) || a.localeCompare(b, 'en'));") };
  }
  if (url.endsWith('/@tapjs/run/dist/esm/test-argv.js')) {
    const src = String(out.source);
    if (!src.includes(PI)) throw new Error('test/loader/order.mjs: the process-info import was not found in ' + url);
    return { ...out, source: src.replace(PI, '') };
  }
  return out;
}
`)}`,
  ),
);
