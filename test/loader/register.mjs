// Loaded into every test process (package.json "tap" node-arg).
// 1. The service's own modules load compiled, from dist/, as its workers and `npm start` load them:
//    a test file's import of '../../src/x.js' resolves to 'dist/src/x.js' (dist-hooks.mjs).
//    Transpiling the service's TypeScript in every test process cost ~1 s of CPU per file; `npm
//    test` builds dist first. Test files and helpers stay TypeScript.
// 2. When SVC_TEST_TIMINGS names a folder (test/run.mjs sets it), the process writes there at exit
//    where its time went: wall and CPU time, and the phases test/helpers/timing.ts recorded.
import fs from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { Agent, setGlobalDispatcher } from 'undici';

// 3. fetch's shared connection pool lets idle sockets go after 250 ms, not undici's default 4 s: an
//    idle keep-alive socket holds the event loop, so a file that used fetch lived ~4 s past its
//    last test (measured: http-web 0.2 s of tests, 5.7 s of process).
setGlobalDispatcher(new Agent({ keepAliveTimeout: 250, keepAliveMaxTimeout: 250 }));

register('./dist-hooks.mjs', import.meta.url);
register('./typescript.mjs', import.meta.url);

const dir = process.env.SVC_TEST_TIMINGS;
if (dir && process.argv[1]) {
  const registry = (globalThis[Symbol.for('agent-market.test-timing')] ??= { phases: {} });
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const record = {
      file: path.relative(process.cwd(), process.argv[1]),
      wallMs: Math.round(performance.now()),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      phases: registry.phases,
    };
    try {
      fs.writeFileSync(path.join(dir, `${process.pid}.json`), JSON.stringify(record));
    } catch {
      // the run's folder is gone (the run was stopped): nothing to report to
    }
  });
}
