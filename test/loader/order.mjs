// Loaded into the tap runner's own process by test/run.mjs (not into the test processes): tap runs
// its files in name order (@tapjs/run's list.js sorts them), which put the slowest ones (test/web/
// comes last) at the end of the run, where one of the two jobs finished alone for up to a minute.
// This hook makes list.js put the files named in SVC_TEST_FIRST (a JSON array of paths, slowest
// first) first, in that order, and the others after them in name order as before. If tap's code
// changes so that the sort is not found, the runner fails to start rather than run in the old order
// unnoticed.
import { register } from 'node:module';

register(new URL(`data:text/javascript,${encodeURIComponent(`
const NEEDLE = ": (a, b) => a.localeCompare(b, 'en'));";
export async function load(url, context, next) {
  const out = await next(url, context);
  if (!url.endsWith('/@tapjs/run/dist/esm/list.js')) return out;
  const src = String(out.source);
  if (!src.includes(NEEDLE)) throw new Error('test/loader/order.mjs: the sort of the test files was not found in ' + url);
  const first = "const __first = JSON.parse(process.env.SVC_TEST_FIRST ?? '[]');\\n" +
    "const __rank = (f) => { const i = __first.indexOf(f); return i < 0 ? __first.length : i; };\\n";
  return { ...out, source: first + src.replace(NEEDLE, ": (a, b) => __rank(a) - __rank(b) || a.localeCompare(b, 'en'));") };
}
`)}`));
