// Workers start with their process's Node flags less its module loaders (actors/runtime/shards.ts):
// a test runner's TypeScript loader must not start again in every actor worker.
import t from 'tap';
import { workerExecArgv } from '../../actors/runtime/shards.js';

t.test('module loaders are dropped in both spellings; other flags stay', async (t) => {
  t.same(workerExecArgv(['--import=file:///ts.mjs', '--enable-source-maps', '--loader', 'x.mjs', '--max-old-space-size=512', '-r', 'y.cjs', '--require=z.cjs', '--experimental-loader=w.mjs']),
    ['--enable-source-maps', '--max-old-space-size=512']);
  t.same(workerExecArgv([]), []);
  t.same(workerExecArgv(['--inspect', '--importance']), ['--inspect', '--importance'], 'a flag that only starts like a loader stays');
});
