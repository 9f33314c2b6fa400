// Workers start with their process's Node flags less its module loaders (actors/runtime/shards.ts):
// a test runner's TypeScript loader must not start again in every actor worker.
import t from 'tap';
import { workerExecArgv } from '../../actors/runtime/shards.js';

t.test('module loaders are dropped in both spellings; other flags stay', async (t) => {
  t.same(
    workerExecArgv([
      '--import=file:///ts.mjs',
      '--enable-source-maps',
      '--loader',
      'x.mjs',
      '--max-old-space-size=512',
      '-r',
      'y.cjs',
      '--require=z.cjs',
      '--experimental-loader=w.mjs',
    ]),
    ['--enable-source-maps', '--max-old-space-size=512'],
  );
  t.same(workerExecArgv([]), []);
  t.same(
    workerExecArgv(['--inspect', '--importance']),
    ['--inspect', '--importance'],
    'a flag that only starts like a loader stays',
  );
});

t.test(
  "the young generation flag is the process's: a Worker is not handed it (it refuses it and would not start)",
  async (t) => {
    t.same(workerExecArgv(['--max-semi-space-size=64', '--enable-source-maps']), [
      '--enable-source-maps',
    ]);
    const { Worker } = await import('node:worker_threads');
    const w = new Worker('require("node:worker_threads").parentPort.postMessage("up")', {
      eval: true,
      execArgv: workerExecArgv(['--max-semi-space-size=64']),
    });
    const got = await Promise.race([
      new Promise((resolve) => w.once('message', resolve)),
      new Promise((resolve) => setTimeout(resolve, 10_000, 'no answer in 10 s')),
    ]);
    await w.terminate();
    t.equal(got, 'up', 'the worker starts');
    t.throws(
      () => new Worker('0', { eval: true, execArgv: ['--max-semi-space-size=64'] }),
      { code: 'ERR_WORKER_INVALID_EXEC_ARGV' },
      'handed as it is, the worker refuses it',
    );
  },
);
