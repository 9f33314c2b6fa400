// The tests run compiled from dist/test (test/loader/compile.mjs); reports and per-file settings
// name them by their sources.
import t from 'tap';
import { compiledPath, sourcePath } from '../loader/compile.mjs';
import { TEST_SHARDS } from '../helpers/service.js';

t.test('a test source and its compiled file name each other', async (t) => {
  t.equal(compiledPath('test/api/x.test.ts'), 'dist/test/api/x.test.js');
  t.equal(sourcePath('dist/test/api/x.test.js'), 'test/api/x.test.ts');
  t.equal(sourcePath('bench/run.mjs'), 'bench/run.mjs', 'a path outside dist/test is its own name');
});

t.test('this file runs compiled and is known by its source name', async (t) => {
  t.match(process.argv[1], /dist\/test\/unit\/test-compile\.test\.js$/);
  t.equal(TEST_SHARDS, '1', 'not one of the two-shard files');
});
